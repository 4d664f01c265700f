//! The bridge's Streamable HTTP client transport: the protocol of rmcp's worker
//! (`StreamableHttpClientWorker`) without its task and channels, which held some 60 KB for every
//! server, idle or not (BENCHMARKS.md). A message is posted in the future rmcp's service awaits
//! for its send (each in a task of rmcp's), and what answers it is handed to [`Streamable::receive`]:
//! a JSON answer through the inbox, an SSE stream as a stream that `receive` polls with the
//! session's standalone GET stream. Nothing runs while no message moves.
//!
//! Carried over from rmcp's worker, over any [`StreamableHttpClient`] (the bridge's [`Bounded`],
//! or rmcp's OAuth client around it):
//! - `initialize` (first, or after a refused `server/discover`) makes the session: its id, the
//!   negotiated version and `MCP-Protocol-Version`; `notifications/initialized` then opens the
//!   standalone stream. A request naming a version inline (2026-07-28) is posted with it, and it
//!   becomes the session's;
//! - SEP-2243's headers from 2026-07-28 on ([`params`]), with the `x-mcp-header` annotations of
//!   the tools listed checked (a tool with invalid ones is left out of the list, as rmcp does);
//! - order: `initialize`, `server/discover`, `notifications/initialized` and a change of version
//!   wait for the POSTs in flight, and the POSTs after them wait for them; answers and
//!   cancellations go one at a time, each within 5 s; 16 POSTs at most at once;
//! - an SSE answer is resumed after its last event id (the server's `retry`, or a second); one
//!   that ends before its answer answers its request with an error; the standalone stream is
//!   opened again after it ends or fails, backing off;
//! - a cancelled request's stream is dropped (on 2025 versions the cancellation is posted);
//! - a server that forgets the session (404) gets the saved `initialize` again, once for all
//!   the POSTs that failed on it, and each such POST is sent again once in the new session;
//!   answers awaited on the old session's streams fail;
//! - the session is deleted when the transport closes (or is dropped), within 5 s.
//!
//! [`Bounded`]: super::Bounded

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use axum::http::{HeaderName, HeaderValue};
use futures::StreamExt;
use futures::stream::{BoxStream, SelectAll};
use futures::task::AtomicWaker;
use rmcp::RoleClient;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, ErrorData, GetExtensions, GetMeta,
    InitializedNotification, JsonObject, NumberOrString, ProtocolVersion, RequestId,
    ServerJsonRpcMessage, ServerResult,
};
use rmcp::service::InboundStreamOrigin;
use rmcp::transport::Transport;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use tokio::sync::{OwnedMutexGuard, OwnedRwLockReadGuard, OwnedRwLockWriteGuard, RwLock};
use tokio_util::sync::CancellationToken;

use super::params;

type Error<C> = StreamableHttpError<<C as StreamableHttpClient>::Error>;
type Events = BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>;
type Messages = BoxStream<'static, ServerJsonRpcMessage>;

const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
/// The longest an answer or a cancellation may take to post.
const CONTROL_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest making a new session may take, and deleting the session.
const SESSION_TIMEOUT: Duration = Duration::from_secs(5);
/// POSTs in flight at once (answers and cancellations aside).
const POSTS: usize = 16;
/// How long the rest of an SSE answer is read after the answer, so its connection is reused.
const DRAIN: Duration = Duration::from_millis(50);
/// The first pause before a stream is opened again; it doubles after each failure.
const RETRY: Duration = Duration::from_secs(1);

/// The transport of one Streamable HTTP connection.
pub struct Streamable<C: StreamableHttpClient + Sync> {
    shared: Arc<Shared<C>>,
    /// The SSE answers being read, and the session's standalone stream.
    streams: SelectAll<Messages>,
    closed: bool,
}

/// What the send futures share with the transport.
struct Shared<C: StreamableHttpClient + Sync> {
    client: C,
    uri: Arc<str>,
    /// The configured headers.
    custom: HashMap<HeaderName, HeaderValue>,
    limits: StreamableHttpResponseLimits,
    inbox: Inbox,
    /// Ordinary POSTs hold it to read, those that order them ([`Kind::Barrier`]) to write.
    gate: Arc<RwLock<()>>,
    /// Answers and cancellations go one at a time, in order.
    controls: Arc<tokio::sync::Mutex<()>>,
    posts: tokio::sync::Semaphore,
    /// One new session at a time.
    recovering: tokio::sync::Mutex<()>,
    state: Mutex<State>,
    /// Fired when the transport closes: what is in flight stops.
    closing: CancellationToken,
}

struct State {
    session: Arc<Session>,
    /// The `initialize` that made the session, to make another when the server forgets it.
    initialize: Option<ClientJsonRpcMessage>,
    /// No `initialize` was posted: 2026-07-28, where a cancelled request's stream is only
    /// dropped.
    modern: bool,
    /// The input schemas of the tools listed, for SEP-2243's `Mcp-Param-*` headers.
    tools: HashMap<String, Arc<JsonObject>>,
    /// The requests posted and not answered yet.
    awaiting: HashMap<RequestId, Awaiting>,
}

struct Awaiting {
    /// Its POST is done: the answer comes on a stream (its own, or the standalone one).
    on_stream: bool,
    /// Ends the reading of its SSE answer.
    cancel: CancellationToken,
}

/// What a session's messages are posted with. A new one whenever the session or its version
/// changes.
struct Session {
    id: Option<Arc<str>>,
    version: ProtocolVersion,
    /// The configured headers and, once negotiated, `MCP-Protocol-Version`.
    headers: HashMap<HeaderName, HeaderValue>,
    /// How many times the server forgot the session and a new one was made.
    generation: u64,
    /// Ends the session's streams (when a new one is made).
    ended: CancellationToken,
}

