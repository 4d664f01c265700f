//! `tools/call` in a 2025-11-25 session, answered in front of rmcp when nothing about the call
//! needs rmcp's session: the client takes neither sampling nor elicitation (what the server asks
//! goes to the agent's channel anyway), and the call is not a task. Such a call is most of what
//! an MCP client does, and rmcp spent more on it than the rest of the bridge: it parses each
//! message as each of its request types in turn until one fits, and hands it through its session
//! worker, the service and a task of its own to an SSE stream. Here it is parsed once, called as
//! `call_tool` calls it, and answered as JSON, or, when the call sends progress (the client gave
//! a progress token) before it ends, as an SSE stream of that progress and then the answer: as
//! rmcp answers. The server's log messages during the call, when the session asked for them
//! (`logging/setLevel`), come on that stream too, so that they reach the client before the answer
//! (rmcp would send them on the session's GET stream, which the answer can overtake). Everything
//! else, and any request this does not recognise, goes to rmcp.
//!
//! What rmcp would do for the call is kept: the session must be one rmcp still has (its peer is
//! open), a request uses it as rmcp's idle timer counts use (it is touched every
//! [`TOUCH_EVERY`]), the client's `notifications/cancelled` for the call cancels it, and a
//! request rmcp would refuse (a browser's, a foreign host's) is left to rmcp.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use foldhash::HashMap;
use rmcp::model::{
    ErrorData, NumberOrString, ProgressToken, ServerJsonRpcMessage, ServerNotification,
    ServerResult,
};
use rmcp::{Peer, RoleServer};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::{Map, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::Front;
use super::traced::{self, Target};
use crate::a2e::McpVersion;
use crate::caller::Caller;

/// How often a session answered here is shown to rmcp as in use, well inside its idle timeout
/// (300 s), so a client that only calls tools keeps its session.
const TOUCH_EVERY: Duration = Duration::from_secs(30);

/// The sessions whose calls can be answered here, by `Mcp-Session-Id`.
#[derive(Default)]
pub struct Direct {
    sessions: Mutex<HashMap<String, Arc<Plain>>>,
}

/// A session whose client takes no requests from the server.
struct Plain {
    peer: Peer<RoleServer>,
    touched: Mutex<Instant>,
    /// The calls answered here that are still running, by their JSON-RPC id.
    running: Mutex<HashMap<NumberOrString, CancellationToken>>,
}

impl Direct {
    /// Notes the session `id` that `peer` has just initialized, when its client takes neither
    /// sampling nor elicitation.
    pub fn initialized(&self, id: &str, peer: Peer<RoleServer>) {
        let plain = peer.peer_info().is_some_and(|info| {
            info.capabilities.sampling.is_none() && info.capabilities.elicitation.is_none()
        });
        let mut sessions = lock(&self.sessions);
        sessions.retain(|_, s| !s.peer.is_transport_closed());
        if plain {
            let session = Plain {
                peer,
                touched: Mutex::new(Instant::now()),
                running: Mutex::default(),
            };
            sessions.insert(id.to_owned(), Arc::new(session));
        }
    }

    /// Forgets session `id`, which its client has ended.
    pub fn closed(&self, id: &str) {
        lock(&self.sessions).remove(id);
    }

    /// The session `id`, while rmcp has it.
    fn get(&self, id: &str) -> Option<Arc<Plain>> {
        let mut sessions = lock(&self.sessions);
        let session = sessions.get(id)?;
        if session.peer.is_transport_closed() {
            sessions.remove(id);
            return None;
        }
        Some(session.clone())
    }

    /// The client's `notifications/cancelled` (a message of session `id`): cancels the call it
    /// names if it runs here. rmcp is told as well, as of any other.
    pub fn cancelled(&self, id: &str, body: &[u8]) {
        #[derive(Deserialize)]
        struct Cancelled {
            method: String,
            params: CancelledParams,
        }
        #[derive(Deserialize)]
        struct CancelledParams {
            #[serde(rename = "requestId")]
            request_id: NumberOrString,
        }
        let Ok(message) = serde_json::from_slice::<Cancelled>(body) else {
            return;
        };
        if message.method != "notifications/cancelled" {
            return;
        }
        if let Some(session) = self.get(id)
            && let Some(token) = lock(&session.running).get(&message.params.request_id)
        {
            token.cancel();
        }
    }
}

/// Enough of a `tools/call` to tell whether it is answered here, and to make it.
#[derive(Deserialize)]
struct Peek {
    jsonrpc: String,
    id: NumberOrString,
    method: String,
    params: PeekParams,
}

#[derive(Deserialize)]
struct PeekParams {
    name: String,
    #[serde(default)]
    arguments: Option<Map<String, Value>>,
    #[serde(rename = "_meta", default)]
    meta: Option<Map<String, Value>>,
    // Any of these is rmcp's (or the tasks middleware's) to handle.
    task: Option<IgnoredAny>,
    #[serde(rename = "requestState")]
    request_state: Option<IgnoredAny>,
    #[serde(rename = "inputResponses")]
    input_responses: Option<IgnoredAny>,
}

impl Peek {
    /// The call, when it is one answered here: the progress token, if any, must be one.
    fn plain(self) -> Option<(Self, Option<ProgressToken>)> {
        let params = &self.params;
        let plain = self.jsonrpc == "2.0"
            && self.method == "tools/call"
            && params.task.is_none()
            && params.request_state.is_none()
            && params.input_responses.is_none();
        if !plain {
            return None;
        }
        let token = match params.meta.as_ref().and_then(|m| m.get("progressToken")) {
            Some(token) => Some(serde_json::from_value(token.clone()).ok()?),
            None => None,
        };
        Some((self, token))
    }
}

/// A call answered here, as `BridgeServer::call_in_session` makes it.
pub struct Call {
    pub id: NumberOrString,
    pub name: String,
    pub arguments: Map<String, Value>,
    /// The client's progress token, if it asked for progress.
    pub progress: Option<ProgressToken>,
    /// Where the call's progress and log messages go, when it may have some: the answer's stream.
    pub sink: Option<mpsc::UnboundedSender<ServerNotification>>,
    /// The session's id and the lowest log level it asked for (`logging/setLevel`), if it did.
    pub log: Option<(String, usize)>,
    /// The app the call says it comes from (`_meta["mcp-bridge/app"]`), if any.
    pub app: Option<String>,
}

/// The answer to `body`, a request of session `id` by `agent`, when it is a call answered here;
/// `None` sends it on to rmcp. The answer is JSON, unless the call sends progress before it
/// ends: then it is a stream of that progress and then the answer, as rmcp would send it.
pub async fn call(
    front: &Front,
    parts: &Parts,
    agent: &Caller,
    id: &str,
    body: &Bytes,
) -> Option<Response> {
    // rmcp's checks against DNS rebinding: a request from a browser (it has an `Origin`) or
    // to a host not allowed is left to rmcp to refuse.
    let allowed = &front.state.config.mcp_allowed_hosts;
    if parts.headers.contains_key(header::ORIGIN)
        || !host_allowed(&parts.headers, allowed)
        || !takes_json(parts)
    {
        return None;
    }
    // Headers that restate the message (2026-07-28) are rmcp's to check against it.
    let restated =
        |name: &str| name == "mcp-method" || name == "mcp-name" || name.starts_with("mcp-param-");
    if parts.headers.keys().any(|name| restated(name.as_str())) {
        return None;
    }
    let version = parts.headers.get("mcp-protocol-version");
    // Only a version with sessions (not the stateless one, nor one the bridge does not know).
    let with_sessions = |v: &HeaderValue| {
        v.to_str()
            .ok()
            .and_then(McpVersion::parse)
            .is_some_and(McpVersion::has_sessions)
    };
    if version.is_some_and(|v| !with_sessions(v)) {
        return None;
    }
    let session = front.server.direct.get(id)?;
    let (peek, token) = serde_json::from_slice::<Peek>(body).ok()?.plain()?;
    touch(front, id, &session).await;
    // The server's log messages during the call come on its stream too, before its answer.
    let log = front
        .server
        .sessions
        .log_level_of(id)
        .map(|lowest| (id.to_owned(), lowest));
    let (sink, progressed) = match token.is_some() || log.is_some() {
        true => {
            let (sink, progressed) = mpsc::unbounded_channel();
            (Some(sink), Some(progressed))
        }
        false => (None, None),
    };
    let request = peek.id.clone();
    let target = Target::Tool(&peek.params.name);
    let span = traced::in_front(
        "tools/call",
        target,
        || super::id_text(&request),
        parts,
        peek.params.meta.as_ref(),
    );
    let app = crate::tools::app_of(peek.params.meta.as_ref());
    let call = Call {
        app,
        id: peek.id,
        name: peek.params.name,
        arguments: peek.params.arguments.unwrap_or_default(),
        progress: token,
        sink,
        log,
    };
    let cancel = CancellationToken::new();
    lock(&session.running).insert(request.clone(), cancel.clone());
    let running = Running {
        session: session.clone(),
        id: request.clone(),
    };
    let (server, agent, uri) = (front.server.clone(), agent.clone(), parts.uri.clone());
    // The call's future is made in its box and never moved: it holds the whole call, and a
    // move copies it (so the span wraps the box's future rather than the call's).
    let spanned = span.clone();
    let mut answer = Box::pin(
        async move {
            let peer = running.session.peer.clone();
            let answered = (server.call_in_session(&agent, &uri, call, peer, &cancel)).await;
            traced::ended(&spanned, &answered);
            drop(running);
            match answered {
                Ok(response) => {
                    ServerJsonRpcMessage::response(ServerResult::from(response), request)
                }
                Err(error) => ServerJsonRpcMessage::error(error, Some(request)),
            }
        }
        .instrument(span),
    );
    let Some(mut progressed) = progressed else {
        return Some(json(&answer.await));
    };
    let first = tokio::select! {
        biased;
        message = &mut answer => {
            // Progress the answer's last poll sent is still waiting: it comes first.
            return Some(match progressed.try_recv() {
                Ok(first) => stream(first, progressed, Box::pin(std::future::ready(message))),
                Err(_) => json(&message),
            });
        }
        first = progressed.recv() => first,
    };
    match first {
        Some(first) => Some(stream(first, progressed, answer)),
        None => Some(json(&answer.await)),
    }
}

/// An SSE answer: the call's progress and log messages from `first` on as they come, then its
/// answer. Dropping it (the client went away) drops the call, which cancels it upstream.
fn stream(
    first: ServerNotification,
    progressed: mpsc::UnboundedReceiver<ServerNotification>,
    answer: Pin<Box<dyn Future<Output = ServerJsonRpcMessage> + Send>>,
) -> Response {
    let progress = ServerJsonRpcMessage::notification;
    let events = futures::stream::unfold(
        (Some(first), Some(answer), progressed),
        move |(first, answer, mut progressed)| async move {
            if let Some(first) = first {
                return Some((event(&progress(first)), (None, answer, progressed)));
            }
            let mut answer = answer?;
            // Progress sent before the answer comes before it.
            let message = tokio::select! {
                biased;
                Some(param) = progressed.recv() => {
                    return Some((event(&progress(param)), (None, Some(answer), progressed)));
                }
                message = &mut answer => message,
            };
            // The answer's last poll may have sent progress too (the server's last progress and
            // its answer read in one go): that progress still comes first.
            if let Ok(param) = progressed.try_recv() {
                let answer: Pin<Box<dyn Future<Output = ServerJsonRpcMessage> + Send>> =
                    Box::pin(std::future::ready(message));
                return Some((event(&progress(param)), (None, Some(answer), progressed)));
            }
            Some((event(&message), (None, None, progressed)))
        },
    );
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
}

fn event(message: &ServerJsonRpcMessage) -> Result<Event, std::convert::Infallible> {
    let data = serde_json::to_string(message).unwrap_or_default();
    Ok(Event::default().event("message").data(data))
}

/// Forgets a call answered here once it ends (or its client goes away).
struct Running {
    session: Arc<Plain>,
    id: NumberOrString,
}

impl Drop for Running {
    fn drop(&mut self) {
        lock(&self.session.running).remove(&self.id);
    }
}

/// Shows rmcp that session `id` is in use (a no-op event for its worker resets its idle timer),
/// at most every [`TOUCH_EVERY`].
async fn touch(front: &Front, id: &str, session: &Plain) {
    {
        let mut touched = lock(&session.touched);
        if touched.elapsed() < TOUCH_EVERY {
            return;
        }
        *touched = Instant::now();
    }
    let handle = front.owners.handle(id).await;
    // No request channel has this number: closing it changes nothing but the timer.
    if let Some(handle) = handle
        && let Err(error) = handle.close_request_wise_channel(u64::MAX).await
    {
        tracing::debug!(%error, "cannot touch an /mcp session");
    }
}

/// Whether the request's `Host` is one `/mcp` accepts: one of `allowed` (`MCP_BRIDGE_MCP_ALLOWED_HOSTS`,
/// a port only when given), or loopback when it is empty, as rmcp decides.
pub(super) fn host_allowed(headers: &axum::http::HeaderMap, allowed: &[String]) -> bool {
    const LOOPBACK: [&str; 3] = ["localhost", "127.0.0.1", "::1"];
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    let Some(host) = host.and_then(|h| h.parse::<axum::http::uri::Authority>().ok()) else {
        return false;
    };
    let name = |host: &str| host.trim_matches(['[', ']']).to_ascii_lowercase();
    let (asked, port) = (name(host.host()), host.port_u16());
    let matches = |allowed: &str| match allowed.trim().parse::<axum::http::uri::Authority>() {
        Ok(authority) => {
            name(authority.host()) == asked && authority.port_u16().is_none_or(|p| Some(p) == port)
        }
        Err(_) => name(allowed.trim()) == asked,
    };
    match allowed.is_empty() {
        true => LOOPBACK.iter().any(|h| matches(h)),
        false => allowed.iter().any(|h| matches(h)),
    }
}

/// Whether the request accepts a JSON answer (the transport asks clients to accept both JSON and
/// SSE; one that does not is left to rmcp to answer).
fn takes_json(parts: &Parts) -> bool {
    parts
        .headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|v| v.split(';').next().unwrap_or_default().trim())
        .any(|v| v.eq_ignore_ascii_case("application/json") || v == "*/*")
}

