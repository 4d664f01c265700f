//! What `/mcp` answers in front of rmcp, for a request already checked (caller, host, limits,
//! session: `front.rs`). One look at the body ([`Wanted`], without parsing most of it) decides:
//!
//! | request | answered by |
//! |---|---|
//! | a 2025-11-25 session's `tasks/*` or task-augmented `tools/call` | `tasks.rs` (rmcp 3.11 speaks only the later extension) |
//! | a session's plain `tools/call` | `direct.rs`, when the client takes no requests; else rmcp |
//! | a session's `notifications/cancelled` | `direct.rs` (it may name a call answered there), then rmcp |
//! | across replicas, a session's answer to a request another replica made | `answers.rs` (relayed there) |
//! | `initialize` | rmcp, its answer given `capabilities.tasks` |
//! | `tools/list` (2025-11-25 and later) | rmcp, each tool given `execution.taskSupport` |
//! | anything else | rmcp, untouched |

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

use super::tasks::{Rpc, TASKS_SINCE, answer, with_task_support, with_tasks};
use super::{Front, SESSION_ID};
use crate::a2e::{ErrorCode, TaskMethod};
use crate::caller::Caller;
use crate::http::error::ApiError;

/// How long an answer rewritten here may take to be read whole (it is one message).
const INITIALIZE_READ: Duration = Duration::from_secs(30);

/// What the `/mcp` middleware does inside the caller's check, limits and session checks, before
/// rmcp: see the module's note.
pub async fn dispatch(front: &Front, req: Request, next: Next) -> Response {
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
        && version_of(&parts.headers).is_some_and(|v| TASKS_SINCE.reached_by(&v))
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
                if !crate::telemetry::exporting() {
                    return answer(&front.state, &agent, &parts.uri, rpc).await;
                }
                use tracing::Instrument as _;
                let span = rpc.span(&parts);
                let answered = answer(&front.state, &agent, &parts.uri, rpc).instrument(span);
                // Boxed, as the other rare paths: a request's future is moved whole.
                return Box::pin(answered).await;
            }
        }
        (Wanted::Call, Some(session), Some(agent)) if front.state.config.fast_paths => {
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
        _ if in_session
            && peek.id.is_some()
            && (augmented || TaskMethod::parse(method).is_some()) =>
        {
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
}