/// What [`Streamable::receive`] is handed by the sends.
enum Inbound {
    /// Boxed: the queue keeps its slots while the server is idle.
    Message(Box<ServerJsonRpcMessage>),
    Stream(Messages),
}

/// Messages handed from the send futures to `receive`.
#[derive(Default)]
struct Inbox {
    queue: Mutex<VecDeque<Inbound>>,
    waker: AtomicWaker,
}

impl Inbox {
    fn push(&self, inbound: Inbound) {
        lock(&self.queue).push_back(inbound);
        self.waker.wake();
    }

    fn poll(&self, cx: &mut Context<'_>) -> Poll<Inbound> {
        self.waker.register(cx.waker());
        match lock(&self.queue).pop_front() {
            Some(inbound) => Poll::Ready(inbound),
            None => Poll::Pending,
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// How a message is posted.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// `initialize`: posted without a session, its answer read at once; it makes the session.
    Initialize,
    /// `server/discover`, `notifications/initialized`, or a request naming another version:
    /// posted alone, after the POSTs before it.
    Barrier,
    /// An answer to the server, or a cancellation: one at a time, within [`CONTROL_TIMEOUT`].
    Control,
    Ordinary,
}

impl Kind {
    fn of(message: &ClientJsonRpcMessage, version: &ProtocolVersion) -> Self {
        match message {
            ClientJsonRpcMessage::Request(request) => match &request.request {
                ClientRequest::InitializeRequest(_) => Self::Initialize,
                ClientRequest::DiscoverRequest(_) => Self::Barrier,
                other
                    if other
                        .get_meta()
                        .protocol_version()
                        .is_some_and(|v| &v != version) =>
                {
                    Self::Barrier
                }
                _ => Self::Ordinary,
            },
            ClientJsonRpcMessage::Notification(notification) => match notification.notification {
                ClientNotification::InitializedNotification(_) => Self::Barrier,
                ClientNotification::CancelledNotification(_) => Self::Control,
                _ => Self::Ordinary,
            },
            ClientJsonRpcMessage::Response(_) | ClientJsonRpcMessage::Error(_) => Self::Control,
        }
    }
}

/// A lock's place in its queue, taken when the message is sent rather than when its future
/// first runs (tokio's locks serve in the order they are first polled, and rmcp runs each send
/// in a task of its own).
enum Queued<T> {
    Held(T),
    Waiting(Pin<Box<dyn Future<Output = T> + Send>>),
}

impl<T> Queued<T> {
    fn now(acquire: impl Future<Output = T> + Send + 'static) -> Self {
        let mut acquire = Box::pin(acquire);
        match acquire
            .as_mut()
            .poll(&mut Context::from_waker(Waker::noop()))
        {
            Poll::Ready(held) => Self::Held(held),
            Poll::Pending => Self::Waiting(acquire),
        }
    }

    async fn held(self) -> T {
        match self {
            Self::Held(held) => held,
            Self::Waiting(acquire) => acquire.await,
        }
    }
}

/// The gate as a message's kind holds it, until its POST is done.
#[expect(dead_code, reason = "held, never read")]
enum Gate {
    Read(OwnedRwLockReadGuard<()>),
    Write(OwnedRwLockWriteGuard<()>, OwnedMutexGuard<()>),
}

fn request_id(message: &ClientJsonRpcMessage) -> Option<RequestId> {
    match message {
        ClientJsonRpcMessage::Request(request) => Some(request.id.clone()),
        _ => None,
    }
}

fn answered_id(message: &ServerJsonRpcMessage) -> Option<&RequestId> {
    match message {
        ServerJsonRpcMessage::Response(response) => Some(&response.id),
        ServerJsonRpcMessage::Error(error) => error.id.as_ref(),
        _ => None,
    }
}

/// The version an `initialize` answer gives, and the headers with it.
fn negotiated(
    answer: &ServerJsonRpcMessage,
    custom: &HashMap<HeaderName, HeaderValue>,
) -> (ProtocolVersion, HashMap<HeaderName, HeaderValue>) {
    let mut headers = custom.clone();
    if let ServerJsonRpcMessage::Response(response) = answer
        && let ServerResult::InitializeResult(result) = &response.result
    {
        if let Ok(value) = HeaderValue::from_str(result.protocol_version.as_str()) {
            headers.insert(PROTOCOL_VERSION, value);
        }
        return (result.protocol_version.clone(), headers);
    }
    (ProtocolVersion::default(), headers)
}

/// `headers` with SEP-2243's for `message` at `version`, and `MCP-Protocol-Version`.
fn with_standard_headers(
    mut headers: HashMap<HeaderName, HeaderValue>,
    message: &ClientJsonRpcMessage,
    version: &ProtocolVersion,
    tools: &HashMap<String, Arc<JsonObject>>,
) -> HashMap<HeaderName, HeaderValue> {
    if *version >= ProtocolVersion::STANDARD_HEADERS
        && let Ok(value) = serde_json::to_value(message)
    {
        let schema = match message {
            ClientJsonRpcMessage::Request(request) => match &request.request {
                ClientRequest::CallToolRequest(call) => tools.get(call.params.name.as_ref()),
                _ => None,
            },
            _ => None,
        };
        headers.extend(params::request_headers(&value, schema.map(Arc::as_ref)));
    }
    if let Ok(value) = HeaderValue::from_str(version.as_str()) {
        headers.insert(PROTOCOL_VERSION, value);
    }
    headers
}

impl<C: StreamableHttpClient + Sync> Streamable<C> {
    /// A transport to `uri` over `client`, with the configured headers `custom`.
    pub fn new(
        client: C,
        uri: Arc<str>,
        custom: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Self {
        let session = Session {
            id: None,
            version: ProtocolVersion::default(),
            headers: custom.clone(),
            generation: 0,
            ended: CancellationToken::new(),
        };
        let state = State {
            session: Arc::new(session),
            initialize: None,
            modern: true,
            tools: HashMap::new(),
            awaiting: HashMap::new(),
        };
        let shared = Shared {
            client,
            uri,
            custom,
            limits,
            inbox: Inbox::default(),
            gate: Arc::default(),
            controls: Arc::default(),
            posts: tokio::sync::Semaphore::new(POSTS),
            recovering: tokio::sync::Mutex::new(()),
            state: Mutex::new(state),
            closing: CancellationToken::new(),
        };
        Self {
            shared: Arc::new(shared),
            streams: SelectAll::new(),
            closed: false,
        }
    }
}

impl<C: StreamableHttpClient + Sync> Transport<RoleClient> for Streamable<C> {
    type Error = Error<C>;

    fn send(
        &mut self,
        message: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let shared = self.shared.clone();
        let (kind, generation, skip) = {
            let mut state = lock(&shared.state);
            let kind = Kind::of(&message, &state.session.version);
            let mut skip = false;
            if let ClientJsonRpcMessage::Notification(notification) = &message
                && let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
            {
                // The request's stream is dropped; a 2026-07-28 server takes that as the
                // cancellation, and is sent nothing else.
                if let Some(id) = &cancelled.params.request_id
                    && let Some(awaiting) = state.awaiting.remove(id)
                {
                    awaiting.cancel.cancel();
                }
                skip = state.modern;
            }
            if let Some(id) = request_id(&message) {
                let awaiting = Awaiting {
                    on_stream: false,
                    cancel: CancellationToken::new(),
                };
                state.awaiting.insert(id, awaiting);
            }
            (kind, state.session.generation, skip)
        };
        let gate = match kind {
            Kind::Control => None,
            Kind::Ordinary => {
                let read = shared.gate.clone().read_owned();
                Some(Queued::now(async move { Gate::Read(read.await) }))
            }
            Kind::Initialize | Kind::Barrier => {
                let (write, controls) = (shared.gate.clone(), shared.controls.clone());
                Some(Queued::now(async move {
                    let write = write.write_owned().await;
                    Gate::Write(write, controls.lock_owned().await)
                }))
            }
        };
        let control = (kind == Kind::Control).then(|| {
            let controls = shared.controls.clone();
            Queued::now(controls.lock_owned())
        });
        async move {
            if skip {
                return Ok(());
            }
            let closing = shared.closing.clone();
            let sent = async {
                let _gate = match gate {
                    Some(gate) => Some(gate.held().await),
                    None => None,
                };
                let _control = match control {
                    Some(control) => Some(control.held().await),
                    None => None,
                };
                match kind {
                    Kind::Control => shared.control(message, generation).await,
                    Kind::Initialize => {
                        let _permit = shared.posts.acquire().await;
                        shared.initialize(message).await
                    }
                    Kind::Barrier | Kind::Ordinary => {
                        let _permit = shared.posts.acquire().await;
                        shared.post(message).await
                    }
                }
            };
            tokio::select! {
                biased;
                _ = closing.cancelled() => Ok(()),
                sent = sent => sent,
            }
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ServerJsonRpcMessage>> + Send {
        futures::future::poll_fn(move |cx| {
            if self.closed {
                return Poll::Ready(None);
            }
            loop {
                match self.shared.inbox.poll(cx) {
                    Poll::Ready(Inbound::Message(mut message)) => {
                        self.shared.note(&mut message);
                        return Poll::Ready(Some(*message));
                    }
                    Poll::Ready(Inbound::Stream(stream)) => self.streams.push(stream),
                    Poll::Pending => break,
                }
            }
            match self.streams.poll_next_unpin(cx) {
                Poll::Ready(Some(mut message)) => {
                    self.shared.note(&mut message);
                    Poll::Ready(Some(message))
                }
                // No stream open: the inbox wakes this when one is.
                Poll::Ready(None) | Poll::Pending => Poll::Pending,
            }
        })
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        if !self.closed {
            self.closed = true;
            self.shared.closing.cancel();
            self.streams = SelectAll::new();
            self.shared.delete().await;
        }
        Ok(())
    }
}

impl<C: StreamableHttpClient + Sync> Drop for Streamable<C> {
    fn drop(&mut self) {
        if self.closed {
            return;
        }
        self.shared.closing.cancel();
        // Dropped without closing (a handshake that failed): the session is deleted all the same.
        if let Ok(runtime) = tokio::runtime::Handle::try_current()
            && lock(&self.shared.state).session.id.is_some()
        {
            let shared = self.shared.clone();
            runtime.spawn(async move { shared.delete().await });
        }
    }
}

impl<C: StreamableHttpClient + Sync> Shared<C> {
    /// Posts `message` in `session` with `headers`.
    async fn post_in(
        &self,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Error<C>> {
        let uri = self.uri.clone();
        let posted = (self.client).post_message_with_response_limits(
            uri,
            message,
            session_id,
            None,
            headers,
            self.limits,
        );
        // Boxed: the client's future is large (rmcp's OAuth client's most of all), and each
        // send's would carry it inline, on the stack of whatever polls it first.
        Box::pin(posted).await
    }

    /// The session `message` goes in, and its headers; a version named inline becomes the
    /// session's.
    fn addressed(
        &self,
        message: &ClientJsonRpcMessage,
    ) -> (Arc<Session>, HashMap<HeaderName, HeaderValue>) {
        let mut state = lock(&self.state);
        let inline = match message {
            ClientJsonRpcMessage::Request(request) => request.request.get_meta().protocol_version(),
            _ => None,
        };
        if let Some(version) = &inline
            && version != &state.session.version
        {
            let old = &state.session;
            let mut headers = old.headers.clone();
            if let Ok(value) = HeaderValue::from_str(version.as_str()) {
                headers.insert(PROTOCOL_VERSION, value);
            }
            let session = Session {
                id: old.id.clone(),
                version: version.clone(),
                headers,
                generation: old.generation,
                ended: old.ended.clone(),
            };
            state.session = Arc::new(session);
        }
        let session = state.session.clone();
        let headers = with_standard_headers(
            session.headers.clone(),
            message,
            &session.version,
            &state.tools,
        );
        (session, headers)
    }

    /// Posts `initialize` outside any session and makes the session its answer starts.
    async fn initialize(self: &Arc<Self>, message: ClientJsonRpcMessage) -> Result<(), Error<C>> {
        {
            let mut state = lock(&self.state);
            state.modern = false;
            state.initialize = Some(message.clone());
        }
        let id = request_id(&message);
        let posted = self.post_in(message, None, self.custom.clone()).await;
        let answered = match posted {
            Ok(response) => response.expect_initialized::<C::Error>().await,
            Err(error) => Err(error),
        };
        let (answer, session_id) = match answered {
            Ok(answered) => answered,
            Err(error) => {
                self.settle(id.as_ref());
                return Err(error);
            }
        };
        let (version, headers) = negotiated(&answer, &self.custom);
        {
            let mut state = lock(&self.state);
            let old = &state.session;
            let session = Session {
                id: session_id.map(Arc::from),
                version,
                headers,
                generation: old.generation,
                ended: old.ended.clone(),
            };
            state.session = Arc::new(session);
        }
        self.settle(id.as_ref());
        self.inbox.push(Inbound::Message(Box::new(answer)));
        Ok(())
    }

    /// Posts an ordinary message, or one that orders the others; made again once in a new
    /// session if the server forgot this one.
    async fn post(self: &Arc<Self>, message: ClientJsonRpcMessage) -> Result<(), Error<C>> {
        let id = request_id(&message);
        let cancel = match &id {
            Some(id) => lock(&self.state).awaiting.get(id).map(|a| a.cancel.clone()),
            None => None,
        };
        let discover = matches!(&message, ClientJsonRpcMessage::Request(r)
            if matches!(r.request, ClientRequest::DiscoverRequest(_)));
        let initialized = matches!(&message, ClientJsonRpcMessage::Notification(n)
            if matches!(n.notification, ClientNotification::InitializedNotification(_)));
        let mut retried = false;
        loop {
            let (session, headers) = self.addressed(&message);
            let posted = self.post_in(message.clone(), session.id.clone(), headers);
            let posted = match &cancel {
                Some(cancel) => tokio::select! {
                    biased;
                    _ = cancel.cancelled() => return Ok(()),
                    posted = posted => posted,
                },
                None => posted.await,
            };
            let response = match posted {
                Err(StreamableHttpError::SessionExpired)
                    if !retried && lock(&self.state).initialize.is_some() =>
                {
                    retried = true;
                    if let Err(error) = Box::pin(self.recover(session.generation)).await {
                        self.settle(id.as_ref());
                        return Err(error);
                    }
                    continue;
                }
                Err(error) => {
                    self.settle(id.as_ref());
                    return Err(error);
                }
                Ok(response) => response,
            };
            match response {
                StreamableHttpPostResponse::Accepted => self.on_stream(id.as_ref()),
                StreamableHttpPostResponse::Json(answer, _) => {
                    self.settle(id.as_ref());
                    self.inbox.push(Inbound::Message(Box::new(answer)));
                }
                StreamableHttpPostResponse::Sse(events, session_id) if discover => {
                    let answered = StreamableHttpPostResponse::Sse(events, session_id)
                        .expect_initialized::<C::Error>()
                        .await;
                    self.settle(id.as_ref());
                    self.inbox.push(Inbound::Message(Box::new(answered?.0)));
                }
                StreamableHttpPostResponse::Sse(events, _) => {
                    self.on_stream(id.as_ref());
                    let answer = self.answer_stream(events, session, id, cancel.clone());
                    self.inbox.push(Inbound::Stream(answer));
                }
                _ => {
                    self.settle(id.as_ref());
                    return Err(StreamableHttpError::UnexpectedServerResponse(
                        "an answer of a kind this transport does not know".into(),
                    ));
                }
            }
            if initialized {
                self.open_standalone();
            }
            return Ok(());
        }
    }

    /// Posts an answer to the server or a cancellation, in the session it was sent in.
    async fn control(
        self: &Arc<Self>,
        message: ClientJsonRpcMessage,
        generation: u64,
    ) -> Result<(), Error<C>> {
        if lock(&self.state).session.generation != generation {
            // Not to a session that did not ask.
            return match &message {
                ClientJsonRpcMessage::Notification(_) => Ok(()),
                _ => Err(StreamableHttpError::SessionExpired),
            };
        }
        let (session, headers) = self.addressed(&message);
        let posted = self.post_in(message, session.id.clone(), headers);
        let response = match tokio::time::timeout(CONTROL_TIMEOUT, posted).await {
            Ok(response) => response?,
            Err(_) => return Err(StreamableHttpError::ControlRequestTimeout),
        };
        match response {
            StreamableHttpPostResponse::Accepted => {}
            StreamableHttpPostResponse::Json(message, _) => {
                self.inbox.push(Inbound::Message(Box::new(message)))
            }
            StreamableHttpPostResponse::Sse(events, _) => {
                let stream = self.answer_stream(events, session, None, None);
                self.inbox.push(Inbound::Stream(stream));
            }
            _ => {}
        }
        Ok(())
    }

    /// The request `id` no longer awaits its answer.
    fn settle(&self, id: Option<&RequestId>) {
        if let Some(id) = id {
            lock(&self.state).awaiting.remove(id);
        }
    }

    /// The request `id`'s answer comes on a stream.
    fn on_stream(&self, id: Option<&RequestId>) {
        if let Some(id) = id
            && let Some(awaiting) = lock(&self.state).awaiting.get_mut(id)
        {
            awaiting.on_stream = true;
        }
    }

    /// What a message received tells: a request answered, tools listed (their schemas kept
    /// for SEP-2243's headers, those with invalid annotations left out).
    fn note(&self, message: &mut ServerJsonRpcMessage) {
        let Some(id) = answered_id(message) else {
            return;
        };
        let mut state = lock(&self.state);
        if state.awaiting.remove(id).is_none()
            && let Some(number) = numeric(id)
        {
            state.awaiting.remove(&number);
        }
        if state.session.version < ProtocolVersion::STANDARD_HEADERS {
            return;
        }
        if let ServerJsonRpcMessage::Response(response) = message
            && let ServerResult::ListToolsResult(list) = &mut response.result
        {
            let tools = &mut state.tools;
            list.tools.retain(|tool| match params::valid_annotations(&tool.input_schema) {
                Ok(()) => {
                    tools.insert(tool.name.to_string(), tool.input_schema.clone());
                    true
                }
                Err(reason) => {
                    tracing::warn!(tool = %tool.name, "rejecting invalid x-mcp-header annotations: {reason}");
                    false
                }
            });
        }
    }

    /// An SSE answer's messages, up to the answer to `id` (resumed after its last event id
    /// when it ends before); an error answer for `id` when it ends without one.
    fn answer_stream(
        self: &Arc<Self>,
        events: Events,
        session: Arc<Session>,
        id: Option<RequestId>,
        cancel: Option<CancellationToken>,
    ) -> Messages {
        let origin = match &id {
            Some(id) => InboundStreamOrigin::OutboundRequest(id.clone()),
            None => InboundStreamOrigin::Unassociated,
        };
        let messages = Reconnecting::new(self.clone(), session.clone(), Some(events), true);
        let follow = Follow {
            shared: self.clone(),
            messages,
            origin,
            id,
            answered: false,
        };
        let ended = session.ended.clone();
        let stream = futures::stream::unfold(follow, Follow::next);
        let stream = stream.take_until(ended.cancelled_owned());
        match cancel {
            Some(cancel) => stream.take_until(cancel.cancelled_owned()).boxed(),
            None => stream.boxed(),
        }
    }

    /// Opens the session's standalone stream, if it has a session.
    fn open_standalone(self: &Arc<Self>) {
        let session = lock(&self.state).session.clone();
        if session.id.is_none() {
            return;
        }
        let messages = Reconnecting::new(self.clone(), session.clone(), None, false);
        let stream = futures::stream::unfold(messages, |mut messages| async move {
            match messages.next().await? {
                Ok(mut message) => {
                    mark(&mut message, &InboundStreamOrigin::Unassociated);
                    Some((message, messages))
                }
                Err(error) => {
                    tracing::warn!("the standalone SSE stream ended: {error}");
                    None
                }
            }
        });
        let stream = stream.take_until(session.ended.clone().cancelled_owned());
        self.inbox.push(Inbound::Stream(stream.boxed()));
    }

    /// Makes a new session with the saved `initialize`, unless one was made since the session
    /// of `generation` failed; the answers awaited on the old session's streams fail.
    async fn recover(self: &Arc<Self>, generation: u64) -> Result<(), Error<C>> {
        let _one = self.recovering.lock().await;
        let initialize = {
            let state = lock(&self.state);
            if state.session.generation != generation {
                return Ok(());
            }
            state.initialize.clone()
        };
        let Some(initialize) = initialize else {
            return Err(StreamableHttpError::SessionExpired);
        };
        let made = tokio::time::timeout(SESSION_TIMEOUT, self.reinitialize(initialize));
        let (id, version, headers) = made
            .await
            .unwrap_or(Err(StreamableHttpError::SessionRecoveryTimeout))?;
        let (old, failed) = {
            let mut state = lock(&self.state);
            let old = state.session.clone();
            let session = Session {
                id,
                version,
                headers,
                generation: old.generation + 1,
                ended: CancellationToken::new(),
            };
            state.session = Arc::new(session);
            let failed: Vec<RequestId> = state
                .awaiting
                .iter()
                .filter(|(_, awaiting)| awaiting.on_stream)
                .map(|(id, _)| id.clone())
                .collect();
            for id in &failed {
                state.awaiting.remove(id);
            }
            (old, failed)
        };
        old.ended.cancel();
        for id in failed {
            let error = ErrorData::internal_error(
                "streamable HTTP session was re-initialized before the response arrived",
                None,
            );
            let failed = ServerJsonRpcMessage::error(error, Some(id));
            self.inbox.push(Inbound::Message(Box::new(failed)));
        }
        self.open_standalone();
        Ok(())
    }

    /// The saved `initialize` posted again, and `notifications/initialized`: the new session.
    async fn reinitialize(
        &self,
        initialize: ClientJsonRpcMessage,
    ) -> Result<
        (
            Option<Arc<str>>,
            ProtocolVersion,
            HashMap<HeaderName, HeaderValue>,
        ),
        Error<C>,
    > {
        let posted = self.post_in(initialize, None, self.custom.clone()).await?;
        let (answer, id) = posted.expect_initialized::<C::Error>().await?;
        if let ServerJsonRpcMessage::Error(error) = answer {
            return Err(StreamableHttpError::ReinitializationFailed(error.error));
        }
        let id: Option<Arc<str>> = id.map(Arc::from);
        let (version, headers) = negotiated(&answer, &self.custom);
        let initialized = ClientJsonRpcMessage::notification(
            ClientNotification::InitializedNotification(InitializedNotification {
                method: Default::default(),
                extensions: Default::default(),
            }),
        );
        let sent = with_standard_headers(headers.clone(), &initialized, &version, &HashMap::new());
        self.post_in(initialized, id.clone(), sent)
            .await?
            .expect_accepted_or_json::<C::Error>()?;
        Ok((id, version, headers))
    }

    /// Deletes the session, if there is one, within [`SESSION_TIMEOUT`].
    fn delete(self: &Arc<Self>) -> impl Future<Output = ()> + Send + 'static {
        let shared = self.clone();
        async move {
            let session = lock(&shared.state).session.clone();
            let Some(id) = session.id.clone() else {
                return;
            };
            let deleted = shared.client.delete_session(
                shared.uri.clone(),
                id.clone(),
                None,
                session.headers.clone(),
            );
            match tokio::time::timeout(SESSION_TIMEOUT, deleted).await {
                Ok(Ok(())) => tracing::debug!(session_id = %id, "session deleted"),
                Ok(Err(StreamableHttpError::ServerDoesNotSupportDeleteSession)) => {
                    tracing::debug!(session_id = %id, "the server does not delete sessions");
                }
                Ok(Err(error)) => {
                    tracing::warn!(session_id = %id, "cannot delete the session: {error}")
                }
                Err(_) => tracing::warn!(session_id = %id, "deleting the session timed out"),
            }
        }
    }
}

/// `id` as a number, when it is a string of one (a server that answers `"7"` to 7).
fn numeric(id: &RequestId) -> Option<RequestId> {
    match id {
        NumberOrString::String(text) => text.parse().ok().map(NumberOrString::Number),
        NumberOrString::Number(_) => None,
    }
}

/// Notes on a server's request the stream it came on (SEP-2260): rmcp's service checks it.
fn mark(message: &mut ServerJsonRpcMessage, origin: &InboundStreamOrigin) {
    if let ServerJsonRpcMessage::Request(request) = message {
        request.request.extensions_mut().insert(origin.clone());
    }
}

/// An SSE answer read up to its answer.
struct Follow<C: StreamableHttpClient + Sync> {
    shared: Arc<Shared<C>>,
    messages: Reconnecting<C>,
    origin: InboundStreamOrigin,
    id: Option<RequestId>,
    answered: bool,
}

impl<C: StreamableHttpClient + Sync> Follow<C> {
    async fn next(mut self) -> Option<(ServerJsonRpcMessage, Self)> {
        if self.answered {
            // The rest of the stream, read briefly so its connection can be reused.
            let rest = async { while self.messages.next().await.is_some() {} };
            let _ = tokio::time::timeout(DRAIN, rest).await;
            return None;
        }
        let ended = match self.messages.next().await {
            Some(Ok(mut message)) => {
                mark(&mut message, &self.origin);
                if answered_id(&message).is_some_and(|id| Some(id) == self.id.as_ref()) {
                    self.answered = true;
                }
                return Some((message, self));
            }
            Some(Err(error)) => format!(": {error}"),
            None => String::new(),
        };
        let id = self.id.take()?;
        // Answered meanwhile on the standalone stream, or cancelled: nothing to say.
        lock(&self.shared.state).awaiting.remove(&id)?;
        tracing::debug!(%id, "an SSE answer ended before its answer{ended}");
        let error = ErrorData::internal_error(
            format!("the server's stream ended before it answered{ended}"),
            None,
        );
        Some((ServerJsonRpcMessage::error(error, Some(id)), self))
    }
}

/// An SSE stream's messages, the stream opened again after it ends or fails: at once after
/// a failure, after the server's `retry` (or [`RETRY`]) after an end, with the last event id
/// seen; a GET that fails is tried again after a pause that doubles each time. A request's
/// answer is resumed only once the server has given an event id.
struct Reconnecting<C: StreamableHttpClient + Sync> {
    shared: Arc<Shared<C>>,
    session: Arc<Session>,
    /// None before the standalone stream is first opened, and once it has given up.
    events: Option<Events>,
    opened: bool,
    last_event_id: Option<String>,
    server_retry: Option<Duration>,
    /// A request's answer, resumable only after an event id.
    after_event_id: bool,
}

impl<C: StreamableHttpClient + Sync> Reconnecting<C> {
    fn new(
        shared: Arc<Shared<C>>,
        session: Arc<Session>,
        events: Option<Events>,
        after_event_id: bool,
    ) -> Self {
        Self {
            shared,
            opened: events.is_some(),
            session,
            events,
            last_event_id: None,
            server_retry: None,
            after_event_id,
        }
    }

    async fn next(&mut self) -> Option<Result<ServerJsonRpcMessage, Error<C>>> {
        if !self.opened {
            self.opened = true;
            // The standalone stream: a server without one (405) is fine, any other failure
            // to open it is said once.
            match self.get().await {
                Ok(events) => self.events = Some(events),
                Err(StreamableHttpError::ServerDoesNotSupportSse) => {
                    tracing::debug!("the server has no standalone SSE stream");
                    return None;
                }
                Err(error) => return Some(Err(error)),
            }
        }
        loop {
            let events = self.events.as_mut()?;
            let pause = match events.next().await {
                Some(Ok(event)) => {
                    if let Some(ms) = event.retry {
                        self.server_retry = Some(Duration::from_millis(ms));
                    }
                    if let Some(id) = event.id {
                        self.last_event_id = Some(id);
                    }
                    if !matches!(event.event.as_deref(), None | Some("") | Some("message")) {
                        continue;
                    }
                    let Some(data) = event.data else {
                        continue;
                    };
                    match serde_json::from_str::<ServerJsonRpcMessage>(&data) {
                        Ok(message) => return Some(Ok(message)),
                        Err(error) => {
                            tracing::debug!(last_event_id = ?self.last_event_id, "a message on an SSE stream is not JSON-RPC: {error}");
                            continue;
                        }
                    }
                }
                Some(Err(error)) => {
                    if self.after_event_id && self.last_event_id.is_none() {
                        self.events = None;
                        return Some(Err(StreamableHttpError::Sse(error)));
                    }
                    tracing::warn!(last_event_id = ?self.last_event_id, "an SSE stream failed: {error}");
                    Duration::ZERO
                }
                None => {
                    if self.after_event_id && self.last_event_id.is_none() {
                        self.events = None;
                        return None;
                    }
                    self.server_retry.take().unwrap_or(RETRY)
                }
            };
            self.events = None;
            tokio::time::sleep(pause).await;
            match self.reopen().await {
                Ok(events) => self.events = Some(events),
                Err(error) => return Some(Err(error)),
            }
        }
    }

    /// The stream opened again, tried until it opens or fails for good (no SSE, or no
    /// authorization: trying again cannot mend either).
    async fn reopen(&mut self) -> Result<Events, Error<C>> {
        let mut pause = RETRY;
        loop {
            match self.get().await {
                Ok(events) => return Ok(events),
                Err(
                    error @ (StreamableHttpError::ServerDoesNotSupportSse
                    | StreamableHttpError::AuthRequired(_)
                    | StreamableHttpError::InsufficientScope(_)),
                ) => return Err(error),
                Err(error) => {
                    tracing::debug!("cannot open the SSE stream again yet: {error}");
                    let wait = self.server_retry.map_or(pause, |retry| retry.max(pause));
                    tokio::time::sleep(wait).await;
                    pause = pause.saturating_mul(2);
                }
            }
        }
    }

    fn get(&self) -> impl Future<Output = Result<Events, Error<C>>> + Send + 'static {
        let shared = self.shared.clone();
        let session_id = self.session.id.clone();
        let (after, headers) = (self.last_event_id.clone(), self.session.headers.clone());
        async move {
            let limit = shared.limits.max_sse_event_size;
            let uri = shared.uri.clone();
            let opened = (shared.client)
                .get_stream_with_max_sse_event_size(uri, session_id, after, None, headers, limit);
            Box::pin(opened).await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    type Answer = Result<StreamableHttpPostResponse, StreamableHttpError<std::io::Error>>;

    /// A server: what it answers a POST of `message` in `session` with, after `pause`.
    type Script = dyn Fn(&Value, Option<&str>) -> (Duration, Answer) + Send + Sync;

    /// A client that answers as its script says and writes down what happened.
    #[derive(Clone)]
    struct Scripted {
        script: Arc<Script>,
        log: Arc<Mutex<Vec<String>>>,
    }

    impl Scripted {
        fn new(
            script: impl Fn(&Value, Option<&str>) -> (Duration, Answer) + Send + Sync + 'static,
        ) -> Self {
            Self {
                script: Arc::new(script),
                log: Arc::default(),
            }
        }

        fn log(&self) -> Vec<String> {
            lock(&self.log).clone()
        }
    }

    /// What the log calls a message: its method, or what it answers.
    fn named(message: &Value) -> String {
        match (message.get("method"), message.get("id")) {
            (Some(method), _) => method.as_str().unwrap_or_default().to_owned(),
            (None, Some(id)) => format!("answer {id}"),
            (None, None) => "?".to_owned(),
        }
    }

    impl StreamableHttpClient for Scripted {
        type Error = std::io::Error;

        async fn post_message(
            &self,
            _uri: Arc<str>,
            message: ClientJsonRpcMessage,
            session_id: Option<Arc<str>>,
            _auth_header: Option<String>,
            _custom_headers: HashMap<HeaderName, HeaderValue>,
        ) -> Answer {
            let message = serde_json::to_value(&message).unwrap();
            let (pause, answer) = (self.script)(&message, session_id.as_deref());
            let name = named(&message);
            lock(&self.log).push(format!("start {name}"));
            tokio::time::sleep(pause).await;
            lock(&self.log).push(format!("end {name}"));
            answer
        }

        async fn delete_session(
            &self,
            _uri: Arc<str>,
            session_id: Arc<str>,
            _auth_header: Option<String>,
            _custom_headers: HashMap<HeaderName, HeaderValue>,
        ) -> Result<(), StreamableHttpError<Self::Error>> {
            lock(&self.log).push(format!("delete {session_id}"));
            Ok(())
        }

        async fn get_stream(
            &self,
            _uri: Arc<str>,
            _session_id: Option<Arc<str>>,
            _last_event_id: Option<String>,
            _auth_header: Option<String>,
            _custom_headers: HashMap<HeaderName, HeaderValue>,
        ) -> Result<Events, StreamableHttpError<Self::Error>> {
            Err(StreamableHttpError::ServerDoesNotSupportSse)
        }
    }

    fn transport(client: &Scripted) -> Streamable<Scripted> {
        let limits = StreamableHttpResponseLimits::default();
        Streamable::new(
            client.clone(),
            "http://h/mcp".into(),
            HashMap::new(),
            limits,
        )
    }

    fn client_message(message: Value) -> ClientJsonRpcMessage {
        serde_json::from_value(message).unwrap()
    }

    fn request(id: i64, method: &str) -> ClientJsonRpcMessage {
        client_message(json!({"jsonrpc": "2.0", "id": id, "method": method}))
    }

    fn json_answer(message: Value) -> Answer {
        Ok(StreamableHttpPostResponse::Json(
            serde_json::from_value(message).unwrap(),
            None,
        ))
    }

    fn initialized(session: &str) -> Answer {
        let result = json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "serverInfo": {"name": "s", "version": "1"},
        });
        let answer = json!({"jsonrpc": "2.0", "id": 0, "result": result});
        Ok(StreamableHttpPostResponse::Json(
            serde_json::from_value(answer).unwrap(),
            Some(session.to_owned()),
        ))
    }

    /// Makes a session with `initialize` and `notifications/initialized`.
    async fn handshake(transport: &mut Streamable<Scripted>) {
        let initialize = client_message(json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "c", "version": "1"},
            },
        }));
        transport.send(initialize).await.unwrap();
        let answer = transport.receive().await.unwrap();
        assert!(matches!(answer, ServerJsonRpcMessage::Response(_)));
        let done = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        transport.send(client_message(done)).await.unwrap();
    }

