//! Connections to MCP servers: one rmcp client per server over its transport (stdio, Streamable
//! HTTP), a watch on the transport so a dead connection is noticed at once, and the supervisor
//! that keeps each server connected.

mod calls;
pub mod chain;
mod decode;
mod direct;
mod explain;
mod handler;
mod http;
pub mod limit;
mod lines;
mod listen;
mod notify;
pub mod oauth;
mod sse;
mod stdio;
pub mod tasks;
pub use sse::{Event as SseEvent, Frames};
pub use stdio::{BASE_ENV, LOADER_ENV, is_loader_variable};
mod watched;
mod ws;

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, CompleteRequestParams,
    CompleteResult, ErrorCode, GetPromptRequest, GetPromptRequestParams, GetPromptResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    Prompt, ReadResourceRequestParams, ReadResourceResult, Resource, ResourceTemplate,
    ServerCapabilities, ServerResult, SubscribeRequestParams, Tool, UnsubscribeRequestParams,
};
use rmcp::model::{
    InputRequest, InputRequests, InputResponses, ProtocolVersion, RequestMetaObject,
};

use crate::guard::Refused;
use crate::hub::InputRounds;
use rmcp::service::{ClientInitializeError, PeerRequestOptions};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::Transport;
use rmcp::{ClientLifecycleMode, ClientServiceExt, ErrorData};
use rmcp::{RoleClient, ServiceExt};
use tokio_util::sync::CancellationToken;

use crate::a2e::{self, McpProtocol, McpServerConfig, McpTransport};
pub use calls::CallOrigin;
use calls::Calls;
pub use handler::{BridgeClient, Context, Route, sampling_result};
pub use stdio::StderrTail;
use watched::Watched;

/// Most input-required rounds one call may take.
const MAX_INPUT_ROUNDS: usize = 8;

fn to_json<T: serde::Serialize>(value: T) -> Result<serde_json::Value, ErrorData> {
    serde_json::to_value(value).map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

/// How long a stopped connection may take to close its transport (and stop its child).
const CLOSE_GRACE: Duration = Duration::from_secs(10);

/// Why a server could not be connected.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("cannot start `{command}`: {source}{stderr}")]
    Spawn {
        command: String,
        source: std::io::Error,
        stderr: String,
    },
    #[error("no answer to initialize within {0:?}{1}")]
    Timeout(Duration, String),
    #[error("initialize failed: {0}{1}")]
    Initialize(String, String),
    #[error("listing its tools failed: {0}")]
    List(String),
    #[error("{0}")]
    Config(String),
    /// The server wants an OAuth token the bridge does not have (or can no longer refresh): a
    /// person must authorize. The 401's `WWW-Authenticate`, when it answered one.
    #[error("the server needs an OAuth authorization")]
    AuthRequired(Option<String>),
    /// The OAuth client failed (discovery, the token endpoint, the store).
    #[error("OAuth: {0}")]
    OAuth(String),
    /// The bridge's own database does not answer (its OAuth tokens live there).
    #[error("OAuth: {0}")]
    StoreUnavailable(String),
}

impl ConnectError {
    /// A failed start of a stdio server, with what it wrote to stderr.
    fn with_tail(self, tail: String) -> Self {
        match self {
            Self::Initialize(why, _) => Self::Initialize(why, tail),
            Self::Timeout(bound, _) => Self::Timeout(bound, tail),
            other => other,
        }
    }

    /// The A2E error code this error answers with.
    pub fn code(&self) -> a2e::ErrorCode {
        match self {
            Self::Timeout(..) => a2e::ErrorCode::Timeout,
            Self::Spawn { .. } | Self::Initialize(..) => a2e::ErrorCode::McpTransportError,
            Self::List(_) => a2e::ErrorCode::McpProtocolError,
            Self::Config(_) => a2e::ErrorCode::InvalidRequest,
            Self::AuthRequired(_) => a2e::ErrorCode::McpAuthRequired,
            Self::OAuth(_) => a2e::ErrorCode::McpTransportError,
            Self::StoreUnavailable(_) => a2e::ErrorCode::McpServerUnavailable,
        }
    }

    /// The same error with a failed connection said in words (see `explain.rs`).
    fn in_words(self, config: &McpServerConfig) -> Self {
        match self {
            Self::Initialize(why, stderr) => {
                Self::Initialize(explain::in_words(&why, config), stderr)
            }
            other => other,
        }
    }

    /// The same error with `config`'s secrets hidden in its text (see `a2e::redact_text`).
    fn redacted(self, config: &McpServerConfig) -> Self {
        let secrets = config.secret_values();
        let hide = |text: String| crate::a2e::redact_text(&text, &secrets);
        match self {
            Self::Spawn {
                command,
                source,
                stderr,
            } => Self::Spawn {
                command: hide(command),
                source: std::io::Error::new(source.kind(), hide(source.to_string())),
                stderr: hide(stderr),
            },
            Self::Timeout(bound, stderr) => Self::Timeout(bound, hide(stderr)),
            Self::Initialize(why, stderr) => Self::Initialize(hide(why), hide(stderr)),
            Self::List(why) => Self::List(hide(why)),
            Self::Config(why) => Self::Config(hide(why)),
            Self::OAuth(why) => Self::OAuth(hide(why)),
            other @ (Self::AuthRequired(_) | Self::StoreUnavailable(_)) => other,
        }
    }

