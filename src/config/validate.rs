//! Validation of the settings once every layer is applied: each bad value refused by the name
//! of its variable, with why.

use super::{
    Config, ConfigError, MAX_MAX_MESSAGE_BYTES, MAX_TOOL_NAME, MIN_MAX_MESSAGE_BYTES,
    MIN_TOOL_NAME, invalid,
};

impl Config {
    pub(super) fn validate(&mut self) -> Result<(), ConfigError> {
        self.bind_addr()?;
        self.secrets_key()?;
        if self.jwt_secret.is_some() && self.jwt_public_key.is_some() {
            return Err(invalid(
                "MCP_BRIDGE_JWT_SECRET",
                "set either a shared secret or a public key (MCP_BRIDGE_JWT_PUBLIC_KEY), not both",
            ));
        }
        self.validate_identity_provider()?;
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
        if self.replay_bytes == 0 || self.replay_agent_bytes > self.replay_bytes {
            return Err(invalid(
                "MCP_BRIDGE_REPLAY_AGENT_BYTES",
                "must not exceed MCP_BRIDGE_REPLAY_BYTES (which must not be 0)",
            ));
        }
        if self.keepalive_secs == 0 {
            return Err(invalid("MCP_BRIDGE_KEEPALIVE_SECS", "must be at least 1"));
        }
        for (name, value) in [
            ("MCP_BRIDGE_MAX_CONNECTIONS", self.max_connections as u64),
            (
                "MCP_BRIDGE_CONNECT_CONCURRENCY",
                self.connect_concurrency as u64,
            ),
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
        super::validate_hooks(&self.hooks)?;
        self.validate_replicas()
    }
}

impl Config {
    /// Keys from an identity provider replace the secret or public key, never join them.
    fn validate_identity_provider(&self) -> Result<(), ConfigError> {
        let provider = self.jwt_jwks_url.is_some() || self.jwt_discovery;
        if provider && (self.jwt_secret.is_some() || self.jwt_public_key.is_some()) {
            return Err(invalid(
                "MCP_BRIDGE_JWT_JWKS_URL",
                "an identity provider's keys (MCP_BRIDGE_JWT_JWKS_URL or MCP_BRIDGE_JWT_DISCOVERY) \
                 replace MCP_BRIDGE_JWT_SECRET and MCP_BRIDGE_JWT_PUBLIC_KEY: set one of them",
            ));
        }
        if self.jwt_jwks_url.is_some() && self.jwt_discovery {
            return Err(invalid(
                "MCP_BRIDGE_JWT_DISCOVERY",
                "set either MCP_BRIDGE_JWT_JWKS_URL or MCP_BRIDGE_JWT_DISCOVERY, not both",
            ));
        }
        if self.jwt_discovery && self.jwt_issuer.is_none() {
            return Err(invalid(
                "MCP_BRIDGE_JWT_DISCOVERY",
                "needs MCP_BRIDGE_JWT_ISSUER, whose /.well-known/openid-configuration names the keys",
            ));
        }
        let urls = [
            ("MCP_BRIDGE_JWT_JWKS_URL", self.jwt_jwks_url.as_deref()),
            (
                "MCP_BRIDGE_JWT_ISSUER",
                self.jwt_issuer.as_deref().filter(|_| self.jwt_discovery),
            ),
        ];
        for (name, url) in urls {
            let Some(url) = url else { continue };
            match url::Url::parse(url) {
                Ok(parsed) if ["http", "https"].contains(&parsed.scheme()) => {}
                _ => return Err(invalid(name, format!("\"{url}\" is not an http(s) URL"))),
            }
        }
        if provider && self.jwt_audience.is_none() {
            return Err(invalid(
                "MCP_BRIDGE_JWT_AUDIENCE",
                "an identity provider signs tokens for all its clients: set the audience the \
                 bridge's tokens carry (`aud`), or any of them would be taken",
            ));
        }
        if self.jwt_roles_claim.split('.').any(str::is_empty) {
            return Err(invalid(
                "MCP_BRIDGE_JWT_ROLES_CLAIM",
                format!(
                    "\"{}\" is not a claim path (names joined by dots, e.g. realm_access.roles)",
                    self.jwt_roles_claim
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod identity_provider_tests {
    use super::*;

    fn checked(change: impl FnOnce(&mut Config)) -> Result<(), String> {
        let mut config = Config::default();
        change(&mut config);
        config
            .validate_identity_provider()
            .map_err(|e| e.to_string())
    }

    #[test]
    fn an_identity_provider_replaces_the_other_keys_and_discovery_needs_an_issuer() {
        let url = Some("https://idp.example/jwks".to_owned());
        let no_audience = checked(|c| c.jwt_jwks_url = url.clone());
        assert!(no_audience.unwrap_err().contains("MCP_BRIDGE_JWT_AUDIENCE"));
        let audience = |c: &mut Config| c.jwt_audience = Some("mcp-bridge".into());
        assert!(
            checked(|c| {
                audience(c);
                c.jwt_jwks_url = url.clone();
            })
            .is_ok()
        );
        let both = checked(|c| {
            c.jwt_jwks_url = url.clone();
            c.jwt_secret = Some("s".to_owned().into());
        });
        assert!(both.unwrap_err().contains("replace"));
        let no_issuer = checked(|c| {
            audience(c);
            c.jwt_discovery = true;
        });
        assert!(no_issuer.unwrap_err().contains("MCP_BRIDGE_JWT_ISSUER"));
        let discovered = checked(|c| {
            audience(c);
            c.jwt_discovery = true;
            c.jwt_issuer = Some("https://idp.example/realms/a".into());
        });
        assert!(discovered.is_ok());
        let not_http = checked(|c| {
            audience(c);
            c.jwt_jwks_url = Some("file:///etc/keys".into());
        });
        assert!(not_http.unwrap_err().contains("not an http(s) URL"));
        let bad_path = checked(|c| c.jwt_roles_claim = "realm_access..roles".into());
        assert!(bad_path.unwrap_err().contains("claim path"));
    }
}
