//! The settings themselves: each field with what it means and its default (file keys are the
//! variable names), and the values they come to (the listen address, the database URL, the keys).

use std::net::SocketAddr;
use std::path::PathBuf;

use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;

use super::{ConfigError, DEFAULT_MAX_MESSAGE_BYTES, MAX_TOOL_NAME, invalid};

/// The service's settings. File keys are the variable names without `MCP_BRIDGE_`, in lower case.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub bind: String,
    pub data_dir: PathBuf,
    pub database_url: Option<String>,
    pub jwt_secret: Option<SecretString>,
    pub jwt_public_key: Option<PathBuf>,
    pub jwt_issuer: Option<String>,
    /// Where an identity provider publishes the keys agents' tokens are signed with (a JWKS).
    pub jwt_jwks_url: Option<String>,
    /// Whether to find that URL in the issuer's OpenID Connect discovery document.
    pub jwt_discovery: bool,
    /// The claim, as a dotted path, that holds a token's roles (`realm_access.roles`, `groups`).
    pub jwt_roles_claim: String,
    /// The role that makes an agent an admin.
    pub jwt_admin_role: String,
    /// The base URL clients reach the bridge at (no trailing `/`), named in the metadata it
    /// publishes; by default each request's own `Host`.
    pub public_url: Option<String>,
    /// An https URL where the operator hosts the bridge's OAuth client ID metadata document;
    /// by default `{public_url}/oauth/client-metadata.json` when the public URL is https.
    pub oauth_client_metadata_url: Option<String>,
    pub jwt_audience: Option<String>,
    pub jwt_leeway_secs: u64,
    /// 64 hex digits: the key that seals `env` and `headers` values at rest.
    pub secrets_key: Option<SecretString>,
    pub mcp_allowed_hosts: Vec<String>,
    pub stdio_allowed_commands: Vec<String>,
    /// Variables of `STDIO_LOADER_ENV` a stdio server's `env` may set nonetheless.
    pub stdio_allowed_env: Vec<String>,
    pub allow_private_upstreams: bool,
    /// Whether the two shortcuts past rmcp are taken (`MCP_BRIDGE_FAST_PATHS`): a plain
    /// upstream tool call posted without rmcp's client (`upstream/direct.rs`), and a 2025-11-25
    /// session's plain `/mcp` call answered without rmcp's server (`mcp_server/direct.rs`).
    /// Off sends every call through rmcp on both sides, to show the shortcuts change nothing.
    pub fast_paths: bool,
    pub log: String,
    /// `MCP_BRIDGE_LOG_FORMAT`: text lines (the default) or one JSON object a line.
    pub log_format: LogFormat,
    /// Largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// Largest message taken from an upstream server, in bytes, on every transport.
    pub max_message_bytes: usize,
    /// Audit entries older than this many days are deleted (0: kept whatever their age).
    pub audit_retention_days: u64,
    /// Most audit entries kept, the newest (0: no bound on their number).
    pub audit_max_rows: u64,
    /// Longest wait before a shutdown stops waiting for open requests, in seconds.
    pub shutdown_grace_secs: u64,
    /// Most entries in one page of resources, templates or prompts.
    pub page_size: usize,
    /// Seconds a merged page of resources, templates or prompts may take: servers that have
    /// not answered by then are left out of it (and named).
    pub list_timeout: u64,
    /// Events kept per agent for `Last-Event-ID` replay.
    pub replay_buffer: usize,
    /// Bytes of event data kept per agent for replay.
    pub replay_agent_bytes: usize,
    /// Bytes of event data kept for replay across all agents (a shared payload counted once).
    pub replay_bytes: usize,
    /// Seconds between keep-alive comments on event streams.
    pub keepalive_secs: u64,
    /// First reconnect delay in milliseconds (doubling per failure, with jitter).
    pub reconnect_base_ms: u64,
    /// Longest reconnect delay in seconds.
    pub reconnect_max_secs: u64,
    /// Seconds between health pings of each live server; 0 turns pings off.
    pub ping_interval_secs: u64,
    /// Seconds a ping may take before the server counts as dead.
    pub ping_timeout_secs: u64,
    /// Requests per second each agent may make on `/v1` and `/mcp`; 0: no rate limit.
    pub agent_rate: u32,
    /// Requests an agent may make at once above its rate; 0: twice the rate.
    pub agent_burst: u32,
    /// Requests each agent may have in flight; 0: no limit.
    pub agent_concurrency: usize,
    /// Servers each agent (not an admin) may have registered; 0: no limit.
    pub agent_servers: usize,
    /// Tasks each agent may have that have not finished; 0: no limit.
    pub agent_tasks: usize,
    /// Bytes of task results stored per agent (the oldest are dropped for new ones); 0: no limit.
    pub agent_task_result_bytes: usize,
    /// Event streams each agent may have open at once; 0: no limit.
    pub agent_event_streams: usize,
    /// `/mcp` sessions each agent may have open at once; 0: no limit.
    pub agent_mcp_sessions: usize,
    /// Across replicas, seconds a shared `/mcp` session lives unused (an open GET stream uses it).
    pub mcp_session_idle_secs: u64,
    /// Client connections open at once; past it, new ones wait in the listen backlog.
    pub max_connections: usize,
    /// Servers connecting at once (at a restart, after an outage): more wait their turn, so a
    /// thousand stored servers do not all hit the store and the machine together.
    pub connect_concurrency: usize,
    /// Seconds a client may take to send a request's headers (an idle kept-alive connection
    /// is closed after as long).
    pub header_timeout_secs: u64,
    /// Seconds a client may take to send a request's body.
    pub body_timeout_secs: u64,
    /// No token check on `/mcp` (loopback binds only; calls run as `anonymous`). File key
    /// `mcp_auth = "off"`, as the variable.
    #[serde(rename = "mcp_auth", deserialize_with = "auth_off")]
    pub mcp_auth_off: bool,
    /// The server whose tools and prompts `/mcp` shows without the `{server_id}__` prefix.
    pub mcp_unprefixed_server: Option<String>,
    /// Longest tool name the catalogue shows: a longer `{server_id}__{tool}` gets a short alias.
    pub max_tool_name: usize,
    /// What a change of a tool's definition since it was first seen does.
    pub tool_pinning: ToolPinning,
    /// The A2A agent registry and the agent-bridge tools.
    pub a2a_enabled: bool,
    /// Servers registered (or replaced) at every start, as an import would (file only).
    pub servers: Vec<crate::a2e::McpServerConfig>,
    /// NATS, where replicas meet (with a PostgreSQL store); none: a single replica.
    pub nats_url: Option<String>,
    /// The prefix of every NATS subject and stream name: replicas with the same one meet.
    pub nats_prefix: String,
    /// NATS credentials: a user and password (or in the URL), an NKey seed (or a file
    /// holding it), or a decentralised-auth `.creds` file; one kind at most.
    pub nats_user: Option<String>,
    pub nats_password: Option<SecretString>,
    pub nats_nkey_seed: Option<SecretString>,
    pub nats_nkey_seed_file: Option<PathBuf>,
    pub nats_creds_file: Option<PathBuf>,
    /// TLS to NATS: a CA to trust, a client certificate and its key (PEM files).
    pub nats_tls_ca: Option<PathBuf>,
    pub nats_tls_cert: Option<PathBuf>,
    pub nats_tls_key: Option<PathBuf>,
    /// 64 hex digits: the key messages between replicas are sealed with (by default one
    /// derived from `secrets_key`).
    pub bus_key: Option<SecretString>,
    /// Bytes of events a replica keeps for NATS while it is away (the oldest dropped past it).
    pub bus_outbox_bytes: usize,
    /// This replica's name; by default generated once and kept in the data dir.
    pub replica_id: Option<String>,
    /// Seconds a replica's hold on a server lasts without a heartbeat.
    pub lease_secs: u64,
    /// What a caller that no policy's `allow` rule matches sees.
    pub access_default: AccessDefault,
    /// Access policies of the config file (read at start; `PUT /v1/policies` cannot change them).
    pub policies: Vec<crate::a2e::NamedPolicy>,
    /// Toolsets of the config file, likewise.
    pub toolsets: Vec<crate::a2e::NamedToolset>,
    /// Interceptors asked before and after tool calls, resource reads and prompt gets (file
    /// only, `[[hooks]]`).
    pub hooks: Vec<super::HookConfig>,
}

