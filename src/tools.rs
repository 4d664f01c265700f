//! The one place a tool call is routed and authorised: a catalogue tool (`{server_id}__{tool}`)
//! to its server through the registry, an agent-bridge tool to the A2A bridge, a toolset's
//! member by the name the toolset shows; every call is counted and every refused one audited.
//! Also the catalogue and toolsets a caller lists from (listing.rs says what it is shown).

mod apps;
mod hooks;
mod items;
mod listing;
mod meta;
mod traced;

use std::sync::{Arc, Mutex};
use std::time::Instant;

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Map, Value};

use crate::a2a::{self, A2a};
use crate::access::toolsets::{Item, Members};
use crate::access::{Access, Hold, View};
use crate::caller::Caller;
use crate::metrics::Metrics;
use crate::registry::{self, Exposed, Registry, ServerEntry, TaskStart};
use crate::store::Store;
use crate::upstream::CallOrigin;

/// Most results one search answers.
pub const MAX_SEARCH_LIMIT: usize = 100;
/// Results a search answers when it does not say.
pub const DEFAULT_SEARCH_LIMIT: usize = 10;

pub use apps::{APP_META, Via, app_of, app_only};
pub use hooks::Hooks;
pub use items::Resolved;
pub use listing::{Page, ToolFilter};
/// The meta-tool that calls a tool of a deferred scope.
pub use meta::CALL as META_CALL;

/// Whether `name` is one of the meta-tools of a deferred scope.
pub fn is_meta_tool(name: &str) -> bool {
    [meta::SEARCH, meta::DESCRIBE, meta::CALL].contains(&name)
}

/// The tools a request is about: the whole catalogue, or one toolset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope<'a> {
    Catalogue,
    /// The whole catalogue behind the meta-tools (`/mcp?deferred=1`).
    Deferred,
    Toolset(&'a str),
}

impl<'a> Scope<'a> {
    /// The scope a request's `toolset` field names (empty: the catalogue).
    pub fn of(toolset: &'a str) -> Self {
        match toolset.is_empty() {
            true => Scope::Catalogue,
            false => Scope::Toolset(toolset),
        }
    }
}

/// One tool call as a front end asks for it (REST, `/v1/a2e`, `/mcp`, a task): who calls, the
/// tool as its scope shows it, its arguments and bound, and where what its server sends during
/// the call goes.
pub struct CallRequest<'a> {
    pub caller: &'a Caller,
    pub scope: Scope<'a>,
    /// The tool's name as `scope` shows it.
    pub name: &'a str,
    pub arguments: Map<String, Value>,
    /// Seconds the call may take; the server's `timeout` when `None`.
    pub timeout: Option<f64>,
    pub origin: CallOrigin,
    /// A call a person approved (`tasks/approvals.rs`): no policy holds it again.
    pub approved: bool,
}

/// Why a scope could not be used.
#[derive(Debug, thiserror::Error)]
#[error("no toolset \"{0}\" is defined")]
pub struct NoToolset(pub String);

impl From<NoToolset> for registry::Error {
    fn from(error: NoToolset) -> Self {
        registry::Error::NotFound(error.to_string())
    }
}

/// The catalogue as last built, with what it was built from.
struct Built {
    from: Vec<(Arc<ServerEntry>, Arc<Vec<Exposed>>)>,
    members: Arc<Members>,
}

/// A toolset's members as last built.
struct BuiltToolset {
    catalogue: Arc<Members>,
    toolset: crate::a2e::Toolset,
    members: Arc<Members>,
}

/// Calls tools for the front ends, and says what each caller may see of them.
pub struct Tools {
    registry: Arc<Registry>,
    a2a: Arc<A2a>,
    metrics: Arc<Metrics>,
    access: Arc<Access>,
    store: Store,
    built: Mutex<Option<Built>>,
    toolsets: Mutex<std::collections::HashMap<String, BuiltToolset>>,
    /// The interceptors asked about calls, reads and gets (hooks.rs); none by default.
    hooks: Hooks,
}

impl Tools {
    pub fn new(
        registry: Arc<Registry>,
        a2a: Arc<A2a>,
        metrics: Arc<Metrics>,
        access: Arc<Access>,
        store: Store,
    ) -> Self {
        Self {
            registry,
            a2a,
            metrics,
            access,
            store,
            built: Mutex::default(),
            toolsets: Mutex::default(),
            hooks: Hooks::default(),
        }
    }

    pub fn access(&self) -> &Arc<Access> {
        &self.access
    }

