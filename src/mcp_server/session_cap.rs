//! The per-agent cap on open `/mcp` sessions (`MCP_BRIDGE_AGENT_MCP_SESSIONS`): without it one
//! agent opened 5,000 sessions in 15 s (284 MB), each kept until it idles out. A POST without a
//! session id past the cap is 429 `rate_limited` with a `Retry-After`; a session counts from the
//! answer that names it until it is deleted or rmcp drops it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, header::RETRY_AFTER};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use crate::a2e::ErrorCode;
use crate::auth::Agent;
use crate::error::ApiError;

const SESSION_HEADER: &str = "mcp-session-id";

pub struct SessionCap {
    manager: Arc<LocalSessionManager>,
    /// Sessions per agent; 0: no limit.
    limit: usize,
    open: Mutex<HashMap<String, Vec<Arc<str>>>>,
}

impl SessionCap {
    pub fn new(manager: Arc<LocalSessionManager>, limit: usize) -> Arc<Self> {
        Arc::new(Self {
            manager,
            limit,
            open: Mutex::default(),
        })
    }

    fn counted(&self, agent: &str) -> usize {
        let open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        open.get(agent).map_or(0, Vec::len)
    }

    /// Forgets the agent's sessions that rmcp no longer has; how many are left.
    async fn prune(&self, agent: &str) -> usize {
        let ids = {
            let open = self.open.lock().unwrap_or_else(|e| e.into_inner());
            open.get(agent).cloned().unwrap_or_default()
        };
        let mut gone = Vec::new();
        for id in ids {
            if !self.manager.has_session(&id).await.unwrap_or(false) {
                gone.push(id);
            }
        }
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let Some(ids) = open.get_mut(agent) else {
            return 0;
        };
        ids.retain(|id| !gone.contains(id));
        let left = ids.len();
        if left == 0 {
            open.remove(agent);
        }
        left
    }
}

/// Middleware (after authentication): a request that may open a session (a POST without a
/// session id) is refused past the agent's cap; an answer naming a new session counts it.
pub async fn limit(State(cap): State<Arc<SessionCap>>, req: Request, next: Next) -> Response {
    let opens = cap.limit > 0
        && req.method() == Method::POST
        && !req.headers().contains_key(SESSION_HEADER);
    let agent = match (opens, req.extensions().get::<Agent>()) {
        (true, Some(agent)) => agent.id.clone(),
        _ => return next.run(req).await,
    };
    if cap.counted(&agent) >= cap.limit && cap.prune(&agent).await >= cap.limit {
        let message = format!(
            "too many /mcp sessions open (MCP_BRIDGE_AGENT_MCP_SESSIONS, {}) for agent \"{agent}\"; \
             end one (DELETE /mcp) or retry after 5 s",
            cap.limit
        );
        let mut resp = ApiError::new(ErrorCode::RateLimited, message).into_response();
        resp.headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from_static("5"));
        return resp;
    }
    let resp = next.run(req).await;
    if let Some(id) = resp
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
    {
        let mut open = cap.open.lock().unwrap_or_else(|e| e.into_inner());
        open.entry(agent).or_default().push(id.into());
    }
    resp
}
