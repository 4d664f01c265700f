//! The A2E messages: the 21 `mcp/*` messages of the seed, `tool/list` and `tool/call`, and the
//! messages mcp-bridge adds beyond the seed (`mcp/server/get|update|reconnect`).

use serde_json::{Map, Value};

use super::{
    A2aAgentInfo, CompletionArgument, CompletionContext, ImportResult, McpResourceTemplate,
    SkippedServer,
};
use super::{ElicitAction, McpProtocol, McpServerStatus, Role, ToolSource};
use super::{McpPrompt, McpPromptMessage, McpResource, McpResourceContent, McpRoot};
use super::{McpServerConfig, McpServerInfo, OAuthConfig, ToolInfo};
use crate::a2e::{a2e_message, a2e_response};

// ---- Server management (7) ----

a2e_message! {
    /// mcp/server/list/req: list registered servers and their status.
    ServerListRequest = "mcp/server/list/req" {
        /// Only servers with this status (`connecting`, `ready`, `error`, `disconnected`,
        /// `auth_required`); empty = all.
        #[serde(with = "crate::a2e::empty_is_none")]
        #[schema(value_type = String, pattern = "^(|connecting|ready|error|disconnected|auth_required)$")]
        status_filter: Option<McpServerStatus>,
    }
}

a2e_response! {
    /// mcp/server/list/resp.
    ServerListResponse = "mcp/server/list/resp" {
        servers: Vec<McpServerInfo>,
    }
}

a2e_message! {
    /// mcp/server/register/req: register and connect a new server.
    ServerRegisterRequest = "mcp/server/register/req" {
        config: McpServerConfig,
    }
}

a2e_response! {
    /// mcp/server/register/resp.
    ServerRegisterResponse = "mcp/server/register/resp" {
        ok: bool,
        /// The registered server (on success).
        #[serde(skip_serializing_if = "Option::is_none")]
        server: Option<McpServerInfo>,
        /// Why registration failed (on failure).
        error: String,
    }
}

a2e_message! {
    /// mcp/server/unregister/req: disconnect and remove a server.
    ServerUnregisterRequest = "mcp/server/unregister/req" {
        server_id: String,
    }
}

a2e_response! {
    /// mcp/server/unregister/resp.
    ServerUnregisterResponse = "mcp/server/unregister/resp" {
        ok: bool,
        server_id: String,
    }
}

a2e_message! {
    /// mcp/server/push: a forwarded MCP notification or a server status change.
    ServerPush = "mcp/server/push" {
        server_id: String,
        /// The MCP notification method, or `bridge/server_status` / `bridge/events_lost`.
        method: String,
        #[schema(value_type = HashMap<String, Value>)]
        params: Value = Value::Object(Map::new()),
        /// For progress: the `id` of the call it belongs to.
        #[serde(skip_serializing_if = "Option::is_none")]
        req_id: Option<String>,
    }
}

// ---- Server management beyond the seed ----

a2e_message! {
    /// mcp/server/get/req: one server with its (redacted) config.
    ServerGetRequest = "mcp/server/get/req" {
        server_id: String,
    }
}

a2e_response! {
    /// mcp/server/get/resp.
    ServerGetResponse = "mcp/server/get/resp" {
        server: McpServerInfo,
        /// The config, secret values shown as `***`.
        config: McpServerConfig,
    }
}

a2e_message! {
    /// mcp/server/update/req: change some fields of a server's config. Absent fields stay as they
    /// are; a secret value given as `***` keeps the stored value.
    ServerUpdateRequest = "mcp/server/update/req" {
        server_id: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cmd: Option<Vec<String>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        env: Option<std::collections::BTreeMap<String, String>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        url: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        headers: Option<std::collections::BTreeMap<String, String>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        timeout: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        connect_timeout: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        auto_reconnect: Option<bool>,
        #[serde(skip_serializing_if = "Option::is_none")]
        protocol_version: Option<McpProtocol>,
        #[serde(skip_serializing_if = "Option::is_none")]
        tool_allow_list: Option<Vec<String>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        resource_allow_list: Option<Vec<String>>,
        /// The whole `auth` replaced (a `client_secret` or `private_key` sent back as `***`
        /// keeps the stored one); `null` removes it.
        #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "present")]
        #[schema(value_type = Option<OAuthConfig>, nullable)]
        auth: Option<Option<OAuthConfig>>,
    }
}

/// A field that is present, even as `null`: `Some` of what it holds (so `null` is `Some(None)`,
/// and an absent field, by the struct's default, `None`).
fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

