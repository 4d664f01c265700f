//! The registry: every registered server (config, owner, live connection, status) and the synced
//! catalogue built from them. Allow lists are applied here, on listing and on every call.

pub mod apps;
mod authorize;
mod balance;
mod catalogue;
mod entry;
mod inflight;
mod links;
mod merge;
pub use crate::naming;
mod pins;
mod prompts;
mod relay;
mod replicas;
mod resources;
mod supervisor;
mod tasks;
mod template;
mod validate;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, ServerCapabilities};

use crate::a2e::{
    ErrorCode, McpServerConfig, McpServerInfo, McpTransport, NotificationMethod, REDACTED,
    ServerUpdateRequest,
};
use crate::caller::Caller;
use crate::hub::Hub;
use crate::store::{Store, StoreError, StoredServer};
use crate::upstream::{self, CallError, CallOrigin, ConnectError, Connection, Lists};
pub use catalogue::{Entry as Exposed, Page};
pub use entry::{Control, Inbox, Live, ServerEntry, State};
pub use merge::{Listed, MergedPage};
pub use prompts::prompt_messages;
pub use replicas::Cluster;
pub use supervisor::Supervision;
pub use tasks::TaskStart;
pub use validate::check_config;

/// Why a registry operation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    Conflict(String),
    #[error("no server \"{0}\" is registered")]
    ServerNotFound(String),
    #[error("no tool \"{0}\" is in the catalogue")]
    ToolNotFound(String),
    #[error("server \"{0}\" is not connected; try again when its status is ready")]
    Unavailable(String),
    #[error("cannot connect to server \"{server_id}\": {error}")]
    Connect {
        server_id: String,
        error: ConnectError,
    },
    #[error("no resource \"{0}\" is available")]
    ResourceNotFound(String),
    #[error("no prompt \"{0}\" is available")]
    PromptNotFound(String),
    #[error("{0}")]
    NotFound(String),
    #[error("server \"{server_id}\" does not offer {what}")]
    CapabilityMissing {
        server_id: String,
        what: &'static str,
    },
    #[error("{what} failed: {error}")]
    Upstream { what: String, error: CallError },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Internal(String),
    /// The call needs an OAuth authorization the caller has not given: the link to give it.
    #[error("{}", auth_required(server_id, authorization_url.is_some()))]
    AuthRequired {
        server_id: String,
        authorization_url: Option<String>,
    },
    /// Talking to a server's authorization server failed.
    #[error("OAuth: {0}")]
    OAuth(String),
    /// The bridge's own database does not answer while OAuth needs it (worth trying again).
    #[error("OAuth: {0}")]
    OAuthStoreUnavailable(String),
    /// What the replica holding the server answered (across replicas).
    #[error("{1}")]
    Remote(ErrorCode, String),
    /// The caller cancelled the call before it answered; the server was told.
    #[error("the call \"{0}\" was cancelled by its caller; the server was told to stop")]
    Cancelled(String),
}

impl Error {
    /// The A2E error code this error answers with.
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Invalid(_) => ErrorCode::InvalidRequest,
            Error::Forbidden(_) => ErrorCode::Forbidden,
            Error::Conflict(_) => ErrorCode::Conflict,
            Error::ServerNotFound(_) => ErrorCode::McpServerNotFound,
            Error::ToolNotFound(_) => ErrorCode::McpToolNotFound,
            Error::Unavailable(_) => ErrorCode::McpServerUnavailable,
            Error::Connect { error, .. } => error.code(),
            Error::ResourceNotFound(_) => ErrorCode::McpResourceNotFound,
            Error::PromptNotFound(_) => ErrorCode::McpPromptNotFound,
            Error::NotFound(_) => ErrorCode::NotFound,
            Error::CapabilityMissing { .. } => ErrorCode::McpCapabilityMissing,
            Error::Upstream { error, .. } => error.code(),
            Error::Store(error) => error.code(),
            Error::Internal(_) => ErrorCode::Internal,
            Error::AuthRequired { .. } => ErrorCode::McpAuthRequired,
            Error::OAuth(_) => ErrorCode::McpTransportError,
            Error::OAuthStoreUnavailable(_) => ErrorCode::McpServerUnavailable,
            Error::Remote(code, _) => *code,
            Error::Cancelled(_) => ErrorCode::Cancelled,
        }
    }
}

