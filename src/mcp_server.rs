//! The `/mcp` endpoint: mcp-bridge as an MCP server (Streamable HTTP; 2025-11-25 sessions and
//! stateless 2026-07-28) offering what it bridges to any MCP client, as the agent its bearer
//! token names: every server's tools as `{server_id}__{tool}` (one server's unprefixed when
//! configured), resources, templates, prompts (`{server_id}__{prompt}`) and completions.

mod answers;
mod direct;
mod hop;
mod ids;
mod inputs;
mod listen;
mod owners;
mod params;
mod recipient;
mod shared;
mod tasks;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    ContentBlock, GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, MetaObject,
    PaginatedRequestParams, Prompt, ReadResourceRequestParams, ReadResourceResponse, Reference,
    Resource, ResourceContents, ResourceTemplate, ResultType, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};

use crate::access::Kind;
use crate::caller::Caller;
use crate::http::state::AppState;
use crate::hub::AgentChannel;
use crate::hub::InputRounds;
use crate::hub::McpNotice;
use crate::registry::{self, MergedPage, naming};
use crate::store::SessionClaim;
use crate::tools::{Resolved, Scope};
use crate::upstream::CallError;
use inputs::{Running, Step, Suspended};
use owners::SessionOwners;
use recipient::McpCaller;
use shared::SharedSessions;

/// The agent `/mcp` runs as when its token check is off.
pub const ANONYMOUS: &str = "anonymous";
/// The `_meta` key of a merged list result naming the servers it left out (each
/// `{server_id, reason}`, as `skipped_servers` on the REST answers).
pub const SKIPPED_META: &str = "mcp-bridge/skipped_servers";
/// The `_meta` key of a tool's error result (and the `data` of a JSON-RPC error) saying what
/// the REST answer would: `{code, retryable}`, so a client knows whether to call again.
pub const ERROR_META: &str = "mcp-bridge/error";
/// A merged page on `/mcp`: its entries, next cursor and `_meta`.
type McpPage<T> = (Vec<T>, Option<String>, Option<MetaObject>);

/// `/mcp`: rmcp's Streamable HTTP service, behind the caller's token check, its session
/// binding and its limits.
pub fn router(state: AppState) -> Router<AppState> {
    let manager = Arc::new(LocalSessionManager::default());
    // Replicas share their sessions (shared.rs); one process keeps them in memory alone.
    let shared = state.config.nats_url.is_some().then(|| {
        let idle = std::time::Duration::from_secs(state.config.mcp_session_idle_secs.max(1));
        SharedSessions::new(state.store.clone(), idle)
    });
    let sessions = Arc::new(Sessions {
        open: Mutex::default(),
        shared: shared.clone(),
    });
    spawn_change_notifier(&state, sessions.clone());
    let server = BridgeServer {
        state: state.clone(),
        sessions,
        suspended: Suspended::default(),
        direct: Arc::default(),
        listens: Arc::default(),
    };
    if shared.is_some() {
        state.hub.serve_sessions(Arc::new(answers::SessionRelay {
            manager: manager.clone(),
            sessions: server.sessions.clone(),
        }));
    }
    let named = ids::NamedIds {
        inner: manager.clone(),
        hub: state.hub.clone(),
    };
    let service = service(&state, server.clone(), named, shared.clone());
    let front = Front {
        state: state.clone(),
        shared: shared.clone(),
        owners: Arc::new(SessionOwners::new(
            manager,
            state.config.agent_mcp_sessions,
            shared,
        )),
        server,
        service: service.clone(),
    };
    Router::new()
        .route_service("/mcp", service.clone())
        .route_service("/mcp/toolsets/{name}", service)
        .layer(axum::middleware::from_fn_with_state(front, authenticate))
}

fn service(
    state: &AppState,
    server: BridgeServer,
    manager: ids::NamedIds,
    shared: Option<SharedSessions>,
) -> StreamableHttpService<BridgeServer, ids::NamedIds> {
    // A stateless (2026-07-28) call whose first message is its answer gets plain JSON; one that
    // streams first (progress, a sampling or elicitation request) still gets SSE.
    let mut config = StreamableHttpServerConfig::default()
        .with_json_response(true)
        .with_cancellation_token(state.hub.shutdown_token().child_token())
        .with_max_request_body_bytes(state.config.max_body_bytes);
    if !state.config.mcp_allowed_hosts.is_empty() {
        config = config.with_allowed_hosts(state.config.mcp_allowed_hosts.clone());
    }
    // A session this replica does not have is restored from the shared ones, if it lives.
    if let Some(shared) = shared {
        config.session_store = Some(Arc::new(shared));
    }
    StreamableHttpService::new(move || Ok(server.clone()), Arc::new(manager), config)
}

/// What the `/mcp` middleware needs.
#[derive(Clone)]
struct Front {
    state: AppState,
    /// The sessions replicas share, when there are replicas.
    shared: Option<SharedSessions>,
    owners: Arc<SessionOwners>,
    server: BridgeServer,
    /// rmcp's service, to restore a shared session before the bridge answers it itself.
    service: StreamableHttpService<BridgeServer, ids::NamedIds>,
}

