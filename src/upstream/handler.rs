//! The rmcp `ClientHandler` of every upstream connection: what mcp-bridge tells servers about
//! itself, and the requests servers make of agents (sampling, roots, elicitation), each sent to
//! the right agent over the hub and answered back.
// SEP-2577 deprecates sampling and roots for 2026-07-28; 2025-11-25 servers still use them.
#![allow(deprecated)]

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ErrorCode, Implementation, ListRootsResult, ProtocolVersion,
    RequestMetaObject,
};
use rmcp::service::{InboundStreamOrigin, RequestContext};
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{Value, json};
use tracing::{Instrument as _, Span};

use super::calls::{CallOrigin, Calls};
use super::traced;
use crate::a2e::{
    ElicitAction, ElicitRequest, McpRoot, Message, NotificationMethod, RootsListRequest,
    SamplingRequest,
};
use crate::hub::{Answer, AskError, AskKind, Hub, Recipient, ServerRequest};
use crate::store::Store;

/// How long the owner gets to answer a roots request before the stored roots are used.
const ROOTS_WAIT: Duration = Duration::from_secs(5);

/// What a connection needs from the rest of the service.
#[derive(Clone)]
pub struct Context {
    pub server_id: String,
    /// Who what the server starts on this connection goes to when no call says otherwise
    /// (logs, roots, sampling and elicitation outside a call): the server's owner, or on a
    /// [`Context::private`] connection the agent whose session it is.
    pub owner: String,
    /// The connection is one agent's own session (a `per_agent` server's): what arrives on it
    /// is that agent's alone, `resources/updated` included.
    pub private: bool,
    pub hub: Arc<Hub>,
    pub store: Store,
    /// Bound on waiting for an agent's answer (the server's `timeout`).
    pub timeout: Duration,
    /// The list changes the server announces (`NotificationMethod::is_list_changed`), for its
    /// supervisor to re-sync.
    pub events: tokio::sync::mpsc::UnboundedSender<NotificationMethod>,
    /// Where the server may be reached (`http`, `sse`, `ws`).
    pub guard: crate::guard::Guard,
    /// Largest message taken from the server (`max_message_bytes`).
    pub max_message_bytes: usize,
    /// Whether a plain tool call may be posted without rmcp's client (`direct.rs`).
    pub fast_paths: bool,
    /// The OAuth client of the grant this connection uses (`http`, `sse`, `ws`).
    pub oauth: Option<Arc<super::oauth::Client>>,
}

pub struct BridgeClient {
    ctx: Context,
    calls: Arc<Calls>,
}

impl BridgeClient {
    pub fn new(ctx: Context, calls: Arc<Calls>) -> Self {
        Self { ctx, calls }
    }

    pub fn server_id(&self) -> &str {
        &self.ctx.server_id
    }

    /// The call a request belongs to: the one whose stream the server sent it on (Streamable
    /// HTTP), else, on transports that do not say (stdio, legacy SSE, WebSocket), the only call
    /// in flight on this connection. With several in flight it cannot be told.
    fn origin(&self, context: &RequestContext<RoleClient>) -> Result<CallOrigin, Unrouted> {
        if let Some(InboundStreamOrigin::OutboundRequest(id)) =
            context.extensions.get::<InboundStreamOrigin>()
            && let Some(origin) = self.calls.by_request(id)
        {
            return Ok(origin);
        }
        self.calls.sole().ok_or(Unrouted {
            in_flight: self.calls.in_flight(),
        })
    }

    /// Runs `handle` (the handling of a server's request rmcp received, on rmcp's own task) in
    /// the span of the call the request belongs to, found as [`BridgeClient::origin`] finds the
    /// call, so that its wait is a child of that call's span. Only when spans are exported.
    async fn in_call<T>(
        &self,
        context: &RequestContext<RoleClient>,
        handle: impl Future<Output = T>,
    ) -> T {
        if !crate::telemetry::exporting() {
            return handle.await;
        }
        let id = match context.extensions.get::<InboundStreamOrigin>() {
            Some(InboundStreamOrigin::OutboundRequest(id)) => Some(id),
            _ => None,
        };
        match self.calls.span(id) {
            Some(span) => Box::pin(handle.instrument(span)).await,
            None => Box::pin(handle).await,
        }
    }