    /// The last stderr lines of a stdio server the error carries (empty when none).
    pub fn stderr_tail(&self) -> &str {
        match self {
            Self::Spawn { stderr, .. } | Self::Timeout(_, stderr) | Self::Initialize(_, stderr) => {
                stderr
            }
            Self::List(_)
            | Self::Config(_)
            | Self::AuthRequired(_)
            | Self::OAuth(_)
            | Self::StoreUnavailable(_) => "",
        }
    }

    /// The sentence without the stderr tail (for agents other than the server's owner).
    pub fn without_tail(&self) -> String {
        let text = self.to_string();
        text.strip_suffix(self.stderr_tail())
            .map(str::to_owned)
            .unwrap_or(text)
    }
}

/// Everything a server lists, as last synced.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct Lists {
    pub tools: Vec<Tool>,
    pub resources: Vec<Resource>,
    pub templates: Vec<ResourceTemplate>,
    pub prompts: Vec<Prompt>,
}

/// A live connection to one MCP server.
pub struct Connection {
    client: RunningService<RoleClient, BridgeClient>,
    /// Fired when the transport ends (the server went away) or is being closed.
    lost: CancellationToken,
    /// Fired once the transport has closed (and a stdio child has exited).
    closed: CancellationToken,
    pub stderr: Option<Arc<StderrTail>>,
    pub mcp_version: String,
    pub server_name: String,
    pub server_version: String,
    pub capabilities: ServerCapabilities,
    pub connected_at: f64,
    /// Resource URIs subscribed to upstream on this connection (by `resources/subscribe`).
    subscribed: std::sync::Mutex<std::collections::HashSet<String>>,
    /// On 2026-07-28, the `subscriptions/listen` stream that carries the list changes and the
    /// resource URIs followed instead (`listen.rs`).
    listen: Option<Arc<listen::Listen>>,
    /// The calls in flight, by request id and progress token.
    calls: Arc<Calls>,
    /// The config's secret values, hidden in every error text a call makes.
    secrets: Vec<String>,
    /// What the server last answered a 401 or 403 with (Streamable HTTP).
    challenges: Option<Arc<http::Challenges>>,
    /// Whether the server runs MCP tasks, once asked (`tasks.rs`).
    runs_tasks: tokio::sync::OnceCell<bool>,
    /// How plain tool calls are posted on a Streamable HTTP connection in a session
    /// (`direct.rs`); None on the other transports, with OAuth (whose token rmcp's client
    /// refreshes as it posts) and on 2026-07-28, which has no session.
    direct: Option<direct::Direct>,
    /// The pump of the server's notifications (those of a call's stream read in `direct.rs`).
    notifications: tokio::sync::mpsc::WeakUnboundedSender<notify::Note>,
}

/// A new connection with the server's catalogue as first listed.
pub struct Established {
    pub conn: Arc<Connection>,
    pub lists: Lists,
    /// What is worth knowing of how the server is connected, shown in its `error` while it is
    /// ready (empty when nothing): see [`SESSIONLESS`].
    pub note: String,
}

/// The note on a stateless Streamable HTTP server reached over the 2025-11-25 handshake: it has
/// no channel back to the bridge outside a call's answer, so the sampling and elicitation it
/// asks for fail (the Python SDK answers "no back-channel"); over 2026-07-28 they come as
/// input-required results and work.
pub const SESSIONLESS: &str = "this server keeps no session (stateless Streamable HTTP), so over \
    the 2025-11-25 handshake it cannot ask for sampling or elicitation: if it speaks 2026-07-28, \
    set its protocol_version to \"2026-07-28\" (or \"auto\") to get them";

impl Connection {
    /// Resolves when the connection has been lost or is closing.
    pub async fn lost(&self) {
        self.lost.cancelled().await
    }

    /// The tool calls in flight on this connection (a server handed to another replica is
    /// closed once they have ended).
    pub fn calls_in_flight(&self) -> usize {
        self.calls.in_flight()
    }

    /// Whether the connection has been lost or is closing.
    pub fn is_lost(&self) -> bool {
        self.lost.is_cancelled()
    }

    /// `text` with the server's secrets hidden (for errors not made by a call).
    pub fn redact(&self, text: &str) -> String {
        crate::a2e::redact_text(text, &self.secrets)
    }

    /// Stops the connection and waits (bounded) until the transport has closed.
    pub async fn shutdown(&self) {
        self.client.cancellation_token().cancel();
        if tokio::time::timeout(CLOSE_GRACE, self.closed.cancelled())
            .await
            .is_err()
        {
            tracing::warn!("connection did not close within {CLOSE_GRACE:?}");
        }
    }

    /// Runs one request, failing at once if the connection drops meanwhile.
    fn run<T>(
        &self,
        timeout: Duration,
        request: impl Future<Output = Result<T, ServiceError>>,
    ) -> impl Future<Output = Result<T, CallError>> {
        // Boxed before the future that awaits it is made: an rmcp request's future is some
        // 4 to 8 KB, and unboxed it would make every future that awaits an upstream that
        // large, copied whole at each move (each boxing layer of axum, each spawn).
        let request = Box::pin(request);
        self.run_boxed(timeout, request)
    }

    async fn run_boxed<T>(
        &self,
        timeout: Duration,
        request: std::pin::Pin<Box<impl Future<Output = Result<T, ServiceError>>>>,
    ) -> Result<T, CallError> {
        // The answer first: one that came in just before the connection ended still counts
        // (a WebSocket message over the limit fails every call, then ends the connection).
        tokio::select! {
            biased;
            result = tokio::time::timeout(timeout, request) => match result {
                Ok(Ok(result)) => Ok(result),
                Ok(Err(error)) => {
                    // Refused for its token (401 after a refresh) or its scope (403).
                    if let Some(challenge) = self.challenges.as_ref().and_then(|c| c.take()) {
                        return Err(CallError::AuthRequired(challenge));
                    }
                    Err(CallError::from_service(error, &self.lost).redacted(&self.secrets))
                }
                Err(_) => Err(CallError::Timeout(timeout)),
            },
            _ = self.lost.cancelled() => Err(CallError::Lost),
        }
    }

