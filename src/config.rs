//! Configuration in layers: defaults, then an optional TOML file (`MCP_BRIDGE_CONFIG`), then
//! `MCP_BRIDGE_*` environment variables, then validation with a clear message on a bad value.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;

mod nats;
pub use nats::NatsAccess;

/// Why the configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read the config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the config file {path} is not valid: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("{name} is not valid: {message}")]
    Invalid { name: &'static str, message: String },
}

fn invalid(name: &'static str, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        name,
        message: message.into(),
    }
}

/// The default of `max_message_bytes`: 16 MiB, what rmcp bounds its transports to by default.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
/// The smallest `max_message_bytes`: below 64 KiB an ordinary tool list would not fit.
pub const MIN_MAX_MESSAGE_BYTES: usize = 64 * 1024;
/// The largest `max_message_bytes`: 1 GiB; a message is held whole in memory (more than once
/// while it is decoded), so more would let one server exhaust the bridge.
pub const MAX_MAX_MESSAGE_BYTES: usize = 1024 * 1024 * 1024;

/// The default and largest `max_tool_name`: MCP's own limit on a tool name.
pub const MAX_TOOL_NAME: usize = 128;
/// The smallest `max_tool_name`: room for a server id's start and the hash of a short alias.
pub const MIN_TOOL_NAME: usize = 32;

/// The variable naming the optional TOML file, read before the others.
const FILE: &str = "MCP_BRIDGE_CONFIG";

/// An environment variable and how its value sets the configuration.
struct Variable {
    name: &'static str,
    set: fn(&mut Config, &Value) -> Result<(), ConfigError>,
}

const fn var(
    name: &'static str,
    set: fn(&mut Config, &Value) -> Result<(), ConfigError>,
) -> Variable {
    Variable { name, set }
}

