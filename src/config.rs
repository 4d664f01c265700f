//! Configuration in layers: defaults, then an optional TOML file (`MCP_BRIDGE_CONFIG`), then
//! `MCP_BRIDGE_*` environment variables, then validation with a clear message on a bad value.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

mod env;
mod hooks;
mod nats;
mod replicas;
mod settings;
mod validate;
use env::FILE;
pub use env::variables;
pub use hooks::{
    DEFAULT_HOOK_TIMEOUT_MS, HookConfig, HookKind, HookPhase, OnError, validate_hooks,
};
pub use nats::NatsAccess;
pub use settings::{AccessDefault, Config, LogFormat, ToolPinning};

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
    fn the_file_holds_hooks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bridge.toml");
        let file = |text: &str| {
            std::fs::write(&path, text).unwrap();
            Config::from_env(&env(&[("MCP_BRIDGE_CONFIG", path.to_str().unwrap())]))
        };
        let config = file(
            "[[hooks]]\nname = \"guard\"\nurl = \"http://127.0.0.1:9100/guard\"\n\
             phases = [\"before\"]\nnames = [\"db__*\"]\non_error = \"allow\"\n",
        )
        .unwrap();
        assert_eq!(config.hooks[0].phases, [HookPhase::Before]);
        assert_eq!(config.hooks[0].on_error, OnError::Allow);
        let refused = file("[[hooks]]\nname = \"guard\"\nurl = \"file:///etc/passwd\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("hooks") && refused.contains("guard"),
            "{refused}"
        );
        let refused = file("[[hooks]]\nname = \"guard\"\nurl = \"http://h/\"\nkind = []\n")
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("kind"),
            "an unknown key is named: {refused}"
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
