//! The seven A2E data models (MCPServerConfig, MCPServerInfo, MCPResource, MCPResourceContent,
//! MCPPrompt, MCPPromptMessage, MCPRoot) and the enums they use.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use super::IdentityProvider;
use super::{
    A2aBinding, A2aProtocol, ContentKind, ImportAction, McpProtocol, OAuthGrant, OAuthKind, Role,
    TokenEndpointAuth, ToolSource,
};

/// What API responses show in place of a secret value (`env` and `headers` values, and the
/// `client_secret` and `private_key` of `auth`).
pub const REDACTED: &str = "***";

/// How mcp-bridge reaches an MCP server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum McpTransport {
    /// A child process speaking newline-delimited JSON-RPC on stdin/stdout.
    #[default]
    Stdio,
    /// Streamable HTTP.
    Http,
    /// Legacy HTTP+SSE.
    Sse,
    /// JSON-RPC text frames over WebSocket.
    Ws,
}

impl McpTransport {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stdio => "stdio",
            Self::Http => "http",
            Self::Sse => "sse",
            Self::Ws => "ws",
        }
    }
}

/// Connection state of a registered server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum McpServerStatus {
    #[default]
    Connecting,
    Ready,
    Error,
    Disconnected,
    /// The server needs an OAuth authorization a person has to give
    /// (`POST /v1/servers/{server_id}/authorize`).
    #[serde(rename = "auth_required")]
    AuthRequired,
}

impl McpServerStatus {
    /// Every status, in the order the documentation lists them.
    pub const ALL: [Self; 5] = [
        Self::Connecting,
        Self::Ready,
        Self::Error,
        Self::Disconnected,
        Self::AuthRequired,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Connecting => "connecting",
            Self::Ready => "ready",
            Self::Error => "error",
            Self::Disconnected => "disconnected",
            Self::AuthRequired => "auth_required",
        }
    }
}

/// OAuthConfig: how the bridge authorizes itself to an `http`, `sse` or `ws` server with OAuth 2.1
/// (`auth` of MCPServerConfig). Without it, a server that answers 401 with
/// `WWW-Authenticate: Bearer` is treated as `authorization_code` with discovery.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct OAuthConfig {
    /// Always `oauth2`.
    #[serde(rename = "type")]
    pub kind: OAuthKind,
    /// `authorization_code` (a person approves once; the default), `client_credentials`,
    /// `token_exchange` (each calling agent's token exchanged for one of its own, RFC 8693), or
    /// `id_jag` (enterprise-managed authorization: an identity assertion exchanged at `idp`).
    #[serde(default)]
    pub grant_type: OAuthGrant,
    /// A client pre-registered with the authorization server; when absent the bridge uses its
    /// client ID metadata document or registers itself dynamically.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// The secret of `client_id` (secret: shown as `***`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// Scopes to ask for; when empty, those the server names in `WWW-Authenticate`, else its
    /// `scopes_supported`, else none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// How to authenticate at the token endpoint; by default what the client registration says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<TokenEndpointAuth>,
    /// PEM private key (RSA or EC) signing the client assertion of `private_key_jwt`
    /// (secret: shown as `***`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_key: Option<String>,
    /// Each agent authorizes for itself and is served over its own upstream session with its own
    /// token (`authorization_code` only).
    #[serde(default)]
    pub per_agent: bool,
    /// `token_exchange`: the token endpoint; by default found by discovery, as for the other
    /// grants.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    /// `token_exchange`: the `audience` asked for (a logical name of the server).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<String>,
    /// `token_exchange`: the `resource` asked for (RFC 8707); by default the server's `url`
    /// when no `audience` is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// `id_jag`: the identity provider the identity assertion is exchanged at for an ID-JAG.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idp: Option<IdentityProvider>,
    /// `id_jag`: the identity assertion (an ID token of the identity provider) every ID-JAG of
    /// the server is asked with (secret: shown as `***`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity_assertion: Option<String>,
}

/// The secrets never appear in a log line, even when a config is printed whole.
impl std::fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let shown = self.redacted();
        f.debug_struct("OAuthConfig")
            .field("kind", &shown.kind)
            .field("grant_type", &shown.grant_type)
            .field("client_id", &shown.client_id)
            .field("client_secret", &shown.client_secret)
            .field("scopes", &shown.scopes)
            .field(
                "token_endpoint_auth_method",
                &shown.token_endpoint_auth_method,
            )
            .field("private_key", &shown.private_key)
            .field("per_agent", &shown.per_agent)
            .field("token_endpoint", &shown.token_endpoint)
            .field("audience", &shown.audience)
            .field("resource", &shown.resource)
            .field("idp", &shown.idp)
            .field("identity_assertion", &shown.identity_assertion)
            .finish()
    }
}

