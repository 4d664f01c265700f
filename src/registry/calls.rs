//! Tool calls by catalogue name: the (server, upstream tool) a name stands for, and the call,
//! made here or forwarded to the replica holding the server.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult};

use super::{Error, Registry, ServerEntry, catalogue, naming, relay};
use crate::a2e::McpServerConfig;
use crate::upstream::{CallError, CallOrigin};

impl Registry {
    /// The (server id, upstream tool) a catalogue name stands for: a short alias or a full name
    /// `{server_id}__{tool}` the catalogue shows (a full name also of a tool shown under its
    /// alias); failing those, a `{server_id}__{tool}` of a registered server, listed or not
    /// (a server that is down since the start has listed nothing: its calls answer 503). Does
    /// not say whether the tool is exposed: `exposes_tool` does.
    pub fn resolve_tool(&self, name: &str) -> Option<(String, String)> {
        // The common case, a full name the catalogue shows, without a walk of every server.
        if let Some((server_id, tool)) = naming::split(name)
            && let Ok(entry) = self.get(server_id)
            && catalogue::contains(&entry, tool)
        {
            return Some((server_id.to_owned(), tool.to_owned()));
        }
        catalogue::resolve(&self.entries(), name)
    }

    /// Calls a catalogue tool by its namespaced name or short alias.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        timeout: Option<f64>,
        origin: CallOrigin,
    ) -> Result<(String, CallToolResult), Error> {
        let not_found = || Error::ToolNotFound(name.to_owned());
        let (entry, tool) = self.route_tool(name)?;
        let server_id = entry.id.as_str();
        let config = entry.config();
        self.settle(&entry).await;
        if let Some(holder) = entry.held_elsewhere() {
            // The full name: the holder resolves it whatever aliases it would give.
            let full = format!("{server_id}{}{tool}", naming::SEPARATOR);
            let bound = Duration::from_secs(config.timeout);
            let attempt = |holder: String, left: Duration| -> futures::future::BoxFuture<'_, _> {
                let (name, arguments, origin) = (full.clone(), arguments.clone(), origin.clone());
                Box::pin(async move {
                    self.forward_call(&holder, name, arguments, timeout, &origin, left)
                        .await
                })
            };
            let relayed = self.relay(&entry, holder, bound, relay::Repeat::Undelivered, attempt);
            match Box::pin(relayed).await {
                relay::Relayed::Done(answer) => return answer,
                // Taken over here meanwhile: called here.
                relay::Relayed::HereNow => {}
            }
        }
        // The caller's id, borrowed from a clone of the origin (a reference count, not a copy).
        let caller = origin.clone();
        let agent = caller.agent_id();
        let conn = entry.connection_for(agent).await?;
        if !catalogue::contains(&entry, &tool) {
            return Err(not_found());
        }
        let bound = call_bound(&config, timeout);
        let params = CallToolRequestParams::new(tool).with_arguments(arguments);
        let tool: &str = &params.name;
        // A request's span has room for the call's server and tool: recorded there they cost
        // less than a span of their own (BENCHMARKS.md, fifth round). A call outside a request
        // (a task, a call forwarded by another replica) gets its own.
        let request = tracing::Span::current();
        let result = if request.has_field("server_id") && request.has_field("tool") {
            request.record("server_id", server_id).record("tool", tool);
            conn.call_tool(params, bound, origin).await
        } else {
            let span = tracing::info_span!("tool_call", server_id, tool);
            tracing::Instrument::instrument(conn.call_tool(params, bound, origin), span).await
        };
        match result {
            Ok(result) => {
                entry.authorized_call(agent);
                Ok((server_id.to_owned(), result))
            }
            Err(CallError::AuthRequired(challenge)) => {
                Err(Box::pin(entry.reauthorize(agent, &challenge)).await)
            }
            Err(error) => Err(Error::Upstream {
                what: format!("calling \"{name}\""),
                error,
            }),
        }
    }

    /// The server and upstream tool of the catalogue tool `name`, whose allow list lets it be
    /// called (`ToolNotFound` otherwise).
    pub(super) fn route_tool(&self, name: &str) -> Result<(Arc<ServerEntry>, String), Error> {
        let not_found = || Error::ToolNotFound(name.to_owned());
        // The common case, a full name the catalogue shows: its server looked up once.
        let full = naming::split(name)
            .and_then(|(server_id, tool)| Some((self.get(server_id).ok()?, tool)))
            .filter(|(entry, tool)| catalogue::contains(entry, tool));
        let (entry, tool) = match full {
            Some((entry, tool)) => (entry, tool.to_owned()),
            None => {
                let (server_id, tool) =
                    catalogue::resolve(&self.entries(), name).ok_or_else(not_found)?;
                (self.get(&server_id).map_err(|_| not_found())?, tool)
            }
        };
        if !naming::tool_allowed(&entry.config().tool_allow_list, &tool) {
            return Err(not_found());
        }
        Ok((entry, tool))
    }
}

/// How long a call may take: the server's `timeout`, or less when the caller asks.
pub(super) fn call_bound(config: &McpServerConfig, asked: Option<f64>) -> Duration {
    let bound = Duration::from_secs(config.timeout);
    match asked.filter(|t| t.is_finite() && *t > 0.0) {
        Some(asked) => Duration::try_from_secs_f64(asked).map_or(bound, |asked| bound.min(asked)),
        None => bound,
    }
}

/// Whether the server exposes the upstream tool `tool` in the catalogue now.
pub fn exposes_tool(entry: &ServerEntry, tool: &str) -> bool {
    catalogue::contains(entry, tool)
}