    /// A direct call (`direct.rs`), failing at once if the connection drops meanwhile, its
    /// errors as `run` makes them.
    async fn watch<T>(
        &self,
        call: std::pin::Pin<Box<impl Future<Output = Option<Result<T, CallError>>>>>,
    ) -> Option<Result<T, CallError>> {
        let answered = tokio::select! {
            biased;
            answered = call => answered?,
            _ = self.lost.cancelled() => return Some(Err(CallError::Lost)),
        };
        Some(answered.map_err(
            |error| match self.challenges.as_ref().and_then(|c| c.take()) {
                Some(challenge) => CallError::AuthRequired(challenge),
                None => error.redacted(&self.secrets),
            },
        ))
    }

    /// Waits (at most [`DELIVERY_WAIT`]) until the pump has handed on every notification the
    /// server sent before now: a call calls it once it has its answer, while it is still known
    /// as in flight, so that its progress and log messages reach its caller before the answer.
    async fn delivered(&self) {
        let Some(pump) = self.notifications.upgrade() else {
            return;
        };
        let (flush, flushed) = tokio::sync::oneshot::channel();
        if pump.send(notify::Note::Flush(flush)).is_err() {
            return;
        }
        drop(pump);
        if tokio::time::timeout(DELIVERY_WAIT, flushed).await.is_err() {
            tracing::debug!("the server's notifications before an answer are still on their way");
        }
    }

    /// Checks the server answers: a ping (a cheap listing on 2026-07-28, which has no ping).
    /// A server that does not implement ping still answered, so that counts as alive.
    pub async fn ping(&self, timeout: Duration) -> Result<Duration, CallError> {
        let started = tokio::time::Instant::now();
        let answered = if self.mcp_version == McpProtocol::Stateless.as_str() {
            self.run(timeout, self.client.list_tools(None))
                .await
                .map(drop)
        } else {
            let ping = ClientRequest::PingRequest(Default::default());
            self.run(timeout, self.client.peer().send_request(ping))
                .await
                .map(drop)
        };
        match answered {
            Ok(()) | Err(CallError::Rejected { .. }) => Ok(started.elapsed()),
            Err(error) => Err(error),
        }
    }

    /// Calls a tool for `origin`: what the server asks or reports during the call goes to it.
    pub async fn call_tool(
        &self,
        params: CallToolRequestParams,
        timeout: Duration,
        origin: CallOrigin,
    ) -> Result<CallToolResult, CallError> {
        let mut params = params;
        // A 2026-07-28 client answering input requests itself: its answers and the server's state
        // go on to the server, and the server sees what the client can do, not the bridge.
        let rounds = origin.input_rounds();
        let mut client_meta = None;
        if let Some(rounds) = rounds {
            params.input_responses = rounds.responses.clone();
            params.request_state = rounds.request_state.clone();
            if let Some(capabilities) = &rounds.capabilities {
                let mut meta = RequestMetaObject::default();
                meta.set_client_capabilities(capabilities.clone());
                params
                    .meta
                    .get_or_insert_default()
                    .set_client_capabilities(capabilities.clone());
                client_meta = Some(meta);
            }
        }
        // rmcp's own deadline also tells the server the call is cancelled.
        let options = || {
            let mut options = PeerRequestOptions::no_options();
            options.timeout = Some(timeout);
            options.meta = client_meta.clone();
            options
        };
        for _round in 0..MAX_INPUT_ROUNDS {
            // Posted without rmcp's client when it can be (`direct.rs`); through it when the
            // server has forgotten the session, or on a connection without a direct way.
            let direct = self
                .direct
                .as_ref()
                .and_then(|direct| Some((direct, direct.session()?)));
            if let Some((direct, session)) = direct {
                let call = self.call_direct(direct, session, &mut params, &origin, timeout);
                // Boxed, as rmcp's: see `run`.
                if let Some(answered) = self.watch(Box::pin(call)).await {
                    let result = answered?;
                    match self.answered(result, &mut params, &origin).await? {
                        Some(result) => return Ok(result),
                        None => continue,
                    }
                }
            }
            let request = ClientRequest::CallToolRequest(CallToolRequest::new(params.clone()));
            let call = async {
                let handle = self
                    .client
                    .peer()
                    .send_request_with_option(request, options())
                    .await?;
                let _tracked =
                    self.calls
                        .track(handle.id.clone(), &handle.progress_token, origin.clone());
                let cancel = CancelOnDrop::new(&handle);
                let answer = handle.await_response().await;
                // Answered, or rmcp's own deadline passed (it has told the server then).
                cancel.disarm();
                // What the server sent before its answer reaches the caller first.
                self.delivered().await;
                answer
            };
            let result = self.run(timeout + Duration::from_secs(1), call).await?;
            if let Some(result) = self.answered(result, &mut params, &origin).await? {
                return Ok(result);
            }
        }
        Err(CallError::Protocol(format!(
            "the server still asked for input after {MAX_INPUT_ROUNDS} rounds"
        )))
    }