impl OAuthConfig {
    /// The same settings with `client_secret` and `private_key` shown as `***` when set.
    pub fn redacted(&self) -> Self {
        let hide = |value: &Option<String>| value.as_ref().map(|_| REDACTED.to_owned());
        Self {
            client_secret: hide(&self.client_secret),
            private_key: hide(&self.private_key),
            identity_assertion: hide(&self.identity_assertion),
            idp: self.idp.clone().map(|idp| IdentityProvider {
                client_secret: hide(&idp.client_secret),
                ..idp
            }),
            ..self.clone()
        }
    }

    /// These settings as given in a change, where a secret sent back as `***` (as it was shown)
    /// keeps the one `stored` holds.
    pub fn keeping_secrets(mut self, stored: Option<&Self>) -> Self {
        let keep = |given: &mut Option<String>, stored: Option<&String>| {
            if given.as_deref() == Some(REDACTED)
                && let Some(stored) = stored
            {
                *given = Some(stored.clone());
            }
        };
        keep(
            &mut self.client_secret,
            stored.and_then(|s| s.client_secret.as_ref()),
        );
        keep(
            &mut self.private_key,
            stored.and_then(|s| s.private_key.as_ref()),
        );
        keep(
            &mut self.identity_assertion,
            stored.and_then(|s| s.identity_assertion.as_ref()),
        );
        if let Some(idp) = &mut self.idp {
            keep(
                &mut idp.client_secret,
                stored.and_then(|s| s.idp.as_ref()?.client_secret.as_ref()),
            );
        }
        self
    }

    /// The secret values: `client_secret`, and `private_key` whole and line by line (a log line
    /// may hold part of it).
    pub fn secret_values(&self) -> Vec<String> {
        let mut secrets: Vec<String> = self.client_secret.iter().cloned().collect();
        secrets.extend(self.identity_assertion.iter().cloned());
        secrets.extend(self.idp.iter().filter_map(|idp| idp.client_secret.clone()));
        if let Some(key) = &self.private_key {
            secrets.push(key.clone());
            secrets.extend(
                key.lines()
                    .map(str::trim)
                    .filter(|line| !line.is_empty() && !line.starts_with("-----"))
                    .map(str::to_owned),
            );
        }
        secrets
    }
}

fn default_timeout() -> u64 {
    300
}
fn default_connect_timeout() -> u64 {
    30
}
fn default_true() -> bool {
    true
}

/// MCPServerConfig: how to reach one MCP server and what of it to expose.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct McpServerConfig {
    /// Unique server identifier; 8 hex characters are generated when empty.
    #[serde(default)]
    pub server_id: String,
    /// Display name.
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub transport: McpTransport,
    /// Stdio command and its arguments.
    #[serde(default)]
    pub cmd: Vec<String>,
    /// Working directory of the stdio command.
    #[serde(default)]
    pub cwd: String,
    /// Environment variables of the stdio command (values are secret: shown as `***`).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// URL of an `http`, `sse` or `ws` server.
    #[serde(default)]
    pub url: String,
    /// HTTP headers sent to an `http`, `sse` or `ws` server (values are secret: shown as `***`).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Request timeout in seconds.
    #[serde(default = "default_timeout")]
    #[schema(minimum = 1, maximum = 86400)]
    pub timeout: u64,
    /// Bound on connecting and initialising, in seconds (the smaller of this and `timeout` applies).
    #[serde(default = "default_connect_timeout")]
    #[schema(minimum = 1, maximum = 86400)]
    pub connect_timeout: u64,
    /// Reconnect on its own when the connection drops.
    #[serde(default = "default_true")]
    pub auto_reconnect: bool,
    /// How to start the session: `2025-11-25` (the `initialize` handshake, the default),
    /// `2026-07-28` (stateless, `server/discover`) or `auto` (discover, falling back to
    /// `initialize`; a silent older server costs up to 10 s).
    #[serde(default)]
    pub protocol_version: McpProtocol,
    /// Upstream tool names exposed (exact match); empty exposes all.
    #[serde(default)]
    pub tool_allow_list: Vec<String>,
    /// Resource URIs exposed: exact, or a prefix when an entry ends with `*`; empty exposes all.
    #[serde(default)]
    pub resource_allow_list: Vec<String>,
    /// OAuth 2.1 to an `http`, `sse` or `ws` server (`client_secret` and `private_key` are
    /// secret: shown as `***`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::objects::optional_object"
    )]
    pub auth: Option<OAuthConfig>,
    /// The calling agent's identity as headers to an `http`, `sse` or `ws` server (one
    /// connection per agent).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::objects::optional_object"
    )]
    pub identity: Option<super::UpstreamIdentity>,
}

