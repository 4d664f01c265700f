//! MCP tasks as 2025-11-25 defines them on `/mcp`: the `tasks` capability in the initialize
//! result, task-augmented `tools/call` (`params.task`), `tasks/get`, `tasks/result`,
//! `tasks/list` and `tasks/cancel`. They are the agent's own tasks (`crate::tasks`), the same
//! `GET /v1/tasks` shows.
//!
//! Answered here, in front of rmcp, because rmcp 3.11 speaks only the later tasks extension
//! (SEP-2663): its `ServerCapabilities` has no `tasks` field, its `CallToolRequestParams` drops
//! `task`, its `tasks/get` and `tasks/cancel` have other shapes and need the client to declare
//! the extension, and it has no `tasks/result` nor `tasks/list`. Only requests of a 2025-11-25
//! session (one with `Mcp-Session-Id`) are taken; every other request reaches rmcp unchanged.

use std::borrow::Cow;
use std::convert::Infallible;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use rmcp::ErrorData;
use rmcp::model::ErrorCode as RpcCode;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Map, Value, json};

use super::{Front, SESSION_ID, ScopePath, full_tool_name, scope_of};
use crate::a2e::{self, ErrorCode, TaskInfo, TaskParams, TaskStatus, ToolCallRequest};
use crate::caller::Caller;
use crate::http::error::ApiError;
use crate::http::state::AppState;
use crate::registry;
use crate::tasks::{Outcome, TaskError};
use crate::tools::Scope;

/// The `_meta` key that ties a message to its task.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
/// The methods of tasks answered here (a `tools/call` only with `params.task`).
const TASK_METHODS: [&str; 4] = ["tasks/get", "tasks/result", "tasks/list", "tasks/cancel"];
/// The first protocol version with tasks.
const TASKS_SINCE: &str = "2025-11-25";
/// How long the initialize answer may take to be read whole (it is one message).
const INITIALIZE_READ: Duration = Duration::from_secs(30);
/// Bounds of the wait between two reads of a task `tasks/result` waits for.
const FIRST_POLL: Duration = Duration::from_millis(50);
const MAX_POLL: Duration = Duration::from_secs(1);

/// Middleware (inside the caller's check and limits): declares `capabilities.tasks` in the
/// answer to `initialize`, and answers the task requests of a session itself.
pub async fn intercept(State(front): State<Front>, req: Request, next: Next) -> Response {
    if req.method() != Method::POST {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let bytes = match read_body(body, front.state.config.max_body_bytes).await {
        Ok(bytes) => bytes,
        Err(refused) => return refused,
    };
    let session = parts
        .headers
        .get(SESSION_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let wanted = wanted(&bytes, session.is_some());
    let agent = parts.extensions.get::<Caller>().cloned();
    match (wanted, session, agent) {
        (Wanted::Initialize, _, _) => {
            let resp = next
                .run(Request::from_parts(parts, Body::from(bytes)))
                .await;
            declare_tasks(resp).await
        }
        (Wanted::Task, Some(session), Some(agent)) => {
            if !front.owners.is_open(&session).await {
                return super::session_not_found();
            }
            match serde_json::from_slice::<Rpc>(&bytes) {
                Ok(rpc) => answer(&front.state, &agent, &parts.uri, rpc).await,
                Err(_) => {
                    next.run(Request::from_parts(parts, Body::from(bytes)))
                        .await
                }
            }
        }
        _ => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
    }
}

/// The request body, bounded as rmcp bounds it.
async fn read_body(body: Body, max: usize) -> Result<Bytes, Response> {
    let mut stream = body.into_data_stream();
    let mut collected = bytes::BytesMut::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|error| {
            let message = format!("cannot read the request body: {error}");
            ApiError::new(ErrorCode::InvalidRequest, message).into_response()
        })?;
        if chunk.len() > max.saturating_sub(collected.len()) {
            let message = format!("the request body exceeds {max} bytes");
            return Err(ApiError::new(ErrorCode::PayloadTooLarge, message).into_response());
        }
        collected.extend_from_slice(&chunk);
    }
    Ok(collected.freeze())
}

