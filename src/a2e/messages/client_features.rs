//! What a server asks of the agent, MCP's client features: sampling (`mcp/sample`), roots
//! (`mcp/root/list`, and the agent's own `mcp/roots/get|set`) and elicitation (`mcp/elicit`).

use serde_json::{Map, Value};

use crate::a2e::{ElicitAction, McpRoot, Role};
use crate::a2e::{a2e_message, a2e_response};

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
        #[serde(deserialize_with = "crate::a2e::objects::objects")]
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
        #[serde(deserialize_with = "crate::a2e::objects::objects")]
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