a2e_response! {
    /// mcp/server/update/resp: the server after the change.
    ServerUpdateResponse = "mcp/server/update/resp" {
        ok: bool,
        server: McpServerInfo,
        config: McpServerConfig,
    }
}

a2e_message! {
    /// mcp/server/reconnect/req: drop the connection and connect again now.
    ServerReconnectRequest = "mcp/server/reconnect/req" {
        server_id: String,
    }
}

a2e_response! {
    /// mcp/server/reconnect/resp: the server after the attempt.
    ServerReconnectResponse = "mcp/server/reconnect/resp" {
        ok: bool,
        server: McpServerInfo,
    }
}

// ---- Resources (6) ----

a2e_message! {
    /// mcp/resource/list/req.
    ResourceListRequest = "mcp/resource/list/req" {
        /// Only this server; empty = all.
        server_id: String,
        /// Pagination cursor from a previous `next_cursor`.
        cursor: String,
    }
}

a2e_response! {
    /// mcp/resource/list/resp.
    ResourceListResponse = "mcp/resource/list/resp" {
        resources: Vec<McpResource>,
        next_cursor: String,
        /// Servers left out of this page (beyond the seed): see `SkippedServer`.
        skipped_servers: Vec<SkippedServer>,
    }
}

a2e_message! {
    /// mcp/resource/read/req.
    ResourceReadRequest = "mcp/resource/read/req" {
        #[schema(min_length = 1, required = true, default)]
        uri: String,
        /// Server hint; routed by URI when empty.
        server_id: String,
    }
}

a2e_response! {
    /// mcp/resource/read/resp.
    ResourceReadResponse = "mcp/resource/read/resp" {
        contents: Vec<McpResourceContent>,
        server_id: String,
        error: String,
    }
}

a2e_message! {
    /// mcp/resource/subscribe/req.
    ResourceSubscribeRequest = "mcp/resource/subscribe/req" {
        #[schema(min_length = 1, required = true, default)]
        uri: String,
        server_id: String,
    }
}

a2e_response! {
    /// mcp/resource/subscribe/resp.
    ResourceSubscribeResponse = "mcp/resource/subscribe/resp" {
        ok: bool,
        /// The server the subscription was routed to (beyond the seed).
        server_id: String,
        error: String,
    }
}

// ---- Resources beyond the seed ----

a2e_message! {
    /// mcp/resource/templates/req: resource templates across servers.
    ResourceTemplatesRequest = "mcp/resource/templates/req" {
        server_id: String,
        cursor: String,
    }
}

a2e_response! {
    /// mcp/resource/templates/resp.
    ResourceTemplatesResponse = "mcp/resource/templates/resp" {
        resource_templates: Vec<McpResourceTemplate>,
        next_cursor: String,
        /// Servers left out of this page (beyond the seed): see `SkippedServer`.
        skipped_servers: Vec<SkippedServer>,
    }
}

a2e_message! {
    /// mcp/resource/unsubscribe/req: end this agent's subscription to a URI.
    ResourceUnsubscribeRequest = "mcp/resource/unsubscribe/req" {
        #[schema(min_length = 1, required = true, default)]
        uri: String,
        server_id: String,
    }
}

a2e_response! {
    /// mcp/resource/unsubscribe/resp.
    ResourceUnsubscribeResponse = "mcp/resource/unsubscribe/resp" {
        ok: bool,
        server_id: String,
        error: String,
    }
}

a2e_message! {
    /// mcp/completion/req: suggestions for a prompt or resource-template argument.
    CompletionRequest = "mcp/completion/req" {
        /// Routed by the reference when empty.
        server_id: String,
        /// An MCP reference, exactly as MCP defines it: `{"type": "ref/prompt", "name": …}` or
        /// `{"type": "ref/resource", "uri": <the template>}`.
        #[serde(rename = "ref")]
        #[schema(value_type = HashMap<String, Value>, default)]
        reference: Value,
        argument: CompletionArgument,
        #[serde(skip_serializing_if = "Option::is_none")]
        context: Option<CompletionContext>,
    }
}

a2e_response! {
    /// mcp/completion/resp.
    CompletionResponse = "mcp/completion/resp" {
        server_id: String,
        values: Vec<String>,
        /// How many values there are in all, when the server says.
        #[serde(skip_serializing_if = "Option::is_none")]
        total: Option<u64>,
        has_more: bool,
    }
}

// ---- Prompts (4) ----

a2e_message! {
    /// mcp/prompt/list/req.
    PromptListRequest = "mcp/prompt/list/req" {
        server_id: String,
        cursor: String,
    }
}

