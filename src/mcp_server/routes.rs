//! How `/mcp` names and reaches what it bridges: tools with or without their server's prefix,
//! the caller's view of the catalogue, resource and prompt routes, merged pages, errors in the
//! shape a client can act on, and the answer of a call (or the input it waits for).

use std::collections::HashSet;
use std::sync::Arc;

use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, MetaObject, ResultType, Tool};
use rmcp::{ErrorData, Peer, RoleServer};
use serde_json::{Value, json};

use super::inputs::Step;
use super::recipient::McpCaller;
use super::{
    BridgeServer, ERROR_META, McpPage, SKIPPED_META, direct, full_tool_name, id_text, scope_of,
    until_cancelled,
};
use crate::access::Kind;
use crate::caller::Caller;
use crate::http::state::AppState;
use crate::hub::AgentChannel;
use crate::hub::InputRounds;
use crate::registry::{self, MergedPage, naming};
use crate::tools::{CallRequest, Resolved, Scope, ToolFilter};
use crate::upstream::CallError;

impl BridgeServer {
    /// The server whose catalogue `/mcp` shows without prefixes, if any.
    pub(super) fn unprefixed(&self) -> Option<&str> {
        self.state.config.mcp_unprefixed_server.as_deref()
    }

    /// The name a server's tool or prompt has on `/mcp`.
    pub(super) fn exposed(&self, server_id: &str, name: &str) -> String {
        if self.unprefixed() == Some(server_id) {
            name.to_owned()
        } else {
            format!("{server_id}{}{name}", naming::SEPARATOR)
        }
    }

    /// The (server id, upstream name) an `/mcp` tool or prompt name stands for.
    pub(super) fn resolve(
        &self,
        name: &str,
        offers: impl Fn(&str) -> bool,
    ) -> Option<(String, String)> {
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
    pub(super) fn tools(&self, agent: &Caller, scope: Scope<'_>) -> Result<Vec<Tool>, ErrorData> {
        let items = self
            .state
            .tools
            .visible(agent, scope, ToolFilter::HOST)
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
    pub(super) fn uri_error(error: registry::Error, uri: &str) -> ErrorData {
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
    pub(super) fn check_app(
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

    pub(super) fn registry_error(error: registry::Error) -> ErrorData {
        let message = error.to_string();
        let code = error.code();
        let mut answer = match error {
            registry::Error::ResourceNotFound(_) => ErrorData::resource_not_found(message, None),
            registry::Error::Invalid(_)
            | registry::Error::ToolNotFound(_)
            | registry::Error::PromptNotFound(_)
            | registry::Error::ServerNotFound(_)
            | registry::Error::Conflict(_) => ErrorData::invalid_params(message, None),
            registry::Error::Forbidden(_) | registry::Error::DeniedByHook { .. } => {
                ErrorData::invalid_request(message, None)
            }
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
pub(super) fn error_meta(code: crate::a2e::ErrorCode) -> Value {
    json!({"code": code, "retryable": code.retryable()})
}

impl BridgeServer {
    /// A plain `tools/call` of a 2025-11-25 session, answered in front of rmcp (direct.rs): the
    /// call `call_tool` makes for a session whose client takes no requests; its progress, if it
    /// asked for it, goes to the call's own sink.
    pub(super) async fn call_in_session(
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
        if let Some(held) = super::tasks::held(&self.state, agent, &scope, name, &arguments).await?
        {
            return Ok(CallToolResponse::Complete(held));
        }
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
            stateless_log: None,
            inputs: None,
            channel: AgentChannel::new(self.state.hub.clone(), agent.id.clone(), id_text(id)),
            session: None,
            during: None,
            rounds: None,
        });
        let call = self.state.tools.call(CallRequest {
            caller: agent,
            scope: scope.scope(),
            name: &full,
            arguments,
            timeout: None,
            origin,
            approved: false,
        });
        let called = until_cancelled(call, cancelled, agent, name, id).await;
        self.respond(name, Step::Done(called), None)
    }

    /// Whether `/mcp` shows a server's resource URI (or template) qualified with the server:
    /// when another server offers the same one, unless it is the unprefixed server's.
    /// A page of a list across servers as `/mcp` shows it: each item as `expose` renames it
    /// for its server, and the cursor of the next page.
    /// A merged page as MCP shows it: its entries, the next cursor, and the servers it left
    /// out in `_meta` under [`SKIPPED_META`] (MCP's result has no field for them).
    pub(super) fn paged<T>(
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

    pub(super) fn qualifies(&self, server_id: &str, uri: &str, shared: &HashSet<String>) -> bool {
        shared.contains(uri) && self.unprefixed() != Some(server_id)
    }

    /// The server and upstream URI a read or subscription of `uri` goes to: the unprefixed
    /// server when it offers it, else as `Tools::resolve_item` resolves it (a qualified URI names
    /// its server); narrowed to what the caller's policies show.
    pub(super) async fn resource_route(
        &self,
        agent: &Caller,
        uri: &str,
    ) -> Result<Resolved, ErrorData> {
        self.state
            .tools
            .resolve_item(agent, Kind::Resource, self.unprefixed_offering(uri), uri)
            .await
            .map_err(|e| Self::uri_error(e, uri))
    }

    /// The unprefixed server, when it offers `uri` (a plain URI it shares with others is its
    /// own), else "" (routed by URI).
    pub(super) fn unprefixed_offering(&self, uri: &str) -> &str {
        match self.unprefixed() {
            Some(id) if self.state.registry.offers_uri(id, uri) => id,
            _ => "",
        }
    }

    /// Notes whom a server's input-required result went to, so that only they bring its state
    /// back.
    pub(super) fn handed_out(
        &self,
        rounds: &InputRounds,
        required: &rmcp::model::InputRequiredResult,
    ) {
        if let Some(state) = required.request_state.as_deref() {
            self.suspended.handed_out(&rounds.agent_id, state);
        }
    }

    /// The answer to a `tools/call` once the call has ended or needs the client's input.
    /// `rounds`: a stateless client's, whose server may have answered with an input-required
    /// result for it.
    pub(super) fn respond(
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
                let mut said = error.to_string();
                let mut what = error_meta(error.code());
                // A link to authorize with goes where the model and the client each read.
                if let registry::Error::AuthRequired {
                    authorization_url: Some(url),
                    ..
                } = &error
                {
                    said = format!("{said}: {url}");
                    what["authorization_url"] = url.as_str().into();
                }
                let mut result = CallToolResult::error(vec![ContentBlock::text(said)]);
                let mut meta = serde_json::Map::new();
                meta.insert(ERROR_META.to_owned(), what);
                result.meta = Some(MetaObject(meta));
                Ok(CallToolResponse::Complete(result))
            }
        }
    }

    /// The server and upstream name of an `/mcp` prompt name.
    pub(super) fn prompt_route(&self, name: &str) -> Result<(String, String), ErrorData> {
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