    /// A call's answer: its result, or None when the server asked for input, which the caller
    /// gave and `params` now carries for the next round.
    async fn answered(
        &self,
        result: ServerResult,
        params: &mut CallToolRequestParams,
        origin: &CallOrigin,
    ) -> Result<Option<CallToolResult>, CallError> {
        match result {
            ServerResult::CallToolResult(result) => Ok(Some(result)),
            // 2026-07-28: the server needs input first; the caller gives it, then the call is
            // made again with the answers and the server's state.
            ServerResult::InputRequiredResult(required) => {
                if let Some(rounds) = origin.input_rounds() {
                    rounds.hand_over(required);
                    return Err(CallError::Rejected {
                        code: INPUT_HANDED_OVER,
                        message: "the server needs the MCP client's input first".into(),
                    });
                }
                let requests = required.input_requests.unwrap_or_default();
                if requests.is_empty() && required.request_state.is_none() {
                    return Err(CallError::Protocol(
                        "an input-required result asked for nothing".into(),
                    ));
                }
                // Boxed: rare, and large (the agent's answers are awaited in it).
                let answers = Box::pin(self.answer_inputs(requests, origin)).await?;
                params.input_responses = (!answers.is_empty()).then_some(answers);
                params.request_state = required.request_state;
                Ok(None)
            }
            // A server may answer a tool without content with an empty result.
            other => serde_json::to_value(&other)
                .ok()
                .and_then(|v| serde_json::from_value(v).ok())
                .map(Some)
                .ok_or_else(|| {
                    CallError::Protocol(
                        "the server answered a tool call with something else".into(),
                    )
                }),
        }
    }

    /// Answers the input requests of an input-required result through the caller (sampling,
    /// elicitation) or the owner (roots), exactly as a server-initiated request would be.
    async fn answer_inputs(
        &self,
        requests: InputRequests,
        origin: &CallOrigin,
    ) -> Result<InputResponses, CallError> {
        let handler = self.client.service();
        let mut answers = InputResponses::new();
        for (key, request) in requests {
            let answer = match request {
                InputRequest::CreateMessage(r) => handler
                    .sample_for(Route::Caller(origin.as_ref()), key.clone(), &r.params)
                    .await
                    .and_then(to_json),
                InputRequest::Elicitation(r) => handler
                    .elicit_for(Route::Caller(origin.as_ref()), key.clone(), &r.params)
                    .await
                    .and_then(to_json),
                InputRequest::ListRoots(_) => {
                    handler.roots_for_owner(key.clone()).await.and_then(to_json)
                }
                _ => {
                    return Err(CallError::Protocol(format!(
                        "input request \"{key}\" is of a kind this bridge does not know"
                    )));
                }
            };
            let answer = answer.map_err(|e| CallError::Rejected {
                code: e.code.0,
                message: e.message.into_owned(),
            })?;
            answers.insert(key, answer);
        }
        Ok(answers)
    }

    pub async fn list_resources(
        &self,
        cursor: Option<String>,
        timeout: Duration,
    ) -> Result<ListResourcesResult, CallError> {
        let params = PaginatedRequestParams::default().with_cursor(cursor);
        self.run(timeout, self.client.list_resources(Some(params)))
            .await
    }

    pub async fn list_templates(
        &self,
        cursor: Option<String>,
        timeout: Duration,
    ) -> Result<ListResourceTemplatesResult, CallError> {
        let params = PaginatedRequestParams::default().with_cursor(cursor);
        self.run(timeout, self.client.list_resource_templates(Some(params)))
            .await
    }

    pub async fn list_prompts(
        &self,
        cursor: Option<String>,
        timeout: Duration,
    ) -> Result<ListPromptsResult, CallError> {
        let params = PaginatedRequestParams::default().with_cursor(cursor);
        self.run(timeout, self.client.list_prompts(Some(params)))
            .await
    }

    pub async fn read_resource(
        &self,
        uri: &str,
        timeout: Duration,
    ) -> Result<ReadResourceResult, CallError> {
        let params = ReadResourceRequestParams::new(uri);
        self.run(timeout, self.client.read_resource(params)).await
    }

    /// Renders a prompt; with `rounds` (a 2026-07-28 client that answers input requests
    /// itself), once, carrying the client's answers and capabilities: a server's input-required
    /// result is handed to the client (hub::InputRounds) instead of being answered here.
    pub async fn get_prompt(
        &self,
        params: GetPromptRequestParams,
        timeout: Duration,
        rounds: Option<&InputRounds>,
    ) -> Result<GetPromptResult, CallError> {
        let Some(rounds) = rounds else {
            return self.run(timeout, self.client.get_prompt(params)).await;
        };
        let mut params = params;
        params.input_responses = rounds.responses.clone();
        params.request_state = rounds.request_state.clone();
        let mut options = PeerRequestOptions::no_options();
        options.timeout = Some(timeout);
        if let Some(capabilities) = &rounds.capabilities {
            let mut meta = RequestMetaObject::default();
            meta.set_client_capabilities(capabilities.clone());
            options.meta = Some(meta);
        }
        let request = ClientRequest::GetPromptRequest(GetPromptRequest::new(params));
        let peer = self.client.peer().clone();
        let call = async move {
            let handle = peer.send_request_with_option(request, options).await?;
            handle.await_response().await
        };
        match self.run(timeout + Duration::from_secs(1), call).await? {
            ServerResult::GetPromptResult(result) => Ok(result),
            ServerResult::InputRequiredResult(required) => {
                rounds.hand_over(required);
                Err(CallError::Rejected {
                    code: INPUT_HANDED_OVER,
                    message: "the server needs the MCP client's input first".into(),
                })
            }
            _ => Err(CallError::Protocol(
                "the server answered prompts/get with something else".into(),
            )),
        }
    }

