//! `/v1/tools`: the synced catalogue (`tool/list`) and calls by namespaced name (`tool/call`).

use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::{FromRequestParts, State};
use axum::http::header::ACCEPT;
use axum::http::request::Parts;
use axum::response::sse::{Event as SseEvent, Sse};
use axum::response::{IntoResponse, Response as HttpResponse};
use axum::{Extension, Json};
use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::mpsc;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::responses::{BodyErrors, NotFound, UnprocessableContent, UpstreamErrors};
use super::{Reply, ok, request};
use crate::a2e::{
    ErrorCode, Message, Response, ServerPush, ToolCallRequest, ToolCallResponse, ToolListRequest,
    ToolListResponse, ToolSource,
};
use crate::caller::Caller;
use crate::http::error::{A2eJson, A2eQuery, ApiError, Failure};
use crate::http::state::AppState;
use crate::hub::{AgentChannel, Answer, Recipient, ServerRequest};
use crate::registry;
use crate::tools::{CallRequest, Scope, ToolFilter};
use crate::upstream::CallOrigin;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_tools))
        .routes(routes!(call_tool))
}

#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ToolsQuery {
    /// Only this server's tools.
    #[serde(default)]
    pub server_id: String,
    /// `mcp` or `a2a`.
    #[serde(default, with = "crate::a2e::empty_is_none")]
    #[param(value_type = String)]
    pub source: Option<ToolSource>,
    /// `next_cursor` of the previous page.
    #[serde(default)]
    pub cursor: String,
    /// Only this toolset's tools, as it shows them (the meta-tools of a deferred one).
    #[serde(default)]
    pub toolset: String,
    /// Rank tools by relevance to this query (names, titles, descriptions, parameters), best
    /// first, in one page.
    #[serde(default)]
    pub q: String,
    /// Most tools `q` answers: 1 to 100 (default 10).
    pub limit: Option<u32>,
    /// `app`: list app-only tools too (MCP Apps tools whose `_meta.ui.visibility` leaves out
    /// `"model"`); without it they are left out, as a model must not be shown them.
    #[serde(default)]
    pub include: String,
    /// The A2E request id, echoed as `req_id`.
    pub id: Option<String>,
}

/// The catalogue: every ready server's tools as `{server_id}__{tool}` after its allow list
/// and the caller's access policies (tool/list), in pages; or one toolset's tools; or, with
/// `q`, the tools that best match a query, ranked.
#[utoipa::path(get, path = "/v1/tools", tag = "tools", params(ToolsQuery), security(("bearer" = [])),
    responses(
        (status = 200, description = "A page of the catalogue", body = ToolListResponse),
        (status = 404, response = NotFound), (status = 422, response = UnprocessableContent)))]
async fn list_tools(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    A2eQuery(query): A2eQuery<ToolsQuery>,
) -> Result<Reply<ToolListResponse>, Failure> {
    let mut req: ToolListRequest = request(query.id);
    req.server_id = query.server_id;
    req.source = query.source;
    req.cursor = query.cursor;
    req.toolset = query.toolset;
    req.q = query.q;
    req.limit = query.limit;
    req.include = query.include;
    list(&state, &agent, req).await
}