/// What a request is, as far as tasks go.
#[derive(Debug, PartialEq, Eq)]
enum Wanted {
    /// The handshake: its answer declares tasks.
    Initialize,
    /// A task request of a session, answered here.
    Task,
    /// Anything else: rmcp's.
    Pass,
}

/// Enough of a JSON-RPC message to tell; the rest is skipped, not built.
#[derive(Deserialize)]
struct Peek<'a> {
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    id: Option<IgnoredAny>,
    params: Option<PeekParams>,
}

#[derive(Deserialize)]
struct PeekParams {
    task: Option<IgnoredAny>,
}

fn wanted(body: &[u8], in_session: bool) -> Wanted {
    let Ok(peek) = serde_json::from_slice::<Peek>(body) else {
        return Wanted::Pass;
    };
    let method = peek.method.as_deref().unwrap_or_default();
    let augmented = method == "tools/call" && peek.params.is_some_and(|p| p.task.is_some());
    match method {
        "initialize" if !in_session => Wanted::Initialize,
        _ if in_session && peek.id.is_some() && (augmented || TASK_METHODS.contains(&method)) => {
            Wanted::Task
        }
        _ => Wanted::Pass,
    }
}

/// A JSON-RPC request answered here.
#[derive(Deserialize)]
struct Rpc {
    id: Value,
    method: String,
    #[serde(default)]
    params: Value,
}

/// The answer to a task request: JSON, or for `tasks/result` (which waits for the task to
/// end) an event stream kept alive meanwhile, so no client read timeout ends it.
async fn answer(state: &AppState, agent: &Caller, uri: &Uri, rpc: Rpc) -> Response {
    let params = rpc.params;
    let outcome = match rpc.method.as_str() {
        "tools/call" => start(state, agent, uri, params).await,
        "tasks/get" => get(state, agent, params).await,
        "tasks/list" => list(state, agent).await,
        "tasks/cancel" => cancel(state, agent, params).await,
        "tasks/result" => return awaited(state.clone(), agent.clone(), rpc.id, params),
        other => Err(ErrorData::new(
            RpcCode::METHOD_NOT_FOUND,
            format!("{other} is not a tasks method"),
            None,
        )),
    };
    reply(rpc.id, outcome)
}

/// `tasks/get`: the task.
async fn get(state: &AppState, agent: &Caller, params: Value) -> Result<Value, ErrorData> {
    let task_id = task_id(params)?;
    let task = state.tasks.get(agent, &task_id).await.map_err(task_error)?;
    Ok(task_json(&task))
}