fn json(message: &ServerJsonRpcMessage) -> Response {
    match serde_json::to_vec(message) {
        Ok(body) => {
            let mut resp = (StatusCode::OK, body).into_response();
            resp.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            resp
        }
        Err(error) => {
            let error =
                ErrorData::internal_error(format!("cannot write the answer: {error}"), None);
            let message =
                serde_json::json!({ "jsonrpc": "2.0", "id": Value::Null, "error": error });
            (StatusCode::OK, message.to_string()).into_response()
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(body: &str) -> Option<Peek> {
        let (peek, _) = serde_json::from_slice::<Peek>(body.as_bytes())
            .ok()?
            .plain()?;
        Some(peek)
    }

    #[test]
    fn hosts_are_allowed_as_rmcp_allows_them() {
        let parts = |host: &str| {
            let req = axum::http::Request::builder()
                .header("host", host)
                .body(())
                .unwrap();
            req.into_parts().0.headers
        };
        let loopback: [String; 0] = [];
        for host in ["127.0.0.1:8080", "localhost", "[::1]:9", "LOCALHOST:1"] {
            assert!(host_allowed(&parts(host), &loopback), "{host}");
        }
        for host in ["evil.example", "127.0.0.2:8080", "bridge:8080"] {
            assert!(!host_allowed(&parts(host), &loopback), "{host}");
        }
        let listed = ["bridge".to_owned(), "gw.example:8443".to_owned()];
        assert!(host_allowed(&parts("bridge:8080"), &listed));
        assert!(host_allowed(&parts("gw.example:8443"), &listed));
        assert!(!host_allowed(&parts("gw.example:443"), &listed));
        assert!(!host_allowed(&parts("localhost:8080"), &listed));
    }

    #[test]
    fn only_plain_calls_are_answered_here() {
        let plain = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a__echo","arguments":{"x":1},"_meta":{"trace":"t"}}}"#;
        let with_progress = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":"p"}}}"#;
        let (_, token) = serde_json::from_slice::<Peek>(with_progress.as_bytes())
            .unwrap()
            .plain()
            .unwrap();
        assert_eq!(
            token,
            Some(ProgressToken(NumberOrString::String("p".into())))
        );
        let found = call(plain).expect("a plain call");
        assert_eq!(found.id, NumberOrString::Number(7));
        assert_eq!(found.params.name, "a__echo");
        assert!(
            call(r#"{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"a"}}"#)
                .is_some()
        );
        for other in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":{"progressToken":{"not":"a token"}}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","task":{"ttl":1000}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","requestState":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"a"}}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"a"}}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"a"}}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}]"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
        ] {
            assert!(call(other).is_none(), "{other}");
        }
    }
}