pub async fn list(
    state: &AppState,
    agent: &Caller,
    req: ToolListRequest,
) -> Result<Reply<ToolListResponse>, Failure> {
    let fail = |e: ApiError| e.answering::<ToolListResponse>(&req.id);
    let invalid = |message: String| fail(ApiError::new(ErrorCode::InvalidRequest, message));
    let mut resp = ToolListResponse::answering(&req.id);
    let scope = Scope::of(&req.toolset);
    let apps = match req.include.as_str() {
        "" => false,
        "app" => true,
        other => {
            return Err(invalid(format!(
                "`include` is \"{other}\"; it can only be `app`"
            )));
        }
    };
    let filter = ToolFilter {
        server_id: &req.server_id,
        source: req.source,
        apps,
    };
    if !req.q.trim().is_empty() {
        if !req.cursor.is_empty() {
            return Err(invalid("`q` answers one page: leave `cursor` out".into()));
        }
        let limit = match req.limit {
            None => crate::tools::DEFAULT_SEARCH_LIMIT,
            Some(n) if (1..=crate::tools::MAX_SEARCH_LIMIT as u32).contains(&n) => n as usize,
            Some(n) => {
                return Err(invalid(format!(
                    "`limit` is {n}; it must be 1 to {}",
                    crate::tools::MAX_SEARCH_LIMIT
                )));
            }
        };
        resp.tools = state
            .tools
            .search(agent, scope, &req.q, limit, filter)
            .await
            .map_err(|e| fail(registry::Error::from(e).into()))?;
        return Ok(ok(resp));
    }
    if req.limit.is_some() {
        return Err(invalid("`limit` goes with `q`".into()));
    }
    if scope != Scope::Catalogue {
        if !req.cursor.is_empty() {
            return Err(invalid("a toolset is one page: leave `cursor` out".into()));
        }
        let items = state
            .tools
            .visible(agent, scope, filter)
            .map_err(|e| fail(registry::Error::from(e).into()))?;
        resp.tools = items.into_iter().map(|item| item.info).collect();
        return Ok(ok(resp));
    }
    let page = state
        .tools
        .page(agent, filter, &req.cursor)
        .map_err(|e| fail(e.into()))?;
    resp.tools = page.tools;
    resp.next_cursor = page.next_cursor;
    Ok(ok(resp))
}

/// Call a catalogue tool (tool/call). An upstream result with `isError: true` is a 200 with
/// `is_error: true`; the server's `timeout` bounds the call.
///
/// **Cancelling.** While the call runs, `DELETE /v1/calls/{id}` with this request's `id` cancels
/// it: the server is sent `notifications/cancelled` and this request answers 409 `cancelled` at
/// once. Closing this request before the answer cancels the call on the server the same way.
///
/// **Streaming.** Sent with `Accept: text/event-stream`, the call answers 200 with a stream of
/// server-sent events instead: zero or more `event: mcp/server/push` (the call's progress,
/// `method: "notifications/progress"`, `data:` a `ServerPush` carrying this call's `req_id`),
/// then one last `event: tool/call/resp` whose `data:` is the `ToolCallResponse` the JSON answer
/// would carry or, when the call failed, its `ErrorBody` (with `code`, `error`, `retryable`);
/// the stream ends after it. A body that cannot be read is refused before the stream starts,
/// with the statuses below. Closing the stream abandons the call. Only the JSON answer is listed
/// as this operation's content, so that generated clients get one typed body; the stream's
/// events are the same schemas.
///
/// **Held for approval.** A call a policy's `approve` rule holds answers 202 `task/create/resp`
/// at once, with or without `task`: its task is `input_required` until an approver decides
/// (`POST /v1/approvals/{task_id}`); approved, it runs and its result is the task's; denied or
/// past its time, the task ends `failed` with `forbidden`.
///
/// **As a task.** With `task` (`{"ttl": ms}`), the call answers 202 `task/create/resp` at once
/// and the bridge runs it in the background;
/// each status change is a `bridge/task_status` push on the event stream, and
/// `GET /v1/tasks/{task_id}/result` answers the `tool/call/resp` once it is done. A `ttl`
/// outside 1000 to 86400000 is 422.
// The stream is kept out of `responses` on purpose: a second content type makes the 200 body a
// union in generated clients (openapi-typescript, openapi-python-client).
#[utoipa::path(post, path = "/v1/tools/call", tag = "tools", request_body = ToolCallRequest, security(("bearer" = [])),
    responses(
        (status = 200, description = "The tool's result (`Accept: application/json` or none; see above for `text/event-stream`)", body = ToolCallResponse),
        (status = 202, description = "With `task`, or held for approval: the task of the call (follow it on `/v1/tasks/{task_id}`)", body = crate::a2e::TaskCreateResponse),
        BodyErrors, UpstreamErrors, (status = 404, response = NotFound)))]