    pub async fn complete(
        &self,
        params: CompleteRequestParams,
        timeout: Duration,
    ) -> Result<CompleteResult, CallError> {
        self.run(timeout, self.client.complete(params)).await
    }

    /// Subscribes upstream to `uri` unless this connection already is: on 2026-07-28 by a new
    /// listen that carries it too, before by `resources/subscribe`.
    #[allow(deprecated)] // resources/subscribe is how 2025-11-25 servers are subscribed to.
    pub async fn subscribe(&self, uri: &str, timeout: Duration) -> Result<(), CallError> {
        if let Some(listen) = &self.listen {
            return self.run(timeout, listen.follow([uri.to_owned()])).await;
        }
        if self
            .subscribed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(uri)
        {
            return Ok(());
        }
        self.run(
            timeout,
            self.client.subscribe(SubscribeRequestParams::new(uri)),
        )
        .await?;
        self.subscribed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(uri.to_owned());
        Ok(())
    }

    /// Unsubscribes upstream from `uri` if this connection is subscribed: on 2026-07-28 by a
    /// new listen without it.
    #[allow(deprecated)]
    pub async fn unsubscribe(&self, uri: &str, timeout: Duration) -> Result<(), CallError> {
        if let Some(listen) = &self.listen {
            return self.run(timeout, listen.unfollow(uri)).await;
        }
        if !self
            .subscribed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(uri)
        {
            return Ok(());
        }
        self.run(
            timeout,
            self.client.unsubscribe(UnsubscribeRequestParams::new(uri)),
        )
        .await
    }

    /// On 2026-07-28, follows every URI of `uris` (those agents follow, on a new connection) in
    /// one listen, so they are subscribed to together or not at all; none on a connection that
    /// subscribes by `resources/subscribe`, one URI at a time.
    pub async fn follow_all(
        &self,
        uris: &[String],
        timeout: Duration,
    ) -> Option<Result<(), CallError>> {
        let listen = self.listen.as_ref()?;
        Some(self.run(timeout, listen.follow(uris.to_vec())).await)
    }

    /// Lists everything the server offers that its capabilities announce. A list the server does
    /// not implement after all (-32601) counts as empty.
    pub async fn list_all(&self) -> Result<Lists, ServiceError> {
        let caps = &self.capabilities;
        let client = &self.client;
        Ok(Lists {
            tools: optional(caps.tools.is_some(), client.list_all_tools()).await?,
            resources: optional(caps.resources.is_some(), client.list_all_resources()).await?,
            templates: optional(
                caps.resources.is_some(),
                client.list_all_resource_templates(),
            )
            .await?,
            prompts: optional(caps.prompts.is_some(), client.list_all_prompts()).await?,
        })
    }
}

/// A list when the server announces it, empty when it does not or answers "method not found".
async fn optional<T>(
    announced: bool,
    list: impl Future<Output = Result<Vec<T>, ServiceError>>,
) -> Result<Vec<T>, ServiceError> {
    if !announced {
        return Ok(Vec::new());
    }
    match list.await {
        Err(ServiceError::McpError(e)) if e.code == ErrorCode::METHOD_NOT_FOUND => Ok(Vec::new()),
        other => other,
    }
}

/// How long a call's answer waits for the notifications the server sent before it to be handed
/// on: they are handed on at once, unless the pump is waiting out a store outage for a
/// `resources/updated` (`notify.rs`), which does not hold an answer up for longer than this.
const DELIVERY_WAIT: Duration = Duration::from_secs(5);

/// Why the bridge cancels a call it dropped (`notifications/cancelled`'s `reason`).
pub const CANCEL_REASON: &str = "the caller cancelled the call (or closed its request)";

/// Tells the server a request is cancelled when the future awaiting its answer is dropped
/// first: rmcp forgets a dropped request without a word, and the server would work on.
/// Dropping happens whatever stops the caller: its HTTP request closed, `DELETE /v1/calls`,
/// the connection lost (the notification then goes nowhere), on every transport alike.
struct CancelOnDrop {
    armed: Option<(rmcp::Peer<RoleClient>, rmcp::model::RequestId)>,
}

impl CancelOnDrop {
    fn new(handle: &rmcp::service::RequestHandle<RoleClient>) -> Self {
        Self::of(handle.peer.clone(), handle.id.clone())
    }

    /// For the request `id`, the notification sent through `peer`.
    fn of(peer: rmcp::Peer<RoleClient>, id: rmcp::model::RequestId) -> Self {
        Self {
            armed: Some((peer, id)),
        }
    }

    fn disarm(mut self) {
        self.armed = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some((peer, id)) = self.armed.take() else {
            return;
        };
        // Outside a runtime (the process is ending) there is no one to send it.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        tracing::debug!(request_id = %id, "cancelling a dropped call upstream");
        let notification = rmcp::model::CancelledNotification::new(
            rmcp::model::CancelledNotificationParam::new(Some(id), Some(CANCEL_REASON.into())),
        );
        runtime.spawn(async move {
            if let Err(error) = peer.send_notification(notification.into()).await {
                tracing::debug!(%error, "cannot tell the server a call is cancelled");
            }
        });
    }
}

/// The code of the error a call ends with when its server's input-required result went to a
/// client that answers it itself (`hub::InputRounds`): the front end answers with that result.
pub const INPUT_HANDED_OVER: i32 = -32_090;

