//! The one place a tool call is routed: a catalogue tool (`{server_id}__{tool}`) to its server
//! through the registry, an agent-bridge tool to the A2A bridge; every call is counted.

use std::sync::Arc;
use std::time::Instant;

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value};

use crate::a2a::{self, A2a};
use crate::metrics::Metrics;
use crate::registry::{self, Registry};
use crate::upstream::CallOrigin;

/// Calls tools for the front ends.
pub struct Tools {
    registry: Arc<Registry>,
    a2a: Arc<A2a>,
    metrics: Arc<Metrics>,
}

impl Tools {
    pub fn new(registry: Arc<Registry>, a2a: Arc<A2a>, metrics: Arc<Metrics>) -> Self {
        Self {
            registry,
            a2a,
            metrics,
        }
    }

    /// Calls a catalogue tool by its name (`{server_id}__{tool}` or an agent-bridge tool) for
    /// `origin`, and counts the call in the metrics. Answers the server id (empty for an
    /// agent-bridge tool) and the MCP result.
    pub async fn call(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        timeout: Option<f64>,
        origin: CallOrigin,
    ) -> Result<(String, CallToolResult), registry::Error> {
        let started = Instant::now();
        if self.a2a.enabled() && a2a::tools::is_bridge_tool(name) {
            let outcome = a2a::tools::call(&self.a2a, origin.agent_id(), name, arguments).await;
            let content = vec![ContentBlock::text(outcome.text)];
            let result = match outcome.is_error {
                true => CallToolResult::error(content),
                false => CallToolResult::success(content),
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
            Err(error) => error.code().as_str(),
        };
        // Only registered servers name a series: a name made up by a caller must not add one.
        let server = match &called {
            Ok((server_id, _)) => server_id.clone(),
            Err(_) => self
                .registry
                .resolve_tool(name)
                .map(|(s, _)| s)
                .filter(|s| self.registry.get(s).is_ok())
                .unwrap_or_else(|| "unknown".to_owned()),
        };
        self.metrics.tool_call(&server, outcome, started.elapsed());
        called
    }
}