/// What an `AuthRequired` error says: what to do with its link, or who can give one.
fn auth_required(server_id: &str, has_link: bool) -> String {
    match has_link {
        true => format!(
            "server \"{server_id}\" needs an OAuth authorization first: open `authorization_url` \
             in a browser, approve, and call again"
        ),
        false => format!(
            "server \"{server_id}\" waits for an OAuth authorization by its owner or an admin \
             (POST /v1/servers/{server_id}/authorize)"
        ),
    }
}

/// All registered servers.
pub struct Registry {
    servers: RwLock<BTreeMap<String, Arc<ServerEntry>>>,
    /// Server ids being registered right now (not yet in `servers`), with their registrant.
    reserved: Mutex<HashMap<String, String>>,
    store: Store,
    hub: Arc<Hub>,
    stdio_allowed_commands: Vec<String>,
    /// Loader variables (`upstream::LOADER_ENV`) a stdio server's `env` may set.
    stdio_allowed_env: Vec<String>,
    /// Most entries a merged page of resources, templates or prompts holds.
    page_size: usize,
    supervision: Supervision,
    /// OAuth authorizations waiting for their person (shared with every entry).
    authorizations: Arc<links::Authorizations>,
    /// Across replicas: this replica among the others.
    cluster: Option<Arc<replicas::Cluster>>,
    /// The calls in flight here that their agents may cancel (`DELETE /v1/calls/{id}`).
    pub in_flight: Arc<inflight::InFlight>,
}

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
    pub fn new(
        store: Store,
        hub: Arc<Hub>,
        stdio_allowed_commands: Vec<String>,
        stdio_allowed_env: Vec<String>,
        page_size: usize,
        supervision: Supervision,
    ) -> Arc<Self> {
        let cluster = hub
            .bus()
            .and_then(|bus| replicas::Cluster::new(bus.clone(), &supervision));
        Arc::new(Self {
            servers: RwLock::default(),
            reserved: Mutex::default(),
            store,
            hub,
            stdio_allowed_commands,
            stdio_allowed_env,
            page_size,
            authorizations: supervision.authorizations.clone(),
            cluster,
            in_flight: Arc::default(),
            supervision,
        })
    }

    /// The ready servers with a capability, or the one named (404, 503 or 501 when it cannot).
    async fn sources(
        &self,
        agent: &str,
        server_id: &str,
        has: fn(&ServerCapabilities) -> bool,
        what: &'static str,
    ) -> Result<Vec<merge::Source>, Error> {
        if !server_id.is_empty() {
            let entry = self.get(server_id)?;
            return match self.reach_for(&entry, agent, has, what, true).await? {
                Some(reach) => Ok(vec![(entry, reach)]),
                // Held by another replica: only the listing agent's session is there.
                None => Ok(Vec::new()),
            };
        }
        // Side by side and bounded like the listing itself: an agent's first session with a
        // `per_agent` server is made here, and one slow server must not hold up the rest.
        let bound = self.supervision.list_timeout;
        let reaches = self.entries().into_iter().map(|entry| async move {
            let reach = self.reach_for(&entry, agent, has, what, false);
            match tokio::time::timeout(bound, reach).await {
                Ok(Ok(Some(reach))) => Some((entry, reach)),
                _ => None,
            }
        });
        Ok(futures::future::join_all(reaches)
            .await
            .into_iter()
            .flatten()
            .collect())
    }

    /// How `agent` lists a server: over the server's own connection; for a `per_agent` server,
    /// over the agent's own session, since what one agent's grant lists (its private resource
    /// names, say) is that agent's alone. `None`: the agent has nothing to list it over (no
    /// grant yet, in a merged listing; or the server is held by another replica). Asked for
    /// by name (`named`), a `per_agent` server the agent has not authorized answers
    /// `mcp_auth_required` with the agent's own link.
    async fn reach_for(
        &self,
        entry: &Arc<ServerEntry>,
        agent: &str,
        has: fn(&ServerCapabilities) -> bool,
        what: &'static str,
        named: bool,
    ) -> Result<Option<merge::Reach>, Error> {
        if !entry.per_agent() || agent == entry.listing_agent() {
            // Asked by name, a server whose holder is not ready (it may have died) is asked of
            // it anyway: the relay waits for the next holder, within the listing's bound.
            if named
                && let Some(holder) = entry.held_elsewhere()
                && entry.capabilities().is_some_and(|c| has(&c))
            {
                return Ok(Some(merge::Reach::Holder(holder)));
            }
            return reach(entry, has, what).map(Some);
        }
        if entry.held_elsewhere().is_some() {
            return Ok(None);
        }
        let granted = match entry.session_of(agent).await {
            Some(conn) if !conn.is_lost() => true,
            _ => self
                .store
                .oauth_agents(&entry.id)
                .await?
                .iter()
                .any(|a| a == agent),
        };
        if !granted && !named {
            return Ok(None);
        }
        let conn = entry.ready_for(agent, has, what).await?;
        Ok(Some(merge::Reach::Here(conn)))
    }

    /// The server a request by name or URI goes to: the named one, else the only ready server
    /// that `offers` it. Several → conflict naming them; only servers that are down → 503.
    fn route(
        &self,
        server_id: &str,
        offers: impl Fn(&ServerEntry, &Lists) -> bool,
        missing: Error,
    ) -> Result<Arc<ServerEntry>, Error> {
        if !server_id.is_empty() {
            return self.get(server_id);
        }
        let (mut up, mut down) = (Vec::new(), Vec::new());
        for entry in self.entries() {
            if offers(&entry, &entry.lists()) {
                match entry.reachable() {
                    true => up.push(entry),
                    false => down.push(entry),
                }
            }
        }
        match (up.len(), down.first()) {
            (1, _) => Ok(up.remove(0)),
            (0, Some(entry)) => Err(Error::Unavailable(entry.id.clone())),
            (0, None) => Err(missing),
            _ => {
                let ids: Vec<&str> = up.iter().map(|e| e.id.as_str()).collect();
                Err(Error::Conflict(format!(
                    "{} is offered by several servers ({}); say which with `server_id`",
                    missing.subject(),
                    ids.join(", ")
                )))
            }
        }
    }

    pub fn get(&self, server_id: &str) -> Result<Arc<ServerEntry>, Error> {
        self.servers
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(server_id)
            .cloned()
            .ok_or_else(|| Error::ServerNotFound(server_id.to_owned()))
    }

    /// Every server, ordered by id.
    pub fn entries(&self) -> Vec<Arc<ServerEntry>> {
        self.servers
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect()
    }

    /// What this bridge advertises of itself in its initialize result: its instance id, and the
    /// depth and instance ids of the bridges among the servers connected here (see
    /// [`upstream::chain`]).
    pub fn chain(&self) -> upstream::chain::Chain {
        let servers = self.servers.read().unwrap_or_else(|e| e.into_inner());
        let upstreams = servers
            .values()
            .filter_map(|entry| entry.connection())
            .filter_map(|conn| upstream::chain::Chain::of(&conn.capabilities));
        upstream::chain::Chain::of_this_bridge(upstreams.collect::<Vec<_>>())
    }

    /// Makes `entry` visible and starts its supervisor; across replicas, `held` says whether
    /// this replica holds it (else the lease loop decides).
    fn insert_held(&self, entry: Arc<ServerEntry>, inbox: Inbox, held: bool) {
        self.servers
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(entry.id.clone(), entry.clone());
        match &self.cluster {
            None => supervisor::spawn(entry, inbox, self.store.clone(), self.supervision.clone()),
            Some(cluster) => replicas::spawn_hold(
                entry,
                inbox,
                self.store.clone(),
                self.supervision.clone(),
                cluster,
                held,
            ),
        }
    }

    /// Brings back every stored server; each connects on its own, in parallel.
    pub async fn restore(self: &Arc<Self>) -> Result<usize, Error> {
        let stored = self.store.list_servers().await?;
        let mut count = 0;
        for server in stored {
            // The allow list as it is now, also for servers registered before it was narrowed:
            // such a server stays stored, and does not run.
            if let Some(program) = self.disallowed_command(&server.config) {
                tracing::error!(
                    server_id = %server.config.server_id,
                    %program,
                    "stored stdio server not started: its command is not in MCP_BRIDGE_STDIO_ALLOWED_COMMANDS"
                );
                continue;
            }
            if let Some(name) = self.disallowed_env(&server.config) {
                tracing::error!(
                    server_id = %server.config.server_id,
                    variable = %name,
                    "stored stdio server not started: its env sets a loader variable MCP_BRIDGE_STDIO_ALLOWED_ENV does not allow"
                );
                continue;
            }
            count += 1;
            let (entry, inbox) = ServerEntry::new(
                server.owner,
                server.config,
                self.hub.clone(),
                self.store.clone(),
                &self.supervision,
            );
            self.insert_held(entry, inbox, false);
        }
        Ok(count)
    }

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
        // A server that wants OAuth is registered waiting for a person to authorize it.
        let mut pending_authorization = None;
        let established = match upstream::connect(&config, entry.upstream_context()).await {
            Ok(established) => Some(established),
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

    /// A stdio server runs a command on this host: admins only, and only allowed commands.
    fn check_command_rights(&self, agent: &Caller, config: &McpServerConfig) -> Result<(), Error> {
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
    fn disallowed_env<'c>(&self, config: &'c McpServerConfig) -> Option<&'c str> {
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
    fn disallowed_command<'c>(&self, config: &'c McpServerConfig) -> Option<&'c str> {
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
        self.check_command_rights(agent, config)
    }

    fn managed(&self, agent: &Caller, server_id: &str) -> Result<Arc<ServerEntry>, Error> {
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

    /// Applies a change of config; reconnects when the change concerns the connection.
    pub async fn update(
        &self,
        agent: &Caller,
        change: ServerUpdateRequest,
    ) -> Result<Arc<ServerEntry>, Error> {
        let entry = self.managed(agent, &change.server_id)?;
        let changing = entry.changing.lock().await;
        let old = entry.config();
        let new = apply_change(&old, change);
        if new.cmd != old.cmd || new.env != old.env || new.cwd != old.cwd {
            self.check_command_rights(agent, &new)?;
        }
        validate::check_config(&new, &self.supervision.guard).map_err(Error::Invalid)?;
        // Tokens (and registrations) were for the old resource or settings: not to be sent on,
        // and forgotten with the change that made them stale.
        let forget_oauth = new.url != old.url || new.auth != old.auth;
        match forget_oauth {
            true => self.store.update_server_config_clearing_oauth(&new).await,
            false => self.store.update_server_config(&new).await,
        }
        .map_err(|e| match e {
            StoreError::NotFound => Error::ServerNotFound(new.server_id.clone()),
            other => other.into(),
        })?;
        self.store
            .record(
                &agent.id,
                "server.update",
                &new.server_id,
                &changed_fields(&old, &new),
            )
            .await;
        self.announce_change(&new.server_id);
        let tool_list_changed = new.tool_allow_list != old.tool_allow_list;
        let resource_list_changed = new.resource_allow_list != old.resource_allow_list;
        // Held by another replica: it reconnects or re-lists when it reads the change.
        let reconnect = needs_reconnect(&old, &new) && entry.held_here();
        let bound = new.connect_bound();
        if forget_oauth {
            entry.close_sessions().await;
            entry
                .listing
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .clear();
        }
        *entry.config.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(new);
        if let (Some(cluster), false) = (&self.cluster, entry.held_here()) {
            cluster.mirror(&entry);
        } else if reconnect {
            let since = entry.state().attempts;
            let _ = entry.control.send(Control::Reconnect);
            entry
                .settled_after(since, bound + Duration::from_secs(1))
                .await;
        } else {
            entry.replace_lists(None);
            if tool_list_changed {
                entry.push_to_all(NotificationMethod::ToolsListChanged, serde_json::json!({}));
            }
            if resource_list_changed {
                entry.push_to_all(
                    NotificationMethod::ResourcesListChanged,
                    serde_json::json!({}),
                );
            }
        }
        drop(changing);
        Ok(entry)
    }

    /// Drops the connection and connects again now, waiting for the outcome (bounded).
    pub async fn reconnect(
        &self,
        agent: &Caller,
        server_id: &str,
    ) -> Result<Arc<ServerEntry>, Error> {
        let entry = self.managed(agent, server_id)?;
        let since = entry.state().attempts;
        let bound = entry.config().connect_bound();
        match entry.held_elsewhere() {
            Some(holder) => {
                let op = replicas::Op::Reconnect {
                    server_id: server_id.to_owned(),
                };
                self.forward::<serde_json::Value>(&holder, op, bound)
                    .await?;
            }
            None => {
                let _ = entry.control.send(Control::Reconnect);
            }
        }
        entry
            .settled_after(since, bound + Duration::from_secs(1))
            .await;
        Ok(entry)
    }

    /// A page of the catalogue.
    pub fn list_tools(&self, server_id: &str, cursor: &str) -> Result<Page, Error> {
        catalogue::page(&self.entries(), server_id, cursor).map_err(Error::Invalid)
    }

    /// Every server with the tools it exposes now, ordered by id. A server's list is replaced
    /// whole when it changes, so comparing the `Arc`s tells whether anything did.
    pub fn catalogue(&self) -> Vec<(Arc<ServerEntry>, Arc<Vec<Exposed>>)> {
        self.entries()
            .into_iter()
            .map(|entry| {
                let tools = entry
                    .live
                    .read()
                    .unwrap_or_else(|e| e.into_inner())
                    .catalogue
                    .clone();
                (entry, tools)
            })
            .collect()
    }

    /// The (server id, upstream tool) a catalogue name stands for: a short alias or a full name
    /// `{server_id}__{tool}` the catalogue shows (a full name also of a tool shown under its
    /// alias); failing those, a `{server_id}__{tool}` of a registered server, listed or not
    /// (a server that is down since the start has listed nothing: its calls answer 503). Does
    /// not say whether the tool is exposed: `exposes_tool` does.
    pub fn resolve_tool(&self, name: &str) -> Option<(String, String)> {
        // The common case, a full name the catalogue shows, without a walk of every server.
        if let Some((server_id, tool)) = naming::split(name)
            && let Ok(entry) = self.get(server_id)
            && catalogue::contains(&entry, tool)
        {
            return Some((server_id.to_owned(), tool.to_owned()));
        }
        catalogue::resolve(&self.entries(), name)
    }

    /// Calls a catalogue tool by its namespaced name or short alias.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
        timeout: Option<f64>,
        origin: CallOrigin,
    ) -> Result<(String, CallToolResult), Error> {
        let not_found = || Error::ToolNotFound(name.to_owned());
        let (entry, tool) = self.route_tool(name)?;
        let server_id = entry.id.as_str();
        let config = entry.config();
        self.settle(&entry).await;
        if let Some(holder) = entry.held_elsewhere() {
            // The full name: the holder resolves it whatever aliases it would give.
            let full = format!("{server_id}{}{tool}", naming::SEPARATOR);
            let bound = Duration::from_secs(config.timeout);
            let attempt = |holder: String, left: Duration| -> futures::future::BoxFuture<'_, _> {
                let (name, arguments, origin) = (full.clone(), arguments.clone(), origin.clone());
                Box::pin(async move {
                    self.forward_call(&holder, name, arguments, timeout, &origin, left)
                        .await
                })
            };
            let relayed = self.relay(&entry, holder, bound, relay::Repeat::Undelivered, attempt);
            match Box::pin(relayed).await {
                relay::Relayed::Done(answer) => return answer,
                // Taken over here meanwhile: called here.
                relay::Relayed::HereNow => {}
            }
        }
        // The caller's id, borrowed from a clone of the origin (a reference count, not a copy).
        let caller = origin.clone();
        let agent = caller.agent_id();
        let conn = entry.connection_for(agent).await?;
        if !catalogue::contains(&entry, &tool) {
            return Err(not_found());
        }
        let bound = call_bound(&config, timeout);
        let params = CallToolRequestParams::new(tool).with_arguments(arguments);
        let tool: &str = &params.name;
        // A request's span has room for the call's server and tool: recorded there they cost
        // less than a span of their own (BENCHMARKS.md, fifth round). A call outside a request
        // (a task, a call forwarded by another replica) gets its own.
        let request = tracing::Span::current();
        let result = if request.has_field("server_id") && request.has_field("tool") {
            request.record("server_id", server_id).record("tool", tool);
            conn.call_tool(params, bound, origin).await
        } else {
            let span = tracing::info_span!("tool_call", server_id, tool);
            tracing::Instrument::instrument(conn.call_tool(params, bound, origin), span).await
        };
        match result {
            Ok(result) => {
                entry.authorized_call(agent);
                Ok((server_id.to_owned(), result))
            }
            Err(CallError::AuthRequired(challenge)) => {
                Err(Box::pin(entry.reauthorize(agent, &challenge)).await)
            }
            Err(error) => Err(Error::Upstream {
                what: format!("calling \"{name}\""),
                error,
            }),
        }
    }

    /// The server and upstream tool of the catalogue tool `name`, whose allow list lets it be
    /// called (`ToolNotFound` otherwise).
    fn route_tool(&self, name: &str) -> Result<(Arc<ServerEntry>, String), Error> {
        let not_found = || Error::ToolNotFound(name.to_owned());
        // The common case, a full name the catalogue shows: its server looked up once.
        let full = naming::split(name)
            .and_then(|(server_id, tool)| Some((self.get(server_id).ok()?, tool)))
            .filter(|(entry, tool)| catalogue::contains(entry, tool));
        let (entry, tool) = match full {
            Some((entry, tool)) => (entry, tool.to_owned()),
            None => {
                let (server_id, tool) =
                    catalogue::resolve(&self.entries(), name).ok_or_else(not_found)?;
                (self.get(&server_id).map_err(|_| not_found())?, tool)
            }
        };
        if !naming::tool_allowed(&entry.config().tool_allow_list, &tool) {
            return Err(not_found());
        }
        Ok((entry, tool))
    }

    /// Approves the current definition of a server's tool (by upstream name, or its catalogue
    /// name) under tool pinning: pins it, and shows the tool again if it was held back. The
    /// server's owner or an admin only. Answers the tool as the catalogue shows it and whether a
    /// change was waiting (approving a definition already pinned changes nothing).
    pub async fn approve_tool(
        &self,
        agent: &Caller,
        server_id: &str,
        tool: &str,
    ) -> Result<(crate::a2e::ToolInfo, bool), Error> {
        let entry = self.managed(agent, server_id)?;
        let tool = self.upstream_tool(&entry, tool)?;
        let Some(holder) = entry.held_elsewhere() else {
            return entry.approve(&agent.id, &tool).await;
        };
        let op = replicas::Op::ApproveTool {
            agent: agent.id.clone(),
            server_id: server_id.to_owned(),
            tool: tool.clone(),
        };
        // Approving twice pins the same definition: repeated on the next holder when this one
        // dies, or here when this replica took the server over.
        let answer = match self.relay_safe(&entry, holder, op).await {
            relay::Relayed::Done(answer) => answer?,
            relay::Relayed::HereNow => return entry.approve(&agent.id, &tool).await,
        };
        // The holder shares the same shortly; shown again here at once.
        entry.release(&tool);
        Ok(answer)
    }

    /// Stops every supervisor and waits (bounded) for their connections to close.
    /// Stops every server; across replicas, then hands them over to the others at once.
    pub async fn shutdown(&self, grace: Duration) {
        let entries = self.entries();
        for entry in &entries {
            entry.stop.cancel();
        }
        let all = futures::future::join_all(entries.iter().map(|e| e.stopped.cancelled()));
        if tokio::time::timeout(grace, all).await.is_err() {
            tracing::warn!("some servers did not stop within {grace:?}");
        }
        self.hand_over().await;
    }
}