/// How log lines are written on stderr.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// `2026-12-05T10:00:00Z  INFO request{…}: answered status=200`.
    #[default]
    Text,
    /// One JSON object a line, for log shippers.
    Json,
}

/// `MCP_BRIDGE_ACCESS_DEFAULT`: what a caller no policy allows anything sees.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AccessDefault {
    /// Everything (what a bridge without policies does).
    #[default]
    Allow,
    /// Nothing but what its owner rights give.
    Deny,
}

impl AccessDefault {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Deny => "deny",
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Self {
            bind: "127.0.0.1:8080".into(),
            data_dir: PathBuf::from("./data"),
            database_url: None,
            jwt_secret: None,
            jwt_public_key: None,
            jwt_issuer: None,
            jwt_jwks_url: None,
            jwt_discovery: false,
            jwt_roles_claim: "roles".into(),
            jwt_admin_role: "admin".into(),
            public_url: None,
            oauth_client_metadata_url: None,
            jwt_audience: None,
            jwt_leeway_secs: 30,
            secrets_key: None,
            mcp_allowed_hosts: Vec::new(),
            stdio_allowed_commands: Vec::new(),
            stdio_allowed_env: Vec::new(),
            allow_private_upstreams: false,
            fast_paths: true,
            log: "info".into(),
            log_format: LogFormat::Text,
            max_body_bytes: 1024 * 1024,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            audit_retention_days: 90,
            audit_max_rows: 100_000,
            shutdown_grace_secs: 10,
            page_size: 100,
            list_timeout: 5,
            replay_buffer: 1000,
            replay_agent_bytes: 1024 * 1024,
            replay_bytes: 256 * 1024 * 1024,
            keepalive_secs: 15,
            reconnect_base_ms: 500,
            reconnect_max_secs: 60,
            ping_interval_secs: 30,
            ping_timeout_secs: 10,
            agent_rate: 0,
            agent_burst: 0,
            agent_concurrency: 64,
            agent_servers: 50,
            agent_tasks: 256,
            agent_task_result_bytes: 128 * 1024 * 1024,
            agent_event_streams: 8,
            agent_mcp_sessions: 100,
            mcp_session_idle_secs: 330,
            max_connections: 10_000,
            connect_concurrency: 32,
            header_timeout_secs: 10,
            body_timeout_secs: 30,
            mcp_auth_off: false,
            mcp_unprefixed_server: None,
            max_tool_name: MAX_TOOL_NAME,
            tool_pinning: ToolPinning::Warn,
            a2a_enabled: true,
            servers: Vec::new(),
            nats_url: None,
            nats_prefix: "mcp-bridge".into(),
            nats_user: None,
            nats_password: None,
            nats_nkey_seed: None,
            nats_nkey_seed_file: None,
            nats_creds_file: None,
            nats_tls_ca: None,
            nats_tls_cert: None,
            nats_tls_key: None,
            bus_key: None,
            bus_outbox_bytes: 64 * 1024 * 1024,
            replica_id: None,
            lease_secs: 10,
            access_default: AccessDefault::Allow,
            policies: Vec::new(),
            toolsets: Vec::new(),
            hooks: Vec::new(),
        }
    }
}

