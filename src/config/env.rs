//! The environment layer: every `MCP_BRIDGE_*` variable the service reads, each with how its
//! value (trimmed, a comma list, a flag, a number, empty as unset) sets the configuration.

use std::collections::HashMap;
use std::path::PathBuf;

use secrecy::SecretString;

use super::{AccessDefault, Config, ConfigError, ToolPinning, invalid};

/// The variable naming the optional TOML file, read before the others.
pub(super) const FILE: &str = "MCP_BRIDGE_CONFIG";

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
/// (each is in the configuration table of docs/configuration.md, which a test checks). A table rather than
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
    var("MCP_BRIDGE_JWT_JWKS_URL", |c, v| {
        v.optional().map(|x| c.jwt_jwks_url = x)
    }),
    var("MCP_BRIDGE_JWT_DISCOVERY", |c, v| {
        v.flag().map(|x| c.jwt_discovery = x)
    }),
    var("MCP_BRIDGE_JWT_ROLES_CLAIM", |c, v| {
        v.text().map(|x| c.jwt_roles_claim = x)
    }),
    var("MCP_BRIDGE_JWT_ADMIN_ROLE", |c, v| {
        v.text().map(|x| c.jwt_admin_role = x)
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
    var("MCP_BRIDGE_FAST_PATHS", |c, v| {
        v.flag().map(|x| c.fast_paths = x)
    }),
    var("MCP_BRIDGE_ALLOW_PRIVATE_UPSTREAMS", |c, v| {
        v.flag().map(|x| c.allow_private_upstreams = x)
    }),
    var("MCP_BRIDGE_LOG", |c, v| v.text().map(|x| c.log = x)),
    var("MCP_BRIDGE_LOG_FORMAT", |c, v| {
        let value = v.raw.trim();
        c.log_format = match value.to_ascii_lowercase().as_str() {
            "text" | "" => crate::config::LogFormat::Text,
            "json" => crate::config::LogFormat::Json,
            _ => return Err(invalid(v.name, format!("\"{value}\" is not text or json"))),
        };
        Ok(())
    }),
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
    var("MCP_BRIDGE_REPLAY_AGENT_BYTES", |c, v| {
        v.number().map(|x| c.replay_agent_bytes = x)
    }),
    var("MCP_BRIDGE_REPLAY_BYTES", |c, v| {
        v.number().map(|x| c.replay_bytes = x)
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
    var("MCP_BRIDGE_CONNECT_CONCURRENCY", |c, v| {
        v.number().map(|x| c.connect_concurrency = x)
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

impl Config {
    /// Each variable set in `env` over the values so far.
    pub(super) fn apply_env(&mut self, env: &HashMap<String, String>) -> Result<(), ConfigError> {
        for variable in VARIABLES {
            if let Some(raw) = env.get(variable.name) {
                let name = variable.name;
                (variable.set)(self, &Value { name, raw })?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The variables named in the first column of the configuration table (docs/configuration.md).
    fn documented() -> std::collections::BTreeSet<String> {
        let readme = include_str!("../../docs/configuration.md");
        let section = readme
            .split("\n## Configuration\n")
            .nth(1)
            .and_then(|rest| rest.split("\n## ").next())
            .expect("docs/configuration.md has a Configuration section");
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
        let default = format!("{:?}", Config::from_env(&HashMap::new()).unwrap());
        for variable in VARIABLES {
            let name = variable.name;
            match Config::from_env(&HashMap::from([(name.to_owned(), "x y".to_owned())])) {
                Err(error) => assert!(error.to_string().contains(name), "{name}: {error}"),
                Ok(config) => assert_ne!(format!("{config:?}"), default, "{name} is ignored"),
            }
        }
    }
}