    #[tokio::test]
    async fn an_sse_answer_that_ends_before_the_answer_fails_its_request() {
        let client = Scripted::new(|message, _| {
            if message["method"] == "initialize" {
                return (Duration::ZERO, initialized("s1"));
            }
            if message["method"] == "notifications/initialized" {
                return (Duration::ZERO, Ok(StreamableHttpPostResponse::Accepted));
            }
            let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": 1, "progress": 1}});
            let event = sse_stream::Sse {
                data: Some(progress.to_string()),
                ..sse_stream::Sse::default()
            };
            let events = futures::stream::iter([Ok(event)]).boxed();
            (
                Duration::ZERO,
                Ok(StreamableHttpPostResponse::Sse(events, None)),
            )
        });
        let mut transport = transport(&client);
        handshake(&mut transport).await;
        transport.send(request(1, "tools/list")).await.unwrap();
        let progress = transport.receive().await.unwrap();
        assert!(matches!(progress, ServerJsonRpcMessage::Notification(_)));
        let failed = serde_json::to_value(transport.receive().await.unwrap()).unwrap();
        assert_eq!(failed["id"], 1);
        let said = failed["error"]["message"].as_str().unwrap();
        assert!(said.contains("ended before it answered"), "{said}");
        transport.close().await.unwrap();
        assert_eq!(client.log().last().unwrap(), "delete s1");
    }

