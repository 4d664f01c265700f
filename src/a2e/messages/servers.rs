//! The server-management messages: `mcp/server/*` of the seed (list, register, unregister,
//! push) and beyond it (get, update, reconnect, import).

use serde_json::{Map, Value};

use crate::a2e::{ImportResult, McpProtocol, McpServerConfig, McpServerInfo, McpServerStatus};
use crate::a2e::{OAuthConfig, Patch};
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
        #[serde(deserialize_with = "crate::a2e::objects::object")]
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
        #[serde(
            skip_serializing_if = "Patch::is_absent",
            deserialize_with = "crate::a2e::objects::patch_object"
        )]
        #[schema(value_type = Option<OAuthConfig>, nullable)]
        auth: Patch<OAuthConfig>,
        /// The whole `identity` replaced; `null` removes it.
        #[serde(
            skip_serializing_if = "Patch::is_absent",
            deserialize_with = "crate::a2e::objects::patch_object"
        )]
        #[schema(value_type = Option<crate::a2e::UpstreamIdentity>, nullable)]
        identity: Patch<crate::a2e::UpstreamIdentity>,
    }
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