    /// The span of the wait for the answer to a server's request, when spans are exported:
    /// continuing the trace the request carries, in `upstream` (its `_meta`, which rmcp took
    /// out of its params) or in `_meta` of its `params`.
    fn wait_span(
        &self,
        method: &'static str,
        request_id: &str,
        route: &Route<'_>,
        params: &impl serde::Serialize,
        upstream: Option<&RequestMetaObject>,
    ) -> Option<Span> {
        if !crate::telemetry::exporting() {
            return None;
        }
        let route = match route {
            Route::Caller(_) => "caller",
            Route::Owner(_) => "owner",
        };
        let server = &self.ctx.server_id;
        let upstream = upstream
            .map(|meta| &meta.0.0)
            .filter(|meta| !meta.is_empty());
        if let Some(meta) = upstream {
            return Some(traced::wait_span(
                method,
                server,
                request_id,
                route,
                Some(meta),
            ));
        }
        let params = serde_json::to_value(params).unwrap_or_default();
        let meta = params.get("_meta").and_then(Value::as_object);
        Some(traced::wait_span(method, server, request_id, route, meta))
    }

    /// `message` (an A2E request for the same MCP request `params`) as a request for a call's
    /// recipient or the owner.
    /// With `wait`, both carry its trace in `_meta`, for whoever answers.
    fn request<M: Message + serde::Serialize>(
        &self,
        kind: AskKind,
        params: &impl serde::Serialize,
        message: &M,
        wait: Option<&Span>,
    ) -> ServerRequest {
        let mut request = ServerRequest {
            kind,
            params: serde_json::to_value(params).unwrap_or_default(),
            message: serde_json::to_value(message).unwrap_or_default(),
            id: message.id().to_owned(),
            deadline: self.ctx.timeout,
        };
        if let Some(wait) = wait {
            traced::put_trace(wait, &mut request.params);
            traced::put_trace(wait, &mut request.message);
        }
        request
    }

    /// Asks as [`BridgeClient::ask`] does, in the span `wait` (when spans are exported), which
    /// a refusal marks failed.
    async fn ask_in(
        &self,
        wait: Option<Span>,
        route: Route<'_>,
        request: ServerRequest,
    ) -> Result<Answer, ErrorData> {
        let Some(wait) = wait else {
            return self.ask(route, request).await;
        };
        let answer = Box::pin(self.ask(route, request).instrument(wait.clone())).await;
        if let Err(error) = &answer {
            traced::wait_failed(&wait, error);
        }
        answer
    }

    /// Asks the call's recipient, or the owner over its channel, and waits for the answer; or
    /// says why the server is refused.
    async fn ask(&self, route: Route<'_>, request: ServerRequest) -> Result<Answer, ErrorData> {
        let kind = request.kind;
        let unrouted = match route {
            Route::Caller(recipient) => {
                return recipient
                    .ask(request)
                    .await
                    .map_err(|why| refuse(kind, &why));
            }
            Route::Owner(unrouted) => unrouted,
        };
        let owner = &self.ctx.owner;
        self.ctx
            .hub
            .ask(
                owner,
                kind.a2e_type(),
                &request.id,
                &request.message,
                request.deadline,
            )
            .await
            .map(Answer::A2e)
            .map_err(|e| match e {
                AskError::NotConnected(_) => refuse(
                    kind,
                    &format!(
                        "{unrouted}, so it went to the server's owner \"{owner}\", who has no \
                         event stream open"
                    ),
                ),
                e => refuse(kind, &e.to_string()),
            })
    }
}

/// Why a server's request could not be tied to a call.
#[derive(Debug, Clone, Copy)]
pub struct Unrouted {
    in_flight: usize,
}