/// `tasks/list`: the agent's tasks that have not expired, oldest first, on one page.
async fn list(state: &AppState, agent: &Caller) -> Result<Value, ErrorData> {
    let tasks = state.tasks.list(agent).await.map_err(task_error)?;
    Ok(json!({ "tasks": tasks.iter().map(task_json).collect::<Vec<_>>() }))
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
    let mut req = ToolCallRequest {
        arguments: params.arguments.unwrap_or_default(),
        // The receiver keeps a task as long as it can: a ttl out of bounds is brought within.
        task: Some(TaskParams {
            ttl: params
                .task
                .ttl
                .unwrap_or(a2e::DEFAULT_TASK_TTL_MS)
                .clamp(a2e::MIN_TASK_TTL_MS, a2e::MAX_TASK_TTL_MS),
        }),
        ..Default::default()
    };
    let shown = params.name.clone();
    match scope_of(uri) {
        ScopePath::Catalogue => req.name = full_tool_name(state, &params.name)?,
        ScopePath::Toolset(toolset) => {
            req.name = params.name;
            req.toolset = toolset;
        }
        ScopePath::Deferred => deferred(&mut req, params.name)?,
    }
    // A plain call answers an unknown tool at once; so does this, rather than with a task
    // that fails.
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
    let task = state.tasks.start(agent, req).await.map_err(task_error)?;
    Ok(json!({ "task": task_json(&task) }))
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
fn task_error(error: TaskError) -> ErrorData {
    match error {
        TaskError::NotFound(_) | TaskError::Invalid(_) | TaskError::Finished { .. } => {
            ErrorData::invalid_params(error.to_string(), None)
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
fn iso8601(seconds: f64) -> String {
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
fn finished(outcome: Outcome) -> Result<Value, ErrorData> {
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

/// The answer to `initialize` with `capabilities.tasks` (2025-11-25 on): tasks can be listed
/// and cancelled, and `tools/call` can be task-augmented. rmcp's `ServerCapabilities` cannot
/// say so, so its answer is rewritten (a single message, as JSON or one SSE event).
async fn declare_tasks(resp: Response) -> Response {
    if resp.status() != StatusCode::OK {
        return resp;
    }
    let (mut parts, body) = resp.into_parts();
    let read = tokio::time::timeout(INITIALIZE_READ, axum::body::to_bytes(body, usize::MAX));
    let bytes = match read.await {
        Ok(Ok(bytes)) => bytes,
        _ => {
            tracing::warn!("cannot read rmcp's answer to initialize");
            return ApiError::internal("the initialize answer could not be read").into_response();
        }
    };
    let text = String::from_utf8_lossy(&bytes);
    let sse = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let rewritten = match sse {
        // Each event's `data:` line carries one whole message (rmcp writes JSON on one line).
        true => text
            .split('\n')
            .map(|line| {
                let Some(data) = line.strip_prefix("data:") else {
                    return Cow::Borrowed(line);
                };
                let (data, cr) = match data.strip_suffix('\r') {
                    Some(data) => (data, "\r"),
                    None => (data, ""),
                };
                match with_tasks(data.trim_start()) {
                    Some(message) => Cow::Owned(format!("data: {message}{cr}")),
                    None => Cow::Borrowed(line),
                }
            })
            .collect::<Vec<_>>()
            .join("\n"),
        false => with_tasks(&text).unwrap_or_else(|| text.into_owned()),
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(rewritten))
}

/// An initialize result with `capabilities.tasks`; none for another message, or an older
/// protocol version (it has no tasks).
fn with_tasks(message: &str) -> Option<String> {
    let mut message: Value = serde_json::from_str(message).ok()?;
    let result = message.get_mut("result")?;
    let version = result.get("protocolVersion")?.as_str()?;
    if version < TASKS_SINCE {
        return None;
    }
    result.get_mut("capabilities")?.as_object_mut()?.insert(
        "tasks".to_owned(),
        json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } }),
    );
    Some(message.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_task_requests_of_a_session_are_taken() {
        let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","task":{"ttl":5000}}}"#;
        let plain = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}"#;
        let get = br#"{"jsonrpc":"2.0","id":"x","method":"tasks/get","params":{"taskId":"t"}}"#;
        let init = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#;
        assert_eq!(wanted(call, true), Wanted::Task);
        assert_eq!(wanted(get, true), Wanted::Task);
        assert_eq!(wanted(call, false), Wanted::Pass);
        assert_eq!(wanted(plain, true), Wanted::Pass);
        assert_eq!(wanted(init, false), Wanted::Initialize);
        assert_eq!(wanted(b"[1,2]", true), Wanted::Pass);
        assert_eq!(wanted(b"not json", true), Wanted::Pass);
        let notice = br#"{"jsonrpc":"2.0","method":"tasks/get","params":{"taskId":"t"}}"#;
        assert_eq!(wanted(notice, true), Wanted::Pass);
    }

    #[test]
    fn tasks_are_declared_from_2025_11_25() {
        let answer = |version: &str| {
            json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": version,
                "capabilities": {"tools": {}}, "serverInfo": {"name": "b", "version": "1"}}})
            .to_string()
        };
        let declared: Value =
            serde_json::from_str(&with_tasks(&answer("2025-11-25")).unwrap()).unwrap();
        assert_eq!(
            declared["result"]["capabilities"]["tasks"],
            json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})
        );
        assert_eq!(declared["result"]["capabilities"]["tools"], json!({}));
        assert!(with_tasks(&answer("2025-06-18")).is_none());
        assert!(with_tasks(r#"{"jsonrpc":"2.0","method":"notifications/x"}"#).is_none());
    }

    #[test]
    fn timestamps_are_iso_8601() {
        assert_eq!(iso8601(0.0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_700_000_000.25), "2023-11-14T22:13:20.250Z");
    }
}