/// Across replicas: restores shared session `session`, which this replica does not have, by
/// having rmcp answer a `ping` of it (rmcp restores a session it does not have for any
/// request); whether this replica has it now. For the requests answered in front of rmcp.
async fn restore(front: &Front, parts: &axum::http::request::Parts, session: &str) -> bool {
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

const SESSION_ID: &str = "mcp-session-id";

/// Middleware: the caller of `/mcp` (401 without a valid token, unless the check is off), and
/// only in a session it opened, up to its cap of sessions; a request from an mcp-bridge is
/// refused first (see [`hop`]).
async fn authenticate(State(front): State<Front>, mut req: Request, next: Next) -> Response {
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
        false => match front.state.auth.caller_of(&req) {
            Ok(agent) => agent,
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
async fn in_session(
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
    let resp = tasks::intercept(front, req, next).await;
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
fn foreign_host(req: &Request, allowed: &[String]) -> Option<Response> {
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

/// The toolset an `/mcp/toolsets/{name}` path names.
fn toolset_of(path: &str) -> Option<&str> {
    path.strip_prefix("/mcp/toolsets/")
        .filter(|name| !name.is_empty() && !name.contains('/'))
}

/// What an `/mcp` request is about: `/mcp` (the catalogue, or its meta-tools with
/// `?deferred=1`) or `/mcp/toolsets/{name}`.
fn scope_path(context: &RequestContext<RoleServer>) -> ScopePath {
    match context.extensions.get::<axum::http::request::Parts>() {
        Some(parts) => scope_of(&parts.uri),
        None => ScopePath::Catalogue,
    }
}

/// The scope an `/mcp` request's URI names.
fn scope_of(uri: &axum::http::Uri) -> ScopePath {
    if let Some(name) = toolset_of(uri.path()) {
        return ScopePath::Toolset(name.to_owned());
    }
    let deferred = uri.query().is_some_and(|query| {
        query
            .split('&')
            .any(|pair| matches!(pair, "deferred=1" | "deferred=true" | "deferred"))
    });
    match deferred {
        true => ScopePath::Deferred,
        false => ScopePath::Catalogue,
    }
}

/// The owned form of a [`Scope`], as a request's path gives it.
enum ScopePath {
    Catalogue,
    Deferred,
    Toolset(String),
}

impl ScopePath {
    fn scope(&self) -> Scope<'_> {
        match self {
            ScopePath::Catalogue => Scope::Catalogue,
            ScopePath::Deferred => Scope::Deferred,
            ScopePath::Toolset(name) => Scope::Toolset(name),
        }
    }
}

/// Across replicas: where `initialize` leaves the peer of the session it opens, for
/// [`authenticate`] to note under the session's id once rmcp has named it.
#[derive(Clone, Default)]
struct Opening(Arc<Mutex<Option<Peer<RoleServer>>>>);

impl Opening {
    fn take(&self) -> Option<Peer<RoleServer>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

/// The answer to a session's `DELETE`: rmcp says 202 Accepted, but the session is gone at once
/// and clients expect 200 or 204 (the Python SDK logs "Session termination failed: 202").
fn session_ended() -> Response {
    StatusCode::NO_CONTENT.into_response()
}

/// A session past the agent's cap: 429, as the other per-agent limits.
fn too_many_sessions(agent: &str, cap: usize) -> Response {
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
fn session_not_found() -> Response {
    (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response()
}

/// A session this replica never saw while the shared database does not answer: a retryable
/// 503, not the 404 that would make the client drop a session that may well be alive.
fn session_unknown_for_now() -> Response {
    retry_soon(
        "this replica cannot look the session up now (the database does not answer); try again",
    )
}

/// A session opened here that the shared store could not record (so no other replica would
/// know it): ended, and the client told to open one again.
fn session_unrecorded() -> Response {
    retry_soon(
        "the session could not be recorded for the other replicas (the database does not \
         answer); initialize again",
    )
}

/// A retryable 503 `mcp_server_unavailable` with `message`, to try again after a second.
fn retry_soon(message: &str) -> Response {
    let mut response =
        crate::http::error::ApiError::new(crate::a2e::ErrorCode::McpServerUnavailable, message)
            .into_response();
    response.headers_mut().insert(
        axum::http::header::RETRY_AFTER,
        axum::http::HeaderValue::from_static("1"),
    );
    response
}

/// The 2025-11-25 sessions open now: told when the catalogue changes, and given the resource
/// updates and log messages they asked for.
struct Sessions {
    open: Mutex<Vec<Session>>,
    /// The sessions replicas share: what each asked for is recorded there, and read back by
    /// the replica that sends it a notification.
    shared: Option<SharedSessions>,
}

struct Session {
    peer: Peer<RoleServer>,
    /// Its `Mcp-Session-Id`.
    id: Option<String>,
    /// The agent whose token opened it.
    agent: String,
    /// The lowest log level it wants (`logging/setLevel`), if any.
    log_level: Option<usize>,
    /// The URIs it subscribed to.
    uris: HashSet<String>,
}

/// Log levels from least to most severe, as MCP names them.
const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

fn log_rank(level: &Value) -> Option<usize> {
    LOG_LEVELS.iter().position(|l| Some(*l) == level.as_str())
}

/// Whether two peers are the same session (they share the client's initialize parameters).
fn same_session(a: &Peer<RoleServer>, b: &Peer<RoleServer>) -> bool {
    matches!((a.peer_info(), b.peer_info()), (Some(x), Some(y)) if Arc::ptr_eq(&x, &y))
}

impl Sessions {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Session>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The lowest log level session `id` asked for, as this replica knows it.
    fn log_level_of(&self, id: &str) -> Option<usize> {
        self.lock()
            .iter()
            .find(|s| s.id.as_deref() == Some(id))
            .and_then(|s| s.log_level)
    }

    /// The peer of session `id`, while it is open here.
    fn peer_of(&self, id: &str) -> Option<Peer<RoleServer>> {
        self.lock()
            .iter()
            .find(|s| s.id.as_deref() == Some(id) && !s.peer.is_transport_closed())
            .map(|s| s.peer.clone())
    }

    /// Notes a session initialized here; one restored from the shared sessions (its first
    /// request on this replica) gets back what it asked for on others.
    async fn add(&self, peer: Peer<RoleServer>, agent: &str, id: Option<&str>, restored: bool) {
        let interests = match (&self.shared, id, restored) {
            (Some(shared), Some(id), true) => match shared.get(id).await {
                Ok(Some(session)) => Some((session.uris, session.log_level)),
                _ => None,
            },
            _ => None,
        };
        let mut open = self.lock();
        open.retain(|s| !s.peer.is_transport_closed());
        if open.iter().any(|s| same_session(&s.peer, &peer)) {
            return;
        }
        let (uris, log_level) = interests.unwrap_or_default();
        open.push(Session {
            peer,
            id: id.map(str::to_owned),
            agent: agent.to_owned(),
            log_level: log_level.map(|l| json!(l)).as_ref().and_then(log_rank),
            uris: uris.into_iter().collect(),
        });
    }

    /// Changes the session `peer` belongs to (`id` in the request), and records what it now
    /// asks for where replicas share it.
    async fn update(
        &self,
        peer: &Peer<RoleServer>,
        agent: &str,
        id: Option<&str>,
        change: impl FnOnce(&mut Session),
    ) {
        // Across replicas, the change is made to what the session asked for on any of them (it
        // may have subscribed through another since it was restored here), not to this
        // replica's copy, which would drop those.
        let recorded = match (&self.shared, id) {
            // A session the store lists nothing for asked for nothing (it may have unsubscribed
            // through another replica), whatever this replica's copy still says.
            (Some(shared), Some(id)) => match shared.interests().await {
                Ok(interests) => Some(
                    interests
                        .into_iter()
                        .find(|i| i.session_id == id)
                        .map(|i| (i.uris, i.log_level))
                        .unwrap_or_default(),
                ),
                Err(error) => {
                    tracing::warn!(%error, "cannot read what an /mcp session asked for; changing this replica's copy");
                    None
                }
            },
            _ => None,
        };
        let asked = {
            let mut open = self.lock();
            let index = match open.iter().position(|s| same_session(&s.peer, peer)) {
                Some(index) => index,
                None => {
                    open.push(Session {
                        peer: peer.clone(),
                        id: id.map(str::to_owned),
                        agent: agent.to_owned(),
                        log_level: None,
                        uris: Default::default(),
                    });
                    open.len() - 1
                }
            };
            let session = &mut open[index];
            if let Some((uris, level)) = recorded {
                session.uris = uris.into_iter().collect();
                session.log_level = level.map(|l| json!(l)).as_ref().and_then(log_rank);
            }
            change(session);
            let mut uris: Vec<String> = session.uris.iter().cloned().collect();
            uris.sort();
            (uris, session.log_level.map(|rank| LOG_LEVELS[rank]))
        };
        if let (Some(shared), Some(id)) = (&self.shared, id) {
            shared.set_interests(id, &asked.0, asked.1).await;
        }
    }

    /// Across replicas: what each session open here asked for, as last recorded by any
    /// replica (it may have subscribed through another since it was restored here).
    async fn refresh(&self) {
        let Some(shared) = &self.shared else {
            return;
        };
        let interests = match shared.interests().await {
            Ok(interests) => interests,
            Err(error) => {
                tracing::warn!(%error, "cannot read what /mcp sessions asked for; using what this replica knows");
                return;
            }
        };
        let by_id: std::collections::HashMap<String, (Vec<String>, Option<String>)> = interests
            .into_iter()
            .map(|i| (i.session_id, (i.uris, i.log_level)))
            .collect();
        for session in self.lock().iter_mut() {
            let Some(id) = &session.id else { continue };
            let (uris, level) = by_id.get(id).cloned().unwrap_or_default();
            session.uris = uris.into_iter().collect();
            session.log_level = level.map(|l| json!(l)).as_ref().and_then(log_rank);
        }
    }

    /// The peers a notification goes to, each with the params it gets: a resource update
    /// names the URI in the form the session subscribed with (plain, or qualified with its server).
    fn recipients(&self, notice: &McpNotice) -> Vec<(Peer<RoleServer>, Value)> {
        use crate::a2e::NotificationMethod as Method;
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        open.retain(|s| !s.peer.is_transport_closed());
        let params = &notice.params;
        match Method::parse(&notice.method) {
            Some(Method::ResourcesUpdated) => {
                let Some(uri) = params.get("uri").and_then(Value::as_str) else {
                    return Vec::new();
                };
                let qualified = naming::qualify_uri(&notice.server_id, uri);
                let ui = naming::qualify_ui(&notice.server_id, uri).unwrap_or_default();
                open.iter()
                    .filter_map(|s| {
                        let form = [uri, qualified.as_str(), ui.as_str()]
                            .into_iter()
                            .find(|form| !form.is_empty() && s.uris.contains(*form))?;
                        let mut params = params.clone();
                        params["uri"] = json!(form);
                        Some((s.peer.clone(), params))
                    })
                    .collect()
            }
            // A server's log is its owner's, and its caller's during the only call in flight.
            Some(Method::Message) => open
                .iter()
                .filter(|s| notice.except_session.is_none() || s.id != notice.except_session)
                .filter(|s| {
                    notice
                        .agents
                        .as_ref()
                        .is_none_or(|agents| agents.contains(&s.agent))
                })
                .filter(|s| {
                    matches!((s.log_level, params.get("level").and_then(log_rank)), (Some(min), Some(level)) if level >= min)
                })
                .map(|s| (s.peer.clone(), params.clone()))
                .collect(),
            _ => open
                .iter()
                .map(|s| (s.peer.clone(), params.clone()))
                .collect(),
        }
    }
}

fn spawn_change_notifier(state: &AppState, sessions: Arc<Sessions>) {
    let mut notifications = state.hub.mcp_client_notifications();
    let shutdown = state.hub.shutdown_token();
    tokio::spawn(async move {
        loop {
            let notice = tokio::select! {
                _ = shutdown.cancelled() => return,
                next = notifications.recv() => match next {
                    Ok(notice) => notice,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => McpNotice {
                        server_id: String::new(),
                        method: crate::a2e::NotificationMethod::ToolsListChanged.as_str().to_owned(),
                        params: json!({}),
                        agents: None,
                        except_session: None,
                    },
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                },
            };
            let method = &notice.method;
            if matches!(
                crate::a2e::NotificationMethod::parse(method),
                Some(
                    crate::a2e::NotificationMethod::ResourcesUpdated
                        | crate::a2e::NotificationMethod::Message
                )
            ) {
                sessions.refresh().await;
            }
            for (peer, params) in sessions.recipients(&notice) {
                if let Err(error) = notify(&peer, method, &params).await {
                    tracing::debug!(%error, %method, "cannot notify an /mcp client");
                }
            }
        }
    });
}

#[allow(deprecated)] // Logging is how 2025-11-25 clients get a server's log messages.
async fn notify(
    peer: &Peer<RoleServer>,
    method: &str,
    params: &Value,
) -> Result<(), rmcp::ServiceError> {
    use crate::a2e::NotificationMethod as Method;
    let parse_error = |e: serde_json::Error| {
        rmcp::ServiceError::McpError(ErrorData::internal_error(e.to_string(), None))
    };
    match Method::parse(method) {
        Some(Method::ResourcesListChanged) => peer.notify_resource_list_changed().await,
        Some(Method::PromptsListChanged) => peer.notify_prompt_list_changed().await,
        Some(Method::ToolsListChanged) => peer.notify_tool_list_changed().await,
        Some(Method::ResourcesUpdated) => {
            peer.notify_resource_updated(
                serde_json::from_value(params.clone()).map_err(parse_error)?,
            )
            .await
        }
        Some(Method::Message) => {
            peer.notify_logging_message(
                serde_json::from_value(params.clone()).map_err(parse_error)?,
            )
            .await
        }
        _ => Ok(()),
    }
}

#[derive(Clone)]
pub struct BridgeServer {
    state: AppState,
    sessions: Arc<Sessions>,
    /// Calls of stateless clients waiting for their answers.
    suspended: Suspended,
    /// The sessions whose plain calls are answered in front of rmcp.
    direct: Arc<direct::Direct>,
    /// What the open `subscriptions/listen` streams follow.
    listens: Arc<listen::Listens>,
}

/// Whether the request is of a stateless (2026-07-28) client, which has no `initialize`.
fn stateless(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|v| !v.has_initialize())
}

/// The agent the request runs as, put there by [`authenticate`].
fn caller(context: &RequestContext<RoleServer>) -> Result<Caller, ErrorData> {
    context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Caller>())
        .cloned()
        .ok_or_else(|| ErrorData::internal_error("the caller is not known", None))
}

/// The `Mcp-Session-Id` of a request in a session.
fn session_of(context: &RequestContext<RoleServer>) -> Option<&str> {
    context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.headers.get(SESSION_ID))
        .and_then(|v| v.to_str().ok())
}

/// The cursor a list request carries (empty for the first page).
fn cursor_of(request: Option<PaginatedRequestParams>) -> String {
    request.and_then(|r| r.cursor).unwrap_or_default()
}

fn request_id(context: &RequestContext<RoleServer>) -> String {
    id_text(&context.id)
}

/// A JSON-RPC id as text (a string's own characters, a number's digits).
fn id_text(id: &rmcp::model::RequestId) -> String {
    match id {
        rmcp::model::NumberOrString::String(s) => s.to_string(),
        rmcp::model::NumberOrString::Number(n) => n.to_string(),
    }
}

/// A call, unless the client's `notifications/cancelled` for its request comes first: dropping
/// the call tells its server the same (rmcp cancels the context but lets the handler run on).
async fn until_cancelled(
    call: impl Future<Output = inputs::Outcome>,
    cancelled: &tokio_util::sync::CancellationToken,
    agent: &Caller,
    tool: &str,
    id: &rmcp::model::RequestId,
) -> inputs::Outcome {
    tokio::select! {
        biased;
        _ = cancelled.cancelled() => {
            tracing::info!(agent = %agent.id, %tool, "call cancelled by the /mcp client");
            Err(registry::Error::Cancelled(id_text(id)))
        }
        called = call => called,
    }
}

/// The catalogue name (`{server_id}__{tool}`, or an agent-bridge tool) of an `/mcp` tool name.
fn full_tool_name(state: &AppState, name: &str) -> Result<String, ErrorData> {
    if state.a2a.enabled() && crate::a2a::tools::is_bridge_tool(name) {
        return Ok(name.to_owned());
    }
    let registry = &state.registry;
    let offers = |server_id: &str| {
        registry
            .get(server_id)
            .is_ok_and(|e| registry::exposes_tool(&e, name))
    };
    let unprefixed = state.config.mcp_unprefixed_server.as_deref();
    let (server_id, tool) = match unprefixed.filter(|id| offers(id)) {
        Some(server_id) => (server_id.to_owned(), name.to_owned()),
        // A full name or a short alias.
        None => registry
            .resolve_tool(name)
            .ok_or_else(|| ErrorData::invalid_params(format!("Unknown tool: {name}"), None))?,
    };
    Ok(format!("{server_id}{}{tool}", naming::SEPARATOR))
}

impl BridgeServer {
    /// The server whose catalogue `/mcp` shows without prefixes, if any.
    fn unprefixed(&self) -> Option<&str> {
        self.state.config.mcp_unprefixed_server.as_deref()
    }

    /// The name a server's tool or prompt has on `/mcp`.
    fn exposed(&self, server_id: &str, name: &str) -> String {
        if self.unprefixed() == Some(server_id) {
            name.to_owned()
        } else {
            format!("{server_id}{}{name}", naming::SEPARATOR)
        }
    }

    /// The (server id, upstream name) an `/mcp` tool or prompt name stands for.
    fn resolve(&self, name: &str, offers: impl Fn(&str) -> bool) -> Option<(String, String)> {
        if let Some(server_id) = self.unprefixed()
            && offers(server_id)
        {
            return Some((server_id.to_owned(), name.to_owned()));
        }
        naming::split(name).map(|(s, n)| (s.to_owned(), n.to_owned()))
    }

    /// The tools `agent` sees on `/mcp`: each server's, then the agent-bridge tools (an
    /// unprefixed name that would shadow another is left out); or those of a toolset, or the
    /// meta-tools of a deferred scope.
    fn tools(&self, agent: &Caller, scope: Scope<'_>) -> Result<Vec<Tool>, ErrorData> {
        let items = self
            .state
            .tools
            .visible(agent, scope)
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        if scope != Scope::Catalogue {
            return Ok(items.into_iter().map(|item| item.definition).collect());
        }
        let mut tools: Vec<Tool> = Vec::with_capacity(items.len());
        let mut names = HashSet::new();
        if self.state.a2a.enabled() {
            names.extend(crate::a2a::tools::NAMES.iter().map(|n| n.to_string()));
        }
        for item in items {
            let mut tool = item.definition;
            if item.owner.is_none() {
                tools.push(tool);
                continue;
            }
            let server_id = item.info.server_id;
            let upstream = item
                .full
                .strip_prefix(&format!("{server_id}{}", naming::SEPARATOR))
                .map(str::to_owned);
            let name = match (self.unprefixed() == Some(server_id.as_str()), upstream) {
                (true, Some(upstream)) => upstream,
                _ => item.info.name,
            };
            if !names.insert(name.clone()) {
                tracing::warn!(%server_id, tool = %tool.name, "left out of /mcp: the name is taken");
                continue;
            }
            tool.name = name.into();
            tools.push(tool);
        }
        Ok(tools)
    }

    /// A resource request's error; one that several servers could answer says how to name one,
    /// since an MCP client has no `server_id` to give.
    fn uri_error(error: registry::Error, uri: &str) -> ErrorData {
        match error {
            registry::Error::Conflict(message) => ErrorData::invalid_params(
                format!(
                    "{message}; on /mcp, name the server in the URI: {}",
                    naming::qualify_ui("{server_id}", uri)
                        .unwrap_or_else(|| naming::qualify_uri("{server_id}", uri))
                ),
                None,
            ),
            // The URI as the client gave it (SEP-2164: `data.uri`).
            error @ registry::Error::ResourceNotFound(_) => {
                let mut answer = Self::registry_error(error);
                if let Some(Value::Object(data)) = answer.data.as_mut() {
                    data.insert("uri".into(), uri.into());
                }
                answer
            }
            other => Self::registry_error(other),
        }
    }

    /// Holds a call that names its app (`_meta["mcp-bridge/app"]`) to the MCP Apps host rules;
    /// one that does not is the host's to judge, as the extension says.
    fn check_app(
        state: &AppState,
        scope: Scope<'_>,
        name: &str,
        app: Option<&str>,
    ) -> Result<(), ErrorData> {
        // Most calls name no app: nothing to look up.
        let Some(app) = app else {
            return Ok(());
        };
        // The member is found by the name shown or its full name alike.
        state
            .tools
            .check_app_call(scope, name, crate::tools::Via::App(app))
            .map_err(Self::registry_error)
    }

    fn registry_error(error: registry::Error) -> ErrorData {
        let message = error.to_string();
        let code = error.code();
        let mut answer = match error {
            registry::Error::ResourceNotFound(_) => ErrorData::resource_not_found(message, None),
            registry::Error::Invalid(_)
            | registry::Error::ToolNotFound(_)
            | registry::Error::PromptNotFound(_)
            | registry::Error::ServerNotFound(_)
            | registry::Error::Conflict(_) => ErrorData::invalid_params(message, None),
            registry::Error::Forbidden(_) => ErrorData::invalid_request(message, None),
            registry::Error::CapabilityMissing { .. } => {
                ErrorData::new(rmcp::model::ErrorCode::METHOD_NOT_FOUND, message, None)
            }
            registry::Error::Upstream {
                error: CallError::Rejected { code, message },
                ..
            } => ErrorData::new(rmcp::model::ErrorCode(code), message, None),
            // The link in the message (what a person reads) and in `data` (what a program does).
            registry::Error::AuthRequired {
                authorization_url: Some(url),
                ..
            } => ErrorData::invalid_request(
                format!("{message}: {url}"),
                Some(serde_json::json!({"code": "mcp_auth_required", "authorization_url": url})),
            ),
            _ => ErrorData::internal_error(message, None),
        };
        answer.data.get_or_insert_with(|| error_meta(code));
        answer
    }
}

/// What [`ERROR_META`] holds for `code`.
fn error_meta(code: crate::a2e::ErrorCode) -> Value {
    json!({"code": code, "retryable": code.retryable()})
}

impl ServerHandler for BridgeServer {
    /// For rmcp's check of a 2026-07-28 call's `Mcp-Param-*` headers (params.rs).
    fn get_tool(&self, name: &str) -> Option<Tool> {
        params::tool(&self.state, self.unprefixed(), name)
    }

    fn get_info(&self) -> ServerConfig {
        let mut capabilities: ServerCapabilities = serde_json::from_value(json!({
            "tools": { "listChanged": true },
            "resources": { "listChanged": true, "subscribe": true },
            "logging": {},
            "prompts": { "listChanged": true },
            "completions": {}
        }))
        .unwrap_or_default();
        // Who this bridge is, on any transport: a bridge that reaches this /mcp through a proxy
        // (which drops the hop header) recognises itself, or a chain too long, by it.
        self.state.registry.chain().advertise(&mut capabilities);
        // The 2026-07-28 tasks extension (tasks/extension.rs); rmcp keeps its methods from
        // clients that do not declare it.
        capabilities.extensions.get_or_insert_default().insert(
            rmcp::model::TASKS_EXTENSION_ID.to_owned(),
            Default::default(),
        );
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("mcp-bridge", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "mcp-bridge: the tools, resources and prompts of every MCP server it bridges. Tools and prompts \
                 are named {server_id}__{name}.",
            )
    }

    async fn initialize(
        &self,
        request: rmcp::model::InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let opening = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Opening>());
        if let Some(opening) = opening {
            *opening.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(context.peer.clone());
        }
        self.negotiate_initialize(&request)
    }

    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        let parts = context.extensions.get::<axum::http::request::Parts>();
        let session = parts
            .and_then(|parts| parts.headers.get(SESSION_ID))
            .and_then(|v| v.to_str().ok());
        if let Some(session) = session {
            self.direct.initialized(session, context.peer.clone());
        }
        let agent = parts
            .and_then(|parts| parts.extensions.get::<Caller>())
            .map(|a| a.id.clone());
        // rmcp marks the handshake it replays to restore a session (shared.rs).
        let restored = context
            .extensions
            .get::<rmcp::transport::streamable_http_server::session::SessionRestoreMarker>()
            .is_some();
        if let Some(agent) = agent {
            self.sessions
                .add(context.peer, &agent, session, restored)
                .await;
        }
    }

    #[allow(deprecated)] // Logging is deprecated for 2026-07-28; 2025-11-25 clients still ask.
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let agent = caller(&context)?;
        let rank = log_rank(&serde_json::to_value(request.level).unwrap_or_default());
        self.sessions
            .update(&context.peer, &agent.id, session_of(&context), |s| {
                s.log_level = rank
            })
            .await;
        Ok(())
    }

    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let agent = caller(&context)?;
        let uri = request.uri.as_str();
        let target = self.resource_route(&agent, uri).await?;
        self.state
            .registry
            .subscribe(&agent.id, &target.server_id, &target.item)
            .await
            .map_err(|e| Self::uri_error(e, uri))?;
        self.sessions
            .update(&context.peer, &agent.id, session_of(&context), |s| {
                s.uris.insert(request.uri.clone());
            })
            .await;
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let agent = caller(&context)?;
        self.sessions
            .update(&context.peer, &agent.id, session_of(&context), |s| {
                s.uris.remove(&request.uri);
            })
            .await;
        match self
            .state
            .registry
            .unsubscribe(&agent.id, "", &request.uri)
            .await
        {
            Ok(_) | Err(registry::Error::NotFound(_)) => Ok(()),
            Err(error) => Err(Self::registry_error(error)),
        }
    }

    /// A 2026-07-28 client's `subscriptions/listen` is acknowledged as asked (what its caller may
    /// not read is left out by [`BridgeServer::run_listen`]: this hook knows no caller).
    fn accepted_subscription_filter(
        &self,
        requested: &rmcp::model::SubscriptionFilter,
    ) -> Option<rmcp::model::SubscriptionFilter> {
        Some(requested.clone())
    }

    async fn listen(
        &self,
        subscription: rmcp::service::SubscriptionContext,
    ) -> Result<(), ErrorData> {
        self.run_listen(subscription).await
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        let agent = caller(&context)?;
        let task = tasks::extension::get(&self.state, &agent, &request.task_id).await?;
        Ok(rmcp::model::GetTaskResult::new(task))
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let agent = caller(&context)?;
        tasks::extension::update(
            &self.state,
            &agent,
            &request.task_id,
            request.input_responses,
        )
        .await
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let agent = caller(&context)?;
        tasks::extension::cancel(&self.state, &agent, &request.task_id).await
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let agent = caller(&context)?;
        let scope = scope_path(&context);
        Ok(ListToolsResult::with_all_items(
            self.tools(&agent, scope.scope())?,
        ))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let agent = caller(&context)?;
        let stateless = stateless(&context);
        // The bridge's own state (a 2025 server's requests, inputs.rs); any other state is the
        // server's, and goes back to it with the client's answers.
        if let Some(state) = request.request_state.as_deref() {
            let answers = request.input_responses.clone().unwrap_or_default();
            if let Some(step) = self.suspended.resume(&agent.id, state, answers).await {
                return self.respond(&request.name, step, None);
            }
            if !(stateless && self.suspended.take_handed(&agent.id, state)) {
                return Err(ErrorData::invalid_params(
                    "this requestState is unknown or has expired: call the tool again without it",
                    None,
                ));
            }
        }
        let scope = scope_path(&context);
        let app = crate::tools::app_of(request.meta.as_ref().map(|m| &m.0.0));
        Self::check_app(&self.state, scope.scope(), &request.name, app.as_deref())?;
        let capabilities = context.client_capabilities();
        // A stateless client that declares the tasks extension gets a task handle at once.
        if stateless && capabilities.as_ref().is_some_and(|c| c.supports_tasks()) {
            let arguments = request.arguments.clone().unwrap_or_default();
            let started =
                tasks::extension::start(&self.state, &agent, &scope, &request.name, arguments);
            if let Some(task) = started.await? {
                return Ok(CallToolResponse::Task(task));
            }
        }
        let full = match scope.scope() {
            Scope::Catalogue => full_tool_name(&self.state, &request.name)?,
            _ => request.name.to_string(),
        };
        let sampling = capabilities.as_ref().is_some_and(|c| c.sampling.is_some());
        let elicitation = capabilities
            .as_ref()
            .is_some_and(|c| c.elicitation.is_some());
        // A 2025 session is sent the server's sampling and elicitation requests; a stateless
        // client gets them in its call's input-required result (inputs.rs).
        let (inputs, asks) = match stateless && (sampling || elicitation) {
            true => {
                let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
                (Some(tx), Some(rx))
            }
            false => (None, None),
        };
        // A stateless client answers its server's input requests itself (hub::InputRounds).
        let rounds = stateless.then(|| {
            Arc::new(InputRounds::new(
                &agent.id,
                request.input_responses.clone(),
                request.request_state.clone(),
                capabilities.clone(),
            ))
        });
        // Progress goes back on the call's own stream in both eras.
        let origin = Arc::new(McpCaller {
            peer: context.peer.clone(),
            sampling,
            elicitation,
            progress_token: context.meta.get_progress_token(),
            sink: None,
            log: None,
            inputs,
            channel: AgentChannel::new(
                self.state.hub.clone(),
                agent.id.clone(),
                request_id(&context),
            ),
            session: session_of(&context)
                .zip(self.sessions.shared.clone())
                .map(|(id, shared)| recipient::SessionRoute {
                    id: id.to_owned(),
                    shared,
                    hub: self.state.hub.clone(),
                }),
            during: Some(context.id.clone()),
            rounds: rounds.clone(),
        });
        let arguments = request.arguments.unwrap_or_default();
        let Some(asks) = asks else {
            let call = self
                .state
                .tools
                .call(&agent, scope.scope(), &full, arguments, None, origin);
            let called =
                until_cancelled(call, &context.ct, &agent, &request.name, &context.id).await;
            return self.respond(&request.name, Step::Done(called), rounds.as_deref());
        };
        let (state, caller) = (self.state.clone(), agent.clone());
        let result = tokio::spawn(async move {
            state
                .tools
                .call(&caller, scope.scope(), &full, arguments, None, origin)
                .await
        });
        let step = self
            .suspended
            .drive(&agent.id, Running::new(result, asks))
            .await;
        self.respond(&request.name, step, rounds.as_deref())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let agent = caller(&context)?;
        let registry = &self.state.registry;
        let page = registry
            .resources_page(&agent.id, "", &cursor_of(request))
            .await;
        let page = self.only_visible(&agent, Kind::Resource, page, |r: &Resource| r.uri.as_str());
        let (shared, _) = registry.shared_uris();
        let (resources, next, meta) = self.paged(page, |server_id, resource: &mut Resource| {
            if let Some(ui) = naming::qualify_ui(server_id, &resource.uri) {
                resource.uri = ui;
            } else if self.qualifies(server_id, &resource.uri, &shared) {
                resource.uri = naming::qualify_uri(server_id, &resource.uri);
            }
        })?;
        let mut result = ListResourcesResult::with_all_items(resources);
        result.next_cursor = next;
        result.meta = meta;
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let agent = caller(&context)?;
        let registry = &self.state.registry;
        let page = registry
            .templates_page(&agent.id, "", &cursor_of(request))
            .await;
        let page = self.only_visible(&agent, Kind::Resource, page, |t: &ResourceTemplate| {
            t.uri_template.as_str()
        });
        let (_, shared) = registry.shared_uris();
        let (templates, next, meta) =
            self.paged(page, |server_id, template: &mut ResourceTemplate| {
                if let Some(ui) = naming::qualify_ui(server_id, &template.uri_template) {
                    template.uri_template = ui;
                } else if self.qualifies(server_id, &template.uri_template, &shared) {
                    template.uri_template = naming::qualify_uri(server_id, &template.uri_template);
                }
            })?;
        let mut result = ListResourceTemplatesResult::with_all_items(templates);
        result.next_cursor = next;
        result.meta = meta;
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let agent = caller(&context)?;
        let uri = request.uri.as_str();
        let target = self.resource_route(&agent, uri).await?;
        let (server_id, mut result) = self
            .state
            .registry
            .read_resource_raw(&agent.id, &target.server_id, &target.item)
            .await
            .map_err(|e| Self::uri_error(e, uri))?;
        // Contents read by a qualified URI answer to it too; a `ui://` URI is always shown
        // qualified, however it was asked for.
        let inner = naming::split_uri(uri).map(|(_, inner)| inner);
        for content in &mut result.contents {
            if let ResourceContents::TextResourceContents { uri: given, .. }
            | ResourceContents::BlobResourceContents { uri: given, .. } = content
            {
                if let Some(ui) = naming::qualify_ui(&server_id, given) {
                    *given = ui;
                } else if inner == Some(given.as_str()) {
                    *given = uri.to_owned();
                }
            }
        }
        result.result_type = Some(ResultType::COMPLETE);
        Ok(ReadResourceResponse::Complete(result))
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let agent = caller(&context)?;
        let page = self
            .state
            .registry
            .prompts_page(&agent.id, "", &cursor_of(request))
            .await;
        let page = self.only_visible(&agent, Kind::Prompt, page, |p: &Prompt| p.name.as_ref());
        let (prompts, next, meta) = self.paged(page, |server_id, prompt: &mut Prompt| {
            prompt.name = self.exposed(server_id, &prompt.name);
        })?;
        let mut result = ListPromptsResult::with_all_items(prompts);
        result.next_cursor = next;
        result.meta = meta;
        Ok(result)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let agent = caller(&context)?;
        let (server_id, name) = self.prompt_route(&request.name)?;
        let target = self
            .state
            .tools
            .resolve_item(&agent, Kind::Prompt, &server_id, &name)
            .await
            .map_err(Self::registry_error)?;
        // A stateless client answers its server's input requests itself (hub::InputRounds).
        let stateless = stateless(&context);
        // Only the agent a server's state went to brings it back (inputs.rs).
        if let Some(state) = request.request_state.as_deref()
            && !(stateless && self.suspended.take_handed(&agent.id, state))
        {
            return Err(ErrorData::invalid_params(
                "this requestState is unknown or has expired: get the prompt again without it",
                None,
            ));
        }
        let rounds = stateless.then(|| {
            InputRounds::new(
                &agent.id,
                request.input_responses.clone(),
                request.request_state.clone(),
                context.client_capabilities(),
            )
        });
        let arguments: Map<String, Value> = request.arguments.unwrap_or_default();
        let rendered = self
            .state
            .registry
            .get_prompt_for(
                &agent.id,
                &target.server_id,
                &target.item,
                arguments,
                rounds.as_ref(),
            )
            .await;
        if let Some(rounds) = &rounds
            && let Some(required) = rounds.take()
        {
            self.handed_out(rounds, &required);
            return Ok(GetPromptResponse::InputRequired(required));
        }
        let (_, mut result) = rendered.map_err(Self::registry_error)?;
        result.result_type = Some(ResultType::COMPLETE);
        Ok(GetPromptResponse::Complete(result))
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let agent = caller(&context)?;
        let (server_id, reference) = match &request.r#ref {
            Reference::Prompt(p) => {
                let (server_id, name) = self.prompt_route(&p.name)?;
                (server_id, json!({"type": "ref/prompt", "name": name}))
            }
            other => (
                String::new(),
                serde_json::to_value(other).unwrap_or_default(),
            ),
        };
        let (server_id, reference) = self
            .state
            .tools
            .resolve_reference(&agent, &server_id, &reference)
            .await
            .map_err(Self::registry_error)?;
        let argument = crate::a2e::CompletionArgument {
            name: request.argument.name.clone(),
            value: request.argument.value.clone(),
        };
        let context_args = request.context.and_then(|c| c.arguments).map(|arguments| {
            crate::a2e::CompletionContext {
                arguments: arguments.into_iter().collect(),
            }
        });
        let (_, mut result) = self
            .state
            .registry
            .complete(&agent.id, &server_id, reference, argument, context_args)
            .await
            .map_err(Self::registry_error)?;
        result.result_type = Some(ResultType::COMPLETE);
        Ok(result)
    }
}

