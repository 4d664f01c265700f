//! What a server lists (tools, resources, templates, prompts) and the requests that read from it:
//! a page of a list, a resource, a rendered prompt, a completion.

use std::time::Duration;

use rmcp::model::{
    ClientRequest, CompleteRequestParams, CompleteResult, ErrorCode, GetPromptRequest,
    GetPromptRequestParams, GetPromptResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, PaginatedRequestParams, Prompt, ReadResourceRequestParams,
    ReadResourceResult, RequestMetaObject, Resource, ResourceTemplate, ServerResult, Tool,
};
use rmcp::service::{PeerRequestOptions, ServiceError};

use super::{CallError, Connection, INPUT_HANDED_OVER};
use crate::hub::InputRounds;

/// Everything a server lists, as last synced.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct Lists {
    pub tools: Vec<Tool>,
    pub resources: Vec<Resource>,
    pub templates: Vec<ResourceTemplate>,
    pub prompts: Vec<Prompt>,
}

impl Connection {
    pub async fn list_resources(
        &self,
        cursor: Option<String>,
        timeout: Duration,
    ) -> Result<ListResourcesResult, CallError> {
        let params = PaginatedRequestParams::default().with_cursor(cursor);
        self.run(timeout, self.client.list_resources(Some(params)))
            .await
    }

    pub async fn list_templates(
        &self,
        cursor: Option<String>,
        timeout: Duration,
    ) -> Result<ListResourceTemplatesResult, CallError> {
        let params = PaginatedRequestParams::default().with_cursor(cursor);
        self.run(timeout, self.client.list_resource_templates(Some(params)))
            .await
    }

    pub async fn list_prompts(
        &self,
        cursor: Option<String>,
        timeout: Duration,
    ) -> Result<ListPromptsResult, CallError> {
        let params = PaginatedRequestParams::default().with_cursor(cursor);
        self.run(timeout, self.client.list_prompts(Some(params)))
            .await
    }

    /// Reads a resource: in a client span when spans are exported, as `call_tool`.
    pub async fn read_resource(
        &self,
        uri: &str,
        timeout: Duration,
    ) -> Result<ReadResourceResult, CallError> {
        let params = ReadResourceRequestParams::new(uri);
        self.traced(params, |params| {
            self.run(timeout, self.client.read_resource(params))
        })
        .await
    }

    /// Renders a prompt (in a client span when spans are exported, as `call_tool`); with
    /// `rounds` (a 2026-07-28 client that answers input requests itself), once, carrying the
    /// client's answers and capabilities: a server's input-required result is handed to the
    /// client (hub::InputRounds) instead of being answered here.
    pub async fn get_prompt(
        &self,
        params: GetPromptRequestParams,
        timeout: Duration,
        rounds: Option<&InputRounds>,
    ) -> Result<GetPromptResult, CallError> {
        self.traced(params, |params| {
            self.get_prompt_traced(params, timeout, rounds)
        })
        .await
    }

    /// `get_prompt`'s work.
    async fn get_prompt_traced(
        &self,
        params: GetPromptRequestParams,
        timeout: Duration,
        rounds: Option<&InputRounds>,
    ) -> Result<GetPromptResult, CallError> {
        let Some(rounds) = rounds else {
            return self.run(timeout, self.client.get_prompt(params)).await;
        };
        let mut params = params;
        params.input_responses = rounds.responses.clone();
        params.request_state = rounds.request_state.clone();
        let mut options = PeerRequestOptions::no_options();
        options.timeout = Some(timeout);
        if let Some(capabilities) = &rounds.capabilities {
            let mut meta = RequestMetaObject::default();
            meta.set_client_capabilities(capabilities.clone());
            options.meta = Some(meta);
        }
        let request = ClientRequest::GetPromptRequest(GetPromptRequest::new(params));
        let peer = self.client.peer().clone();
        let call = async move {
            let handle = peer.send_request_with_option(request, options).await?;
            handle.await_response().await
        };
        match self.run(timeout + Duration::from_secs(1), call).await? {
            ServerResult::GetPromptResult(result) => Ok(result),
            ServerResult::InputRequiredResult(required) => {
                rounds.hand_over(required);
                Err(CallError::Rejected {
                    code: INPUT_HANDED_OVER,
                    message: "the server needs the MCP client's input first".into(),
                })
            }
            _ => Err(CallError::Protocol(
                "the server answered prompts/get with something else".into(),
            )),
        }
    }

    pub async fn complete(
        &self,
        params: CompleteRequestParams,
        timeout: Duration,
    ) -> Result<CompleteResult, CallError> {
        self.run(timeout, self.client.complete(params)).await
    }

    /// Lists everything the server offers that its capabilities announce. A list the server does
    /// not implement after all (-32601) counts as empty.
    pub async fn list_all(&self) -> Result<Lists, ServiceError> {
        let caps = &self.capabilities;
        let client = &self.client;
        Ok(Lists {
            tools: optional(caps.tools.is_some(), client.list_all_tools()).await?,
            resources: optional(caps.resources.is_some(), client.list_all_resources()).await?,
            templates: optional(
                caps.resources.is_some(),
                client.list_all_resource_templates(),
            )
            .await?,
            prompts: optional(caps.prompts.is_some(), client.list_all_prompts()).await?,
        })
    }
}

/// A list when the server announces it, empty when it does not or answers "method not found".
async fn optional<T>(
    announced: bool,
    list: impl Future<Output = Result<Vec<T>, ServiceError>>,
) -> Result<Vec<T>, ServiceError> {
    if !announced {
        return Ok(Vec::new());
    }
    match list.await {
        Err(ServiceError::McpError(e)) if e.code == ErrorCode::METHOD_NOT_FOUND => Ok(Vec::new()),
        other => other,
    }
}
