//! The `/mcp` middleware, in front of rmcp: the caller's token, the host guard, its limits,
//! and its sessions (only in one it opened, up to its cap; across replicas restored from the
//! shared store), then what is answered before rmcp sees it (`dispatch.rs`).

use std::sync::{Arc, Mutex};

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::StreamableHttpService;
use rmcp::{Peer, RoleServer};

use super::owners::SessionOwners;
use super::shared::SharedSessions;
use super::{ANONYMOUS, BridgeServer, direct, dispatch, hop, ids, params, toolset_of};
use crate::caller::Caller;
use crate::http::state::AppState;
use crate::store::SessionClaim;

/// What the `/mcp` middleware needs.
#[derive(Clone)]
pub(super) struct Front {
    pub(super) state: AppState,
    /// The sessions replicas share, when there are replicas.
    pub(super) shared: Option<SharedSessions>,
    pub(super) owners: Arc<SessionOwners>,
    pub(super) server: BridgeServer,
    /// rmcp's service, to restore a shared session before the bridge answers it itself.
    pub(super) service: StreamableHttpService<BridgeServer, ids::NamedIds>,
}

/// Across replicas: restores shared session `session`, which this replica does not have, by
/// having rmcp answer a `ping` of it (rmcp restores a session it does not have for any
/// request); whether this replica has it now. For the requests answered in front of rmcp.
pub(super) async fn restore(
    front: &Front,
    parts: &axum::http::request::Parts,
    session: &str,
) -> bool {
    if front.shared.is_none() {
        return false;
    }
    let ping = br#"{"jsonrpc":"2.0","id":"mcp-bridge-restore","method":"ping"}"#;
    let mut req = Request::new(axum::body::Body::from(&ping[..]));
    *req.method_mut() = axum::http::Method::POST;
    *req.uri_mut() = parts.uri.clone();
    *req.headers_mut() = parts.headers.clone();
    req.headers_mut().remove(axum::http::header::CONTENT_LENGTH);
    req.headers_mut().insert(
        axum::http::header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("application/json"),
    );
    *req.extensions_mut() = parts.extensions.clone();
    let resp = front.service.handle(req).await;
    // The ping's answer is not wanted; its stream is read to its end, for the ping to finish.
    drop(http_body_util::BodyExt::collect(resp.into_body()).await);
    front.owners.is_open(session).await
}

pub(super) const SESSION_ID: &str = "mcp-session-id";

