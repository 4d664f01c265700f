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

pub(super) mod extension;
mod methods;

use std::borrow::Cow;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Value, json};

use super::{Front, SESSION_ID};
use crate::a2e::ErrorCode;
use crate::caller::Caller;
use crate::http::error::ApiError;
use methods::{Rpc, answer};

/// The methods of tasks answered here (a `tools/call` only with `params.task`).
const TASK_METHODS: [&str; 4] = ["tasks/get", "tasks/result", "tasks/list", "tasks/cancel"];
/// The first protocol version with tasks.
const TASKS_SINCE: &str = "2025-11-25";
/// How long an answer rewritten here may take to be read whole (it is one message).
const INITIALIZE_READ: Duration = Duration::from_secs(30);

/// What the `/mcp` middleware does inside the caller's check and limits: declares
/// `capabilities.tasks` in the answer to `initialize`, and answers the task requests of a
/// session itself.
pub async fn intercept(front: &Front, req: Request, next: Next) -> Response {
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
    // The tools of a listing that can run as tasks, in the eras that have them.
    let listing = (wanted == Wanted::Pass
        && version_of(&parts.headers).is_some_and(|v| v.as_str() >= TASKS_SINCE)
        && memchr::memmem::find(&bytes, b"\"tools/list\"").is_some())
    .then(|| super::scope_of(&parts.uri));
    let agent = parts.extensions.get::<Caller>().cloned();
    match (&wanted, &session, agent) {
        (Wanted::Task, Some(session), Some(agent)) => {
            // The session checks of `authenticate` (its agent's own), and that rmcp still has it.
            // A shared session this replica has not seen yet is restored first, as rmcp would.
            if !front.owners.is_open(session).await && !super::restore(front, &parts, session).await
            {
                return super::session_not_found();
            }
            if let Ok(rpc) = serde_json::from_slice::<Rpc>(&bytes) {
                return answer(&front.state, &agent, &parts.uri, rpc).await;
            }
        }
        (Wanted::Call, Some(session), Some(agent)) => {
            if let Some(answer) = super::direct::call(front, &parts, &agent, session, &bytes).await
            {
                return answer;
            }
        }
        (Wanted::Cancelled, Some(session), _) => front.server.direct.cancelled(session, &bytes),
        (Wanted::Pass, Some(session), _) => {
            if let Some(shared) = &front.shared
                && let Some(relayed) =
                    super::answers::relay(&front.state.hub, shared, session, &bytes).await
            {
                return relayed;
            }
        }
        _ => {}
    }
    let resp = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    match (wanted, listing) {
        (Wanted::Initialize, _) => rewrite(resp, with_tasks).await,
        (_, Some(scope)) => {
            let deferred = matches!(scope, super::ScopePath::Deferred);
            rewrite(resp, |message| with_task_support(message, deferred)).await
        }
        _ => resp,
    }
}

/// The `MCP-Protocol-Version` a request carries.
fn version_of(headers: &axum::http::HeaderMap) -> Option<String> {
    headers
        .get("mcp-protocol-version")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// A `tools/list` result whose tools say they can run as tasks (`execution.taskSupport`:
/// "optional"): every tool of the catalogue and of a toolset, and on a deferred path only
/// `call_tool` (which runs the tool it names). None for another message.
fn with_task_support(message: &str, deferred: bool) -> Option<String> {
    let mut message: Value = serde_json::from_str(message).ok()?;
    let tools = message
        .get_mut("result")?
        .get_mut("tools")?
        .as_array_mut()?;
    for tool in tools {
        let Some(tool) = tool.as_object_mut() else {
            continue;
        };
        let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
        if deferred && name != crate::tools::META_CALL {
            continue;
        }
        tool.insert("execution".to_owned(), json!({ "taskSupport": "optional" }));
    }
    Some(message.to_string())
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
    /// A `tools/call` of a session, answered in front of rmcp when plain (direct.rs).
    Call,
    /// A session's `notifications/cancelled`, which may name a call answered in front of rmcp.
    Cancelled,
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
    let finder = |needle: &str| memchr::memmem::find(body, needle.as_bytes()).is_some();
    if in_session && finder("\"tools/call\"") && !finder("\"task") {
        return Wanted::Call;
    }
    if in_session && finder("\"notifications/cancelled\"") {
        return Wanted::Cancelled;
    }
    // Most requests name none of these: they pass without being parsed here.
    if !finder("\"task") && !finder("\"initialize\"") {
        return Wanted::Pass;
    }
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

/// rmcp's answer with each message rewritten by `rewrite` (none: left as it is): the answer
/// to `initialize` with `capabilities.tasks` ([`with_tasks`]), or a `tools/list` result with
/// `execution.taskSupport` ([`with_task_support`]), which rmcp's types cannot say. The answer
/// is a single message, as JSON or one SSE event.
async fn rewrite(resp: Response, rewrite: impl Fn(&str) -> Option<String>) -> Response {
    if resp.status() != StatusCode::OK {
        return resp;
    }
    let (mut parts, body) = resp.into_parts();
    let read = tokio::time::timeout(INITIALIZE_READ, axum::body::to_bytes(body, usize::MAX));
    let bytes = match read.await {
        Ok(Ok(bytes)) => bytes,
        _ => {
            tracing::warn!("cannot read rmcp's answer");
            return ApiError::internal("the answer could not be read").into_response();
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
                match rewrite(data.trim_start()) {
                    Some(message) => Cow::Owned(format!("data: {message}{cr}")),
                    None => Cow::Borrowed(line),
                }
            })
            .collect::<Vec<_>>()
            .join("\n"),
        false => rewrite(&text).unwrap_or_else(|| text.into_owned()),
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
        assert_eq!(wanted(plain, true), Wanted::Call);
        assert_eq!(wanted(plain, false), Wanted::Pass);
        let cancel = br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"task done"}}"#;
        assert_eq!(wanted(cancel, true), Wanted::Cancelled);
        assert_eq!(wanted(init, false), Wanted::Initialize);
        assert_eq!(wanted(b"[1,2]", true), Wanted::Pass);
        assert_eq!(wanted(b"not json", true), Wanted::Pass);
        let notice = br#"{"jsonrpc":"2.0","method":"tasks/get","params":{"taskId":"t"}}"#;
        assert_eq!(wanted(notice, true), Wanted::Pass);
    }

    #[test]
    fn listed_tools_say_they_run_as_tasks() {
        let listing = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
            {"name": "search_tools", "inputSchema": {}}, {"name": "call_tool", "inputSchema": {}}
        ]}})
        .to_string();
        let shown: Value =
            serde_json::from_str(&with_task_support(&listing, false).unwrap()).unwrap();
        for tool in shown["result"]["tools"].as_array().unwrap() {
            assert_eq!(
                tool["execution"],
                json!({"taskSupport": "optional"}),
                "{tool}"
            );
        }
        let deferred: Value =
            serde_json::from_str(&with_task_support(&listing, true).unwrap()).unwrap();
        assert!(deferred["result"]["tools"][0].get("execution").is_none());
        assert_eq!(
            deferred["result"]["tools"][1]["execution"]["taskSupport"],
            "optional"
        );
        assert!(with_task_support(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, false).is_none());
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
}