/// Every variable but [`FILE`], each named once, applied in this order over the file's values
/// (each is in the README's configuration table, which a test checks). A table rather than
/// figment or clap's `env`: both read only the process environment (tests pass their own),
/// neither parses these values (comma lists, `yes`/`on`, empty as unset) or names the variable
/// in its error as the messages here do, clap has no file layer under the environment, and
/// figment would add 12 crates, a second `toml` among them.
const VARIABLES: &[Variable] = &[
    var("MCP_BRIDGE_BIND", |c, v| v.text().map(|x| c.bind = x)),
    var("MCP_BRIDGE_DATA_DIR", |c, v| {
        v.text().map(|x| c.data_dir = x.into())
    }),
    var("MCP_BRIDGE_DATABASE_URL", |c, v| {
        v.optional().map(|x| c.database_url = x)
    }),
    var("MCP_BRIDGE_JWT_SECRET", |c, v| {
        v.secret().map(|x| c.jwt_secret = x)
    }),
    var("MCP_BRIDGE_SECRETS_KEY", |c, v| {
        v.secret().map(|x| c.secrets_key = x)
    }),
    var("MCP_BRIDGE_JWT_PUBLIC_KEY", |c, v| {
        v.optional()
            .map(|x| c.jwt_public_key = x.map(PathBuf::from))
    }),
    var("MCP_BRIDGE_JWT_ISSUER", |c, v| {
        v.optional().map(|x| c.jwt_issuer = x)
    }),
    var("MCP_BRIDGE_PUBLIC_URL", |c, v| {
        v.optional().map(|x| c.public_url = x)
    }),
    var("MCP_BRIDGE_OAUTH_CLIENT_METADATA_URL", |c, v| {
        v.optional().map(|x| c.oauth_client_metadata_url = x)
    }),
    var("MCP_BRIDGE_JWT_AUDIENCE", |c, v| {
        v.optional().map(|x| c.jwt_audience = x)
    }),
    var("MCP_BRIDGE_JWT_LEEWAY_SECS", |c, v| {
        v.number().map(|x| c.jwt_leeway_secs = x)
    }),
    var("MCP_BRIDGE_MCP_ALLOWED_HOSTS", |c, v| {
        v.list().map(|x| c.mcp_allowed_hosts = x)
    }),
    var("MCP_BRIDGE_STDIO_ALLOWED_COMMANDS", |c, v| {
        v.list().map(|x| c.stdio_allowed_commands = x)
    }),
    var("MCP_BRIDGE_STDIO_ALLOWED_ENV", |c, v| {
        v.list().map(|x| c.stdio_allowed_env = x)
    }),
    var("MCP_BRIDGE_ALLOW_PRIVATE_UPSTREAMS", |c, v| {
        v.flag().map(|x| c.allow_private_upstreams = x)
    }),
    var("MCP_BRIDGE_LOG", |c, v| v.text().map(|x| c.log = x)),
    var("MCP_BRIDGE_MAX_BODY_BYTES", |c, v| {
        v.number().map(|x| c.max_body_bytes = x)
    }),
    var("MCP_BRIDGE_MAX_MESSAGE_BYTES", |c, v| {
        v.number().map(|x| c.max_message_bytes = x)
    }),
    var("MCP_BRIDGE_AUDIT_RETENTION_DAYS", |c, v| {
        v.number().map(|x| c.audit_retention_days = x)
    }),
    var("MCP_BRIDGE_AUDIT_MAX_ROWS", |c, v| {
        v.number().map(|x| c.audit_max_rows = x)
    }),
    var("MCP_BRIDGE_PAGE_SIZE", |c, v| {
        v.number().map(|x| c.page_size = x)
    }),
    var("MCP_BRIDGE_LIST_TIMEOUT", |c, v| {
        v.number().map(|x| c.list_timeout = x)
    }),
    var("MCP_BRIDGE_REPLAY_BUFFER", |c, v| {
        v.number().map(|x| c.replay_buffer = x)
    }),
    var("MCP_BRIDGE_KEEPALIVE_SECS", |c, v| {
        v.number().map(|x| c.keepalive_secs = x)
    }),
    var("MCP_BRIDGE_RECONNECT_BASE_MS", |c, v| {
        v.number().map(|x| c.reconnect_base_ms = x)
    }),
    var("MCP_BRIDGE_RECONNECT_MAX_SECS", |c, v| {
        v.number().map(|x| c.reconnect_max_secs = x)
    }),
    var("MCP_BRIDGE_PING_INTERVAL_SECS", |c, v| {
        v.number().map(|x| c.ping_interval_secs = x)
    }),
    var("MCP_BRIDGE_PING_TIMEOUT_SECS", |c, v| {
        v.number().map(|x| c.ping_timeout_secs = x)
    }),
    var("MCP_BRIDGE_MCP_AUTH", |c, v| {
        v.on_off().map(|on| c.mcp_auth_off = !on)
    }),
    var("MCP_BRIDGE_A2A_ENABLED", |c, v| {
        v.flag().map(|x| c.a2a_enabled = x)
    }),
    var("MCP_BRIDGE_MCP_UNPREFIXED_SERVER", |c, v| {
        v.optional().map(|x| c.mcp_unprefixed_server = x)
    }),
    var("MCP_BRIDGE_MAX_TOOL_NAME", |c, v| {
        v.number().map(|x| c.max_tool_name = x)
    }),
    var("MCP_BRIDGE_TOOL_PINNING", |c, v| {
        v.pinning().map(|x| c.tool_pinning = x)
    }),
    var("MCP_BRIDGE_AGENT_RATE", |c, v| {
        v.number().map(|x| c.agent_rate = x)
    }),
    var("MCP_BRIDGE_AGENT_BURST", |c, v| {
        v.number().map(|x| c.agent_burst = x)
    }),
    var("MCP_BRIDGE_AGENT_CONCURRENCY", |c, v| {
        v.number().map(|x| c.agent_concurrency = x)
    }),
    var("MCP_BRIDGE_AGENT_SERVERS", |c, v| {
        v.number().map(|x| c.agent_servers = x)
    }),
    var("MCP_BRIDGE_AGENT_TASKS", |c, v| {
        v.number().map(|x| c.agent_tasks = x)
    }),
    var("MCP_BRIDGE_AGENT_TASK_RESULT_BYTES", |c, v| {
        v.number().map(|x| c.agent_task_result_bytes = x)
    }),
    var("MCP_BRIDGE_AGENT_EVENT_STREAMS", |c, v| {
        v.number().map(|x| c.agent_event_streams = x)
    }),
    var("MCP_BRIDGE_AGENT_MCP_SESSIONS", |c, v| {
        v.number().map(|x| c.agent_mcp_sessions = x)
    }),
    var("MCP_BRIDGE_MCP_SESSION_IDLE_SECS", |c, v| {
        v.number().map(|x| c.mcp_session_idle_secs = x)
    }),
    var("MCP_BRIDGE_MAX_CONNECTIONS", |c, v| {
        v.number().map(|x| c.max_connections = x)
    }),
    var("MCP_BRIDGE_HEADER_TIMEOUT_SECS", |c, v| {
        v.number().map(|x| c.header_timeout_secs = x)
    }),
    var("MCP_BRIDGE_BODY_TIMEOUT_SECS", |c, v| {
        v.number().map(|x| c.body_timeout_secs = x)
    }),
    var("MCP_BRIDGE_SHUTDOWN_GRACE_SECS", |c, v| {
        v.number().map(|x| c.shutdown_grace_secs = x)
    }),
    var("MCP_BRIDGE_NATS_URL", |c, v| {
        v.optional().map(|x| c.nats_url = x)
    }),
    var("MCP_BRIDGE_NATS_PREFIX", |c, v| {
        v.text().map(|x| c.nats_prefix = x)
    }),
    var("MCP_BRIDGE_NATS_USER", |c, v| {
        v.optional().map(|x| c.nats_user = x)
    }),
    var("MCP_BRIDGE_NATS_PASSWORD", |c, v| {
        v.secret().map(|x| c.nats_password = x)
    }),
    var("MCP_BRIDGE_NATS_NKEY_SEED", |c, v| {
        v.secret().map(|x| c.nats_nkey_seed = x)
    }),
    var("MCP_BRIDGE_NATS_NKEY_SEED_FILE", |c, v| {
        v.optional()
            .map(|x| c.nats_nkey_seed_file = x.map(Into::into))
    }),
    var("MCP_BRIDGE_NATS_CREDS_FILE", |c, v| {
        v.optional().map(|x| c.nats_creds_file = x.map(Into::into))
    }),
    var("MCP_BRIDGE_NATS_TLS_CA", |c, v| {
        v.optional().map(|x| c.nats_tls_ca = x.map(Into::into))
    }),
    var("MCP_BRIDGE_NATS_TLS_CERT", |c, v| {
        v.optional().map(|x| c.nats_tls_cert = x.map(Into::into))
    }),
    var("MCP_BRIDGE_NATS_TLS_KEY", |c, v| {
        v.optional().map(|x| c.nats_tls_key = x.map(Into::into))
    }),
    var("MCP_BRIDGE_BUS_KEY", |c, v| {
        v.secret().map(|x| c.bus_key = x)
    }),
    var("MCP_BRIDGE_BUS_OUTBOX_BYTES", |c, v| {
        v.number().map(|x| c.bus_outbox_bytes = x)
    }),
    var("MCP_BRIDGE_REPLICA_ID", |c, v| {
        v.optional().map(|x| c.replica_id = x)
    }),
    var("MCP_BRIDGE_LEASE_SECS", |c, v| {
        v.number().map(|x| c.lease_secs = x)
    }),
    var("MCP_BRIDGE_ACCESS_DEFAULT", |c, v| {
        let value = v.raw.trim();
        c.access_default = match value.to_ascii_lowercase().as_str() {
            "allow" | "" => AccessDefault::Allow,
            "deny" => AccessDefault::Deny,
            _ => {
                return Err(invalid(
                    v.name,
                    format!("\"{value}\" is neither allow nor deny"),
                ));
            }
        };
        Ok(())
    }),
];

