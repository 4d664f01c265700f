//! A POST of one message to a Streamable HTTP server, over the kept-alive [`Pool`], answered as
//! rmcp's own reqwest client answers it (the same statuses, errors and limits), except that:
//! - an answer is parsed knowing the request ([`decode_answer`]), and one to `tools/list` is
//!   noted in the connection's [`TaskTools`];
//! - an SSE answer whose first message answers the request is handed on as that one message,
//!   and the rest of the stream is read to its end apart, so its connection is reused;
//! - an SSE event over the limit fails only the call it answers, as over the other transports,
//!   rather than ending the stream.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use axum::http::header::{ACCEPT, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, WWW_AUTHENTICATE};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri};
use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use http_body_util::BodyExt;
use rmcp::ErrorData;
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, RequestId, ServerJsonRpcMessage,
};
use rmcp::transport::auth::WWWAuthenticateParams;
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, InsufficientScopeError, SseError, StreamableHttpError,
    StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use sse_stream::Sse;

use super::pooled::{self, Body, Pool};
use crate::upstream::decode::{TaskTools, decode_answer, is_call, tools_page};
use crate::upstream::limit;
use crate::upstream::sse::{Event, Frames};

const SESSION_ID: &str = "mcp-session-id";
pub(super) const EVENT_STREAM: &str = "text/event-stream";
pub(super) const JSON: &str = "application/json";

pub(super) type Result<T, E> = std::result::Result<T, StreamableHttpError<E>>;

/// What a POST needs besides its message.
pub struct Post<'a> {
    pub pool: &'a Pool,
    pub uri: Uri,
    /// Every header of the request ([`headers`]).
    pub headers: Cow<'a, HeaderMap>,
    /// Whether the headers name a session.
    pub session_attached: bool,
    pub limits: StreamableHttpResponseLimits,
    pub server_id: &'a Arc<str>,
    /// Where the answers to `tools/list` are noted.
    pub tools: &'a TaskTools,
}

/// The headers of a POST with rmcp's `custom` headers (the configured ones and the protocol
/// version), in the session `session_id`, with the access token `auth`.
pub fn headers<E>(
    custom: &HashMap<HeaderName, HeaderValue>,
    session_id: Option<&str>,
    auth: Option<&str>,
) -> Result<HeaderMap, E>
where
    E: std::error::Error + Send + Sync + 'static,
{
    // As rmcp: a configured header may not take the place of those the protocol sets.
    if let Some(name) = custom
        .keys()
        .find(|name| ["accept", SESSION_ID, "last-event-id"].contains(&name.as_str()))
    {
        return Err(StreamableHttpError::ReservedHeaderConflict(
            name.to_string(),
        ));
    }
    let mut headers: HeaderMap = custom
        .iter()
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect();
    headers.insert(
        ACCEPT,
        HeaderValue::from_static("text/event-stream, application/json"),
    );
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(JSON));
    let (hop, marker) = crate::guard::hop_header();
    headers.insert(hop, marker);
    if let Some(token) = auth {
        let value = HeaderValue::try_from(format!("Bearer {token}"))
            .map_err(|_| unexpected("the access token is not a valid header value"))?;
        headers.insert(AUTHORIZATION, value);
    }
    if let Some(session) = session_id {
        let value = HeaderValue::try_from(session)
            .map_err(|_| unexpected("the session id is not a valid header value"))?;
        headers.insert(SESSION_ID, value);
    }
    // No trace here: these are kept for a session's every POST. Each message adds its own
    // ([`Post::send`], `Bounded::post_call_in`).
    Ok(headers)
}

/// What a posted message is, as far as reading its answer goes.
pub struct Posted {
    /// The id of a request (a notification or an answer awaits none).
    pub request: Option<RequestId>,
    /// A `tools/call`, whose answer is parsed as one ([`decode_answer`]).
    pub call: bool,
    /// A `server/discover` ([`discover_refused`]).
    pub discover: bool,
    /// A `tools/list`, with whether it asks for the first page ([`TaskTools`]).
    pub tools_page: Option<bool>,
}

impl Posted {
    pub fn of(message: &ClientJsonRpcMessage) -> Self {
        match message {
            JsonRpcMessage::Request(request) => Self {
                request: Some(request.id.clone()),
                call: is_call(&request.request),
                discover: matches!(request.request, ClientRequest::DiscoverRequest(_)),
                tools_page: tools_page(&request.request),
            },
            _ => Self {
                request: None,
                call: false,
                discover: false,
                tools_page: None,
            },
        }
    }
}