a2e_response! {
    /// mcp/prompt/list/resp.
    PromptListResponse = "mcp/prompt/list/resp" {
        prompts: Vec<McpPrompt>,
        next_cursor: String,
        /// Servers left out of this page (beyond the seed): see `SkippedServer`.
        skipped_servers: Vec<SkippedServer>,
    }
}

a2e_message! {
    /// mcp/prompt/get/req: render a prompt template.
    PromptGetRequest = "mcp/prompt/get/req" {
        #[schema(min_length = 1, required = true, default)]
        name: String,
        #[schema(value_type = HashMap<String, Value>)]
        arguments: Map<String, Value>,
        server_id: String,
    }
}

a2e_response! {
    /// mcp/prompt/get/resp: LLM-ready messages.
    PromptGetResponse = "mcp/prompt/get/resp" {
        description: String,
        messages: Vec<McpPromptMessage>,
        server_id: String,
        error: String,
    }
}

// ---- Sampling (2) ----

a2e_message! {
    /// mcp/sample/req: a server asks the agent for an LLM completion.
    SamplingRequest = "mcp/sample/req" {
        server_id: String,
        /// The MCP JSON-RPC request id.
        mcp_request_id: String,
        /// Sampling messages, exactly as MCP defines them.
        #[schema(value_type = Vec<HashMap<String, Value>>)]
        messages: Vec<Value>,
        #[schema(value_type = HashMap<String, Value>)]
        model_preferences: Value = Value::Object(Map::new()),
        system_prompt: String,
        /// `none`, `thisServer` or `allServers`.
        include_context: String = "none",
        temperature: f64 = 1.0,
        max_tokens: u64 = 1024_u64,
        stop_sequences: Vec<String>,
        #[schema(value_type = HashMap<String, Value>)]
        metadata: Value = Value::Object(Map::new()),
    }
}

a2e_response! {
    /// mcp/sample/resp: the agent's completion (or refusal, in `error`).
    SamplingResponse = "mcp/sample/resp" {
        server_id: String,
        mcp_request_id: String,
        role: Role = Role::Assistant,
        /// One MCP content block, e.g. `{"type": "text", "text": "..."}`.
        #[schema(value_type = HashMap<String, Value>)]
        content: Value = Value::Object(Map::new()),
        model: String,
        /// `endTurn`, `stopSequence` or `maxTokens`.
        stop_reason: String,
        /// Set when the agent refuses.
        error: String,
    }
}

// ---- Roots (2) ----

a2e_message! {
    /// mcp/root/list/req: a server asks which roots the agent exposes.
    RootsListRequest = "mcp/root/list/req" {
        server_id: String,
        mcp_request_id: String,
    }
}

a2e_response! {
    /// mcp/root/list/resp: the roots the agent exposes.
    RootsListResponse = "mcp/root/list/resp" {
        server_id: String,
        mcp_request_id: String,
        roots: Vec<McpRoot>,
    }
}

a2e_response! {
    /// mcp/sample/ack: the answer was taken (202).
    SamplingAck = "mcp/sample/ack" {
        ok: bool,
    }
}

a2e_response! {
    /// mcp/root/list/ack: the answer was taken (202).
    RootsAck = "mcp/root/list/ack" {
        ok: bool,
    }
}

// ---- The agent's roots (beyond the seed) ----

a2e_message! {
    /// mcp/roots/get/req: the roots this agent exposes.
    RootsGetRequest = "mcp/roots/get/req" {}
}

a2e_response! {
    /// mcp/roots/get/resp.
    RootsGetResponse = "mcp/roots/get/resp" {
        roots: Vec<McpRoot>,
    }
}

a2e_message! {
    /// mcp/roots/set/req: replace the roots this agent exposes; its servers are told.
    RootsSetRequest = "mcp/roots/set/req" {
        roots: Vec<McpRoot>,
    }
}

a2e_response! {
    /// mcp/roots/set/resp.
    RootsSetResponse = "mcp/roots/set/resp" {
        ok: bool,
        roots: Vec<McpRoot>,
    }
}

// ---- Elicitation (beyond the seed) ----

a2e_message! {
    /// mcp/elicit/req: a server asks the agent (its user) for input.
    ElicitRequest = "mcp/elicit/req" {
        server_id: String,
        mcp_request_id: String,
        /// `form` (answer with `content` matching `requested_schema`) or `url` (open `url`).
        mode: String = "form",
        message: String,
        /// The JSON Schema of the form, as MCP defines it (form mode).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(value_type = Option<HashMap<String, Value>>)]
        requested_schema: Option<Value>,
        /// The page to open (url mode).
        #[serde(skip_serializing_if = "Option::is_none")]
        url: Option<String>,
    }
}