impl Config {
    /// The key that seals secret values at rest, when one is configured.
    pub fn secrets_key(&self) -> Result<Option<[u8; 32]>, ConfigError> {
        self.secrets_key
            .as_ref()
            .map(|key| {
                crate::keyfile::parse_key(key.expose_secret())
                    .map_err(|why| invalid("MCP_BRIDGE_SECRETS_KEY", why))
            })
            .transpose()
    }

    /// Where browsers and authorization servers reach the bridge listening on `addr`:
    /// `MCP_BRIDGE_PUBLIC_URL`, else `http://{addr}` (a wildcard address as loopback).
    pub fn public_base(&self, addr: std::net::SocketAddr) -> String {
        if let Some(public) = &self.public_url {
            return public.trim_end_matches('/').to_owned();
        }
        let mut addr = addr;
        if addr.ip().is_unspecified() {
            addr.set_ip(match addr {
                std::net::SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
                std::net::SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
            });
        }
        format!("http://{addr}")
    }

    /// The address to listen on.
    pub fn bind_addr(&self) -> Result<SocketAddr, ConfigError> {
        self.bind.parse().map_err(|_| {
            invalid(
                "MCP_BRIDGE_BIND",
                format!(
                    "\"{}\" is not an address:port such as 127.0.0.1:8080",
                    self.bind
                ),
            )
        })
    }

    /// The database URL: the configured one (`sqlite:` or `postgres://`), or `mcp-bridge.db`
    /// in the data dir.
    pub fn database_url(&self) -> String {
        match &self.database_url {
            Some(url) => url.clone(),
            None => format!(
                "sqlite://{}?mode=rwc",
                self.data_dir.join("mcp-bridge.db").display()
            ),
        }
    }
}

/// What the bridge does when a tool's definition (description, schemas, annotations) differs
/// from the one pinned when it was first seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolPinning {
    /// Nothing is pinned nor compared.
    Off,
    /// The owner is told (`bridge/tool_changed`) and the change audited; the tool stays, and
    /// its new definition is pinned.
    #[default]
    Warn,
    /// As `warn`, and the tool is hidden and refused until its owner or an admin approves it.
    Quarantine,
}

impl ToolPinning {
    pub fn parse(value: &str) -> Option<Self> {
        match value.to_ascii_lowercase().as_str() {
            "off" => Some(Self::Off),
            "warn" | "" => Some(Self::Warn),
            "quarantine" => Some(Self::Quarantine),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Warn => "warn",
            Self::Quarantine => "quarantine",
        }
    }
}

/// `on` / `off` (or a boolean: whether the check is on) as "the check is off".
fn auth_off<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OnOff {
        Flag(bool),
        Word(String),
    }
    match OnOff::deserialize(deserializer)? {
        OnOff::Flag(on) => Ok(!on),
        OnOff::Word(word) => match word.to_ascii_lowercase().as_str() {
            "off" => Ok(true),
            "on" => Ok(false),
            _ => Err(serde::de::Error::custom(format!(
                "mcp_auth \"{word}\" is not on or off"
            ))),
        },
    }
}