impl Post<'_> {
    pub async fn send<E>(
        self,
        message: &ClientJsonRpcMessage,
    ) -> Result<StreamableHttpPostResponse, E>
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        let body = Bytes::from(serde_json::to_vec(message)?);
        let mut post = self;
        // The trace the request carries in `_meta`, in headers too (W3C `traceparent`).
        for (name, value) in crate::upstream::traced::trace_headers(message) {
            post.headers.to_mut().insert(name, value);
        }
        post.send_body(body, Posted::of(message)).await
    }

    /// Posts `body`, a message serialized already, which `posted` says what it is.
    pub async fn send_body<E>(
        self,
        body: Bytes,
        posted: Posted,
    ) -> Result<StreamableHttpPostResponse, E>
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        let session_attached = self.session_attached;
        let response = self
            .pool
            .send(Method::POST, self.uri, &self.headers, body)
            .await?;
        let status = response.status();
        if let Some(error) = challenge(status, response.headers())? {
            return Err(error);
        }
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && session_attached {
            return Err(StreamableHttpError::SessionExpired);
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .map(|ct| String::from_utf8_lossy(ct.as_bytes()).into_owned());
        let is = |expected: &str| {
            content_type
                .as_deref()
                .is_some_and(|ct| media_type_is(ct, expected))
        };
        let is_json = is(JSON);
        let status_error = match (status_error(status, response.headers()), is_json) {
            (Some(error), json) if !json || status == StatusCode::TOO_MANY_REQUESTS => {
                return Err(error.into());
            }
            (error, _) => error,
        };
        let length = response
            .headers()
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
        let session_id = response
            .headers()
            .get(SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let awaits_no_answer = posted.request.is_none();
        if status.is_success() && length == Some(0) && awaits_no_answer {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        let body = response.into_body();
        if !status.is_success() {
            let auth_failure = matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN);
            let text = if is_json && !auth_failure {
                let bytes = match read_bounded(body, length, self.limits.max_json_response_size)
                    .await
                {
                    Err(error @ StreamableHttpError::ResponseBodyTooLarge { .. }) => {
                        return Err(status_error.map(StreamableHttpError::from).unwrap_or(error));
                    }
                    read => read?,
                };
                let text = String::from_utf8_lossy(&bytes).into_owned();
                if let Ok(error @ JsonRpcMessage::Error(_)) =
                    serde_json::from_str::<ServerJsonRpcMessage>(&text)
                {
                    if let Some(answer) = discover_refused(&posted, session_attached, status, &text)
                    {
                        return Ok(answer);
                    }
                    // A server that restarted knows the session no more. The spec has it answer
                    // 404, which rmcp recovers from with a new session; server-everything (the
                    // TypeScript SDK) answers 400 with an error of no id, which answers nothing:
                    // the call waited until a ping failed. It is the same loss.
                    if session_attached
                        && status == StatusCode::BAD_REQUEST
                        && matches!(&error, JsonRpcMessage::Error(e) if e.id.is_none())
                    {
                        tracing::debug!(server_id = %self.server_id, %text, "the server lost the session");
                        return Err(StreamableHttpError::SessionExpired);
                    }
                    return Ok(StreamableHttpPostResponse::Json(error, session_id));
                }
                tracing::warn!("HTTP {status}: could not parse JSON body as a JSON-RPC error");
                truncate(text, self.limits.max_error_response_size)
            } else {
                let prefix = read_prefix(body, self.limits.max_error_response_size).await;
                String::from_utf8_lossy(&prefix).into_owned()
            };
            if let Some(answer) = discover_refused(&posted, session_attached, status, &text) {
                return Ok(answer);
            }
            if let Some(error) = status_error {
                return Err(error.into());
            }
            return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                format!("HTTP {status}: {text}"),
            )));
        }
        let listed = posted.tools_page.map(|first| (first, self.tools));
        let request = posted.request.map(|id| (id, posted.call));
        if is(EVENT_STREAM) {
            let events = Events::new(body, self.limits.max_sse_event_size, self.server_id.clone());
            return Ok(events.answer(request, listed, session_id).await);
        }
        if is_json {
            let bytes = read_bounded(body, length, self.limits.max_json_response_size).await?;
            let call = request.is_some_and(|(_, call)| call);
            if let Some((first, tools)) = listed {
                tools.note_answer(first, &bytes);
            }
            return match decode_answer(&bytes, call) {
                Ok(parsed) => Ok(StreamableHttpPostResponse::Json(parsed, session_id)),
                Err(error) if awaits_no_answer => {
                    tracing::warn!(%error, "an answer to a notification is not JSON-RPC; taken as accepted");
                    Ok(StreamableHttpPostResponse::Accepted)
                }
                Err(error) => Err(unexpected(format!(
                    "could not parse JSON response as ServerJsonRpcMessage: {error}: {}",
                    preview(&bytes)
                ))),
            };
        }
        if awaits_no_answer {
            // Some servers answer a notification with 200 and no body, or another type.
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        Err(StreamableHttpError::UnexpectedContentType(content_type))
    }
}