/// What went wrong with a call on a live connection.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("the connection to the server was lost during the call")]
    Lost,
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    #[error("the server refused the request: {message}")]
    Rejected { code: i32, message: String },
    /// 2026-07-28: the server needs a capability the client did not declare (-32021); what it
    /// needs, as `ClientCapabilities` (its error's `data.requiredCapabilities`).
    #[error("the server needs a client capability that was not declared: {0}")]
    MissingClientCapability(serde_json::Value),
    #[error("the transport failed: {0}")]
    Transport(String),
    #[error("the server answered something unexpected: {0}")]
    Protocol(String),
    /// The server's answer was over `max_message_bytes` (the sentence names the limit).
    #[error("{0}")]
    TooLarge(String),
    /// The server refused the call's token (401) or its scope (403 `insufficient_scope`): its
    /// `WWW-Authenticate` challenge.
    #[error("the server needs a further OAuth authorization")]
    AuthRequired(String),
}

impl CallError {
    /// The A2E error code this error answers with.
    pub fn code(&self) -> a2e::ErrorCode {
        match self {
            Self::Lost => a2e::ErrorCode::McpServerUnavailable,
            Self::Timeout(_) => a2e::ErrorCode::Timeout,
            // -32602: invalid params; -32601: method not found; -32002: resource not found.
            Self::Rejected { code: -32602, .. } => a2e::ErrorCode::InvalidRequest,
            Self::Rejected { code: -32601, .. } | Self::MissingClientCapability(_) => {
                a2e::ErrorCode::McpCapabilityMissing
            }
            Self::Rejected { code: -32002, .. } => a2e::ErrorCode::McpResourceNotFound,
            // An answer over max_message_bytes: the same call would get it again.
            Self::Rejected { .. } | Self::Protocol(_) | Self::TooLarge(_) => {
                a2e::ErrorCode::McpProtocolError
            }
            Self::Transport(_) => a2e::ErrorCode::McpTransportError,
            Self::AuthRequired(_) => a2e::ErrorCode::McpAuthRequired,
        }
    }

    /// The same error with `secrets` hidden in its text (see `a2e::redact_text`).
    fn redacted(self, secrets: &[String]) -> Self {
        let hide = |text: String| crate::a2e::redact_text(&text, secrets);
        match self {
            Self::Rejected { code, message } => Self::Rejected {
                code,
                message: hide(message),
            },
            Self::Transport(why) => Self::Transport(hide(why)),
            Self::Protocol(why) => Self::Protocol(hide(why)),
            Self::TooLarge(why) => Self::TooLarge(hide(why)),
            other @ (Self::Lost
            | Self::Timeout(_)
            | Self::AuthRequired(_)
            | Self::MissingClientCapability(_)) => other,
        }
    }

    fn from_service(error: ServiceError, lost: &CancellationToken) -> Self {
        match error {
            ServiceError::McpError(e) if e.code.0 == limit::MESSAGE_TOO_LARGE => {
                Self::TooLarge(e.message.into_owned())
            }
            ServiceError::McpError(e)
                if e.code == ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY =>
            {
                let required = e.data.as_ref().and_then(|d| d.get("requiredCapabilities"));
                Self::MissingClientCapability(
                    required.cloned().unwrap_or_else(|| serde_json::json!({})),
                )
            }
            ServiceError::McpError(e) => Self::Rejected {
                code: e.code.0,
                message: e.message.into_owned(),
            },
            ServiceError::TransportClosed => Self::Lost,
            ServiceError::TransportSend(_) if lost.is_cancelled() => Self::Lost,
            // Said without rmcp's type names (`Transport [mcp_bridge::…<rmcp::…>]`).
            ServiceError::TransportSend(e) => {
                Self::Transport(explain::without_type_names(&e.to_string()))
            }
            ServiceError::Timeout { timeout } => Self::Timeout(timeout),
            other => Self::Protocol(other.to_string()),
        }
    }
}

/// Connects to the server `config` describes, initialises within `config.connect_bound()` and
/// lists its catalogue. What the server asks of agents and tells them goes through `ctx`.
/// Every error's text has the config's secrets hidden.
pub async fn connect(config: &McpServerConfig, ctx: Context) -> Result<Established, ConnectError> {
    connect_unredacted(config, ctx)
        .await
        .map_err(|error| error.in_words(config).redacted(config))
}

