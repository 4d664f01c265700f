//! Registering and unregistering servers: the checks a registration passes (stdio rights and
//! allow lists, the per-agent cap, a reserved id), and who may manage a registered server.

use std::sync::Arc;
use std::time::Duration;

use super::{Error, Registry, ServerEntry, naming, validate};
use crate::a2e::{McpServerConfig, McpServerInfo, McpTransport, NotificationMethod};
use crate::caller::Caller;
use crate::store::{StoreError, StoredServer};
use crate::upstream::{self, ConnectError};

/// Removes a reserved id however registration ends.
struct Reservation<'a> {
    registry: &'a Registry,
    id: String,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        self.registry
            .reserved
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.id);
    }
}

impl Registry {
    /// Validates, connects, lists and only then stores a new server. It runs to the end even if
    /// the caller goes away, so a stored server is always a registered one.
    pub async fn register(
        self: &Arc<Self>,
        agent: &Caller,
        config: McpServerConfig,
    ) -> Result<McpServerInfo, Error> {
        let (this, agent) = (self.clone(), agent.clone());
        tokio::spawn(async move {
            let detail = describe(&config);
            let info = this.register_now(&agent, config).await?;
            this.store
                .record(&agent.id, "server.register", &info.server_id, &detail)
                .await;
            Ok(info)
        })
        .await
        .unwrap_or_else(|e| Err(Error::Internal(format!("registration stopped: {e}"))))
    }

    async fn register_now(
        self: &Arc<Self>,
        agent: &Caller,
        mut config: McpServerConfig,
    ) -> Result<McpServerInfo, Error> {
        self.check_command_rights(agent, &config)?;
        self.check_identity_rights(agent, &config)?;
        if config.server_id.is_empty() {
            config.server_id = naming::generate_server_id();
        }
        validate::check_config(&config, &self.supervision.guard).map_err(Error::Invalid)?;
        let _reservation = self.reserve(agent, &config.server_id)?;
        let (entry, inbox) = ServerEntry::new(
            agent.id.clone(),
            config.clone(),
            self.hub.clone(),
            self.store.clone(),
            &self.supervision,
        );
        // A server that carries agents' identities lists with its owner's.
        let listing = entry.listing_config().await?;
        // A server that wants OAuth is registered waiting for a person to authorize it.
        let mut pending_authorization = None;
        let established = match upstream::connect(&listing, entry.upstream_context()).await {
            Ok(established) => Some(established),
            // No person can authorize an agent's identity: the server refused it.
            Err(ConnectError::AuthRequired(_)) if entry.identity_bound() => {
                return Err(entry.identity_refused(&agent.id).await);
            }
            Err(ConnectError::AuthRequired(challenge)) => {
                pending_authorization = Some(challenge);
                None
            }
            Err(error) => {
                return Err(Error::Connect {
                    server_id: config.server_id.clone(),
                    error,
                });
            }
        };
        let stored = StoredServer {
            owner: agent.id.clone(),
            config: config.clone(),
        };
        if let Err(error) = self.store.insert_server(&stored).await {
            if let Some(established) = established {
                established.conn.shutdown().await;
            }
            return Err(match error {
                StoreError::Conflict => Error::Conflict(format!(
                    "server \"{}\" is already registered",
                    config.server_id
                )),
                other => other.into(),
            });
        }
        // Across replicas the new server is held here (its lease is free but for a race).
        let held = match &self.cluster {
            None => true,
            Some(cluster) => self
                .store
                .claim_lease(&config.server_id, &cluster.replica, self.supervision.lease)
                .await
                .unwrap_or(false),
        };
        match (established, held) {
            (Some(established), true) => {
                entry.review_pins(&established.lists).await;
                entry.install(established);
            }
            (Some(established), false) => established.conn.shutdown().await,
            (None, _) => {}
        }
        if let Some(challenge) = pending_authorization {
            // Its owner is sent the link; the supervisor waits for the authorization.
            entry.wait_for_authorization(challenge).await;
        }
        self.insert_held(entry.clone(), inbox, held);
        self.announce_change(&entry.id);
        tracing::info!(server_id = %entry.id, owner = %entry.owner, "server registered");
        entry.push_to_all(NotificationMethod::ToolsListChanged, serde_json::json!({}));
        Ok(entry.info())
    }