impl std::fmt::Display for Unrouted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.in_flight {
            0 => write!(f, "it came while no call was in flight"),
            n => write!(
                f,
                "the bridge cannot tell which of the {n} calls in flight on this server it belongs to"
            ),
        }
    }
}

/// Who a server's sampling or elicitation request goes to.
#[derive(Clone, Copy)]
pub enum Route<'a> {
    /// The agent (or `/mcp` client) whose call caused it.
    Caller(&'a dyn Recipient),
    /// The server's owner, since the call is not known.
    Owner(Unrouted),
}

impl<'a> Route<'a> {
    fn of(origin: &'a Result<CallOrigin, Unrouted>) -> Self {
        match origin {
            Ok(origin) => Route::Caller(origin.as_ref()),
            Err(unrouted) => Route::Owner(*unrouted),
        }
    }
}

/// The code of each refusal, so a server (and whoever reads its error) is told what was refused.
fn refusal_code(kind: AskKind) -> &'static str {
    match kind {
        AskKind::Sampling => "mcp_sampling_refused",
        AskKind::Elicitation => "mcp_elicitation_refused",
    }
}

/// The JSON-RPC error a server gets when no agent answers or the agent refuses.
pub fn refuse(kind: AskKind, why: &str) -> ErrorData {
    let code = refusal_code(kind);
    ErrorData::new(
        ErrorCode(-1),
        format!("{code}: {why}"),
        Some(json!({ "code": code })),
    )
}

/// An MCP client's answer as the MCP result it should be.
fn mcp_answer<T: serde::de::DeserializeOwned>(
    kind: AskKind,
    answer: Value,
) -> Result<T, ErrorData> {
    serde_json::from_value(answer)
        .map_err(|e| refuse(kind, &format!("the MCP client's answer: {e}")))
}

