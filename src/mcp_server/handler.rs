//! rmcp's `ServerHandler` for `/mcp`: each MCP request of either era mapped onto the bridge
//! (tools, resources, prompts, completions, subscriptions and listens, the tasks extension).

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    Prompt, ReadResourceRequestParams, ReadResourceResponse, Reference, Resource, ResourceContents,
    ResourceTemplate, ResultType, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};
use tracing::Instrument as _;

use super::front::{Opening, SESSION_ID};
use super::inputs::{Running, Step};
use super::recipient::McpCaller;
use super::sessions::log_rank;
use super::traced::Target;
use super::{
    BridgeServer, caller, cursor_of, full_tool_name, params, recipient, request_id, scope_path,
    session_of, stateless, tasks, traced, until_cancelled,
};
use crate::access::Kind;
use crate::caller::Caller;
use crate::hub::AgentChannel;
use crate::hub::InputRounds;
use crate::registry::{self, naming};
use crate::tools::{CallRequest, Scope};

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
        let span = traced::span(
            &context,
            "resources/subscribe",
            Target::Resource(request.uri.as_str()),
        );
        traced::within(span, async move {
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
        })
        .await
    }

    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let span = traced::span(
            &context,
            "resources/unsubscribe",
            Target::Resource(request.uri.as_str()),
        );
        traced::within(span, async move {
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
        })
        .await
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
        let span = traced::span(&context, "tasks/get", Target::None);
        traced::within(span, async move {
            let agent = caller(&context)?;
            let task = tasks::extension::get(&self.state, &agent, &request.task_id).await?;
            Ok(rmcp::model::GetTaskResult::new(task))
        })
        .await
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let span = traced::span(&context, "tasks/update", Target::None);
        traced::within(span, async move {
            let agent = caller(&context)?;
            tasks::extension::update(
                &self.state,
                &agent,
                &request.task_id,
                request.input_responses,
            )
            .await
        })
        .await
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let span = traced::span(&context, "tasks/cancel", Target::None);
        traced::within(span, async move {
            let agent = caller(&context)?;
            tasks::extension::cancel(&self.state, &agent, &request.task_id).await
        })
        .await
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let span = traced::span(&context, "tools/list", Target::None);
        traced::within(span, async move {
            let agent = caller(&context)?;
            let scope = scope_path(&context);
            Ok(ListToolsResult::with_all_items(
                self.tools(&agent, scope.scope())?,
            ))
        })
        .await
    }

    async fn call_tool(
        &self,
        mut request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let span = traced::span(&context, "tools/call", Target::Tool(&request.name));
        traced::within(span, async move {
            let agent = caller(&context)?;
            let stateless = stateless(&context);
            if self.back_from_authorizing(&context, &mut request.request_state) {
                request.input_responses = None;
            }
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
            // A call a policy holds for approval: its task, named in a tool error result.
            let arguments = request.arguments.clone().unwrap_or_default();
            if let Some(held) =
                tasks::held(&self.state, &agent, &scope, &request.name, &arguments).await?
            {
                return Ok(CallToolResponse::Complete(held));
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
                stateless_log: stateless
                    .then(|| context.meta.log_level())
                    .flatten()
                    .and_then(|level| log_rank(&json!(level))),
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
                let call = self.state.tools.call(CallRequest {
                    caller: &agent,
                    scope: scope.scope(),
                    name: &full,
                    arguments,
                    timeout: None,
                    origin,
                    approved: false,
                });
                let called =
                    until_cancelled(call, &context.ct, &agent, &request.name, &context.id).await;
                if let Err(error) = &called
                    && let Some(answer) = self.authorization_wanted(&context, &agent.id, error)
                {
                    return answer;
                }
                return self.respond(&request.name, Step::Done(called), rounds.as_deref());
            };
            let (state, caller) = (self.state.clone(), agent.clone());
            // On a task of its own, still in the request's span.
            let result = tokio::spawn(async move {
                let call = CallRequest {
                    caller: &caller,
                    scope: scope.scope(),
                    name: &full,
                    arguments,
                    timeout: None,
                    origin,
                    approved: false,
                };
                state.tools.call(call).await
            }
            .instrument(traced::current()));
            let step = self
                .suspended
                .drive(&agent.id, Running::new(result, asks))
                .await;
            if let Step::Done(Err(error)) = &step
                && let Some(answer) = self.authorization_wanted(&context, &agent.id, error)
            {
                return answer;
            }
            self.respond(&request.name, step, rounds.as_deref())
        })
        .await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let span = traced::span(&context, "resources/list", Target::None);
        traced::within(span, async move {
            let agent = caller(&context)?;
            let tools = &self.state.tools;
            let page = tools.resources(&agent, "", &cursor_of(request)).await;
            let (shared, _) = self.state.registry.shared_uris();
            let (resources, next, meta) =
                self.paged(page, |server_id, resource: &mut Resource| {
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
        })
        .await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let span = traced::span(&context, "resources/templates/list", Target::None);
        traced::within(span, async move {
            let agent = caller(&context)?;
            let tools = &self.state.tools;
            let page = tools.templates(&agent, "", &cursor_of(request)).await;
            let (_, shared) = self.state.registry.shared_uris();
            let (templates, next, meta) =
                self.paged(page, |server_id, template: &mut ResourceTemplate| {
                    if let Some(ui) = naming::qualify_ui(server_id, &template.uri_template) {
                        template.uri_template = ui;
                    } else if self.qualifies(server_id, &template.uri_template, &shared) {
                        template.uri_template =
                            naming::qualify_uri(server_id, &template.uri_template);
                    }
                })?;
            let mut result = ListResourceTemplatesResult::with_all_items(templates);
            result.next_cursor = next;
            result.meta = meta;
            Ok(result)
        })
        .await
    }

    async fn read_resource(
        &self,
        mut request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let span = traced::span(&context, "resources/read", Target::Resource(&request.uri));
        traced::within(span, async move {
            let agent = caller(&context)?;
            // A read takes no answers of its own: only an authorization round is brought back.
            self.back_from_authorizing(&context, &mut request.request_state);
            let uri = request.uri.as_str();
            let target = self.resource_route(&agent, uri).await?;
            let read = self.state.tools.read_resource(&agent, &target).await;
            let (server_id, mut result) = match read {
                Ok(read) => read,
                Err(error) => {
                    if let Some(round) = self.authorization_round(&context, &error) {
                        return Ok(ReadResourceResponse::InputRequired(round));
                    }
                    return Err(self
                        .elicitation(&context, &agent.id, &error)
                        .unwrap_or_else(|| Self::uri_error(error, uri)));
                }
            };
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
        })
        .await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let span = traced::span(&context, "prompts/list", Target::None);
        traced::within(span, async move {
            let agent = caller(&context)?;
            let page = self
                .state
                .tools
                .prompts(&agent, "", &cursor_of(request))
                .await;
            let (prompts, next, meta) = self.paged(page, |server_id, prompt: &mut Prompt| {
                prompt.name = self.exposed(server_id, &prompt.name);
            })?;
            let mut result = ListPromptsResult::with_all_items(prompts);
            result.next_cursor = next;
            result.meta = meta;
            Ok(result)
        })
        .await
    }

    async fn get_prompt(
        &self,
        mut request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let span = traced::span(&context, "prompts/get", Target::Prompt(&request.name));
        traced::within(span, async move {
            let agent = caller(&context)?;
            if self.back_from_authorizing(&context, &mut request.request_state) {
                request.input_responses = None;
            }
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
                .tools
                .get_prompt(&agent, &target, arguments, rounds.as_ref())
                .await;
            if let Some(rounds) = &rounds
                && let Some(required) = rounds.take()
            {
                self.handed_out(rounds, &required);
                return Ok(GetPromptResponse::InputRequired(required));
            }
            let (_, mut result) = match rendered {
                Ok(rendered) => rendered,
                Err(error) => {
                    if let Some(round) = self.authorization_round(&context, &error) {
                        return Ok(GetPromptResponse::InputRequired(round));
                    }
                    return Err(self
                        .elicitation(&context, &agent.id, &error)
                        .unwrap_or_else(|| Self::registry_error(error)));
                }
            };
            result.result_type = Some(ResultType::COMPLETE);
            Ok(GetPromptResponse::Complete(result))
        })
        .await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let span = traced::span(&context, "completion/complete", Target::None);
        traced::within(span, async move {
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
        })
        .await
    }
}