/// `uri` parsed, or the error a request to it fails with.
pub(super) fn uri<E>(uri: &str) -> Result<Uri, E>
where
    E: std::error::Error + Send + Sync + 'static,
{
    uri.parse()
        .map_err(|e| unexpected(format!("`{uri}` is not a URI: {e}")))
}

pub(super) fn unexpected<E: std::error::Error + Send + Sync + 'static>(
    why: impl Into<Cow<'static, str>>,
) -> StreamableHttpError<E> {
    StreamableHttpError::UnexpectedServerResponse(why.into())
}

/// A 401 or 403 with a `WWW-Authenticate` challenge, as rmcp's errors for them.
pub(super) fn challenge<E>(
    status: StatusCode,
    headers: &HeaderMap,
) -> Result<Option<StreamableHttpError<E>>, E>
where
    E: std::error::Error + Send + Sync + 'static,
{
    if !matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
        return Ok(None);
    }
    let Some(header) = headers.get(WWW_AUTHENTICATE) else {
        return Ok(None);
    };
    let header = header
        .to_str()
        .map_err(|_| unexpected("invalid www-authenticate header value"))?
        .to_owned();
    if status == StatusCode::UNAUTHORIZED {
        return Ok(Some(StreamableHttpError::AuthRequired(
            AuthRequiredError::new(header),
        )));
    }
    let base = url::Url::parse("http://localhost/").expect("a URL");
    let scope = WWWAuthenticateParams::parse(&header, &base).scope;
    Ok(Some(StreamableHttpError::InsufficientScope(
        InsufficientScopeError::new(header, scope),
    )))
}

/// A 429 or 5xx, with its `Retry-After` (rmcp keeps up to 256 bytes of it).
pub(super) fn status_error(status: StatusCode, headers: &HeaderMap) -> Option<HttpStatusError> {
    if status != StatusCode::TOO_MANY_REQUESTS && !status.is_server_error() {
        return None;
    }
    let retry_after = headers
        .get(axum::http::header::RETRY_AFTER)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    Some(HttpStatusError::new(status.as_u16(), retry_after))
}

/// A `server/discover` refused by a server of an earlier revision (a 4xx other than 401 and
/// 403, without a session), as the error answer rmcp's lifecycle takes it for, with the id of
/// the request (such a server's error cannot name it).
fn discover_refused(
    posted: &Posted,
    session_attached: bool,
    status: StatusCode,
    body: &str,
) -> Option<StreamableHttpPostResponse> {
    if session_attached
        || !status.is_client_error()
        || matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)
    {
        return None;
    }
    let (true, Some(id)) = (posted.discover, &posted.request) else {
        return None;
    };
    let error = match serde_json::from_str::<ServerJsonRpcMessage>(body) {
        Ok(JsonRpcMessage::Error(error)) => error.error,
        _ => ErrorData::invalid_request(
            format!("server/discover rejected with HTTP {status}: {body}"),
            None,
        ),
    };
    Some(StreamableHttpPostResponse::Json(
        ServerJsonRpcMessage::error(error, Some(id.clone())),
        None,
    ))
}

/// Whether a `Content-Type` value is `expected`, whatever its parameters and case.
pub(super) fn media_type_is(value: &str, expected: &str) -> bool {
    value.split(';').next().is_some_and(|essence| {
        essence
            .trim_matches([' ', '\t'])
            .eq_ignore_ascii_case(expected)
    })
}

fn truncate(mut text: String, limit: usize) -> String {
    if text.len() > limit {
        let mut end = limit;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

fn preview(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "<empty>".to_owned();
    }
    truncate(String::from_utf8_lossy(bytes).into_owned(), 256)
}

/// The whole body, refused past `limit` bytes (before reading, when its length says so).
async fn read_bounded<E>(mut body: Body, length: Option<u64>, limit: usize) -> Result<Vec<u8>, E>
where
    E: std::error::Error + Send + Sync + 'static,
{
    let too_large = StreamableHttpError::ResponseBodyTooLarge { max_size: limit };
    if length.is_some_and(|n| n > limit as u64) {
        return Err(too_large);
    }
    let mut bytes = Vec::with_capacity(length.map_or(0, |n| n as usize));
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(std::io::Error::other)?;
        if let Ok(data) = frame.into_data() {
            if bytes.len() + data.len() > limit {
                return Err(too_large);
            }
            bytes.extend_from_slice(&data);
        }
    }
    Ok(bytes)
}

/// Up to `limit` bytes of the body, for a diagnostic; what cannot be read is left out.
async fn read_prefix(mut body: Body, limit: usize) -> Vec<u8> {
    let mut bytes = Vec::new();
    while bytes.len() < limit {
        let Some(Ok(frame)) = body.frame().await else {
            break;
        };
        if let Ok(data) = frame.into_data() {
            let take = data.len().min(limit - bytes.len());
            bytes.extend_from_slice(&data[..take]);
        }
    }
    bytes
}