    /// The (server id, upstream tool) a catalogue name stands for, if any.
    pub fn resolve(&self, name: &str) -> Option<(String, String)> {
        self.registry.resolve_tool(name)
    }

    /// Every tool of the catalogue (the agent-bridge tools last), rebuilt when a server's list
    /// has changed since.
    pub fn catalogue(&self) -> Arc<Members> {
        let now = self.registry.catalogue();
        let mut built = self.built.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(built) = built.as_ref()
            && built.from.len() == now.len()
            && built
                .from
                .iter()
                .zip(&now)
                .all(|(a, b)| Arc::ptr_eq(&a.0, &b.0) && Arc::ptr_eq(&a.1, &b.1))
        {
            return built.members.clone();
        }
        let mut items = Vec::new();
        for (entry, tools) in &now {
            items.extend(tools.iter().map(|tool| {
                let mut definition = tool.definition.clone();
                definition.name = tool.name.clone().into();
                Item {
                    owner: Some(entry.owner.clone()),
                    full: format!("{}{}{}", entry.id, crate::naming::SEPARATOR, tool.tool),
                    info: tool.info(&entry.id),
                    definition,
                }
            }));
        }
        if self.a2a.enabled() {
            let infos = a2a::tools::catalogue();
            let definitions = a2a::tools::mcp_tools();
            items.extend(
                infos
                    .into_iter()
                    .zip(definitions)
                    .map(|(info, definition)| Item {
                        owner: None,
                        full: info.name.clone(),
                        info,
                        definition,
                    }),
            );
        }
        let members = Arc::new(Members::new(items));
        *built = Some(Built {
            from: now,
            members: members.clone(),
        });
        members
    }

    /// The tools of `scope` before anyone's policies; `Deferred` is the whole catalogue.
    pub fn members(&self, scope: Scope<'_>) -> Result<Arc<Members>, NoToolset> {
        let catalogue = self.catalogue();
        let Scope::Toolset(name) = scope else {
            return Ok(catalogue);
        };
        let named = self
            .access
            .toolset(name)
            .ok_or_else(|| NoToolset(name.to_owned()))?;
        let mut cache = self.toolsets.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(built) = cache.get(name)
            && Arc::ptr_eq(&built.catalogue, &catalogue)
            && built.toolset == named.toolset
        {
            return Ok(built.members.clone());
        }
        let members = Arc::new(catalogue.of_toolset(&named.toolset));
        cache.retain(|n, _| self.access.toolset(n).is_some());
        cache.insert(
            name.to_owned(),
            BuiltToolset {
                catalogue,
                toolset: named.toolset,
                members: members.clone(),
            },
        );
        Ok(members)
    }

    /// Whether `scope` shows only the meta-tools.
    pub fn deferred(&self, scope: Scope<'_>) -> bool {
        match scope {
            Scope::Catalogue => false,
            Scope::Deferred => true,
            Scope::Toolset(name) => self
                .access
                .toolset(name)
                .is_some_and(|t| t.toolset.deferred),
        }
    }

    /// Whether `view` shows the catalogue tool `name` (an alias, a full name or an
    /// agent-bridge tool): calls and `/mcp` tasks are checked by it.
    /// An unknown tool is let through, to be answered as unknown.
    pub fn shows(&self, view: &View, name: &str) -> bool {
        if view.sees_everything() {
            return true;
        }
        match self.registry.resolve_tool(name) {
            Some((server_id, tool)) => {
                let owner = self.registry.get(&server_id).map(|e| e.owner.clone()).ok();
                let full = format!("{server_id}{}{tool}", crate::naming::SEPARATOR);
                view.tool(owner.as_deref(), &full)
            }
            None => view.tool(None, name),
        }
    }

    /// Makes `req`; answers the server id (empty for an agent-bridge tool) and the MCP result.
    /// A tool the caller may not see is as unknown as one that does not exist, and the refusal
    /// is audited.
    pub async fn call(
        &self,
        req: CallRequest<'_>,
    ) -> Result<(String, CallToolResult), registry::Error> {
        if self.deferred(req.scope) {
            // Boxed, as the rare paths below: a call's future is moved whole at every layer.
            return Box::pin(meta::call(self, req)).await;
        }
        self.call_member(req).await
    }