impl BridgeServer {
    /// A plain `tools/call` of a 2025-11-25 session, answered in front of rmcp (direct.rs): the
    /// call `call_tool` makes for a session whose client takes no requests; its progress, if it
    /// asked for it, goes to the call's own sink.
    async fn call_in_session(
        &self,
        agent: &Caller,
        uri: &axum::http::Uri,
        call: direct::Call,
        peer: Peer<RoleServer>,
        cancelled: &tokio_util::sync::CancellationToken,
    ) -> Result<CallToolResponse, ErrorData> {
        let direct::Call {
            id,
            name,
            arguments,
            progress,
            app,
            sink,
            log,
        } = call;
        let (id, name) = (&id, name.as_str());
        let scope = scope_of(uri);
        Self::check_app(&self.state, scope.scope(), name, app.as_deref())?;
        let full = match scope.scope() {
            Scope::Catalogue => full_tool_name(&self.state, name)?,
            _ => name.to_owned(),
        };
        let origin = Arc::new(McpCaller {
            peer,
            sampling: false,
            elicitation: false,
            progress_token: progress,
            sink,
            log,
            inputs: None,
            channel: AgentChannel::new(self.state.hub.clone(), agent.id.clone(), id_text(id)),
            session: None,
            during: None,
            rounds: None,
        });
        let call = self
            .state
            .tools
            .call(agent, scope.scope(), &full, arguments, None, origin);
        let called = until_cancelled(call, cancelled, agent, name, id).await;
        self.respond(name, Step::Done(called), None)
    }

