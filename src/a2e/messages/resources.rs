//! The resource messages: `mcp/resource/*` (list, read, subscribe of the seed; templates and
//! unsubscribe beyond it) and `mcp/completion` of an argument.

use serde_json::Value;

use crate::a2e::{CompletionArgument, CompletionContext, McpResource, McpResourceContent};
use crate::a2e::{McpResourceTemplate, SkippedServer};
use crate::a2e::{a2e_message, a2e_response};

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
        #[serde(deserialize_with = "crate::a2e::objects::object")]
        argument: CompletionArgument,
        #[serde(
            skip_serializing_if = "Option::is_none",
            deserialize_with = "crate::a2e::objects::optional_object"
        )]
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