async fn connect_unredacted(
    config: &McpServerConfig,
    ctx: Context,
) -> Result<Established, ConnectError> {
    let bound = config.connect_bound();
    let calls = Arc::new(Calls::default());
    let (notes_tx, notes_rx) = tokio::sync::mpsc::unbounded_channel();
    let notifications = notes_tx.downgrade();
    let lost = CancellationToken::new();
    let closed = CancellationToken::new();
    let deadline = tokio::time::Instant::now() + bound;
    let launch = Launch {
        handler: BridgeClient::new(ctx.clone(), calls.clone()),
        taps: Taps {
            lost: lost.clone(),
            closed: closed.clone(),
            notifications: notes_tx,
        },
        protocol: config.protocol_version,
        deadline,
        bound,
    };
    let (guard, max) = (ctx.guard, ctx.max_message_bytes);
    if config.transport != McpTransport::Stdio {
        // The clear error; the clients' resolvers check again on every connection.
        let url = url::Url::parse(&config.url)
            .map_err(|e| ConnectError::Config(format!("`url`: {e}")))?;
        launch
            .within(guard.preflight(&url))
            .await?
            .map_err(|refused| match refused {
                Refused::Guard(_) => ConnectError::Config(refused.to_string()),
                Refused::Unresolved(why) => ConnectError::Initialize(why, String::new()),
            })?;
    }
    let (url, id) = (config.url.as_str(), config.server_id.as_str());
    // A server known to want OAuth: its token (or the reason there is none) first.
    let client = ctx
        .oauth
        .clone()
        .filter(|_| config.transport != McpTransport::Stdio);
    let mut oauth = None;
    if let Some(client) = client {
        match launch.within(client.authorized()).await? {
            Ok(manager) => oauth = manager,
            Err(oauth::OAuthError::NeedsAuthorization) => {
                return Err(ConnectError::AuthRequired(None));
            }
            Err(oauth::OAuthError::Failed(why)) => return Err(ConnectError::OAuth(why)),
            Err(oauth::OAuthError::StoreUnavailable(why)) => {
                return Err(ConnectError::StoreUnavailable(why));
            }
        }
    }
    let mut challenges = None;
    let mut direct = None;
    let mut streamable = None;
    let (client, stderr) = match config.transport {
        McpTransport::Stdio => {
            let (transport, stderr) = stdio::spawn(config, max)?;
            match launch.start(transport).await {
                Ok(client) => (client, Some(stderr)),
                // What the process said on its way out explains the failure best.
                Err(error) => return Err(error.with_tail(stderr.settled_tail().await)),
            }
        }
        McpTransport::Http => {
            let bounded = http::client(config, guard)?;
            streamable = Some(bounded.clone());
            let noted = bounded.challenges.clone();
            challenges = Some(noted.clone());
            let started = match oauth {
                Some(manager) => {
                    let client = rmcp::transport::AuthClient::new(bounded, manager);
                    launch.start(http::transport(config, client, max)?).await
                }
                None => {
                    direct = direct::Direct::new(bounded.clone(), url, max);
                    launch.start(http::transport(config, bounded, max)?).await
                }
            };
            match started {
                Ok(client) => (client, None),
                Err(error) => return Err(needs_authorization(noted.take()).unwrap_or(error)),
            }
        }
        McpTransport::Sse => {
            let headers = with_token(http::header_map(config)?, oauth, &launch).await?;
            let opened = sse::connect(url, headers, guard, max, id);
            let transport = launch.within(opened).await??;
            (launch.start(transport).await?, None)
        }
        McpTransport::Ws => {
            let headers = with_token(http::header_map(config)?, oauth, &launch).await?;
            let opened = ws::connect(url, headers, guard, max, id);
            let transport = launch.within(opened).await??;
            (launch.start(transport).await?, None)
        }
    };
    // The pump ends when the transport (and with it the sender) is gone.
    tokio::spawn(notify::pump(ctx, calls.clone(), notes_rx));
    // A stale list served from the cache while a server is down would hide the outage.
    client
        .set_response_cache_config(rmcp::ClientCacheConfig::disabled())
        .await;
    let info = client.peer_info();
    let implementation = info.as_ref().and_then(|i| i.server_info.clone());
    let capabilities = info
        .as_ref()
        .map(|i| i.capabilities.clone())
        .unwrap_or_default();
    let mcp_version = info
        .as_ref()
        .map(|i| i.protocol_version.to_string())
        .unwrap_or_default();
    // 2026-07-28 and later have no session, and name each request in its headers; what the
    // server sends outside a call comes only on a listen.
    let modern = mcp_version.as_str() >= McpProtocol::Stateless.as_str();
    let direct = direct.filter(|_| !modern);
    let listen = modern
        .then(|| listen::Listen::new(client.peer().clone(), config, &capabilities, lost.clone()));
    let conn = Arc::new(Connection {
        mcp_version,
        server_name: implementation
            .as_ref()
            .map(|i| i.name.clone())
            .unwrap_or_default(),
        server_version: implementation.map(|i| i.version).unwrap_or_default(),
        capabilities,
        connected_at: crate::a2e::now(),
        subscribed: Default::default(),
        listen,
        calls,
        secrets: config.secret_values(),
        challenges,
        runs_tasks: Default::default(),
        direct,
        notifications,
        client,
        lost,
        closed,
        stderr,
    });
    // A bridge (this one through a proxy, or one whose chain is too long) is refused before
    // anything is listed through it.
    if let Some(why) = chain::Chain::of(&conn.capabilities).and_then(|c| c.refusal()) {
        conn.shutdown().await;
        return Err(ConnectError::Config(why));
    }
    // Listening before the first listing: a change made between the two is then in the listing
    // or announced on the stream. A server that will not listen is still served (its calls work);
    // a subscription to one of its resources then says why.
    if let Some(listen) = &conn.listen {
        match tokio::time::timeout_at(deadline, listen.start()).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                let error = conn.redact(&error.to_string());
                tracing::warn!(server_id = %config.server_id, %error, "cannot open subscriptions/listen");
            }
            Err(_) => {
                tracing::warn!(server_id = %config.server_id, "no acknowledgement of subscriptions/listen")
            }
        }
    }
    match tokio::time::timeout_at(deadline, conn.list_all()).await {
        Ok(Ok(lists)) => {
            // Known once a request after `initialize` went (the listing).
            let sessionless = streamable.is_some_and(|http| http.sessionless());
            let legacy = config.protocol_version == McpProtocol::Legacy;
            let note = match sessionless && legacy {
                true => SESSIONLESS.to_owned(),
                false => String::new(),
            };
            Ok(Established { conn, lists, note })
        }
        Ok(Err(e)) => {
            conn.shutdown().await;
            // A server may take `initialize` without a token and want one for the rest.
            let refused = conn.challenges.as_ref().and_then(|c| c.take());
            Err(needs_authorization(refused).unwrap_or(ConnectError::List(e.to_string())))
        }
        Err(_) => {
            conn.shutdown().await;
            Err(ConnectError::List(format!("no answer within {bound:?}")))
        }
    }
}