    /// Whether `/mcp` shows a server's resource URI (or template) qualified with the server:
    /// when another server offers the same one, unless it is the unprefixed server's.
    /// A page of a list across servers as `/mcp` shows it: each item as `expose` renames it
    /// for its server, and the cursor of the next page.
    /// A merged page as MCP shows it: its entries, the next cursor, and the servers it left
    /// out in `_meta` under [`SKIPPED_META`] (MCP's result has no field for them).
    fn paged<T>(
        &self,
        page: Result<MergedPage<T>, registry::Error>,
        expose: impl Fn(&str, &mut T),
    ) -> Result<McpPage<T>, ErrorData> {
        let page = page.map_err(Self::registry_error)?;
        let items = page
            .items
            .into_iter()
            .map(|(server_id, mut item)| {
                expose(&server_id, &mut item);
                item
            })
            .collect();
        let meta = (!page.skipped.is_empty()).then(|| {
            let mut meta = serde_json::Map::new();
            meta.insert(SKIPPED_META.to_owned(), json!(page.skipped));
            MetaObject(meta)
        });
        let next = (!page.next.is_empty()).then_some(page.next);
        Ok((items, next, meta))
    }

    fn qualifies(&self, server_id: &str, uri: &str, shared: &HashSet<String>) -> bool {
        shared.contains(uri) && self.unprefixed() != Some(server_id)
    }