async fn call_tool(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    WantsEvents(streaming): WantsEvents,
    A2eJson(req): A2eJson<ToolCallRequest>,
) -> HttpResponse {
    if req.task.is_some() || held(&state, &agent, &req.toolset, &req.name) {
        return super::tasks::start(&state, &agent, req)
            .await
            .into_response();
    }
    if !streaming {
        return call(&state, &agent, req).await.into_response();
    }
    let (tx, rx) = mpsc::unbounded_channel::<Value>();
    let final_tx = tx.clone();
    let task = tokio::spawn(async move {
        let answer = match call_for(&state, &agent, req, Some(tx)).await {
            Ok((_, Json(resp))) => serde_json::to_value(resp),
            Err(failure) => serde_json::to_value(failure.body()),
        };
        let _ = final_tx.send(answer.unwrap_or_default());
    });
    let stream = futures::stream::unfold(
        (rx, AbortOnDrop(task), false),
        |(mut rx, task, done)| async move {
            if done {
                return None;
            }
            let message = rx.recv().await?;
            let kind = message
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("error")
                .to_owned();
            let done = kind != ServerPush::TYPE;
            let event = SseEvent::default().event(kind).data(message.to_string());
            Some((Ok::<_, Infallible>(event), (rx, task, done)))
        },
    );
    Sse::new(stream).into_response()
}

/// Whether a policy holds `agent`'s call of `name` for a person's approval: such a call is
/// answered as a task (202, `input_required`) at once, whether or not it asked for one.
pub fn held(state: &AppState, agent: &Caller, toolset: &str, name: &str) -> bool {
    state
        .tools
        .hold_for(agent, Scope::of(toolset), name)
        .is_some()
}

/// Whether the request's `Accept` names `text/event-stream`. Read in place: taking the
/// `HeaderMap` as an argument would clone every header of every call.
struct WantsEvents(bool);

impl<S: Send + Sync> FromRequestParts<S> for WantsEvents {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Infallible> {
        let wants = parts
            .headers
            .get_all(ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .any(|v| v.contains("text/event-stream"));
        Ok(Self(wants))
    }
}

/// Stops a streamed call whose client went away.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A streamed call as the recipient of what its server sends during it: progress goes on the
/// call's own stream, requests to the agent's channel.
#[derive(Debug)]
struct StreamedCall {
    channel: AgentChannel,
    stream: mpsc::UnboundedSender<Value>,
}

impl Recipient for StreamedCall {
    fn agent_id(&self) -> &str {
        self.channel.agent_id()
    }

    fn progress(&self, mut push: ServerPush) -> BoxFuture<'_, ()> {
        push.req_id = Some(self.channel.req_id().to_owned());
        drop(
            self.stream
                .send(serde_json::to_value(&push).unwrap_or_default()),
        );
        Box::pin(std::future::ready(()))
    }

    fn ask(&self, request: ServerRequest) -> BoxFuture<'_, Result<Answer, String>> {
        self.channel.ask(request)
    }
}

pub async fn call(
    state: &AppState,
    agent: &Caller,
    req: ToolCallRequest,
) -> Result<Reply<ToolCallResponse>, Failure> {
    call_for(state, agent, req, None).await
}

/// Calls a tool; its progress goes to `progress` when given, else to the agent's channel.
async fn call_for(
    state: &AppState,
    agent: &Caller,
    req: ToolCallRequest,
    progress: Option<mpsc::UnboundedSender<Value>>,
) -> Result<Reply<ToolCallResponse>, Failure> {
    tracing::debug!(agent = %agent.id, tool = %req.name, "tool call");
    state
        .tools
        .check_call_request(&req)
        .map_err(|e| ApiError::from(e).answering::<ToolCallResponse>(&req.id))?;
    let channel = AgentChannel::new(state.hub.clone(), agent.id.clone(), req.id.clone());
    let origin: CallOrigin = match progress {
        Some(stream) => Arc::new(StreamedCall { channel, stream }),
        None => Arc::new(channel),
    };
    let call = CallRequest {
        caller: agent,
        scope: Scope::of(&req.toolset),
        name: &req.name,
        arguments: req.arguments,
        timeout: req.timeout,
        origin,
        approved: false,
    };
    let (server_id, result) = state
        .tools
        .call_cancellable(call, &req.id)
        .await
        .map_err(|e| ApiError::from(e).answering::<ToolCallResponse>(&req.id))?;
    let mut resp = ToolCallResponse::answering(&req.id);
    resp.name = req.name;
    resp.server_id = server_id;
    resp.content = result.content;
    resp.structured_content = result.structured_content;
    resp.is_error = result.is_error.unwrap_or(false);
    Ok(ok(resp))
}