/// How long a call may take: the server's `timeout`, or less when the caller asks.
fn call_bound(config: &McpServerConfig, asked: Option<f64>) -> Duration {
    let bound = Duration::from_secs(config.timeout);
    match asked.filter(|t| t.is_finite() && *t > 0.0) {
        Some(asked) => Duration::try_from_secs_f64(asked).map_or(bound, |asked| bound.min(asked)),
        None => bound,
    }
}

/// Whether the server exposes the upstream tool `tool` in the catalogue now.
pub fn exposes_tool(entry: &ServerEntry, tool: &str) -> bool {
    catalogue::contains(entry, tool)
}

/// The live connection of a server that has the capability.
/// Whether a change of config needs a new connection.
fn needs_reconnect(old: &McpServerConfig, new: &McpServerConfig) -> bool {
    new.cmd != old.cmd
        || new.env != old.env
        || new.cwd != old.cwd
        || new.url != old.url
        || new.headers != old.headers
        || new.connect_timeout != old.connect_timeout
        || new.protocol_version != old.protocol_version
        || new.auth != old.auth
}

/// How a listing reaches a server that has `has`: its connection here, or its holder.
fn reach(
    entry: &ServerEntry,
    has: impl Fn(&ServerCapabilities) -> bool,
    what: &'static str,
) -> Result<merge::Reach, Error> {
    if let Some(holder) = entry.held_elsewhere() {
        if !entry.reachable() {
            return Err(Error::Unavailable(entry.id.clone()));
        }
        if !entry.capabilities().is_some_and(|c| has(&c)) {
            return Err(Error::CapabilityMissing {
                server_id: entry.id.clone(),
                what,
            });
        }
        return Ok(merge::Reach::Holder(holder));
    }
    ready(entry, has, what).map(merge::Reach::Here)
}