impl Default for McpServerConfig {
    fn default() -> Self {
        Self {
            server_id: String::new(),
            name: String::new(),
            transport: McpTransport::default(),
            cmd: Vec::new(),
            cwd: String::new(),
            env: BTreeMap::new(),
            url: String::new(),
            headers: BTreeMap::new(),
            timeout: default_timeout(),
            connect_timeout: default_connect_timeout(),
            auto_reconnect: true,
            protocol_version: McpProtocol::default(),
            tool_allow_list: Vec::new(),
            resource_allow_list: Vec::new(),
            auth: None,
            identity: None,
        }
    }
}

impl McpServerConfig {
    /// The same config with every secret value replaced by `***`: `env` and `headers` values,
    /// the secrets of `auth`, and a password or query values in `url`.
    pub fn redacted(&self) -> Self {
        let hide = |map: &BTreeMap<String, String>| {
            map.keys()
                .map(|k| (k.clone(), REDACTED.to_owned()))
                .collect()
        };
        Self {
            env: hide(&self.env),
            headers: hide(&self.headers),
            url: redact_url(&self.url),
            cmd: self.cmd.iter().map(|arg| redact_arg(arg)).collect(),
            auth: self.auth.as_ref().map(OAuthConfig::redacted),
            ..self.clone()
        }
    }

    /// Every secret value this config holds: `env` and `headers` values (and the credential of a
    /// `Scheme credential` header), the secrets of `auth`, and the passwords and query values of
    /// `url` and of URLs in `cmd`. Values shorter than [`MIN_SECRET_LEN`] are left out (they would blank out text).
    pub fn secret_values(&self) -> Vec<String> {
        let mut secrets: Vec<String> = self.env.values().cloned().collect();
        for value in self.headers.values() {
            secrets.push(value.clone());
            if let Some((_, credential)) = value.trim().split_once(' ') {
                secrets.push(credential.trim().to_owned());
            }
        }
        secrets.extend(self.auth.iter().flat_map(OAuthConfig::secret_values));
        secrets.extend(url_secrets(&self.url));
        for arg in &self.cmd {
            for (start, end) in embedded_urls(arg) {
                secrets.extend(url_secrets(&arg[start..end]));
            }
        }
        secrets.retain(|s| s.len() >= MIN_SECRET_LEN);
        // The longest first, so a secret containing another is replaced whole.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        secrets
    }

    /// `text` (an error, a log line, a stderr line) with this config's secrets hidden: see
    /// [`redact_text`].
    pub fn redact_text(&self, text: &str) -> String {
        redact_text(text, &self.secret_values())
    }

    /// The bound on connecting and initialising: the smaller of `connect_timeout` and `timeout`.
    pub fn connect_bound(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.connect_timeout.min(self.timeout))
    }
}

/// Where the URLs in `text` are (`scheme://…` up to a space, a quote or a bracket).
fn embedded_urls(text: &str) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find("://").map(|i| from + i) {
        // The scheme: the letters, digits and `+-.` just before `://`.
        let start = text[from..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || "+-.".contains(c)))
            .map_or(from, |i| from + i + 1);
        let end = text[at..]
            .find(|c: char| c.is_whitespace() || "\"'<>()[]{}`,|".contains(c))
            .map_or(text.len(), |i| at + i);
        found.push((start, end));
        from = end;
    }
    found
}

/// A `cmd` argument as shown: the URLs in it (`postgresql://app:pw@db`, `DB=https://…?key=…`)
/// without their password and query values.
pub fn redact_arg(arg: &str) -> String {
    redact_text(arg, &[])
}

/// Shortest value treated as a secret when hiding secrets in free text.
pub const MIN_SECRET_LEN: usize = 4;

/// The password and query values of `url`, as written and decoded (none when it is no URL).
fn url_secrets(url: &str) -> Vec<String> {
    let Ok(parsed) = url::Url::parse(url) else {
        return Vec::new();
    };
    let mut secrets = Vec::new();
    if let Some(password) = parsed.password() {
        secrets.push(password.to_owned());
        secrets.push(percent_decode(password));
    }
    if let Some(query) = parsed.query() {
        for pair in query.split('&') {
            if let Some((_, value)) = pair.split_once('=') {
                secrets.push(value.to_owned());
            }
        }
        secrets.extend(parsed.query_pairs().map(|(_, v)| v.into_owned()));
    }
    secrets
}

