//! Settings of a bridge run as several replicas: their names, the NATS subjects and credentials
//! they meet with, the key that seals what they say to each other, and their checks.

use secrecy::ExposeSecret;

use super::{Config, ConfigError, NatsAccess, invalid, nats};

impl Config {
    pub(super) fn validate_replicas(&self) -> Result<(), ConfigError> {
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
}
