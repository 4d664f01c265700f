//! The state every handler shares: one cloneable value, with sub-states taken by `FromRef`.

use std::sync::Arc;

use axum::extract::FromRef;

use crate::auth::Auth;
use crate::config::Config;
use crate::hub::Hub;
use crate::registry::Registry;
use crate::store::Store;

/// Cloned for every request, and several times over by the layers around each route: one
/// reference count to bump, not one per part.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

impl AppState {
    pub fn new(shared: Shared) -> Self {
        Self(Arc::new(shared))
    }
}

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// What every handler shares, behind [`AppState`].
pub struct Shared {
    pub config: Arc<Config>,
    pub auth: Arc<Auth>,
    pub store: Store,
    pub registry: Arc<Registry>,
    pub hub: Arc<Hub>,
    pub a2a: Arc<crate::a2a::A2a>,
    pub metrics: Arc<crate::metrics::Metrics>,
    pub limits: Arc<crate::limits::Limits>,
    /// Set once every stored server has been handed to its supervisor.
    pub restored: Arc<std::sync::atomic::AtomicBool>,
}

impl FromRef<AppState> for Arc<Auth> {
    fn from_ref(state: &AppState) -> Self {
        state.auth.clone()
    }
}

impl AppState {
    /// Calls a catalogue tool by its name (`{server_id}__{tool}` or an agent-bridge tool) for
    /// `origin`, and counts the call in the metrics. Answers the server id (empty for an
    /// agent-bridge tool) and the MCP result.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        timeout: Option<f64>,
        origin: Arc<crate::upstream::CallOrigin>,
    ) -> Result<(String, rmcp::model::CallToolResult), crate::registry::Error> {
        let started = std::time::Instant::now();
        if self.a2a.enabled() && crate::a2a::tools::is_bridge_tool(name) {
            let outcome =
                crate::a2a::tools::call(&self.a2a, &origin.agent_id, name, arguments).await;
            let content = vec![rmcp::model::ContentBlock::text(outcome.text)];
            let result = match outcome.is_error {
                true => rmcp::model::CallToolResult::error(content),
                false => rmcp::model::CallToolResult::success(content),
            };
            self.metrics.tool_call(
                "a2a",
                if outcome.is_error { "is_error" } else { "ok" },
                started.elapsed(),
            );
            return Ok((String::new(), result));
        }
        let called = self
            .registry
            .call_tool(name, arguments, timeout, origin)
            .await;
        let outcome = match &called {
            Ok((_, result)) if result.is_error == Some(true) => "is_error",
            Ok(_) => "ok",
            Err(error) => crate::error::ApiError::code_of(error).as_str(),
        };
        // Only registered servers name a series: a name made up by a caller must not add one.
        let server = crate::registry::naming::split(name)
            .map(|(s, _)| s)
            .filter(|s| self.registry.get(s).is_ok())
            .unwrap_or("unknown");
        self.metrics.tool_call(server, outcome, started.elapsed());
        called
    }
}
