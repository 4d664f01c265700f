//! The Streamable HTTP transport: [`Streamable`], the bridge's own client transport
//! (`streamable.rs`), with the configured `headers` on every request, over [`Bounded`], which
//! turns an answer over `max_message_bytes` into an error for its call and sends POSTs over
//! kept-alive connections ([`pooled`]), GET streams and the session's DELETE over connections of
//! the same kind ([`session`]); and those headers, checked, for the other HTTP-based transports.

mod params;
mod pooled;
mod post;
mod session;
mod streamable;

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use axum::http::{HeaderMap, HeaderName, HeaderValue, Uri};
use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, RequestId};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::Sse;

use super::ConnectError;
use super::decode::TaskTools;
use super::limit;
use crate::a2e::McpServerConfig;
use crate::guard::Guard;
pub use streamable::Streamable;

/// The configured `headers`, as HTTP headers, with the bridge's hop marker
/// ([`crate::guard::HOP_HEADER`]).
pub fn header_map(config: &McpServerConfig) -> Result<HeaderMap, ConnectError> {
    let mut headers = HeaderMap::new();
    for (name, value) in &config.headers {
        let name = HeaderName::try_from(name.as_str())
            .map_err(|_| ConnectError::Config(format!("`{name}` is not a valid header name")))?;
        let value = HeaderValue::try_from(value.as_str()).map_err(|_| {
            ConnectError::Config(format!("the value of header `{name}` is not valid"))
        })?;
        headers.insert(name, value);
    }
    // Last, so that no configured header can remove it.
    let (name, value) = crate::guard::hop_header();
    headers.insert(name, value);
    Ok(headers)
}

/// The transport over `client` (a [`Bounded`], or rmcp's OAuth client around one), taking
/// messages of up to `limit` bytes.
pub fn transport<C: StreamableHttpClient + Sync>(
    config: &McpServerConfig,
    client: C,
    limit: usize,
) -> Result<Streamable<C>, ConnectError> {
    let headers: HashMap<HeaderName, HeaderValue> = header_map(config)?
        .into_iter()
        .filter_map(|(k, v)| Some((k?, v)))
        .collect();
    let mut limits = StreamableHttpResponseLimits::default();
    limits.max_json_response_size = limit;
    limits.max_sse_event_size = limit;
    Ok(Streamable::new(
        client,
        config.url.as_str().into(),
        headers,
        limits,
    ))
}

/// The HTTP clients of a Streamable HTTP connection, over the address guard.
pub fn client(config: &McpServerConfig, guard: Guard) -> Result<Bounded, ConnectError> {
    let failed = |e: &dyn std::fmt::Display| {
        ConnectError::Config(format!("cannot make an HTTP client: {e}"))
    };
    // reqwest goes through the proxy the environment names; the pool does not know proxies, so
    // with one set, every request goes through reqwest (a connection each).
    let via = match proxied() {
        true => Via::Proxy(
            guard
                .http_client(true)
                .pool_max_idle_per_host(0)
                .build()
                .map_err(|e| failed(&e))?,
        ),
        false => Via::Pool(pooled::Pool::new(guard).map_err(|e| failed(&e))?),
    };
    Ok(Bounded {
        via,
        server_id: config.server_id.as_str().into(),
        challenges: Arc::default(),
        session: Arc::default(),
        tools: Arc::default(),
    })
}

/// Whether the environment names an HTTP proxy, as reqwest reads it.
fn proxied() -> bool {
    [
        "HTTPS_PROXY",
        "https_proxy",
        "HTTP_PROXY",
        "http_proxy",
        "ALL_PROXY",
        "all_proxy",
    ]
    .iter()
    .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()))
}

/// The last `WWW-Authenticate` challenge of a 401 or 403 a server answered with, for the
/// connection (or call) that failed on it to say what authorization it needs.
#[derive(Debug, Default)]
pub struct Challenges(std::sync::Mutex<Option<String>>);