fn percent_decode(text: &str) -> String {
    url::form_urlencoded::parse(format!("x={text}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

/// `text` with every URL in it shown as [`redact_url`] shows it (password and query values
/// `***`), and every one of `secrets` (see [`McpServerConfig::secret_values`]) replaced by `***`
/// wherever it appears. Applied where an upstream's error text is made, so what reaches an
/// agent or the log never holds a configured secret.
pub fn redact_text(text: &str, secrets: &[String]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut done = 0;
    for (start, end) in embedded_urls(text) {
        out.push_str(&text[done..start]);
        out.push_str(&redact_url(&text[start..end]));
        done = end;
    }
    out.push_str(&text[done..]);
    for secret in secrets.iter().filter(|s| s.len() >= MIN_SECRET_LEN) {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), REDACTED);
        }
    }
    out
}

/// A URL with its password and its query values replaced by `***` (it may carry credentials).
pub fn redact_url(url: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(url) else {
        return url.to_owned();
    };
    if parsed.password().is_some() {
        let _ = parsed.set_password(Some(REDACTED));
    }
    if parsed.query().is_some() {
        let pairs: Vec<(String, String)> = parsed
            .query_pairs()
            .map(|(k, _)| (k.into_owned(), REDACTED.to_owned()))
            .collect();
        parsed.query_pairs_mut().clear().extend_pairs(pairs);
    }
    if parsed.as_str() == url {
        url.to_owned()
    } else {
        parsed.to_string()
    }
}

/// MCPServerInfo: a registered server as it is now.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default)]
pub struct McpServerInfo {
    pub server_id: String,
    pub name: String,
    pub transport: McpTransport,
    pub status: McpServerStatus,
    /// MCP protocol version negotiated with the server.
    pub mcp_version: String,
    /// The server software's own name.
    pub server_name: String,
    pub server_version: String,
    /// Tools exposed in the catalogue (after the allow list).
    pub tools_count: u64,
    pub resources_count: u64,
    pub prompts_count: u64,
    /// Latency of the last ping, milliseconds.
    pub last_ping_ms: f64,
    /// Last error, empty when none.
    pub error: String,
    /// When the current connection was established (seconds since the epoch), 0 when none.
    pub connected_at: f64,
    /// Across replicas: the replica that holds the server's connection (absent on a single
    /// replica, empty while none holds it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica: Option<String>,
}

/// MCPResource: a resource a server lists.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default)]
pub struct McpResource {
    pub uri: String,
    pub name: String,
    pub description: String,
    pub mime_type: String,
    pub server_id: String,
    /// MCP annotations, as MCP defines them.
    pub annotations: BTreeMap<String, Value>,
    /// MCP `_meta`, as the server sent it (for MCP Apps: `ui` with `csp`, `permissions`, …).
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<HashMap<String, Value>>)]
    pub meta: Option<Value>,
}

/// A resource template a server offers (beyond the seed, shaped like MCPResource).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default)]
pub struct McpResourceTemplate {
    /// An RFC 6570 URI template, e.g. `file:///{path}`.
    pub uri_template: String,
    pub name: String,
    pub description: String,
    pub mime_type: String,
    pub server_id: String,
    pub annotations: BTreeMap<String, Value>,
    /// MCP `_meta`, as the server sent it (for MCP Apps: `ui` with `csp`, `permissions`, …).
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<HashMap<String, Value>>)]
    pub meta: Option<Value>,
}

/// A server a merged listing left out: it did not answer within the listing's bound
/// (`MCP_BRIDGE_LIST_TIMEOUT`) or failed; its entries are missing from this page.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default)]
pub struct SkippedServer {
    pub server_id: String,
    /// Why, in words.
    pub reason: String,
}

/// MCPResourceContent: one block of a resource's contents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default)]
pub struct McpResourceContent {
    pub uri: String,
    pub mime_type: String,
    pub text: String,
    /// Base64-encoded binary content.
    pub blob: String,
    /// `text` or `blob`.
    #[serde(rename = "type")]
    pub kind: ContentKind,
    /// MCP `_meta`, as the server sent it: an MCP App's HTML carries `ui` (`csp`, `permissions`, …) here.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<HashMap<String, Value>>)]
    pub meta: Option<Value>,
}

