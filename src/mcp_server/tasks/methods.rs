//! The task requests of a `/mcp` session, answered on the agent's tasks: a task-augmented
//! `tools/call` (its tool named as a plain call on the same path names it), `tasks/get`,
//! `tasks/result` (what the plain call would have answered), `tasks/list` and `tasks/cancel`,
//! in the shapes of MCP 2025-11-25.

use std::convert::Infallible;
use std::time::Duration;

use axum::http::{HeaderValue, StatusCode, Uri, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use rmcp::ErrorData;
use rmcp::model::ErrorCode as RpcCode;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::a2e::{self, ErrorCode, TaskInfo, TaskMethod, TaskParams, TaskStatus, ToolCallRequest};
use crate::caller::Caller;
use crate::http::state::AppState;
use crate::mcp_server::traced::{self, Target};
use crate::mcp_server::{ScopePath, full_tool_name, scope_of};
use crate::registry;
use crate::tasks::{Outcome, TaskError};
use crate::tools::Scope;

/// The `_meta` key that ties a message to its task.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// Bounds of the wait between two reads of a task `tasks/result` waits for.
const FIRST_POLL: Duration = Duration::from_millis(50);
const MAX_POLL: Duration = Duration::from_secs(1);

/// A JSON-RPC request answered here.
#[derive(Deserialize)]
pub struct Rpc {
    id: Value,
    method: String,
    #[serde(default)]
    params: Value,
}

impl Rpc {
    /// The request's server span (traced.rs); none when spans are not exported.
    pub fn span(&self, parts: &axum::http::request::Parts) -> tracing::Span {
        let method = match TaskMethod::parse(&self.method) {
            Some(method) => method.as_str(),
            None => "tools/call",
        };
        let target = match self.params.get("name").and_then(Value::as_str) {
            Some(name) if method == "tools/call" => Target::Tool(name),
            _ => Target::None,
        };
        let id = || match &self.id {
            Value::String(id) => id.clone(),
            other => other.to_string(),
        };
        let meta = self.params.get("_meta").and_then(Value::as_object);
        traced::in_front(method, target, id, parts, meta)
    }
}

/// The answer to a task request: JSON, or for `tasks/result` (which waits for the task to
/// end) an event stream kept alive meanwhile, so no client read timeout ends it.
pub async fn answer(state: &AppState, agent: &Caller, uri: &Uri, rpc: Rpc) -> Response {
    let params = rpc.params;
    let outcome = match TaskMethod::parse(&rpc.method) {
        Some(TaskMethod::Get) => get(state, agent, params).await,
        Some(TaskMethod::List) => list(state, agent, params).await,
        Some(TaskMethod::Cancel) => cancel(state, agent, params).await,
        Some(TaskMethod::Result) => return awaited(state.clone(), agent.clone(), rpc.id, params),
        None if rpc.method == "tools/call" => start(state, agent, uri, params).await,
        None => Err(ErrorData::new(
            RpcCode::METHOD_NOT_FOUND,
            format!("{} is not a tasks method", rpc.method),
            None,
        )),
    };
    if let Err(error) = &outcome
        && crate::telemetry::exporting()
    {
        traced::refused(&tracing::Span::current(), error);
    }
    reply(rpc.id, outcome)
}

/// `tasks/get`: the task.
async fn get(state: &AppState, agent: &Caller, params: Value) -> Result<Value, ErrorData> {
    let task_id = task_id(params)?;
    let task = state.tasks.get(agent, &task_id).await.map_err(task_error)?;
    Ok(task_json(&task))
}

/// `tasks/list`: a page of the agent's tasks that have not expired, oldest first, from
/// `params.cursor`; `nextCursor` when there are more.
async fn list(state: &AppState, agent: &Caller, params: Value) -> Result<Value, ErrorData> {
    let cursor = params.get("cursor").and_then(Value::as_str).unwrap_or("");
    let (tasks, next) = state
        .tasks
        .list(agent, cursor, None)
        .await
        .map_err(task_error)?;
    let mut result = json!({ "tasks": tasks.iter().map(task_json).collect::<Vec<_>>() });
    if !next.is_empty() {
        result["nextCursor"] = json!(next);
    }
    Ok(result)
}

/// `tasks/cancel`: the task, now cancelled (its call is stopped).
async fn cancel(state: &AppState, agent: &Caller, params: Value) -> Result<Value, ErrorData> {
    let task_id = task_id(params)?;
    let task = state
        .tasks
        .cancel(agent, &task_id)
        .await
        .map_err(task_error)?;
    Ok(task_json(&task))
}

/// A JSON-RPC response as `application/json`.
fn reply(id: Value, outcome: Result<Value, ErrorData>) -> Response {
    let mut resp = (StatusCode::OK, message(id, outcome).to_string()).into_response();
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

fn message(id: Value, outcome: Result<Value, ErrorData>) -> Value {
    match outcome {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        Err(error) => json!({ "jsonrpc": "2.0", "id": id, "error": error }),
    }
}

/// The arguments of a task-augmented `tools/call`.
#[derive(Deserialize)]
struct CallParams {
    name: String,
    #[serde(default)]
    arguments: Option<Map<String, Value>>,
    task: TaskMeta,
}

#[derive(Deserialize)]
struct TaskMeta {
    #[serde(default)]
    ttl: Option<u64>,
}

/// Starts a task-augmented `tools/call`: its tool named as a plain call on the same path would
/// name it; the `CreateTaskResult`.
async fn start(
    state: &AppState,
    agent: &Caller,
    uri: &Uri,
    params: Value,
) -> Result<Value, ErrorData> {
    let params: CallParams = serde_json::from_value(params)
        .map_err(|e| ErrorData::invalid_params(format!("tools/call: {e}"), None))?;
    // The receiver keeps a task as long as it can: a ttl out of bounds is brought within.
    let ttl = params
        .task
        .ttl
        .unwrap_or(a2e::DEFAULT_TASK_TTL_MS)
        .clamp(a2e::MIN_TASK_TTL_MS, a2e::MAX_TASK_TTL_MS);
    let arguments = params.arguments.unwrap_or_default();
    let req = task_request(state, agent, &scope_of(uri), params.name, arguments, ttl)?;
    let task = state.tasks.start(agent, req).await.map_err(task_error)?;
    Ok(json!({ "task": task_json(&task) }))
}

/// The call a task runs for a `tools/call` of tool `name` on the `/mcp` path `scope`: the tool
/// named as a plain call on the same path names it. An unknown tool is refused at once, as a
/// plain call refuses it, rather than with a task that fails.
pub(super) fn task_request(
    state: &AppState,
    agent: &Caller,
    scope: &ScopePath,
    name: String,
    arguments: Map<String, Value>,
    ttl: u64,
) -> Result<ToolCallRequest, ErrorData> {
    let mut req = ToolCallRequest {
        arguments,
        task: Some(TaskParams { ttl }),
        ..Default::default()
    };
    let shown = name.clone();
    match scope {
        ScopePath::Catalogue => req.name = full_tool_name(state, &name)?,
        ScopePath::Toolset(toolset) => {
            req.name = name;
            req.toolset = toolset.clone();
        }
        ScopePath::Deferred => deferred(&mut req, name)?,
    }
    if !offered(state, agent, &req) {
        let unknown = match req.toolset.is_empty() {
            true => &req.name,
            false => &shown,
        };
        return Err(ErrorData::invalid_params(
            format!("Unknown tool: {unknown}"),
            None,
        ));
    }
    Ok(req)
}

/// Whether the tool `req` names is there for `agent` to call: a catalogue tool (its full name
/// or alias, or an agent-bridge tool) or a toolset's member (a meta-tool of a deferred one),
/// and not hidden from it.
fn offered(state: &AppState, agent: &Caller, req: &ToolCallRequest) -> bool {
    let tools = &state.tools;
    let view = tools.access().view(agent);
    if !req.toolset.is_empty() {
        let scope = Scope::Toolset(&req.toolset);
        return match tools.deferred(scope) {
            true => crate::tools::is_meta_tool(&req.name),
            false => tools
                .members(scope)
                .is_ok_and(|members| members.find(&view, &req.name).is_some()),
        };
    }
    if state.a2a.enabled() && crate::a2a::tools::is_bridge_tool(&req.name) {
        return true;
    }
    let exists = state
        .registry
        .resolve_tool(&req.name)
        .is_some_and(|(server_id, tool)| {
            state
                .registry
                .get(&server_id)
                .is_ok_and(|entry| registry::exposes_tool(&entry, &tool))
        });
    exists && tools.shows(&view, &req.name)
}

/// A task of `/mcp?deferred=1`: only `call_tool` runs long, and it calls a catalogue tool,
/// which is what the task runs (a search or a description answers at once: call it plainly).
fn deferred(req: &mut ToolCallRequest, name: String) -> Result<(), ErrorData> {
    if name != crate::tools::META_CALL {
        return Err(ErrorData::invalid_params(
            format!(
                "{name} does not run as a task; call it without `task` (only {} does)",
                crate::tools::META_CALL
            ),
            None,
        ));
    }
    let mut arguments = std::mem::take(&mut req.arguments);
    req.name = match arguments.remove("name") {
        Some(Value::String(name)) if !name.trim().is_empty() => name,
        _ => {
            return Err(ErrorData::invalid_params(
                "`name` must be a non-empty string",
                None,
            ));
        }
    };
    req.arguments = match arguments.remove("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(map)) => map,
        Some(_) => {
            return Err(ErrorData::invalid_params(
                "`arguments` must be an object",
                None,
            ));
        }
    };
    Ok(())
}

/// `taskId` of a task request's params.
fn task_id(params: Value) -> Result<String, ErrorData> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct TaskIdParams {
        task_id: String,
    }
    serde_json::from_value::<TaskIdParams>(params)
        .map(|p| p.task_id)
        .map_err(|e| ErrorData::invalid_params(format!("params: {e}"), None))
}

/// A task request's error: a task that is unknown, another agent's, expired or already
/// finished is invalid params, as MCP says.
pub(super) fn task_error(error: TaskError) -> ErrorData {
    match error {
        TaskError::NotFound(_) | TaskError::Invalid(_) | TaskError::Finished { .. } => {
            ErrorData::invalid_params(error.to_string(), None)
        }
        TaskError::TooMany(_) | TaskError::Forbidden(_) | TaskError::Conflict(_) => {
            ErrorData::invalid_request(error.to_string(), None)
        }
        TaskError::Store(error) => ErrorData::internal_error(a2e::internal_error(error), None),
    }
}

/// A task as MCP shows it.
fn task_json(task: &TaskInfo) -> Value {
    let mut shown = json!({
        "taskId": task.task_id,
        "status": task.status.as_str(),
        "createdAt": iso8601(task.created_at),
        "lastUpdatedAt": iso8601(task.updated_at),
        "ttl": task.ttl,
        "pollInterval": task.poll_interval,
    });
    if !task.status_message.is_empty() {
        shown["statusMessage"] = json!(task.status_message);
    }
    shown
}

/// Seconds since the Unix epoch as an ISO 8601 UTC timestamp (milliseconds).
pub(super) fn iso8601(seconds: f64) -> String {
    chrono::DateTime::from_timestamp_millis((seconds * 1000.0).round() as i64)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// `tasks/result`: once the task has ended, what its call answers, as one event.
fn awaited(state: AppState, agent: Caller, id: Value, params: Value) -> Response {
    let event = async move {
        let outcome = match task_id(params) {
            Ok(task_id) => result(&state, &agent, &task_id).await,
            Err(error) => Err(error),
        };
        Ok::<_, Infallible>(Event::default().data(message(id, outcome).to_string()))
    };
    Sse::new(futures::stream::once(event))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}

/// Waits until the task has ended (read again at growing intervals, up to its poll interval
/// and at most a second); its result.
async fn result(state: &AppState, agent: &Caller, task_id: &str) -> Result<Value, ErrorData> {
    let shutdown = state.hub.shutdown_token();
    let mut wait = FIRST_POLL;
    loop {
        let outcome = state
            .tasks
            .outcome(agent, task_id)
            .await
            .map_err(task_error)?;
        if outcome.task.status.is_final() {
            return finished(outcome);
        }
        let longest = Duration::from_millis(outcome.task.poll_interval).clamp(FIRST_POLL, MAX_POLL);
        tokio::select! {
            _ = shutdown.cancelled() => {
                return Err(ErrorData::internal_error("the bridge is stopping: ask again", None));
            }
            _ = tokio::time::sleep(wait) => {}
        }
        wait = (wait * 2).min(longest);
    }
}

/// What an ended task's call answers, as a plain `tools/call` would have: its `CallToolResult`,
/// or the JSON-RPC error a plain call answers its error with (bad arguments, an unknown tool),
/// or, for what went wrong upstream, a tool error for the model to read.
pub(super) fn finished(outcome: Outcome) -> Result<Value, ErrorData> {
    let task_id = outcome.task.task_id.clone();
    let related = json!({ RELATED_TASK: { "taskId": task_id } });
    match outcome.task.status {
        TaskStatus::Completed => {
            let resp = outcome
                .response
                .ok_or_else(|| ErrorData::internal_error("a completed task has no result", None))?;
            let mut result = json!({
                "content": resp.content,
                "isError": resp.is_error,
                "_meta": related,
            });
            if let Some(structured) = resp.structured_content {
                result["structuredContent"] = structured;
            }
            Ok(result)
        }
        TaskStatus::Cancelled => Err(ErrorData::invalid_params(
            format!("task \"{task_id}\" was cancelled: it has no result"),
            Some(related),
        )),
        _ => {
            let (code, message) = outcome
                .error
                .unwrap_or((ErrorCode::Internal, "the call failed".into()));
            match code {
                ErrorCode::InvalidRequest
                | ErrorCode::NotFound
                | ErrorCode::McpToolNotFound
                | ErrorCode::McpServerNotFound => Err(ErrorData::invalid_params(
                    message,
                    Some(json!({ "code": code.as_str(), "_meta": related })),
                )),
                _ => Ok(json!({
                    "content": [{ "type": "text", "text": message }],
                    "isError": true,
                    "_meta": related,
                })),
            }
        }
    }
}

/// A plain `tools/call` (no task asked for) a policy holds for a person's approval: held as a
/// task all the same, and answered at once with a tool error result that names it (every MCP
/// client shows that to its model), the task in `_meta` under [`HELD_META`]; the result is the
/// task's (`tasks/get`, `tasks/result`, `GET /v1/tasks/{id}/result`). None for a call no policy
/// holds.
pub(crate) async fn held(
    state: &AppState,
    agent: &Caller,
    scope: &ScopePath,
    name: &str,
    arguments: &Map<String, Value>,
) -> Result<Option<rmcp::model::CallToolResult>, ErrorData> {
    if matches!(scope, ScopePath::Deferred)
        || state.tools.hold_for(agent, scope.scope(), name).is_none()
    {
        return Ok(None);
    }
    let ttl = a2e::DEFAULT_TASK_TTL_MS;
    let req = task_request(state, agent, scope, name.to_owned(), arguments.clone(), ttl)?;
    let task = state.tasks.start(agent, req).await.map_err(task_error)?;
    let said = format!(
        "This call was not made yet: it is {} and held as task {}. Once approved it runs, and \
         its result is the task's (tasks/get and tasks/result with this taskId, or \
         GET /v1/tasks/{}/result); denied or not decided in time, the task fails.",
        task.status_message, task.task_id, task.task_id
    );
    let mut result =
        rmcp::model::CallToolResult::error(vec![rmcp::model::ContentBlock::text(said)]);
    let mut meta = Map::new();
    meta.insert(HELD_META.to_owned(), task_json(&task));
    result.meta = Some(rmcp::model::MetaObject(meta));
    Ok(Some(result))
}

/// Where a held call's task is in the `_meta` of a plain call's result.
pub(crate) const HELD_META: &str = "mcp-bridge/held";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_iso_8601() {
        assert_eq!(iso8601(0.0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_700_000_000.25), "2023-11-14T22:13:20.250Z");
    }
}