impl Challenges {
    fn note<T, E>(&self, result: &Result<T, StreamableHttpError<E>>)
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        if let Err(error) = result
            && let Some(challenge) = error.auth_challenge()
        {
            *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(challenge.to_owned());
        }
    }

    /// The challenge noted since the last take, if any.
    pub fn take(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// The client of a Streamable HTTP connection: [`post`] sends its messages over kept-alive
/// connections, and [`session`] opens its GET streams and deletes the session (through a proxy,
/// rmcp's reqwest client does all three). It notes the session rmcp's client posts in
/// ([`Session`]), for the calls posted without rmcp (`upstream/direct.rs`). A message over the
/// limits rmcp passes (set from `max_message_bytes`) is never held: the request it answers gets
/// the error answer for its id, and nothing else is touched (a notification or request of the
/// server's over the limit is dropped with a warning). An event over the limit on the GET
/// stream is dropped with a warning and the stream goes on (through a proxy, rmcp's reader ends
/// it there, and rmcp opens it again).
#[derive(Clone)]
pub struct Bounded {
    via: Via,
    server_id: Arc<str>,
    pub challenges: Arc<Challenges>,
    /// The session rmcp's client last posted a request in (shared by the clones).
    session: Arc<std::sync::Mutex<Option<Arc<Session>>>>,
    /// The tools the server offers to run as tasks, from the answers to `tools/list` posted
    /// over the pool (through a proxy rmcp reads them, and no tool is offered).
    pub tools: Arc<TaskTools>,
}

/// What rmcp's client sends with each request of a session: the session id (none for a server
/// without sessions), the access token, and the headers (the configured ones, and the protocol
/// version negotiated). A call posted with them is posted as rmcp's client would post it.
pub struct Session {
    id: Option<Arc<str>>,
    auth: Option<String>,
    headers: HashMap<HeaderName, HeaderValue>,
    /// Every header of a POST in the session, built once; None when they are not valid (the
    /// POST fails as rmcp's would).
    built: Option<HeaderMap>,
}

impl Session {
    fn new(
        id: Option<Arc<str>>,
        auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Self {
        let built = post::headers::<reqwest::Error>(&headers, id.as_deref(), auth.as_deref()).ok();
        Self {
            id,
            auth,
            headers,
            built,
        }
    }

    /// Whether a call can be posted in the session: its headers are valid.
    pub fn postable(&self) -> bool {
        self.built.is_some()
    }
}

/// Whether a request posted tells the session rmcp's client is in: any request but those that
/// start a session (`initialize`, posted without one) or ask about the server before one.
fn notes_the_session(message: &ClientJsonRpcMessage) -> bool {
    match message {
        ClientJsonRpcMessage::Request(request) => !matches!(
            request.request,
            ClientRequest::InitializeRequest(_) | ClientRequest::DiscoverRequest(_)
        ),
        _ => false,
    }
}

pub type Events = BoxStream<'static, Result<Sse, SseError>>;

/// How a connection's requests go.
#[derive(Clone)]
enum Via {
    /// Over the bridge's own connections ([`pooled`]).
    Pool(pooled::Pool),
    /// Through rmcp's reqwest client, when the environment names a proxy.
    Proxy(reqwest::Client),
}

/// Whether rmcp's SSE reader stopped at an event over its limit (its error type is private:
/// its message is matched, and the test of each transport over the limit checks it still is).
fn over_the_limit(error: &SseError) -> bool {
    matches!(error, SseError::Body(inner)
        if inner.to_string().starts_with("SSE event exceeded the maximum size"))
}

impl Bounded {
    /// The session rmcp's client last posted a request in, once it has (see [`Session`]).
    pub fn session(&self) -> Option<Arc<Session>> {
        self.session
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Whether the server keeps no session (it answered without an `Mcp-Session-Id`: stateless
    /// Streamable HTTP), once rmcp's client has posted a request after `initialize`.
    pub fn sessionless(&self) -> bool {
        self.session().is_some_and(|session| session.id.is_none())
    }

    /// Forgets `session` (the server no longer knows it), unless rmcp has posted in another
    /// since: until it posts again, in the session it makes anew, there is none.
    pub fn forget(&self, session: &Arc<Session>) {
        let mut noted = self.session.lock().unwrap_or_else(|e| e.into_inner());
        if noted
            .as_ref()
            .is_some_and(|noted| Arc::ptr_eq(noted, session))
        {
            *noted = None;
        }
    }

    /// Whether messages go over the pool (no proxy is set): [`Bounded::post_call_in`] needs it.
    pub fn pooled(&self) -> bool {
        matches!(self.via, Via::Pool(_))
    }

    /// Posts `message` in `session`, as rmcp's client would have.
    pub async fn post_in(
        &self,
        session: &Session,
        uri: &str,
        message: &ClientJsonRpcMessage,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>> {
        let (id, auth) = (session.id.clone(), session.auth.clone());
        self.post(uri, message, id, auth, &session.headers, limits)
            .await
    }

    /// Posts the `tools/call` request `id`, serialized in `body`, in `session`, over the pool.
    pub async fn post_call_in(
        &self,
        session: &Session,
        uri: &Uri,
        body: Bytes,
        id: RequestId,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>> {
        let Via::Pool(pool) = &self.via else {
            return Err(StreamableHttpError::UnexpectedServerResponse(
                "a call posted without the pool".into(),
            ));
        };
        let posted = post::Posted {
            request: Some(id.clone()),
            call: true,
            discover: false,
            tools_page: None,
        };
        let Some(built) = &session.built else {
            return Err(StreamableHttpError::UnexpectedServerResponse(
                "the session's headers are not valid".into(),
            ));
        };
        // The trace of the call posting it (its span is current), when spans are exported.
        let headers = match crate::telemetry::exporting() {
            false => Cow::Borrowed(built),
            true => {
                let mut headers = built.clone();
                crate::telemetry::inject(&mut headers);
                Cow::Owned(headers)
            }
        };
        let sent = post::Post {
            pool,
            uri: uri.clone(),
            headers,
            session_attached: session.id.is_some(),
            limits,
            server_id: &self.server_id,
            tools: &self.tools,
        }
        .send_body(body, posted)
        .await;
        self.checked(sent, Some(id))
    }

    /// Reopens the stream of a request in `session` after its event `last_event_id` (a server
    /// may end a stream before the answer and let the client resume it).
    pub async fn resume(
        &self,
        session: &Session,
        uri: &str,
        last_event_id: String,
        limit: usize,
    ) -> Result<Events, StreamableHttpError<reqwest::Error>> {
        self.get_stream_with_max_sse_event_size(
            uri.into(),
            session.id.clone(),
            Some(last_event_id),
            session.auth.clone(),
            session.headers.clone(),
            limit,
        )
        .await
    }

    /// Posts `message`: over the pool, or reqwest when a proxy is set ([`Bounded::checked`]).
    async fn post(
        &self,
        uri: &str,
        message: &ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: &HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>> {
        let id = match message {
            ClientJsonRpcMessage::Request(request) => Some(request.id.clone()),
            _ => None,
        };
        let posted = match &self.via {
            Via::Pool(pool) => {
                let posted = async {
                    let session = session_id.as_deref();
                    let headers = post::headers(custom_headers, session, auth_header.as_deref())?;
                    let post = post::Post {
                        pool,
                        uri: post::uri(uri)?,
                        headers: Cow::Owned(headers),
                        session_attached: session.is_some(),
                        limits,
                        server_id: &self.server_id,
                        tools: &self.tools,
                    };
                    post.send(message).await
                };
                posted.await
            }
            Via::Proxy(client) => {
                let mut headers = custom_headers.clone();
                headers.extend(super::traced::trace_headers(message));
                let sent = client.post_message_with_response_limits(
                    uri.into(),
                    message.clone(),
                    session_id,
                    auth_header,
                    headers,
                    limits,
                );
                match sent.await {
                    Ok(StreamableHttpPostResponse::Sse(events, session)) => {
                        let events = self.bounded(events, id.clone(), limits.max_sse_event_size);
                        Ok(StreamableHttpPostResponse::Sse(events, session))
                    }
                    posted => posted,
                }
            }
        };
        self.checked(posted, id)
    }

    /// What a POST answered, its 401's or 403's challenge noted, and an answer over the limit
    /// turned into the error answer for the request `id`.
    fn checked(
        &self,
        posted: Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>>,
        id: Option<RequestId>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>> {
        self.challenges.note(&posted);
        match (posted, id) {
            (Err(StreamableHttpError::ResponseBodyTooLarge { max_size }), Some(id)) => {
                tracing::warn!(
                    server_id = %self.server_id,
                    %id,
                    limit = max_size,
                    "an answer of the server is larger than {} ({}); the call fails",
                    limit::human(max_size),
                    limit::SETTING
                );
                let answer = limit::too_large(id, max_size);
                Ok(StreamableHttpPostResponse::Json(answer, None))
            }
            (posted, _) => posted,
        }
    }

    /// `events`, with an event over `limit` turned into the error answer for `id` (or, without
    /// an id, dropped), ending the stream.
    fn bounded(&self, events: Events, id: Option<RequestId>, limit: usize) -> Events {
        let server_id = self.server_id.clone();
        futures::stream::unfold(Some(events), move |events| {
            let id = id.clone();
            let server_id = server_id.clone();
            async move {
                let mut events = events?;
                match events.next().await? {
                    Err(error) if over_the_limit(&error) => {
                        let Some(id) = id else {
                            limit::dropped(&server_id, limit, true);
                            return None;
                        };
                        tracing::warn!(
                            %server_id,
                            %id,
                            limit,
                            "an event on a call's stream is larger than {} ({}); the call fails",
                            limit::human(limit),
                            limit::SETTING
                        );
                        let answer = serde_json::to_string(&limit::too_large(id, limit)).ok()?;
                        let event = Sse {
                            data: Some(answer),
                            ..Sse::default()
                        };
                        Some((Ok(event), None))
                    }
                    item => Some((item, Some(events))),
                }
            }
        })
        .boxed()
    }
}

impl StreamableHttpClient for Bounded {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let posted = self
            .post(
                &uri,
                &message,
                session_id.clone(),
                auth_header.clone(),
                &custom_headers,
                limits,
            )
            .await;
        if posted.is_ok() && notes_the_session(&message) {
            let session = Session::new(session_id, auth_header, custom_headers);
            *self.session.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(session));
        }
        posted
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        let deleted = match &self.via {
            Via::Pool(pool) => {
                let sent = session::Sent {
                    pool,
                    uri: &uri,
                    session_id: Some(&session_id),
                    auth: auth_header.as_deref(),
                    custom: &custom_headers,
                };
                sent.delete().await
            }
            Via::Proxy(client) => {
                let deleted = client.delete_session(uri, session_id, auth_header, custom_headers);
                deleted.await
            }
        };
        self.challenges.note(&deleted);
        deleted
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<Events, StreamableHttpError<Self::Error>> {
        let limit = StreamableHttpResponseLimits::default().max_sse_event_size;
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            limit,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<Events, StreamableHttpError<Self::Error>> {
        let events = match &self.via {
            Via::Pool(pool) => {
                let sent = session::Sent {
                    pool,
                    uri: &uri,
                    session_id: session_id.as_deref(),
                    auth: auth_header.as_deref(),
                    custom: &custom_headers,
                };
                sent.stream(last_event_id, max_sse_event_size, &self.server_id)
                    .await
            }
            Via::Proxy(client) => {
                let events = client.get_stream_with_max_sse_event_size(
                    uri,
                    session_id,
                    last_event_id,
                    auth_header,
                    custom_headers,
                    max_sse_event_size,
                );
                // Ended rather than failed: rmcp reopens a stream that ends, and gives up on
                // one that fails.
                let events = events.await;
                events.map(|events| self.bounded(events, None, max_sse_event_size))
            }
        };
        self.challenges.note(&events);
        events
    }
}