fn ready(
    entry: &ServerEntry,
    has: impl Fn(&ServerCapabilities) -> bool,
    what: &'static str,
) -> Result<Arc<Connection>, Error> {
    let conn = entry
        .connection()
        .ok_or_else(|| Error::Unavailable(entry.id.clone()))?;
    if !has(&conn.capabilities) {
        return Err(Error::CapabilityMissing {
            server_id: entry.id.clone(),
            what,
        });
    }
    Ok(conn)
}

impl Error {
    /// What a not-found error is about, for a sentence naming it.
    fn subject(&self) -> String {
        match self {
            Error::ResourceNotFound(uri) => format!("resource \"{uri}\""),
            Error::PromptNotFound(name) => format!("prompt \"{name}\""),
            other => other.to_string(),
        }
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

/// The fields a change of config touched, by name (never their values).
fn changed_fields(old: &McpServerConfig, new: &McpServerConfig) -> String {
    let (Ok(serde_json::Value::Object(old)), Ok(serde_json::Value::Object(new))) =
        (serde_json::to_value(old), serde_json::to_value(new))
    else {
        return String::new();
    };
    let mut fields: Vec<&str> = new
        .iter()
        .filter(|(name, value)| old.get(*name) != Some(*value))
        .map(|(name, _)| name.as_str())
        .chain(
            old.keys()
                .filter(|k| !new.contains_key(*k))
                .map(String::as_str),
        )
        .collect();
    fields.sort_unstable();
    fields.dedup();
    format!("changed: {}", fields.join(", "))
}

/// The config after a change: absent fields unchanged, secret values given as `***` kept.
fn apply_change(old: &McpServerConfig, change: ServerUpdateRequest) -> McpServerConfig {
    let mut new = old.clone();
    let keep_secrets =
        |given: std::collections::BTreeMap<String, String>,
         stored: &std::collections::BTreeMap<String, String>| {
            given
                .into_iter()
                .map(|(k, v)| {
                    let v = match (v == REDACTED, stored.get(&k)) {
                        (true, Some(old)) => old.clone(),
                        _ => v,
                    };
                    (k, v)
                })
                .collect()
        };
    if let Some(v) = change.name {
        new.name = v;
    }
    // An argument as shown (a URL's secrets hidden) sent back unchanged keeps the stored one.
    if let Some(v) = change.cmd {
        new.cmd = v
            .into_iter()
            .enumerate()
            .map(|(i, arg)| match old.cmd.get(i) {
                Some(stored) if arg != *stored && arg == crate::a2e::redact_arg(stored) => {
                    stored.clone()
                }
                _ => arg,
            })
            .collect();
    }
    if let Some(v) = change.cwd {
        new.cwd = v;
    }
    if let Some(v) = change.env {
        new.env = keep_secrets(v, &old.env);
    }
    // The URL as shown (its secrets hidden) sent back unchanged keeps the stored one.
    if let Some(v) = change.url
        && v != crate::a2e::redact_url(&old.url)
    {
        new.url = v;
    }
    if let Some(v) = change.headers {
        new.headers = keep_secrets(v, &old.headers);
    }
    if let Some(v) = change.timeout {
        new.timeout = v;
    }
    if let Some(v) = change.connect_timeout {
        new.connect_timeout = v;
    }
    if let Some(v) = change.protocol_version {
        new.protocol_version = v;
    }
    if let Some(v) = change.auto_reconnect {
        new.auto_reconnect = v;
    }
    if let Some(v) = change.tool_allow_list {
        new.tool_allow_list = v;
    }
    if let Some(v) = change.resource_allow_list {
        new.resource_allow_list = v;
    }
    if let Some(v) = change.auth {
        new.auth = v.map(|auth| auth.keeping_secrets(old.auth.as_ref()));
    }
    new
}