/// The events of an SSE answer, cut by [`Frames`] with the event limit.
pub(super) struct Events {
    body: Body,
    frames: Frames,
    limit: usize,
    server_id: Arc<str>,
    ended: bool,
}

impl Events {
    pub(super) fn new(body: Body, limit: usize, server_id: Arc<str>) -> Self {
        Self {
            body,
            frames: Frames::new(limit),
            limit,
            server_id,
            ended: false,
        }
    }

    /// The next event; an event over the limit that answers a request becomes the error
    /// answer for it, any other is dropped.
    async fn next(&mut self) -> Option<std::result::Result<Sse, SseError>> {
        loop {
            match self.frames.next_sse() {
                Some(Ok(sse)) => return Some(Ok(sse)),
                Some(Err(Event::TooLarge {
                    id: Some(id),
                    has_method: false,
                })) => {
                    tracing::warn!(
                        server_id = %self.server_id,
                        %id,
                        limit = self.limit,
                        "an event on a call's stream is larger than {} ({}); the call fails",
                        limit::human(self.limit),
                        limit::SETTING
                    );
                    let answer = serde_json::to_string(&limit::too_large(id, self.limit)).ok()?;
                    return Some(Ok(Sse {
                        data: Some(answer),
                        ..Sse::default()
                    }));
                }
                Some(Err(Event::TooLarge { has_method, .. })) => {
                    limit::dropped(&self.server_id, self.limit, has_method);
                    continue;
                }
                Some(Err(Event::Whole(..))) | None => {}
            }
            if self.ended {
                return None;
            }
            match self.body.frame().await {
                None => self.ended = true,
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        self.frames.push(&data);
                    }
                }
                Some(Err(error)) => {
                    self.ended = true;
                    return Some(Err(SseError::Body(Box::new(error))));
                }
            }
        }
    }

    /// The stream as rmcp takes it: the events held back first, then the rest.
    pub(super) fn into_stream(
        self,
        held: Vec<Sse>,
    ) -> BoxStream<'static, std::result::Result<Sse, SseError>> {
        let rest = futures::stream::unfold(self, |mut events| async move {
            let event = events.next().await?;
            Some((event, events))
        });
        futures::stream::iter(held.into_iter().map(Ok))
            .chain(rest)
            .boxed()
    }

    /// Reads the events up to the first message. When it answers `request`, that answer alone
    /// (the stream read to its end apart, and noted in `listed` when it answers a
    /// `tools/list`); otherwise the stream, that message included (rmcp reads the answer
    /// there, so a listing answered after a message of the server's own is not noted, and
    /// the record of the previous one stays).
    async fn answer(
        mut self,
        request: Option<(rmcp::model::RequestId, bool)>,
        listed: Option<(bool, &TaskTools)>,
        session_id: Option<String>,
    ) -> StreamableHttpPostResponse {
        let mut held = Vec::new();
        let first = loop {
            match self.next().await {
                Some(Ok(sse)) if sse.data.as_deref().is_none_or(|d| d.trim().is_empty()) => {
                    held.push(sse);
                }
                Some(Ok(sse)) => break sse,
                Some(Err(error)) => {
                    let stream = futures::stream::iter(held.into_iter().map(Ok))
                        .chain(futures::stream::once(async { Err(error) }));
                    return StreamableHttpPostResponse::Sse(stream.boxed(), session_id);
                }
                None => {
                    let stream = futures::stream::iter(held.into_iter().map(Ok));
                    return StreamableHttpPostResponse::Sse(stream.boxed(), session_id);
                }
            }
        };
        let message_event = matches!(first.event.as_deref(), None | Some("message"));
        if let (true, Some((id, call)), Some(data)) = (message_event, &request, &first.data)
            && let Ok(message) = decode_answer(data.as_bytes(), *call)
            && answers(&message, id)
        {
            if let Some((first, tools)) = listed {
                tools.note_answer(first, data.as_bytes());
            }
            self.drain();
            return StreamableHttpPostResponse::Json(message, session_id);
        }
        held.push(first);
        StreamableHttpPostResponse::Sse(self.into_stream(held), session_id)
    }

    /// Leaves the rest of the stream (a server ends it after the answer) to be read apart, so
    /// that its connection goes back to the pool.
    fn drain(self) {
        if !self.ended {
            pooled::finish(self.body);
        }
    }
}

/// Whether `message` is the answer (or the error) for the request `id`.
fn answers(message: &ServerJsonRpcMessage, id: &rmcp::model::RequestId) -> bool {
    match message {
        JsonRpcMessage::Response(response) => &response.id == id,
        JsonRpcMessage::Error(error) => error.id.as_ref() == Some(id),
        _ => false,
    }
}