/// `headers` with the OAuth access token (sse and ws servers take one per connection).
async fn with_token(
    mut headers: reqwest::header::HeaderMap,
    oauth: Option<rmcp::transport::AuthorizationManager>,
    launch: &Launch,
) -> Result<reqwest::header::HeaderMap, ConnectError> {
    let Some(manager) = oauth else {
        return Ok(headers);
    };
    let token = launch
        .within(manager.get_access_token())
        .await?
        .map_err(|e| match oauth::OAuthError::from(e) {
            oauth::OAuthError::NeedsAuthorization => ConnectError::AuthRequired(None),
            oauth::OAuthError::Failed(why) => ConnectError::OAuth(why),
            oauth::OAuthError::StoreUnavailable(why) => ConnectError::StoreUnavailable(why),
        })?;
    let value = reqwest::header::HeaderValue::from_str(&format!("Bearer {token}"))
        .map_err(|_| ConnectError::OAuth("the access token is not a header value".into()))?;
    headers.insert(reqwest::header::AUTHORIZATION, value);
    Ok(headers)
}

/// A 401 (or 403) answer to an sse or ws connection that asks for a bearer token.
fn refused_for_authorization(
    status: reqwest::StatusCode,
    headers: &reqwest::header::HeaderMap,
) -> Option<ConnectError> {
    if status != reqwest::StatusCode::UNAUTHORIZED && status != reqwest::StatusCode::FORBIDDEN {
        return None;
    }
    let challenge = headers
        .get(reqwest::header::WWW_AUTHENTICATE)?
        .to_str()
        .ok()?;
    needs_authorization(Some(challenge.to_owned()))
}

/// A 401 asking for a bearer token, or a 403 asking for more scope, as the error it is.
fn needs_authorization(challenge: Option<String>) -> Option<ConnectError> {
    let challenge = challenge?;
    oauth::is_bearer_challenge(&challenge).then_some(ConnectError::AuthRequired(Some(challenge)))
}

/// What every transport of a connection reports to: its end, and its notifications in order.
struct Taps {
    lost: CancellationToken,
    closed: CancellationToken,
    notifications: tokio::sync::mpsc::UnboundedSender<notify::Note>,
}

impl Taps {
    fn wrap<T>(self, transport: T) -> Watched<T> {
        Watched::new(transport, self.lost, self.closed, self.notifications)
    }
}

/// What starting a session over any transport needs, and its deadline.
struct Launch {
    handler: BridgeClient,
    taps: Taps,
    protocol: McpProtocol,
    deadline: tokio::time::Instant,
    bound: Duration,
}

impl Launch {
    /// `step` by the deadline, or the connect timeout.
    async fn within<T>(&self, step: impl Future<Output = T>) -> Result<T, ConnectError> {
        within(self.deadline, self.bound, step).await
    }

    /// Starts the session over `transport`, watched, by the deadline.
    async fn start<T: Transport<RoleClient> + 'static>(
        self,
        transport: T,
    ) -> Result<RunningService<RoleClient, BridgeClient>, ConnectError> {
        let Launch {
            handler,
            taps,
            protocol,
            deadline,
            bound,
        } = self;
        match within(
            deadline,
            bound,
            start(handler, taps.wrap(transport), protocol),
        )
        .await?
        {
            Ok(client) => Ok(client),
            // An mcp-bridge's `/mcp` (this one or another) refused us: not worth retrying as a
            // transport error, the config is wrong.
            Err(e) if e.to_string().contains(crate::guard::LOOP_REFUSED) => {
                Err(ConnectError::Config(format!(
                    "the server is an mcp-bridge's /mcp endpoint (this bridge or another), which \
                     cannot be an upstream of a bridge: requests would loop ({e})"
                )))
            }
            Err(e) => Err(ConnectError::Initialize(e.to_string(), String::new())),
        }
    }
}

/// `step` by `deadline`, or the connect timeout (`bound`).
async fn within<T>(
    deadline: tokio::time::Instant,
    bound: Duration,
    step: impl Future<Output = T>,
) -> Result<T, ConnectError> {
    tokio::time::timeout_at(deadline, step)
        .await
        .map_err(|_| ConnectError::Timeout(bound, String::new()))
}

/// Starts the session in the era the config asks for.
async fn start<T: Transport<RoleClient> + 'static>(
    handler: BridgeClient,
    transport: T,
    protocol: McpProtocol,
) -> Result<RunningService<RoleClient, BridgeClient>, ClientInitializeError> {
    match protocol {
        McpProtocol::Stateless => {
            let preferred_versions = vec![ProtocolVersion::V_2026_07_28];
            handler
                .serve_with_lifecycle(
                    transport,
                    ClientLifecycleMode::Discover { preferred_versions },
                )
                .await
        }
        McpProtocol::Auto => {
            let lifecycle = ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(ProtocolVersion::V_2025_11_25),
            };
            handler.serve_with_lifecycle(transport, lifecycle).await
        }
        McpProtocol::Legacy => handler.serve(transport).await,
    }
}

impl Connection {
    /// Tells the server the client's roots changed.
    pub async fn roots_changed(&self) {
        #[allow(deprecated)] // Roots are how 2025-11-25 servers learn the client's filesystem.
        let sent = self.client.notify_roots_list_changed().await;
        if let Err(error) = sent {
            tracing::warn!(%error, "cannot tell a server the roots changed");
        }
    }
}