    #[tokio::test]
    async fn a_forgotten_session_is_made_again_once_for_the_posts_that_failed_in_it() {
        let sessions = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let made = sessions.clone();
        let client = Scripted::new(move |message, session| {
            use std::sync::atomic::Ordering;
            match (message["method"].as_str(), session) {
                (Some("initialize"), _) => {
                    let n = made.fetch_add(1, Ordering::SeqCst) + 1;
                    (Duration::ZERO, initialized(&format!("s{n}")))
                }
                (Some("notifications/initialized"), _) => {
                    (Duration::ZERO, Ok(StreamableHttpPostResponse::Accepted))
                }
                // Both calls fail in the first session, a while apart.
                (_, Some("s1")) => {
                    let pause = Duration::from_millis(20 * message["id"].as_u64().unwrap());
                    (pause, Err(StreamableHttpError::SessionExpired))
                }
                _ => {
                    let answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": {}});
                    (Duration::ZERO, json_answer(answer))
                }
            }
        });
        let mut transport = transport(&client);
        handshake(&mut transport).await;
        let (first, second) = (
            transport.send(request(1, "ping")),
            transport.send(request(2, "ping")),
        );
        let (first, second) = tokio::join!(first, second);
        first.unwrap();
        second.unwrap();
        let mut answered = Vec::new();
        for _ in 0..2 {
            let answer = serde_json::to_value(transport.receive().await.unwrap()).unwrap();
            assert_eq!(answer["result"], json!({}), "{answer}");
            answered.push(answer["id"].as_i64().unwrap());
        }
        answered.sort();
        assert_eq!(answered, [1, 2]);
        assert_eq!(sessions.load(std::sync::atomic::Ordering::SeqCst), 2);
        transport.close().await.unwrap();
        assert_eq!(client.log().last().unwrap(), "delete s2");
    }