    /// `call`, which the caller can cancel by its A2E request `id` (`cancel_call`) while it runs.
    /// Cancelled, it answers `Cancelled` at once; the call is dropped, which tells its server
    /// (`notifications/cancelled`), and is not retried. So does dropping this future (the
    /// caller's request closed).
    pub async fn call_cancellable(
        &self,
        req: CallRequest<'_>,
        id: &str,
    ) -> Result<(String, CallToolResult), registry::Error> {
        let (agent, name) = (&req.caller.id, req.name);
        let running = self.registry.in_flight.start(agent, id);
        tokio::select! {
            biased;
            _ = running.token.cancelled() => {
                tracing::info!(%agent, call = %id, tool = %name, "call cancelled");
                Err(registry::Error::Cancelled(id.to_owned()))
            }
            called = self.call(req) => called,
        }
    }

    /// Cancels `caller`'s call `id` (`DELETE /v1/calls/{id}`); false when no such call of its is
    /// in flight (unknown, another agent's, ended, or cancelled already) on any replica.
    pub async fn cancel_call(&self, caller: &Caller, id: &str) -> bool {
        self.registry.cancel_call(&caller.id, id).await
    }

    /// Calls the member of `scope` shown as `name`, deferred or not: in a `tool.call` span when
    /// spans are exported.
    async fn call_member(
        &self,
        req: CallRequest<'_>,
    ) -> Result<(String, CallToolResult), registry::Error> {
        if !crate::telemetry::exporting() {
            return self.call_traced(req).await;
        }
        use tracing::Instrument as _;
        let span = tracing::info_span!(
            target: crate::telemetry::SPANS,
            "tool.call",
            mcp.method.name = "tools/call",
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = req.name,
            mcp_bridge.server.id = tracing::field::Empty,
        );
        // Boxed, as the other rare paths: a call's future is moved whole at every layer.
        let called = Box::pin(self.call_traced(req).instrument(span.clone())).await;
        traced::ended(&span, &called);
        called
    }

    /// `call_member`'s work.
    async fn call_traced(
        &self,
        req: CallRequest<'_>,
    ) -> Result<(String, CallToolResult), registry::Error> {
        let full = self.permit(&req).await?;
        if crate::telemetry::exporting() {
            // The canonical name, whatever alias or toolset name the caller used.
            tracing::Span::current().record("gen_ai.tool.name", full.as_str());
        }
        let called = match self.hooks.is_empty() {
            true => {
                self.call_permitted(&full, req.arguments, req.timeout, req.origin)
                    .await
            }
            // Boxed: a rare path, kept out of the size of every call's future.
            false => {
                Box::pin(self.call_hooked(
                    req.caller,
                    &full,
                    req.arguments,
                    req.timeout,
                    req.origin,
                ))
                .await
            }
        };
        called.map_err(|error| renamed(error, req.name))
    }

    /// Starts `req` as a task its server runs and keeps `ttl` ms, when the server runs tasks;
    /// `Bridge` when the bridge must make the call itself (the server runs no tasks, or the
    /// tool is a meta-tool or an agent-bridge tool). Its `timeout` is not used: a task's server
    /// bounds it.
    pub async fn start_task(
        &self,
        req: &CallRequest<'_>,
        ttl: u64,
    ) -> Result<TaskStart, registry::Error> {
        if self.deferred(req.scope) {
            return Ok(TaskStart::Bridge);
        }
        let full = self.permit(req).await?;
        if self.a2a.enabled() && a2a::tools::is_bridge_tool(&full) {
            return Ok(TaskStart::Bridge);
        }
        // A task its server ran would pass its hooks by: the bridge runs it, hooks and all.
        if self.tool_hooked(req.caller, &full) {
            return Ok(TaskStart::Bridge);
        }
        self.registry
            .start_task(&full, &req.arguments, ttl, &req.origin)
            .await
            .map_err(|error| renamed(error, req.name))
    }

    /// The policy that holds `caller`'s call of the tool `scope` shows as `name` for a
    /// person's approval, if one does: the front ends ask before calling, and make such a call
    /// a held task (`Tasks::start_with`). None for a deferred scope's meta-tools (the tool they
    /// call is checked when they call it).
    pub fn hold_for(&self, caller: &Caller, scope: Scope<'_>, name: &str) -> Option<Hold> {
        if !self.access.holds_any() {
            return None;
        }
        // Only a call that would run is held: a tool that does not exist, or that the caller
        // may not use, is refused by the call as ever (and no approver hears of it).
        let full = match scope {
            Scope::Catalogue => {
                let known = self.registry.resolve_tool(name).is_some()
                    || crate::a2a::tools::is_bridge_tool(name);
                if !known {
                    return None;
                }
                self.catalogue_name(name)
            }
            Scope::Deferred => return None,
            Scope::Toolset(_) => {
                let members = self.members(scope).ok()?;
                let view = self.access.view(caller);
                members.find(&view, name)?.full.clone()
            }
        };
        if !self.permitted(caller, &full) {
            return None;
        }
        self.access.hold(caller, &full)
    }

