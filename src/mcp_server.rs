//! The `/mcp` endpoint: mcp-bridge as an MCP server (Streamable HTTP; 2025-11-25 sessions and
//! stateless 2026-07-28) offering what it bridges to any MCP client, as the agent its bearer
//! token names: every server's tools as `{server_id}__{tool}` (one server's unprefixed when
//! configured), resources, templates, prompts (`{server_id}__{prompt}`) and completions.
//!
//! A request's way through, in order (docs/architecture.md draws the whole path):
//!
//! | file | what it does |
//! |---|---|
//! | `front.rs` | the middleware: caller, host guard, limits, the session's owner and cap |
//! | `params.rs` | names the caller for rmcp's `Mcp-Param-*` header check (2026-07-28) |
//! | `dispatch.rs` | what is answered before rmcp: 2025 tasks, direct calls, relayed answers |
//! | `direct.rs` | a session's plain `tools/call` without rmcp |
//! | `handler.rs` | rmcp's `ServerHandler`: every MCP request mapped onto the bridge |
//! | `routes.rs` | names, views, routes and errors of what `/mcp` bridges; a call's answer |
//! | `inputs.rs`, `recipient.rs` | a call's server requests: input-required rounds, or asked of the session |
//! | `elicit.rs` | a call waiting for the agent's OAuth authorization, as a URL elicitation (2025-11-25) |
//! | `tasks.rs`, `tasks/` | MCP tasks: 2025-11-25 (`methods.rs`) and the 2026 extension (`extension.rs`) |
//! | `listen.rs`, `sessions.rs` | what clients follow (listens, subscriptions, log levels) and its notifications |
//! | `owners.rs`, `shared.rs`, `ids.rs`, `answers.rs`, `hop.rs` | sessions across replicas; loops refused |
//! | `traced.rs` | each request's server span in a trace, when spans are exported |

mod answers;
mod direct;
mod dispatch;
mod elicit;
mod front;
mod handler;
mod hop;
mod ids;
mod inputs;
mod listen;
mod owners;
mod params;
mod recipient;
mod routes;
mod sessions;
mod shared;
mod tasks;
mod traced;

use std::sync::{Arc, Mutex};

use axum::Router;
use rmcp::model::{MetaObject, PaginatedRequestParams};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer};

use crate::caller::Caller;
use crate::http::state::AppState;
use crate::registry::{self, naming};
use crate::tools::Scope;
use front::{Front, SESSION_ID, authenticate, restore, session_not_found};
use inputs::Suspended;
use owners::SessionOwners;
use sessions::{Sessions, log_rank, spawn_change_notifier};
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
        elicitations: Default::default(),
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