fn request_id(context: &RequestContext<RoleClient>) -> String {
    match serde_json::to_value(&context.id) {
        Ok(Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

impl BridgeClient {
    /// Samples for the server: through the call's recipient (a `/mcp` client that can sample
    /// is asked in MCP, an agent over its channel), else through the owner's channel.
    /// `upstream`: the `_meta` of the server's request when rmcp took it out of `params`.
    pub async fn sample_for(
        &self,
        route: Route<'_>,
        mcp_request_id: String,
        params: &CreateMessageRequestParams,
        upstream: Option<&RequestMetaObject>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let kind = AskKind::Sampling;
        let wait = self.wait_span(traced::SAMPLING, &mcp_request_id, &route, params, upstream);
        let message = sampling_request(&self.ctx.server_id, mcp_request_id, params);
        let request = self.request(kind, params, &message, wait.as_ref());
        match self.ask_in(wait, route, request).await? {
            Answer::Mcp(answer) => mcp_answer(kind, answer),
            Answer::A2e(answer) => sampling_result(answer),
        }
    }

    /// Asks for input for the server, by the same route as sampling.
    pub async fn elicit_for(
        &self,
        route: Route<'_>,
        mcp_request_id: String,
        params: &ElicitRequestParams,
        upstream: Option<&RequestMetaObject>,
    ) -> Result<ElicitResult, ErrorData> {
        let kind = AskKind::Elicitation;
        let wait = self.wait_span(
            traced::ELICITATION,
            &mcp_request_id,
            &route,
            params,
            upstream,
        );
        let message = elicit_request(&self.ctx.server_id, mcp_request_id, params);
        let request = self.request(kind, params, &message, wait.as_ref());
        match self.ask_in(wait, route, request).await? {
            Answer::Mcp(answer) => mcp_answer(kind, answer),
            Answer::A2e(answer) => elicit_result(answer, message.requested_schema.as_ref()),
        }
    }

    /// The owner's roots: asked (briefly) when it has a stream open, else as stored.
    pub async fn roots_for_owner(
        &self,
        mcp_request_id: String,
        upstream: Option<&RequestMetaObject>,
    ) -> Result<ListRootsResult, ErrorData> {
        let owner = &self.ctx.owner;
        let unrouted = Route::Owner(Unrouted { in_flight: 0 });
        let wait = self.wait_span(traced::ROOTS, &mcp_request_id, &unrouted, &(), upstream);
        let request = RootsListRequest {
            server_id: self.ctx.server_id.clone(),
            mcp_request_id,
            ..Default::default()
        };
        let mut message = serde_json::to_value(&request).unwrap_or_default();
        if let Some(wait) = &wait {
            traced::put_trace(wait, &mut message);
        }
        let hub = &self.ctx.hub;
        let ask = hub.ask(
            owner,
            RootsListRequest::TYPE,
            &request.id,
            &message,
            ROOTS_WAIT,
        );
        let asked = match &wait {
            Some(wait) => Box::pin(ask.instrument(wait.clone())).await,
            None => ask.await,
        };
        let roots: Vec<McpRoot> = match asked {
            Ok(answer) => serde_json::from_value(answer.get("roots").cloned().unwrap_or_default())
                .unwrap_or_default(),
            Err(
                error @ (AskError::NotConnected(_)
                | AskError::Timeout(..)
                | AskError::Shutdown
                | AskError::TooMany(..)),
            ) => {
                if let Some(wait) = &wait {
                    let _in = wait.enter();
                    tracing::info!(
                        target: crate::telemetry::SPANS,
                        reason = %error,
                        "the stored roots are used"
                    );
                }
                self.ctx.store.roots(owner).await.map_err(|e| {
                    tracing::error!(error = %e, "cannot read stored roots");
                    ErrorData::internal_error("roots are not available", None)
                })?
            }
        };
        let roots: Vec<Value> = roots
            .into_iter()
            .map(|r| {
                if r.name.is_empty() {
                    json!({"uri": r.uri})
                } else {
                    json!({"uri": r.uri, "name": r.name})
                }
            })
            .collect();
        serde_json::from_value(json!({ "roots": roots }))
            .map_err(|e| ErrorData::internal_error(format!("roots: {e}"), None))
    }
}

impl ClientHandler for BridgeClient {
    fn get_info(&self) -> ClientConfig {
        let capabilities: ClientCapabilities = serde_json::from_value(json!({
            "roots": { "listChanged": true },
            "sampling": {},
            "elicitation": { "form": {}, "url": {} }
        }))
        .unwrap_or_default();
        // 2025-11-25 with the initialize handshake: rmcp's default (2026-07-28) has no
        // `initialize` and older servers would not answer it.
        ClientConfig::new(
            capabilities,
            Implementation::new("mcp-bridge", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let origin = self.origin(&context);
        let (id, meta) = (request_id(&context), Some(&context.meta));
        let sampled = self.sample_for(Route::of(&origin), id, &params, meta);
        self.in_call(&context, sampled).await
    }

    async fn list_roots(
        &self,
        context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let roots = self.roots_for_owner(request_id(&context), Some(&context.meta));
        self.in_call(&context, roots).await
    }

    async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let origin = self.origin(&context);
        let (id, meta) = (request_id(&context), Some(&context.meta));
        let elicited = self.elicit_for(Route::of(&origin), id, &params, meta);
        self.in_call(&context, elicited).await
    }
}

/// The A2E sampling request for a server's `sampling/createMessage`.
fn sampling_request(
    server_id: &str,
    mcp_request_id: String,
    params: &CreateMessageRequestParams,
) -> SamplingRequest {
    let wire = serde_json::to_value(params).unwrap_or_default();
    let text = |k: &str| wire.get(k).and_then(Value::as_str).map(str::to_owned);
    let mut request = SamplingRequest {
        server_id: server_id.to_owned(),
        mcp_request_id,
        messages: wire
            .get("messages")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        system_prompt: text("systemPrompt").unwrap_or_default(),
        stop_sequences: wire
            .get("stopSequences")
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default(),
        ..Default::default()
    };
    if let Some(v) = wire.get("modelPreferences") {
        request.model_preferences = v.clone();
    }
    if let Some(v) = text("includeContext") {
        request.include_context = v;
    }
    if let Some(v) = wire.get("temperature").and_then(Value::as_f64) {
        request.temperature = v;
    }
    if let Some(v) = wire.get("maxTokens").and_then(Value::as_u64) {
        request.max_tokens = v;
    }
    if let Some(v) = wire.get("metadata") {
        request.metadata = v.clone();
    }
    request
}

/// The server's answer from the agent's MCPSamplingResponse: a refusal when it carries `error`.
pub fn sampling_result(answer: Value) -> Result<CreateMessageResult, ErrorData> {
    let error = answer
        .get("error")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !error.is_empty() {
        return Err(refuse(AskKind::Sampling, error));
    }
    let wire = json!({
        "role": answer.get("role").cloned().unwrap_or(json!("assistant")),
        "content": answer.get("content").cloned().unwrap_or_default(),
        "model": answer.get("model").cloned().unwrap_or(json!("")),
        "stopReason": answer.get("stop_reason").and_then(Value::as_str).filter(|s| !s.is_empty()),
    });
    serde_json::from_value(wire)
        .map_err(|e| ErrorData::internal_error(format!("the agent's answer: {e}"), None))
}

fn elicit_request(
    server_id: &str,
    mcp_request_id: String,
    params: &ElicitRequestParams,
) -> ElicitRequest {
    let wire = serde_json::to_value(params).unwrap_or_default();
    let text = |k: &str| wire.get(k).and_then(Value::as_str).map(str::to_owned);
    ElicitRequest {
        server_id: server_id.to_owned(),
        mcp_request_id,
        mode: text("mode").unwrap_or_else(|| "form".into()),
        message: text("message").unwrap_or_default(),
        requested_schema: wire.get("requestedSchema").cloned(),
        url: text("url"),
        ..Default::default()
    }
}

/// The server's answer from the agent's: on accept, fields left out take the schema's defaults.
fn elicit_result(answer: Value, schema: Option<&Value>) -> Result<ElicitResult, ErrorData> {
    let action = answer
        .get("action")
        .and_then(|a| serde_json::from_value(a.clone()).ok())
        .unwrap_or(ElicitAction::Decline);
    let mut content = answer.get("content").cloned().filter(|c| !c.is_null());
    if action == ElicitAction::Accept {
        let filled = content.get_or_insert_with(|| json!({}));
        if let (Some(filled), Some(properties)) = (
            filled.as_object_mut(),
            schema
                .and_then(|s| s.get("properties"))
                .and_then(Value::as_object),
        ) {
            for (name, property) in properties {
                if let Some(default) = property.get("default")
                    && !filled.contains_key(name)
                {
                    filled.insert(name.clone(), default.clone());
                }
            }
        }
    } else {
        content = None;
    }
    serde_json::from_value(json!({ "action": action, "content": content }))
        .map_err(|e| ErrorData::internal_error(format!("the agent's answer: {e}"), None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_forms_take_the_schema_defaults() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "Ada"},
            "age": {"type": "integer", "default": 36},
            "email": {"type": "string"}
        }});
        let result = elicit_result(
            json!({"action": "accept", "content": {"age": 40}}),
            Some(&schema),
        )
        .unwrap();
        let wire = serde_json::to_value(result).unwrap();
        assert_eq!(wire["content"], json!({"name": "Ada", "age": 40}));
        let result = elicit_result(
            json!({"action": "decline", "content": {"x": 1}}),
            Some(&schema),
        )
        .unwrap();
        assert!(
            serde_json::to_value(result)
                .unwrap()
                .get("content")
                .is_none()
        );
    }

    #[test]
    fn a_sampling_answer_with_an_error_is_a_refusal() {
        let err = sampling_result(json!({"error": "no budget"})).unwrap_err();
        assert!(err.message.contains("mcp_sampling_refused"));
        let ok = sampling_result(json!({"content": {"type": "text", "text": "hi"}, "model": "m", "stop_reason": "endTurn"})).unwrap();
        let wire = serde_json::to_value(ok).unwrap();
        assert_eq!(wire["content"]["text"], "hi");
        assert_eq!(wire["stopReason"], "endTurn");
    }
}