    #[tokio::test]
    async fn a_post_that_orders_the_others_goes_alone_in_the_order_sent() {
        let client = Scripted::new(|message, _| match message["method"].as_str() {
            Some("initialize") => (Duration::ZERO, initialized("s1")),
            Some("notifications/initialized") => {
                (Duration::ZERO, Ok(StreamableHttpPostResponse::Accepted))
            }
            _ => {
                let answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": {}});
                (Duration::from_millis(50), json_answer(answer))
            }
        });
        let mut transport = transport(&client);
        handshake(&mut transport).await;
        // A request naming another version orders the others, as `initialize` does.
        let newer = client_message(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list",
            "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}));
        let sends = [
            transport.send(request(1, "ping")),
            transport.send(newer),
            transport.send(request(3, "ping")),
        ];
        // Run last first: the order is the one they were sent in.
        let mut tasks = Vec::new();
        for send in sends.into_iter().rev() {
            tasks.push(tokio::spawn(send));
            tokio::task::yield_now().await;
        }
        for task in tasks {
            task.await.unwrap().unwrap();
        }
        let posts: Vec<String> = client.log().into_iter().skip(4).collect();
        assert_eq!(
            posts,
            [
                "start ping",
                "end ping",
                "start tools/list",
                "end tools/list",
                "start ping",
                "end ping"
            ]
        );
    }
}