a2e_response! {
    /// mcp/elicit/resp: the agent's answer.
    ElicitResponse = "mcp/elicit/resp" {
        /// `accept`, `decline` or `cancel`.
        // None when absent, which is refused (422) as a value outside the set is.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(value_type = ElicitAction, required = true, default)]
        action: Option<ElicitAction>,
        /// The form's values (accept, form mode).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(value_type = Option<HashMap<String, Value>>)]
        content: Option<Value>,
    }
}

a2e_response! {
    /// mcp/elicit/ack: the answer was taken (202).
    ElicitAck = "mcp/elicit/ack" {
        ok: bool,
    }
}

// ---- Tools ----

a2e_message! {
    /// tool/list/req: the catalogue.
    ToolListRequest = "tool/list/req" {
        /// Only this server's tools; empty = all.
        server_id: String,
        /// `mcp` or `a2a`; empty = all.
        #[serde(with = "crate::a2e::empty_is_none")]
        #[schema(value_type = String)]
        source: Option<ToolSource>,
        cursor: String,
        /// Only this toolset's tools, as it shows them (beyond the seed).
        #[serde(skip_serializing_if = "String::is_empty")]
        toolset: String,
        /// Tools ranked by relevance to this query, best first, in one page (beyond the seed).
        #[serde(skip_serializing_if = "String::is_empty")]
        q: String,
        /// Most tools a query answers: 1 to 100, 10 when absent (beyond the seed).
        #[serde(skip_serializing_if = "Option::is_none")]
        limit: Option<u32>,
        /// `app` to list app-only tools too (MCP Apps: `_meta.ui.visibility` without
        /// `"model"`), which are left out for models otherwise (beyond the seed).
        #[serde(skip_serializing_if = "String::is_empty")]
        include: String,
    }
}

a2e_response! {
    /// tool/list/resp.
    ToolListResponse = "tool/list/resp" {
        tools: Vec<ToolInfo>,
        next_cursor: String,
    }
}

a2e_message! {
    /// tool/call/req: call a catalogue tool by its namespaced name.
    ToolCallRequest = "tool/call/req" {
        /// `{server_id}__{tool}` (or the short alias the catalogue shows for a longer one), an
        /// agent-bridge tool, or the name a toolset shows.
        name: String,
        #[schema(value_type = HashMap<String, Value>)]
        arguments: Map<String, Value>,
        /// The toolset `name` is a tool of (beyond the seed).
        #[serde(skip_serializing_if = "String::is_empty")]
        toolset: String,
        /// Seconds; bounded by the server's own `timeout`.
        #[serde(skip_serializing_if = "Option::is_none")]
        timeout: Option<f64>,
        /// Run the call as a task (beyond the seed): the answer is a 202 `task/create/resp` at
        /// once; follow it on `/v1/tasks/{task_id}` and the event stream.
        #[serde(skip_serializing_if = "Option::is_none")]
        task: Option<super::TaskParams>,
        /// The app the call comes from (MCP Apps), by the `ui://{server_id}/…` URI the bridge
        /// lists it under (beyond the seed). Needed to call an app-only tool, which only an app
        /// of the same server may call; a tool not visible to apps is refused with it.
        #[serde(skip_serializing_if = "String::is_empty")]
        app: String,
    }
}

a2e_response! {
    /// tool/call/resp: the MCP result. An upstream `isError: true` is a 200 with `is_error: true`.
    ToolCallResponse = "tool/call/resp" {
        name: String,
        server_id: String,
        /// MCP content blocks, exactly as MCP defines them.
        #[schema(value_type = Vec<HashMap<String, Value>>)]
        content: Vec<rmcp::model::ContentBlock>,
        #[serde(skip_serializing_if = "Option::is_none")]
        #[schema(value_type = Option<HashMap<String, Value>>)]
        structured_content: Option<Value>,
        is_error: bool,
    }
}

a2e_message! {
    /// tool/call/cancel/req (beyond the seed): cancel the caller's own call in flight, named by
    /// the `id` of its tool/call/req; its server is sent `notifications/cancelled`.
    ToolCallCancelRequest = "tool/call/cancel/req" {
        /// The `id` of the tool/call/req to cancel.
        call_id: String,
    }
}

a2e_response! {
    /// tool/call/cancel/resp: the call was cancelled; its own request answers `cancelled`.
    ToolCallCancelResponse = "tool/call/cancel/resp" {
        ok: bool,
        call_id: String,
    }
}

a2e_message! {
    /// mcp/tool/approve/req (beyond the seed): approve the current definition of a server's
    /// tool that changed since it was pinned (tool pinning).
    ToolApproveRequest = "mcp/tool/approve/req" {
        server_id: String,
        /// The upstream tool name (its catalogue name is accepted too).
        tool: String,
    }
}