impl Default for McpResourceContent {
    fn default() -> Self {
        Self {
            uri: String::new(),
            mime_type: "text/plain".into(),
            text: String::new(),
            blob: String::new(),
            kind: ContentKind::Text,
            meta: None,
        }
    }
}

/// One argument of a prompt template.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default)]
pub struct McpPromptArgument {
    pub name: String,
    pub description: String,
    pub required: bool,
}

/// MCPPrompt: a prompt template a server offers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default)]
pub struct McpPrompt {
    pub name: String,
    pub description: String,
    pub server_id: String,
    pub arguments: Vec<McpPromptArgument>,
}

/// MCPPromptMessage: one rendered message of a prompt.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default)]
pub struct McpPromptMessage {
    /// `user` or `assistant`.
    pub role: Role,
    /// One MCP content block, exactly as MCP defines it.
    #[schema(value_type = HashMap<String, Value>, default)]
    pub content: Value,
}

/// MCPRoot: a filesystem root an agent exposes to servers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(default)]
pub struct McpRoot {
    /// A `file://` URI.
    #[schema(pattern = "^file://", required = true, default)]
    pub uri: String,
    pub name: String,
}

/// The argument being completed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(default)]
pub struct CompletionArgument {
    pub name: String,
    /// What has been typed so far.
    pub value: String,
}

/// Arguments already filled in, which a server may use to narrow its suggestions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(default)]
pub struct CompletionContext {
    pub arguments: BTreeMap<String, String>,
}

/// One entry of the tool catalogue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default)]
pub struct ToolInfo {
    /// Namespaced name, `{server_id}__{tool}`; past `MCP_BRIDGE_MAX_TOOL_NAME` characters its
    /// short alias (the start of that name, `_` and hex digits of its SHA-256).
    pub name: String,
    pub server_id: String,
    /// `mcp` for a tool of an MCP server, `a2a` for an agent-bridge tool.
    pub source: ToolSource,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub description: String,
    /// JSON Schema of the arguments, as MCP defines it.
    #[schema(value_type = HashMap<String, Value>, default)]
    pub input_schema: Value,
    /// JSON Schema of the structured result, when the tool declares one.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<HashMap<String, Value>>)]
    pub output_schema: Option<Value>,
    /// MCP tool annotations.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<HashMap<String, Value>>)]
    pub annotations: Option<Value>,
    /// MCP `_meta`, as the server sent it; a `ui://` URI in `ui.resourceUri` (and the deprecated
    /// `ui/resourceUri`) in the form the bridge lists it, `ui://{server_id}/{rest}`.
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<HashMap<String, Value>>)]
    pub meta: Option<Value>,
}

/// An empty entry; its input schema an object schema, as MCP requires of every tool.
impl Default for ToolInfo {
    fn default() -> Self {
        Self {
            name: String::new(),
            server_id: String::new(),
            source: ToolSource::default(),
            title: None,
            description: String::new(),
            input_schema: serde_json::json!({"type": "object"}),
            output_schema: None,
            annotations: None,
            meta: None,
        }
    }
}

/// A registered A2A agent (beyond the seed).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default)]
pub struct A2aAgentInfo {
    pub agent_id: String,
    pub name: String,
    pub description: String,
    pub version: String,
    /// Where its card was fetched from.
    pub url: String,
    /// Where JSON-RPC goes, as its card says.
    pub endpoint: String,
    /// `1.0` or `0.3`.
    pub protocol_version: A2aProtocol,
    /// How the bridge calls it: `JSONRPC`, or `HTTP+JSON` when that is the only binding of a
    /// 1.0 card the bridge speaks.
    pub binding: A2aBinding,
    pub skill_tags: Vec<String>,
    /// The agent that registered it.
    pub owner: String,
    /// Headers sent to it (values shown as `***`).
    pub headers: BTreeMap<String, String>,
    /// The agent card as last fetched.
    #[schema(value_type = HashMap<String, Value>, default)]
    pub card: Value,
}

/// What happened to one server of an import (beyond the seed).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default)]
pub struct ImportResult {
    pub server_id: String,
    /// `created`, `replaced`, `unchanged`, `skipped` (`disabled` in the file) or `failed`.
    pub action: ImportAction,
    /// Whether the bridge now has what the entry asks for (`skipped` included).
    pub ok: bool,
    /// Why it failed or was skipped.
    pub error: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<crate::a2e::ErrorCode>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<McpServerInfo>,
}