    /// A catalogue name (an alias or a full name) as `{server_id}__{tool}`; any other name as
    /// it is (an agent-bridge tool).
    fn catalogue_name(&self, name: &str) -> String {
        match self.registry.resolve_tool(name) {
            Some((server_id, tool)) => format!("{server_id}{}{tool}", crate::naming::SEPARATOR),
            None => name.to_owned(),
        }
    }

    /// Refuses a call a policy holds for approval that reached here without being held (the
    /// front ends hold it before: this is the fail-closed rest, such as a held tool named to a
    /// deferred scope's `call_tool`).
    fn not_held(&self, caller: &Caller, full: &str) -> Result<(), registry::Error> {
        if !self.access.holds_any() {
            return Ok(());
        }
        match self.access.hold(caller, &self.catalogue_name(full)) {
            None => Ok(()),
            Some(hold) => Err(registry::Error::Forbidden(format!(
                "a call of \"{full}\" waits for a person's approval (policy \"{}\"); call the tool \
                 by its own name to have the call held for approval",
                hold.policy
            ))),
        }
    }

    /// The catalogue name of the tool `req` calls, if the caller's policies let it use it
    /// (`authorize`) and hold no call of it for a person's approval (unless approved).
    async fn permit_call(&self, req: &CallRequest<'_>) -> Result<String, registry::Error> {
        let full = self.authorize(req.caller, req.scope, req.name).await?;
        if !req.approved {
            self.not_held(req.caller, &full)?;
        }
        Ok(full)
    }

    /// The registry, for what follows a started task.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The catalogue name of the member of `scope` shown as `name`, if `caller` may use it;
    /// a refusal is audited and answers as an unknown tool.
    async fn authorize(
        &self,
        caller: &Caller,
        scope: Scope<'_>,
        name: &str,
    ) -> Result<String, registry::Error> {
        let full = match scope {
            Scope::Catalogue | Scope::Deferred => name.to_owned(),
            Scope::Toolset(_) => {
                let members = self.members(scope)?;
                let view = self.access.view(caller);
                match members.find(&view, name) {
                    Some(item) => item.full.clone(),
                    None => {
                        Box::pin(self.refused(caller, scope, name)).await;
                        return Err(registry::Error::ToolNotFound(name.to_owned()));
                    }
                }
            }
        };
        if !self.permitted(caller, &full) {
            Box::pin(self.refused(caller, scope, name)).await;
            return Err(registry::Error::ToolNotFound(name.to_owned()));
        }
        Ok(full)
    }

    /// Whether `caller`'s policies let it use the catalogue tool `name` (an alias, a full name
    /// or an agent-bridge tool). An unknown tool is let through, to be answered as unknown.
    fn permitted(&self, caller: &Caller, name: &str) -> bool {
        self.shows(&self.access.view(caller), name)
    }

    /// A refused call, in the audit log.
    async fn refused(&self, caller: &Caller, scope: Scope<'_>, name: &str) {
        let detail = match scope {
            Scope::Toolset(toolset) => format!("not visible to the caller in toolset {toolset}"),
            _ => "not visible to the caller".to_owned(),
        };
        self.store
            .record(&caller.id, "tool.call.denied", name, &detail)
            .await;
    }

    /// Calls a catalogue tool by its name (`{server_id}__{tool}`, its alias, or an agent-bridge
    /// tool) for `origin`, and counts the call in the metrics.
    async fn call_permitted(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        timeout: Option<f64>,
        origin: CallOrigin,
    ) -> Result<(String, CallToolResult), registry::Error> {
        let started = Instant::now();
        if self.a2a.enabled() && a2a::tools::is_bridge_tool(name) {
            let req_id = origin.call_id();
            let from = a2a::Origin::new(origin.agent_id(), req_id.as_deref());
            let outcome = Box::pin(a2a::tools::call(&self.a2a, from, name, arguments)).await;
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

/// An unknown tool named as the caller named it.
fn renamed(error: registry::Error, name: &str) -> registry::Error {
    match error {
        registry::Error::ToolNotFound(_) => registry::Error::ToolNotFound(name.to_owned()),
        other => other,
    }
}