    /// Reserves `server_id` for `agent`'s registration: taken is a conflict, and an agent that
    /// already owns (or is registering) `agent_servers` servers is refused, admins excepted.
    /// Every registration, an import's too, comes here, and the count includes registrations in
    /// progress, so concurrent ones cannot pass the cap together.
    fn reserve(&self, agent: &Caller, server_id: &str) -> Result<Reservation<'_>, Error> {
        let servers = self.servers.read().unwrap_or_else(|e| e.into_inner());
        let mut reserved = self.reserved.lock().unwrap_or_else(|e| e.into_inner());
        if servers.contains_key(server_id) || reserved.contains_key(server_id) {
            return Err(Error::Conflict(format!(
                "server \"{server_id}\" is already registered"
            )));
        }
        let cap = self.supervision.agent_servers;
        if cap > 0 && !agent.admin {
            let owned = servers.values().filter(|e| e.owner == agent.id).count()
                + reserved
                    .values()
                    .filter(|owner| **owner == agent.id)
                    .count();
            if owned >= cap {
                return Err(Error::Forbidden(format!(
                    "agent \"{}\" already has {owned} servers registered, the most one agent may \
                     have (MCP_BRIDGE_AGENT_SERVERS={cap}); unregister one first \
                     (DELETE /v1/servers/{{server_id}}) or ask an admin",
                    agent.id
                )));
            }
        }
        reserved.insert(server_id.to_owned(), agent.id.clone());
        Ok(Reservation {
            registry: self,
            id: server_id.to_owned(),
        })
    }

    /// A server that carries its callers' identities upstream (`identity`, `token_exchange`, a
    /// `per_agent` `id_jag`) is sent every caller's claims or bearer token, to its own URL or to
    /// a token endpoint its config names: admins only, or any agent could register one that
    /// collects the tokens of everyone who calls it.
    pub(super) fn check_identity_rights(
        &self,
        agent: &Caller,
        config: &McpServerConfig,
    ) -> Result<(), Error> {
        if agent.admin || !super::identity::carries_identities(config) {
            return Ok(());
        }
        Err(Error::Forbidden(
            "a server that carries its callers' identities or tokens upstream (`identity`, \
             `auth.grant_type` token_exchange, a `per_agent` id_jag) needs the admin role"
                .into(),
        ))
    }

    /// A stdio server runs a command on this host: admins only, and only allowed commands.
    pub(super) fn check_command_rights(
        &self,
        agent: &Caller,
        config: &McpServerConfig,
    ) -> Result<(), Error> {
        if config.transport != McpTransport::Stdio {
            return Ok(());
        }
        if !agent.admin {
            return Err(Error::Forbidden(
                "registering a stdio server runs a command on the host: it needs the admin role"
                    .into(),
            ));
        }
        if let Some(program) = self.disallowed_command(config) {
            return Err(Error::Forbidden(format!(
                "the command \"{program}\" is not in MCP_BRIDGE_STDIO_ALLOWED_COMMANDS"
            )));
        }
        if let Some(name) = self.disallowed_env(config) {
            return Err(Error::Invalid(format!(
                "`env` may not set {name}: it changes which program a stdio server runs or what \
                 it loads (MCP_BRIDGE_STDIO_ALLOWED_ENV allows it)"
            )));
        }
        Ok(())
    }

    /// A variable of a stdio config's `env` that can change what its command runs (see
    /// `upstream::LOADER_ENV`), unless `MCP_BRIDGE_STDIO_ALLOWED_ENV` names it.
    pub(super) fn disallowed_env<'c>(&self, config: &'c McpServerConfig) -> Option<&'c str> {
        if config.transport != McpTransport::Stdio {
            return None;
        }
        config
            .env
            .keys()
            .find(|name| {
                crate::upstream::is_loader_variable(name)
                    && !self
                        .stdio_allowed_env
                        .iter()
                        .any(|allowed| allowed.eq_ignore_ascii_case(name))
            })
            .map(String::as_str)
    }

    /// The program of a stdio config when an allow list is set and does not name it.
    pub(super) fn disallowed_command<'c>(&self, config: &'c McpServerConfig) -> Option<&'c str> {
        let program = config.cmd.first()?;
        let listed =
            self.stdio_allowed_commands.is_empty() || self.stdio_allowed_commands.contains(program);
        (config.transport == McpTransport::Stdio && !listed).then_some(program.as_str())
    }

    /// Whether `agent` may put `config` in place of the registered `existing`: its owner or an
    /// admin, with the rights `config` itself needs. Checked before anything is compared, so
    /// nobody else learns anything of the stored config.
    pub fn may_replace(
        &self,
        agent: &Caller,
        existing: &ServerEntry,
        config: &McpServerConfig,
    ) -> Result<(), Error> {
        self.managed(agent, &existing.id)?;
        self.check_command_rights(agent, config)?;
        self.check_identity_rights(agent, config)
    }

    pub(super) fn managed(
        &self,
        agent: &Caller,
        server_id: &str,
    ) -> Result<Arc<ServerEntry>, Error> {
        let entry = self.get(server_id)?;
        if !agent.may_manage(&entry.owner) {
            return Err(Error::Forbidden(format!(
                "server \"{server_id}\" belongs to another agent; only its owner or an admin may change it"
            )));
        }
        Ok(entry)
    }

    /// Stops a server, removes it from the store, and waits for its connection to close.
    pub async fn unregister(&self, agent: &Caller, server_id: &str) -> Result<(), Error> {
        let entry = self.managed(agent, server_id)?;
        self.store
            .delete_server(server_id)
            .await
            .or_else(|e| match e {
                StoreError::NotFound => Ok(()),
                other => Err(other),
            })?;
        self.servers
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(server_id);
        entry.stop.cancel();
        entry.close_sessions().await;
        entry.identities.forget_server(server_id);
        if tokio::time::timeout(Duration::from_secs(30), entry.stopped.cancelled())
            .await
            .is_err()
        {
            tracing::warn!(%server_id, "the server did not stop within 30 s");
        }
        self.announce_change(server_id);
        tracing::info!(%server_id, by = %agent.id, "server unregistered");
        self.store
            .record(&agent.id, "server.unregister", server_id, "")
            .await;
        entry.push_to_all(NotificationMethod::ToolsListChanged, serde_json::json!({}));
        Ok(())
    }
}

/// What the audit log says of a registered server: its transport and command or URL (without
/// its secrets).
fn describe(config: &McpServerConfig) -> String {
    let target = match config.transport {
        McpTransport::Stdio => {
            crate::a2e::redact_arg(config.cmd.first().map_or("", String::as_str))
        }
        _ => crate::a2e::redact_url(&config.url),
    };
    format!("{} {target}", config.transport.as_str())
}