a2e_response! {
    /// mcp/tool/approve/resp: the tool as the catalogue shows it now.
    ToolApproveResponse = "mcp/tool/approve/resp" {
        ok: bool,
        tool: ToolInfo,
        /// Whether a changed definition was waiting and is pinned now; `false` when the current
        /// definition was already the pinned one (nothing to approve, nothing changed).
        approved: bool,
    }
}

// ---- A2A agents (beyond the seed) ----

a2e_message! {
    /// a2a/agent/register/req: fetch an A2A agent's card and keep the agent.
    A2aRegisterRequest = "a2a/agent/register/req" {
        /// 8 hex characters when empty.
        agent_id: String,
        /// The agent's base URL; its card is at `/.well-known/agent-card.json`.
        #[schema(pattern = "^https?://[^/?#@]+", required = true, default)]
        url: String,
        /// Headers sent to the agent (values are secret: shown as `***`).
        headers: std::collections::BTreeMap<String, String>,
    }
}

a2e_response! {
    /// a2a/agent/register/resp.
    A2aRegisterResponse = "a2a/agent/register/resp" {
        ok: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        agent: Option<A2aAgentInfo>,
    }
}

a2e_message! {
    /// a2a/agent/list/req: the registered agents, optionally only those with one of `skill_tags`.
    A2aListRequest = "a2a/agent/list/req" {
        skill_tags: Vec<String>,
    }
}

a2e_response! {
    /// a2a/agent/list/resp.
    A2aListResponse = "a2a/agent/list/resp" {
        agents: Vec<A2aAgentInfo>,
    }
}

a2e_message! {
    /// a2a/agent/get/req.
    A2aGetRequest = "a2a/agent/get/req" {
        agent_id: String,
    }
}

a2e_response! {
    /// a2a/agent/get/resp.
    A2aGetResponse = "a2a/agent/get/resp" {
        // No schema default: an answer's field has none to give, and the default agent's
        // `card` (null) is not the object its schema says.
        #[schema(default)]
        agent: A2aAgentInfo,
    }
}

a2e_message! {
    /// a2a/agent/refresh/req: fetch the agent's card again.
    A2aRefreshRequest = "a2a/agent/refresh/req" {
        agent_id: String,
    }
}

a2e_response! {
    /// a2a/agent/refresh/resp.
    A2aRefreshResponse = "a2a/agent/refresh/resp" {
        ok: bool,
        // No schema default: an answer's field has none to give, and the default agent's
        // `card` (null) is not the object its schema says.
        #[schema(default)]
        agent: A2aAgentInfo,
    }
}

a2e_message! {
    /// a2a/agent/unregister/req.
    A2aUnregisterRequest = "a2a/agent/unregister/req" {
        agent_id: String,
    }
}

a2e_response! {
    /// a2a/agent/unregister/resp.
    A2aUnregisterResponse = "a2a/agent/unregister/resp" {
        ok: bool,
        agent_id: String,
    }
}

a2e_message! {
    /// a2a/task/cancel/req: cancel an A2A task the caller started through the bridge.
    A2aTaskCancelRequest = "a2a/task/cancel/req" {
        agent_id: String,
        task_id: String,
    }
}

a2e_response! {
    /// a2a/task/cancel/resp: the task as the agent has it once cancelled.
    A2aTaskCancelResponse = "a2a/task/cancel/resp" {
        ok: bool,
        agent_id: String,
        task_id: String,
        /// The A2A task, as the agent answers it (camelCase, as A2A defines it).
        #[schema(value_type = HashMap<String, Value>)]
        task: Value = Value::Object(Map::new()),
    }
}

a2e_message! {
    /// mcp/server/import/req: the server list of a Claude Desktop / Claude Code / Cursor / Cline
    /// (`mcpServers`) or VS Code (`servers`) configuration, as it is in that file.
    ServerImportRequest = "mcp/server/import/req" {
        #[serde(rename = "mcpServers")]
        #[schema(value_type = HashMap<String, Value>)]
        mcp_servers: serde_json::Map<String, Value>,
        #[schema(value_type = HashMap<String, Value>)]
        servers: serde_json::Map<String, Value>,
        /// Replace a server already registered under the same id with a different config (the
        /// owner's or an admin's). Without it such an entry fails with `code: conflict` and
        /// nothing stored changes.
        replace: bool,
    }
}

a2e_response! {
    /// mcp/server/import/resp: what happened to each server.
    ServerImportResponse = "mcp/server/import/resp" {
        results: Vec<ImportResult>,
    }
}