    /// The server and upstream URI a read or subscription of `uri` goes to: the unprefixed
    /// server when it offers it, else as `Tools::resolve_item` resolves it (a qualified URI names
    /// its server); narrowed to what the caller's policies show.
    async fn resource_route(&self, agent: &Caller, uri: &str) -> Result<Resolved, ErrorData> {
        self.state
            .tools
            .resolve_item(agent, Kind::Resource, self.unprefixed_offering(uri), uri)
            .await
            .map_err(|e| Self::uri_error(e, uri))
    }

    /// A merged page with what the caller's policies hide left out.
    fn only_visible<T>(
        &self,
        agent: &Caller,
        kind: Kind,
        page: Result<MergedPage<T>, registry::Error>,
        item: impl Fn(&T) -> &str,
    ) -> Result<MergedPage<T>, registry::Error> {
        let view = self.state.tools.access().view(agent);
        if view.sees_everything() {
            return page;
        }
        page.map(|mut page| {
            page.items.retain(|(server_id, it)| {
                self.state
                    .tools
                    .shows_item(&view, kind, server_id, item(it))
            });
            page
        })
    }

    /// The unprefixed server, when it offers `uri` (a plain URI it shares with others is its
    /// own), else "" (routed by URI).
    fn unprefixed_offering(&self, uri: &str) -> &str {
        match self.unprefixed() {
            Some(id) if self.state.registry.offers_uri(id, uri) => id,
            _ => "",
        }
    }

