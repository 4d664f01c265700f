//! The prompt messages: `mcp/prompt/list` and `mcp/prompt/get`.

use serde_json::{Map, Value};

use crate::a2e::{McpPrompt, McpPromptMessage, SkippedServer};
use crate::a2e::{a2e_message, a2e_response};

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