/// Every environment variable the service reads.
pub fn variables() -> impl Iterator<Item = &'static str> {
    std::iter::once(FILE).chain(VARIABLES.iter().map(|v| v.name))
}

/// A variable's value as set, with its name for the error on a bad one.
struct Value<'a> {
    name: &'static str,
    raw: &'a str,
}

impl Value<'_> {
    /// The value without surrounding white space.
    fn text(&self) -> Result<String, ConfigError> {
        Ok(self.raw.trim().to_owned())
    }

    /// The value without surrounding white space; empty is none.
    fn optional(&self) -> Result<Option<String>, ConfigError> {
        Ok(Some(self.raw.trim().to_owned()).filter(|v| !v.is_empty()))
    }

    /// A secret, taken as it is; empty is none.
    fn secret(&self) -> Result<Option<SecretString>, ConfigError> {
        Ok((!self.raw.is_empty()).then(|| SecretString::from(self.raw)))
    }

    /// Comma-separated entries, each trimmed; empty ones left out.
    fn list(&self) -> Result<Vec<String>, ConfigError> {
        Ok(self
            .raw
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect())
    }

    fn number<T: std::str::FromStr>(&self) -> Result<T, ConfigError> {
        let value = self.raw.trim();
        value.parse().map_err(|_| {
            invalid(
                self.name,
                format!("\"{value}\" is not a non-negative whole number"),
            )
        })
    }

    fn flag(&self) -> Result<bool, ConfigError> {
        let value = self.raw.trim();
        match value.to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Ok(true),
            "0" | "false" | "no" | "off" | "" => Ok(false),
            _ => Err(invalid(
                self.name,
                format!("\"{value}\" is not true or false"),
            )),
        }
    }

    fn pinning(&self) -> Result<ToolPinning, ConfigError> {
        let value = self.raw.trim();
        ToolPinning::parse(value).ok_or_else(|| {
            invalid(
                self.name,
                format!("\"{value}\" is not off, warn or quarantine"),
            )
        })
    }

    /// `on` (or empty) or `off`.
    fn on_off(&self) -> Result<bool, ConfigError> {
        let value = self.raw.trim();
        match value.to_ascii_lowercase().as_str() {
            "on" | "" => Ok(true),
            "off" => Ok(false),
            _ => Err(invalid(self.name, format!("\"{value}\" is not on or off"))),
        }
    }
}

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
    pub log: String,
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
            public_url: None,
            oauth_client_metadata_url: None,
            jwt_audience: None,
            jwt_leeway_secs: 30,
            secrets_key: None,
            mcp_allowed_hosts: Vec::new(),
            stdio_allowed_commands: Vec::new(),
            stdio_allowed_env: Vec::new(),
            allow_private_upstreams: false,
            log: "info".into(),
            max_body_bytes: 1024 * 1024,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            audit_retention_days: 90,
            audit_max_rows: 100_000,
            shutdown_grace_secs: 10,
            page_size: 100,
            list_timeout: 5,
            replay_buffer: 1000,
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
        }
    }
}