    /// Notes whom a server's input-required result went to, so that only they bring its state
    /// back.
    fn handed_out(&self, rounds: &InputRounds, required: &rmcp::model::InputRequiredResult) {
        if let Some(state) = required.request_state.as_deref() {
            self.suspended.handed_out(&rounds.agent_id, state);
        }
    }

    /// The answer to a `tools/call` once the call has ended or needs the client's input.
    /// `rounds`: a stateless client's, whose server may have answered with an input-required
    /// result for it.
    fn respond(
        &self,
        name: &str,
        step: Step,
        rounds: Option<&InputRounds>,
    ) -> Result<CallToolResponse, ErrorData> {
        let called = match step {
            Step::InputRequired(required) => return Ok(CallToolResponse::InputRequired(required)),
            Step::Done(called) => called,
        };
        if let Some(rounds) = rounds
            && let Some(required) = rounds.take()
        {
            self.handed_out(rounds, &required);
            return Ok(CallToolResponse::InputRequired(required));
        }
        match called {
            Ok((_, mut result)) => {
                // A 2026-07-28 client needs the result's type, which a 2025 upstream leaves out.
                result.result_type = Some(ResultType::COMPLETE);
                Ok(CallToolResponse::Complete(result))
            }
            // Through a meta-tool, the tool it named.
            Err(registry::Error::ToolNotFound(missing)) => {
                let unknown = match crate::tools::is_meta_tool(name) {
                    true => missing,
                    false => name.to_owned(),
                };
                Err(ErrorData::invalid_params(
                    format!("Unknown tool: {unknown}"),
                    None,
                ))
            }
            // A meta-tool's arguments, or a toolset gone.
            Err(error @ (registry::Error::Invalid(_) | registry::Error::NotFound(_))) => {
                Err(ErrorData::invalid_params(error.to_string(), None))
            }
            Err(registry::Error::Upstream {
                error:
                    CallError::Rejected {
                        code: -32602,
                        message,
                    },
                ..
            }) => Err(ErrorData::invalid_params(message, None)),
            // The client's to declare (2026-07-28): it may call again with it.
            Err(registry::Error::Upstream {
                error: CallError::MissingClientCapability(required),
                ..
            }) => Err(ErrorData::new(
                rmcp::model::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
                "Missing required client capability",
                Some(json!({ "requiredCapabilities": required })),
            )),
            // What went wrong upstream is for the model to read, as a tool error; whether to
            // call again is for the client, in `_meta`, as the REST answer's `retryable`.
            Err(error) => {
                let mut result = CallToolResult::error(vec![ContentBlock::text(error.to_string())]);
                let mut meta = serde_json::Map::new();
                meta.insert(ERROR_META.to_owned(), error_meta(error.code()));
                result.meta = Some(MetaObject(meta));
                Ok(CallToolResponse::Complete(result))
            }
        }
    }

    /// The server and upstream name of an `/mcp` prompt name.
    fn prompt_route(&self, name: &str) -> Result<(String, String), ErrorData> {
        let registry = &self.state.registry;
        let offers = |server_id: &str| {
            registry
                .get(server_id)
                .is_ok_and(|e| e.lists().prompts.iter().any(|p| p.name == name))
        };
        self.resolve(name, offers)
            .ok_or_else(|| ErrorData::invalid_params(format!("Unknown prompt: {name}"), None))
    }
}
