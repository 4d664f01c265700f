//! The tool messages: `tool/list` and `tool/call` of the seed, and beyond it a call's cancel
//! and the approval of a changed tool (`mcp/tool/approve`).

use serde_json::{Map, Value};

use crate::a2e::{ToolInfo, ToolSource};
use crate::a2e::{a2e_message, a2e_response};

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
        #[serde(
            skip_serializing_if = "Option::is_none",
            deserialize_with = "crate::a2e::objects::optional_object"
        )]
        task: Option<crate::a2e::TaskParams>,
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