impl Config {
    /// Loads the layers from the process environment.
    pub fn load() -> Result<Self, ConfigError> {
        Self::from_env(&std::env::vars().collect())
    }

    /// Loads the layers from the given environment (tests pass their own).
    pub fn from_env(env: &HashMap<String, String>) -> Result<Self, ConfigError> {
        let mut config = match env.get(FILE).filter(|p| !p.is_empty()) {
            Some(path) => Self::from_file(Path::new(path))?,
            None => Self::default(),
        };
        config.apply_env(env)?;
        config.validate()?;
        Ok(config)
    }

    fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_owned(),
            source,
        })?;
        toml::from_str(&text).map_err(|e| ConfigError::Parse {
            path: path.to_owned(),
            message: e.message().to_owned(),
        })
    }

    /// Each variable set in `env` over the values so far.
    fn apply_env(&mut self, env: &HashMap<String, String>) -> Result<(), ConfigError> {
        for variable in VARIABLES {
            if let Some(raw) = env.get(variable.name) {
                let name = variable.name;
                (variable.set)(self, &Value { name, raw })?;
            }
        }
        Ok(())
    }

    fn validate(&mut self) -> Result<(), ConfigError> {
        self.bind_addr()?;
        self.secrets_key()?;
        if self.jwt_secret.is_some() && self.jwt_public_key.is_some() {
            return Err(invalid(
                "MCP_BRIDGE_JWT_SECRET",
                "set either a shared secret or a public key (MCP_BRIDGE_JWT_PUBLIC_KEY), not both",
            ));
        }
        if let Some(url) = &self.database_url
            && !["sqlite:", "postgres://", "postgresql://"]
                .iter()
                .any(|scheme| url.starts_with(scheme))
        {
            return Err(invalid(
                "MCP_BRIDGE_DATABASE_URL",
                format!("\"{url}\" is neither a sqlite: nor a postgres:// URL"),
            ));
        }
        if self.data_dir.as_os_str().is_empty() {
            return Err(invalid("MCP_BRIDGE_DATA_DIR", "must not be empty"));
        }
        tracing_subscriber::EnvFilter::try_new(&self.log)
            .map_err(|e| invalid("MCP_BRIDGE_LOG", format!("\"{}\": {e}", self.log)))?;
        if let Some(server) = self.servers.iter().find(|s| s.server_id.is_empty()) {
            return Err(invalid(
                "servers",
                format!(
                    "every server of the config file needs a `server_id` ({:?} has none)",
                    server.cmd
                ),
            ));
        }
        if !(1..=1000).contains(&self.page_size) {
            return Err(invalid(
                "MCP_BRIDGE_PAGE_SIZE",
                "must be between 1 and 1000",
            ));
        }
        if !(1..=3600).contains(&self.list_timeout) {
            return Err(invalid(
                "MCP_BRIDGE_LIST_TIMEOUT",
                "must be between 1 and 3600 seconds",
            ));
        }
        if !(1..=100_000).contains(&self.replay_buffer) {
            return Err(invalid(
                "MCP_BRIDGE_REPLAY_BUFFER",
                "must be between 1 and 100000",
            ));
        }
        if self.keepalive_secs == 0 {
            return Err(invalid("MCP_BRIDGE_KEEPALIVE_SECS", "must be at least 1"));
        }
        for (name, value) in [
            ("MCP_BRIDGE_MAX_CONNECTIONS", self.max_connections as u64),
            ("MCP_BRIDGE_HEADER_TIMEOUT_SECS", self.header_timeout_secs),
            ("MCP_BRIDGE_BODY_TIMEOUT_SECS", self.body_timeout_secs),
        ] {
            if value == 0 {
                return Err(invalid(name, "must be at least 1"));
            }
        }
        if self.reconnect_base_ms == 0
            || self.reconnect_base_ms > self.reconnect_max_secs.saturating_mul(1000)
        {
            return Err(invalid(
                "MCP_BRIDGE_RECONNECT_BASE_MS",
                "must be at least 1 and no longer than MCP_BRIDGE_RECONNECT_MAX_SECS",
            ));
        }
        if self.mcp_auth_off && !self.bind_addr()?.ip().is_loopback() {
            return Err(invalid(
                "MCP_BRIDGE_MCP_AUTH",
                format!(
                    "off is only allowed on a loopback address, and MCP_BRIDGE_BIND is {}",
                    self.bind
                ),
            ));
        }
        if self.ping_timeout_secs == 0 {
            return Err(invalid(
                "MCP_BRIDGE_PING_TIMEOUT_SECS",
                "must be at least 1",
            ));
        }
        if let Some(public) = &mut self.public_url {
            let parsed = url::Url::parse(public).ok().filter(|u| {
                matches!(u.scheme(), "http" | "https")
                    && u.host_str().is_some()
                    && u.query().is_none()
                    && u.fragment().is_none()
            });
            if parsed.is_none() {
                return Err(invalid(
                    "MCP_BRIDGE_PUBLIC_URL",
                    format!("must be an http(s) URL without query or fragment, not {public:?}"),
                ));
            }
            public.truncate(public.trim_end_matches('/').len());
        }
        if let Some(document) = &self.oauth_client_metadata_url {
            let https = url::Url::parse(document)
                .ok()
                .filter(|u| u.scheme() == "https" && u.path() != "/" && u.fragment().is_none());
            if https.is_none() {
                return Err(invalid(
                    "MCP_BRIDGE_OAUTH_CLIENT_METADATA_URL",
                    format!("must be an https URL with a path, not {document:?}"),
                ));
            }
        }
        let names = MIN_TOOL_NAME..=MAX_TOOL_NAME;
        if !names.contains(&self.max_tool_name) {
            return Err(invalid(
                "MCP_BRIDGE_MAX_TOOL_NAME",
                format!(
                    "must be between {} and {} (MCP's own limit)",
                    names.start(),
                    names.end()
                ),
            ));
        }
        if self.max_body_bytes < 1024 {
            return Err(invalid(
                "MCP_BRIDGE_MAX_BODY_BYTES",
                "must be at least 1024",
            ));
        }
        if !(MIN_MAX_MESSAGE_BYTES..=MAX_MAX_MESSAGE_BYTES).contains(&self.max_message_bytes) {
            return Err(invalid(
                "MCP_BRIDGE_MAX_MESSAGE_BYTES",
                format!(
                    "must be between {MIN_MAX_MESSAGE_BYTES} (64 KiB) and {MAX_MAX_MESSAGE_BYTES} (1 GiB)"
                ),
            ));
        }
        self.validate_replicas()
    }

    fn validate_replicas(&self) -> Result<(), ConfigError> {
        let token = |s: &str| {
            !s.is_empty()
                && s.len() <= 64
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        };
        if let Some(id) = &self.replica_id
            && !token(id)
        {
            return Err(invalid(
                "MCP_BRIDGE_REPLICA_ID",
                "must be 1 to 64 letters, digits, `-` or `_`",
            ));
        }
        if !self.nats_prefix.split('.').all(token) {
            return Err(invalid(
                "MCP_BRIDGE_NATS_PREFIX",
                "must be dot-separated tokens of letters, digits, `-` or `_`",
            ));
        }
        if self.bus_outbox_bytes < 64 * 1024 {
            return Err(invalid(
                "MCP_BRIDGE_BUS_OUTBOX_BYTES",
                "must be at least 65536 (64 KiB)",
            ));
        }
        if !(2..=3600).contains(&self.lease_secs) {
            return Err(invalid(
                "MCP_BRIDGE_LEASE_SECS",
                "must be between 2 and 3600",
            ));
        }
        if self.nats_url.is_some() {
            // Each URL's scheme and credentials, with any password left out of the error.
            self.nats_access()?;
            if !self.database_url().starts_with("postgres") {
                return Err(invalid(
                    "MCP_BRIDGE_NATS_URL",
                    "replicas share their store: set MCP_BRIDGE_DATABASE_URL to a postgres:// URL",
                ));
            }
            if self.bus_master_key()?.is_none() {
                return Err(invalid(
                    "MCP_BRIDGE_NATS_URL",
                    "replicas seal what they say to each other with a key derived from MCP_BRIDGE_SECRETS_KEY \
                     (or MCP_BRIDGE_BUS_KEY): set it, the same on every replica",
                ));
            }
        } else if let Some(name) = self.nats_settings_set().first() {
            return Err(invalid(name, "has no effect without MCP_BRIDGE_NATS_URL"));
        }
        Ok(())
    }

    /// The NATS settings set, by name (they need `nats_url`).
    fn nats_settings_set(&self) -> Vec<&'static str> {
        [
            ("MCP_BRIDGE_NATS_USER", self.nats_user.is_some()),
            ("MCP_BRIDGE_NATS_PASSWORD", self.nats_password.is_some()),
            ("MCP_BRIDGE_NATS_NKEY_SEED", self.nats_nkey_seed.is_some()),
            (
                "MCP_BRIDGE_NATS_NKEY_SEED_FILE",
                self.nats_nkey_seed_file.is_some(),
            ),
            ("MCP_BRIDGE_NATS_CREDS_FILE", self.nats_creds_file.is_some()),
            ("MCP_BRIDGE_NATS_TLS_CA", self.nats_tls_ca.is_some()),
            ("MCP_BRIDGE_NATS_TLS_CERT", self.nats_tls_cert.is_some()),
            ("MCP_BRIDGE_NATS_TLS_KEY", self.nats_tls_key.is_some()),
            ("MCP_BRIDGE_BUS_KEY", self.bus_key.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, set)| set.then_some(name))
        .collect()
    }

    /// The key the bus key is derived from: `MCP_BRIDGE_BUS_KEY`, else `MCP_BRIDGE_SECRETS_KEY`.
    pub fn bus_master_key(&self) -> Result<Option<[u8; 32]>, ConfigError> {
        match &self.bus_key {
            Some(key) => crate::keyfile::parse_key(key.expose_secret())
                .map(Some)
                .map_err(|why| invalid("MCP_BRIDGE_BUS_KEY", why)),
            None => self.secrets_key(),
        }
    }

    /// How to connect to NATS: credentials (files read now) and TLS, checked.
    pub fn nats_access(&self) -> Result<NatsAccess, ConfigError> {
        nats::access(self)
    }

    /// This replica's name: the configured one, or one generated and kept in the data dir.
    pub fn replica(&self) -> std::io::Result<String> {
        if let Some(id) = &self.replica_id {
            return Ok(id.clone());
        }
        let path = self.data_dir.join("replica-id");
        match std::fs::read_to_string(&path) {
            Ok(id) if !id.trim().is_empty() => Ok(id.trim().to_owned()),
            Ok(_) => Self::new_replica_id(&path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Self::new_replica_id(&path),
            Err(e) => Err(e),
        }
    }

    fn new_replica_id(path: &std::path::Path) -> std::io::Result<String> {
        let id = format!("r-{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
        std::fs::write(path, format!("{id}\n"))?;
        Ok(id)
    }

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

    /// The address to listen on.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn defaults() {
        let config = Config::from_env(&env(&[])).unwrap();
        assert_eq!(config.bind, "127.0.0.1:8080");
        assert_eq!(config.data_dir, PathBuf::from("./data"));
        assert!(
            config
                .database_url()
                .ends_with("data/mcp-bridge.db?mode=rwc")
        );
    }

    #[test]
    fn a_refused_nats_url_is_named_without_its_password() {
        let refused = Config::from_env(&env(&[
            ("MCP_BRIDGE_NATS_URL", "http://bridge:hunter2@10.0.0.1:4222"),
            ("MCP_BRIDGE_DATABASE_URL", "postgres://127.0.0.1/bridge"),
            ("MCP_BRIDGE_SECRETS_KEY", &"ab".repeat(32)),
        ]))
        .unwrap_err()
        .to_string();
        assert!(refused.contains("MCP_BRIDGE_NATS_URL"), "{refused}");
        assert!(refused.contains("is not a nats://"), "{refused}");
        assert!(!refused.contains("hunter2"), "{refused}");
    }

    #[test]
    fn file_then_environment() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bridge.toml");
        std::fs::write(
            &path,
            "bind = \"127.0.0.1:9000\"\nlog = \"debug\"\nmcp_allowed_hosts = [\"bridge\"]\nmcp_auth = \"off\"\n",
        )
        .unwrap();
        let config = Config::from_env(&env(&[
            ("MCP_BRIDGE_CONFIG", path.to_str().unwrap()),
            ("MCP_BRIDGE_LOG", "warn"),
        ]))
        .unwrap();
        assert_eq!(config.bind, "127.0.0.1:9000");
        assert_eq!(config.log, "warn");
        assert_eq!(config.mcp_allowed_hosts, ["bridge"]);
        assert!(config.mcp_auth_off);
    }

    #[test]
    fn the_file_holds_policies_and_toolsets() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bridge.toml");
        std::fs::write(
            &path,
            r#"
access_default = "deny"

[[policies]]
name = "readers"
match = { roles = ["reader"], claims = { team = "pay*" } }
allow = { tools = ["*__read_*", "*__list_*"], resources = ["*"] }

[[policies]]
name = "no-deletes"
deny = { tools = ["*__delete_*"] }

[[toolsets]]
name = "team"
tools = ["github__*"]
rename = { "github__create_issue" = "new_issue" }
deferred = true
"#,
        )
        .unwrap();
        let config =
            Config::from_env(&env(&[("MCP_BRIDGE_CONFIG", path.to_str().unwrap())])).unwrap();
        assert_eq!(config.access_default, AccessDefault::Deny);
        assert_eq!(config.policies.len(), 2);
        assert_eq!(config.policies[0].policy.matches.roles, ["reader"]);
        assert_eq!(
            config.policies[1]
                .policy
                .deny
                .as_ref()
                .unwrap()
                .tools
                .as_deref(),
            Some(&["*__delete_*".to_owned()][..])
        );
        assert!(config.toolsets[0].toolset.deferred);
        assert_eq!(
            config.toolsets[0].toolset.rename["github__create_issue"],
            "new_issue"
        );
        let err = Config::from_env(&env(&[("MCP_BRIDGE_ACCESS_DEFAULT", "maybe")])).unwrap_err();
        assert!(
            err.to_string().contains("MCP_BRIDGE_ACCESS_DEFAULT"),
            "{err}"
        );
    }

    #[test]
    fn bad_values_are_named() {
        let err = Config::from_env(&env(&[("MCP_BRIDGE_BIND", "nowhere")])).unwrap_err();
        assert!(err.to_string().contains("MCP_BRIDGE_BIND"), "{err}");
        let err = Config::from_env(&env(&[("MCP_BRIDGE_JWT_LEEWAY_SECS", "-3")])).unwrap_err();
        assert!(
            err.to_string().contains("MCP_BRIDGE_JWT_LEEWAY_SECS"),
            "{err}"
        );
        let err = Config::from_env(&env(&[
            ("MCP_BRIDGE_JWT_SECRET", "s"),
            ("MCP_BRIDGE_JWT_PUBLIC_KEY", "/k.pem"),
        ]))
        .unwrap_err();
        assert!(err.to_string().contains("not both"), "{err}");
        let err = Config::from_env(&env(&[("MCP_BRIDGE_DATABASE_URL", "mysql://x")])).unwrap_err();
        assert!(err.to_string().contains("sqlite:"), "{err}");
        for url in [
            "postgres://bridge@db/bridge",
            "postgresql://db/bridge",
            "sqlite:b.db",
        ] {
            let config = Config::from_env(&env(&[("MCP_BRIDGE_DATABASE_URL", url)])).unwrap();
            assert_eq!(config.database_url(), url);
        }
        let err = Config::from_env(&env(&[("MCP_BRIDGE_MAX_MESSAGE_BYTES", "65535")])).unwrap_err();
        assert!(
            err.to_string().contains("MCP_BRIDGE_MAX_MESSAGE_BYTES"),
            "{err}"
        );
        let config = Config::from_env(&env(&[("MCP_BRIDGE_MAX_MESSAGE_BYTES", "65536")])).unwrap();
        assert_eq!(config.max_message_bytes, 65536);
        assert_eq!(
            Config::default().max_message_bytes,
            16 * 1024 * 1024,
            "the default is rmcp's own bound"
        );
    }

    /// The variables named in the first column of the README's configuration table.
    fn documented() -> std::collections::BTreeSet<String> {
        let readme = include_str!("../README.md");
        let section = readme
            .split("\n## Configuration\n")
            .nth(1)
            .and_then(|rest| rest.split("\n## ").next())
            .expect("README.md has a Configuration section");
        section
            .lines()
            .filter_map(|line| line.strip_prefix('|')?.split('|').next())
            .flat_map(|cell| cell.split('`'))
            .filter(|word| word.starts_with("MCP_BRIDGE_"))
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn the_variables_read_are_the_ones_documented() {
        let read: std::collections::BTreeSet<String> = variables().map(str::to_owned).collect();
        assert_eq!(read, documented());
    }

    /// Set to a value it does not take, each variable is refused by name or changes the
    /// configuration: none is ignored.
    #[test]
    fn every_variable_is_read() {
        let default = format!("{:?}", Config::from_env(&env(&[])).unwrap());
        for variable in VARIABLES {
            let name = variable.name;
            match Config::from_env(&env(&[(name, "x y")])) {
                Err(error) => assert!(error.to_string().contains(name), "{name}: {error}"),
                Ok(config) => assert_ne!(format!("{config:?}"), default, "{name} is ignored"),
            }
        }
    }

    #[test]
    fn tool_names_and_pinning() {
        let config = Config::from_env(&env(&[])).unwrap();
        assert_eq!(
            (config.max_tool_name, config.tool_pinning),
            (128, ToolPinning::Warn)
        );
        let config = Config::from_env(&env(&[
            ("MCP_BRIDGE_MAX_TOOL_NAME", "64"),
            ("MCP_BRIDGE_TOOL_PINNING", "Quarantine"),
        ]))
        .unwrap();
        assert_eq!(
            (config.max_tool_name, config.tool_pinning),
            (64, ToolPinning::Quarantine)
        );
        for bad in ["31", "129", "0"] {
            let err = Config::from_env(&env(&[("MCP_BRIDGE_MAX_TOOL_NAME", bad)])).unwrap_err();
            assert!(
                err.to_string().contains("MCP_BRIDGE_MAX_TOOL_NAME"),
                "{err}"
            );
        }
        let err = Config::from_env(&env(&[("MCP_BRIDGE_TOOL_PINNING", "strict")])).unwrap_err();
        assert!(err.to_string().contains("MCP_BRIDGE_TOOL_PINNING"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bridge.toml");
        std::fs::write(&path, "max_tool_name = 48\ntool_pinning = \"off\"\n").unwrap();
        let config =
            Config::from_env(&env(&[("MCP_BRIDGE_CONFIG", path.to_str().unwrap())])).unwrap();
        assert_eq!(
            (config.max_tool_name, config.tool_pinning),
            (48, ToolPinning::Off)
        );
    }

    #[test]
    fn the_public_url_is_an_http_base_without_a_trailing_slash() {
        let config = Config::from_env(&env(&[(
            "MCP_BRIDGE_PUBLIC_URL",
            "https://bridge.example/gw/",
        )]))
        .unwrap();
        assert_eq!(
            config.public_url.as_deref(),
            Some("https://bridge.example/gw")
        );
        for bad in [
            "bridge.example",
            "ftp://bridge.example",
            "https://b.example/?x=1",
        ] {
            let refused = Config::from_env(&env(&[("MCP_BRIDGE_PUBLIC_URL", bad)]));
            assert!(refused.is_err(), "{bad}");
        }
    }

    #[test]
    fn unknown_file_keys_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bridge.toml");
        std::fs::write(&path, "bnid = \"x\"\n").unwrap();
        let err =
            Config::from_env(&env(&[("MCP_BRIDGE_CONFIG", path.to_str().unwrap())])).unwrap_err();
        assert!(err.to_string().contains("bnid"), "{err}");
    }
}