/// Middleware: the caller of `/mcp` (401 without a valid token, unless the check is off), and
/// only in a session it opened, up to its cap of sessions; a request from an mcp-bridge is
/// refused first (see [`hop`]).
pub(super) async fn authenticate(
    State(front): State<Front>,
    mut req: Request,
    next: Next,
) -> Response {
    if req.headers().contains_key(crate::guard::HOP_HEADER) {
        return hop::refuse(req, front.state.config.max_body_bytes).await;
    }
    if let Some(name) = toolset_of(req.uri().path())
        && front.state.tools.access().toolset(name).is_none()
    {
        let message = format!("no toolset \"{name}\" is defined");
        return crate::http::error::ApiError::new(crate::a2e::ErrorCode::NotFound, message)
            .into_response();
    }
    let agent = match front.state.config.mcp_auth_off {
        true => Caller::new(ANONYMOUS, false),
        false => match front.state.auth.caller_of(req.headers(), req.uri()).await {
            Ok(agent) => {
                // Kept for the servers that carry each agent's identity upstream.
                let token = crate::http::auth::bearer(req.headers());
                front.state.registry.identities().saw(&agent, token);
                agent
            }
            Err(refused) => return crate::http::auth::keep_alive_after(*refused, req).await,
        },
    };
    if let Some(refused) = foreign_host(&req, &front.state.config.mcp_allowed_hosts) {
        return refused;
    }
    let session = req
        .headers()
        .get(SESSION_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let agent_id = agent.id.clone();
    let seen = params::Seen::of(req.headers(), req.uri(), &agent);
    req.extensions_mut().insert(agent);
    super::traced::keep_http_span(req.extensions_mut());
    // The caller's limits first, then its session (which may ask the shared database), then
    // the 2025-11-25 tasks, which rmcp does not speak (see tasks.rs): one middleware, as each
    // layer boxes a service and a future per request.
    let limits = &front.state.limits;
    let work = crate::http::limits::admitted(limits, req, |req| {
        in_session(&front, req, next, agent_id, session)
    });
    params::seen_by(seen, work).await
}

/// The rest of [`authenticate`], within the caller's limits: only in a session it opened, up to
/// its cap of sessions.
pub(super) async fn in_session(
    front: &Front,
    mut req: Request,
    next: Next,
    agent: String,
    session: Option<String>,
) -> Response {
    // Only a request without a session can open one: the agent is kept for it alone.
    let opener = match &session {
        Some(id) => match front.owners.allows(id, &agent).await {
            Some(true) => None,
            Some(false) => return session_not_found(),
            None => return session_unknown_for_now(),
        },
        None => Some(agent.clone()),
    };
    if opener.is_some()
        && req.method() == axum::http::Method::POST
        && let Some(cap) = front.owners.full(&agent).await
    {
        return too_many_sessions(&agent, cap);
    }
    // The session this request opens is known here by its peer even if its `initialized`
    // notification goes to another replica (the GET stream may come back here).
    let opening = Opening::default();
    if opener.is_some() && front.shared.is_some() {
        req.extensions_mut().insert(opening.clone());
    }
    let ending_session = req.method() == axum::http::Method::DELETE;
    let listening = req.method() == axum::http::Method::GET;
    // A session ended here may listen on another replica: that one is told to end it too.
    let listens_elsewhere = match (ending_session, &session, &front.shared) {
        (true, Some(id), Some(shared)) => match front.state.hub.replica() {
            Some(me) => shared.stream_elsewhere(id, me).await,
            None => None,
        },
        _ => None,
    };
    let resp = dispatch::dispatch(front, req, next).await;
    if let (Some(agent), Some(opened)) = (opener, resp.headers().get(SESSION_ID))
        && let Ok(opened) = opened.to_str()
    {
        let opened = opened.to_owned();
        let claim = front.owners.opened(&opened, agent.clone()).await;
        if claim != SessionClaim::Claimed {
            // Past the cap after all (concurrent opens), or not recorded where the other
            // replicas look: the session is ended at once.
            if let Err(error) = front.owners.close(&opened).await {
                tracing::debug!(%error, "cannot end an /mcp session past its agent's cap");
            }
            if let Some(shared) = &front.shared {
                shared.end(&opened).await;
            }
            return match claim {
                SessionClaim::Capped => too_many_sessions(&agent, front.owners.cap()),
                _ => session_unrecorded(),
            };
        }
        if let Some(peer) = opening.take() {
            front
                .server
                .sessions
                .add(peer, &agent, Some(&opened), false)
                .await;
        }
    }
    // The server's requests for a shared session go out where its client listens.
    if let (true, Some(id), Some(shared), Some(me)) = (
        listening && resp.status() == StatusCode::OK,
        &session,
        &front.shared,
        front.state.hub.replica(),
    ) {
        shared.streams_here(id, me).await;
        return resp.map(|body| shared.listening(id, me, body));
    }
    match (
        ending_session && resp.status() == StatusCode::ACCEPTED,
        &session,
    ) {
        (true, Some(id)) => {
            front.owners.closed(id);
            front.server.direct.closed(id);
            if let Some(replica) = listens_elsewhere
                && let Err(error) = front.state.hub.end_session(&replica, id).await
            {
                tracing::debug!(%error, %replica, "cannot end an /mcp session's stream elsewhere");
            }
            session_ended()
        }
        _ => resp,
    }
}

/// The 403 for a request whose `Host` is not one `/mcp` serves (rmcp's guard against DNS
/// rebinding, which would answer a bare "Forbidden: Host header is not allowed"): it names the
/// host it got and the setting that allows it. A request without the header (HTTP/2 names the
/// host in `:authority`) is left to rmcp.
pub(super) fn foreign_host(req: &Request, allowed: &[String]) -> Option<Response> {
    let host = req.headers().get(axum::http::header::HOST)?;
    if direct::host_allowed(req.headers(), allowed) {
        return None;
    }
    let shown = String::from_utf8_lossy(host.as_bytes()).into_owned();
    // The names it does serve are not listed: they may be internal, and the caller may be
    // anyone (`MCP_BRIDGE_MCP_AUTH=off`).
    let message = format!(
        "the Host header {shown:?} is not one /mcp serves (loopback names only, unless \
         configured), a guard against DNS rebinding: add it to MCP_BRIDGE_MCP_ALLOWED_HOSTS \
         (mcp_allowed_hosts in the configuration file) to serve /mcp under that name"
    );
    let error = crate::http::error::ApiError::new(crate::a2e::ErrorCode::Forbidden, message);
    Some(error.into_response())
}

/// Across replicas: where `initialize` leaves the peer of the session it opens, for
/// [`authenticate`] to note under the session's id once rmcp has named it.
#[derive(Clone, Default)]
pub(super) struct Opening(pub(super) Arc<Mutex<Option<Peer<RoleServer>>>>);

impl Opening {
    pub(super) fn take(&self) -> Option<Peer<RoleServer>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// The answer to a session's `DELETE`: rmcp says 202 Accepted, but the session is gone at once
/// and clients expect 200 or 204 (the Python SDK logs "Session termination failed: 202").
pub(super) fn session_ended() -> Response {
    StatusCode::NO_CONTENT.into_response()
}

/// A session past the agent's cap: 429, as the other per-agent limits.
pub(super) fn too_many_sessions(agent: &str, cap: usize) -> Response {
    let message = format!(
        "too many /mcp sessions open (MCP_BRIDGE_AGENT_MCP_SESSIONS, {cap}) for agent \"{agent}\"; \
         end one (DELETE /mcp) or retry after 5 s"
    );
    let mut resp = crate::http::error::ApiError::new(crate::a2e::ErrorCode::RateLimited, message)
        .into_response();
    resp.headers_mut().insert(
        axum::http::header::RETRY_AFTER,
        axum::http::HeaderValue::from_static("5"),
    );
    resp
}

/// What rmcp answers for a session it does not know: the client starts a new one.
pub(super) fn session_not_found() -> Response {
    (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response()
}

/// A session this replica never saw while the shared database does not answer: a retryable
/// 503, not the 404 that would make the client drop a session that may well be alive.
pub(super) fn session_unknown_for_now() -> Response {
    retry_soon(
        "this replica cannot look the session up now (the database does not answer); try again",
    )
}

/// A session opened here that the shared store could not record (so no other replica would
/// know it): ended, and the client told to open one again.
pub(super) fn session_unrecorded() -> Response {
    retry_soon(
        "the session could not be recorded for the other replicas (the database does not \
         answer); initialize again",
    )
}

/// A retryable 503 `mcp_server_unavailable` with `message`, to try again after a second.
pub(super) fn retry_soon(message: &str) -> Response {
    let mut response =
        crate::http::error::ApiError::new(crate::a2e::ErrorCode::McpServerUnavailable, message)
            .into_response();
    response.headers_mut().insert(
        axum::http::header::RETRY_AFTER,
        axum::http::HeaderValue::from_static("1"),
    );
    response
}
