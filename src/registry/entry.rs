//! One registered server: its config, its live connection and what that lists, its status (each
//! change pushed to agents), and the channels its supervisor listens on.

use std::sync::{Arc, OnceLock, RwLock, Weak};
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::{catalogue, naming};
use crate::a2e::{
    McpServerConfig, McpServerInfo, McpServerStatus, Message, NotificationMethod, ServerPush,
};
use crate::hub::Hub;
use crate::store::Store;
use crate::upstream::{self, Connection, Established, Lists};

/// What a supervisor is asked to do.
#[derive(Debug)]
pub enum Control {
    Reconnect,
}

/// Status of a server between connections, as its supervisor last set it.
#[derive(Debug, Clone, Default)]
pub struct State {
    pub status: McpServerStatus,
    /// The last error, its secrets hidden and without a stdio server's stderr lines.
    pub error: String,
    /// The last stderr lines of a stdio server that went with `error` (secrets hidden): shown to
    /// the server's owner and admins only, since a server may print what it is given.
    pub stderr_tail: String,
    pub last_ping_ms: f64,
    /// How many connection attempts have finished, successful or not.
    pub attempts: u64,
    /// How many connections were made.
    pub connections: u64,
    /// What the server answered when it asked for an OAuth token (`WWW-Authenticate`).
    pub challenge: Option<String>,
}

/// What a live connection offers, after the allow lists.
/// Across replicas, what the replica holding a server says of its connection.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Remote {
    pub replica: String,
    pub mcp_version: String,
    pub server_name: String,
    pub server_version: String,
    pub connected_at: f64,
    pub capabilities: rmcp::model::ServerCapabilities,
}

impl Remote {
    /// Held by `replica` (none yet when empty), with nothing known of its connection yet.
    pub fn at(replica: String) -> Self {
        Self {
            replica,
            mcp_version: String::new(),
            server_name: String::new(),
            server_version: String::new(),
            connected_at: 0.0,
            capabilities: Default::default(),
        }
    }
}

#[derive(Default)]
pub struct Live {
    pub conn: Option<Arc<Connection>>,
    /// What the server listed, before allow lists.
    pub lists: Arc<Lists>,
    /// The exposed tools, sorted by upstream name.
    pub catalogue: Arc<Vec<catalogue::Entry>>,
    /// Why some upstream tools were left out of the catalogue.
    pub skipped: Vec<String>,
    /// Upstream tools whose changed definition waits for approval (quarantine): left out.
    pub held_back: std::collections::BTreeSet<String>,
    /// What is worth knowing of the connection (`Established::note`), shown in `error`.
    pub note: String,
    /// Across replicas, while another replica holds the server.
    pub remote: Option<Remote>,
}

/// One registered server.
pub struct ServerEntry {
    pub id: String,
    pub owner: String,
    pub(super) config: RwLock<Arc<McpServerConfig>>,
    pub(super) live: RwLock<Live>,
    state: watch::Sender<State>,
    pub(super) control: mpsc::UnboundedSender<Control>,
    events: mpsc::UnboundedSender<NotificationMethod>,
    /// Held while a change of config is applied, so concurrent changes do not interleave.
    pub(super) changing: tokio::sync::Mutex<()>,
    pub(super) hub: Arc<Hub>,
    pub(super) store: Store,
    pub(super) guard: crate::guard::Guard,
    max_message_bytes: usize,
    fast_paths: bool,
    /// Longest catalogue name (`MCP_BRIDGE_MAX_TOOL_NAME`).
    pub(super) max_tool_name: usize,
    /// Tool pinning: the mode, and what this replica has told the owner of (pins.rs).
    pub(super) pins: super::pins::Pins,
    /// Fired to stop the supervisor (unregister, shutdown).
    pub stop: CancellationToken,
    /// Fired when the supervisor has stopped and the connection is closed.
    pub stopped: CancellationToken,
    /// The registry's waiting OAuth authorizations.
    pub(super) authorizations: Arc<super::links::Authorizations>,
    /// For a `per_agent` server: the agent whose grant the server's own connection uses.
    pub(super) listing: RwLock<String>,
    /// For a `per_agent` server: each other agent's own session.
    pub(super) sessions: tokio::sync::Mutex<std::collections::HashMap<String, Arc<Connection>>>,
    /// Across replicas: this replica's name.
    pub(super) replica: Option<String>,
    /// The agents' tokens, for a server that carries each agent's identity.
    pub(super) identities: Arc<super::Identities>,
    /// Across replicas: where the holder says its state changed (to share it).
    pub(super) shared: OnceLock<tokio::sync::mpsc::UnboundedSender<Weak<ServerEntry>>>,
    me: Weak<ServerEntry>,
}

impl ServerEntry {
    /// Whether this server is still the one registered now, with the `url` and `auth` it has
    /// now: what an authorization link is bound to (it dies with the server, with a new
    /// registration of the same id, and with a change of `url` or `auth`).
    pub(super) fn identity(&self) -> crate::upstream::oauth::Binding {
        let me = self.me.clone();
        let config = self.config();
        let (url, auth) = (config.url.clone(), config.auth.clone());
        Arc::new(move || {
            me.upgrade().is_some_and(|entry| {
                let now = entry.config();
                !entry.stop.is_cancelled() && now.url == url && now.auth == auth
            })
        })
    }
}

/// The receiving ends a new entry's supervisor takes.
pub struct Inbox {
    pub control: mpsc::UnboundedReceiver<Control>,
    pub events: mpsc::UnboundedReceiver<NotificationMethod>,
}

impl ServerEntry {
    pub(super) fn new(
        owner: String,
        config: McpServerConfig,
        hub: Arc<Hub>,
        store: Store,
        supervision: &super::Supervision,
    ) -> (Arc<Self>, Inbox) {
        let (control_tx, control) = mpsc::unbounded_channel();
        let (events_tx, events) = mpsc::unbounded_channel();
        let entry = Arc::new_cyclic(|me| Self {
            id: config.server_id.clone(),
            owner,
            config: RwLock::new(Arc::new(config)),
            live: RwLock::new(Live::default()),
            state: watch::Sender::new(State::default()),
            control: control_tx,
            events: events_tx,
            changing: tokio::sync::Mutex::new(()),
            hub,
            store,
            guard: supervision.guard,
            max_message_bytes: supervision.max_message_bytes,
            fast_paths: supervision.fast_paths,
            max_tool_name: supervision.max_tool_name,
            pins: super::pins::Pins::new(supervision.pinning),
            stop: CancellationToken::new(),
            stopped: CancellationToken::new(),
            authorizations: supervision.authorizations.clone(),
            listing: RwLock::default(),
            sessions: Default::default(),
            replica: supervision.replica.clone(),
            identities: supervision.identities.clone(),
            shared: OnceLock::new(),
            me: me.clone(),
        });
        (entry, Inbox { control, events })
    }

    pub fn config(&self) -> Arc<McpServerConfig> {
        self.config
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// What a new connection of this server needs from the service.
    pub fn upstream_context(&self) -> upstream::Context {
        // A `per_agent` server's own connection is the listing agent's session: what comes on
        // it is that agent's (before anyone has authorized it cannot connect at all).
        let listing = self.listing_agent();
        let private = self.per_agent();
        upstream::Context {
            server_id: self.id.clone(),
            owner: match private && !listing.is_empty() {
                true => listing,
                false => self.owner.clone(),
            },
            private,
            hub: self.hub.clone(),
            store: self.store.clone(),
            timeout: Duration::from_secs(self.config().timeout),
            events: self.events.clone(),
            guard: self.guard,
            max_message_bytes: self.max_message_bytes,
            fast_paths: self.fast_paths,
            oauth: self.oauth_client(&self.listing_agent()),
        }
    }

    /// Tells every agent a change this server announced, once it is synced.
    pub fn push_to_all(&self, method: NotificationMethod, params: serde_json::Value) {
        let push = ServerPush {
            server_id: self.id.clone(),
            method: method.as_str().to_owned(),
            params,
            ..Default::default()
        };
        self.hub.broadcast(ServerPush::TYPE, &push);
        if method.is_list_changed() {
            self.hub
                .to_mcp_clients(&self.id, method.as_str(), serde_json::json!({}));
        }
    }

    pub fn connection(&self) -> Option<Arc<Connection>> {
        self.live
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .conn
            .clone()
    }

    pub fn state(&self) -> State {
        self.state.borrow().clone()
    }

    /// Changes the state; a change of status is pushed to every agent.
    pub fn update_state(&self, change: impl FnOnce(&mut State)) {
        let before = self.state.borrow().status;
        self.state.send_modify(change);
        if self.state.borrow().status != before {
            let info = serde_json::to_value(self.info()).unwrap_or_default();
            self.push_to_all(NotificationMethod::ServerStatus, info);
        }
        self.shared_changed();
    }

    /// Across replicas, tells the others what changed while this replica holds the server.
    fn shared_changed(&self) {
        if let Some(share) = self.shared.get()
            && self.held_here()
        {
            let _ = share.send(self.me.clone());
        }
    }

    /// Whether this replica holds the server's connection (always, on a single replica).
    pub fn held_here(&self) -> bool {
        self.live
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .remote
            .is_none()
    }

    /// The replica that holds the server, when another one does.
    pub fn held_elsewhere(&self) -> Option<String> {
        let live = self.live.read().unwrap_or_else(|e| e.into_inner());
        match (&live.conn, &live.remote) {
            (None, Some(remote)) if !remote.replica.is_empty() => Some(remote.replica.clone()),
            _ => None,
        }
    }

    /// Across replicas: whether nobody holds the server now (its holder died, and no replica
    /// has taken it over yet).
    pub fn orphaned(&self) -> bool {
        let live = self.live.read().unwrap_or_else(|e| e.into_inner());
        live.conn.is_none() && live.remote.as_ref().is_some_and(|r| r.replica.is_empty())
    }

    /// Whether the server can be reached now: connected here, or ready on its holder.
    pub fn reachable(&self) -> bool {
        let live = self.live.read().unwrap_or_else(|e| e.into_inner());
        live.conn.is_some()
            || (live.remote.as_ref().is_some_and(|r| !r.replica.is_empty())
                && self.state.borrow().status == McpServerStatus::Ready)
    }

    /// What the server can do: as it said on this replica's connection, or on its holder's.
    pub fn capabilities(&self) -> Option<rmcp::model::ServerCapabilities> {
        let live = self.live.read().unwrap_or_else(|e| e.into_inner());
        match (&live.conn, &live.remote) {
            (Some(conn), _) => Some(conn.capabilities.clone()),
            (None, Some(remote)) if !remote.replica.is_empty() => Some(remote.capabilities.clone()),
            _ => None,
        }
    }

    /// Across replicas: the entry as the holder shares it (lists, status), with no push to
    /// agents (the holder pushed them).
    pub fn mirror(&self, remote: Remote, lists: Lists, state: State, held_back: Vec<String>) {
        let config = self.config();
        {
            let mut live = self.live.write().unwrap_or_else(|e| e.into_inner());
            if live.conn.is_some() {
                return;
            }
            live.remote = Some(remote);
            live.lists = Arc::new(lists);
            live.held_back = held_back.into_iter().collect();
            catalogue::rebuild(&mut live, &config, self.max_tool_name);
        }
        self.state.send_replace(state);
    }

    /// Across replicas: this replica holds the server now (`true`) or not (`false`: it
    /// mirrors the holder, once it says who that is).
    pub fn set_held_here(&self, here: bool) {
        let mut live = self.live.write().unwrap_or_else(|e| e.into_inner());
        live.remote = match here {
            true => None,
            false => Some(
                live.remote
                    .clone()
                    .unwrap_or_else(|| Remote::at(String::new())),
            ),
        };
    }

    /// Takes a new connection and its lists into use and marks the server ready. After a
    /// reconnect, agents hear of each list that moved meanwhile.
    pub fn install(&self, established: Established) {
        let before = self.lists();
        let moved = changed_lists(&before, &established.lists);
        {
            let mut live = self.live.write().unwrap_or_else(|e| e.into_inner());
            live.conn = Some(established.conn);
            live.note = established.note;
        }
        self.replace_lists(Some(established.lists));
        let reconnected = self.state().connections > 0;
        self.update_state(|s| {
            s.stderr_tail.clear();
            s.status = McpServerStatus::Ready;
            s.attempts += 1;
            s.connections += 1;
        });
        if reconnected {
            for method in moved {
                self.push_to_all(method, serde_json::json!({}));
            }
        }
    }

    /// Takes new lists into use (or re-applies the config to the current ones).
    pub fn replace_lists(&self, lists: Option<Lists>) {
        let config = self.config();
        let (skipped, connection) = {
            let mut live = self.live.write().unwrap_or_else(|e| e.into_inner());
            if let Some(lists) = lists {
                live.lists = Arc::new(lists);
            }
            catalogue::rebuild(&mut live, &config, self.max_tool_name);
            (live.skipped.clone(), live.note.clone())
        };
        let mut notes = Vec::new();
        if !connection.is_empty() {
            notes.push(connection);
        }
        if !skipped.is_empty() {
            notes.push(format!("left out of the catalogue: {}", skipped.join("; ")));
        }
        self.update_state(|s| s.error = notes.join("; "));
    }

    /// What the server listed, as last synced.
    pub fn lists(&self) -> Arc<Lists> {
        self.live
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .lists
            .clone()
    }

    /// Drops the connection from use: calls see the server as unavailable from now on. The last
    /// synced catalogue stays listed, so a server that restarts does not make its tools flicker.
    pub fn detach(&self) -> Option<Arc<Connection>> {
        self.live
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .conn
            .take()
    }

    /// The server as `agent` may see it: the owner and admins also get the stderr lines that
    /// went with the last error.
    pub fn info_for(&self, agent: &crate::caller::Caller) -> McpServerInfo {
        let mut info = self.info();
        if agent.may_manage(&self.owner) {
            info.error.push_str(&self.state.borrow().stderr_tail);
        }
        info
    }

    /// The server as every agent may see it (what status pushes carry).
    pub fn info(&self) -> McpServerInfo {
        let config = self.config();
        let state = self.state();
        let live = self.live.read().unwrap_or_else(|e| e.into_inner());
        let conn = live.conn.as_ref();
        let text = |f: fn(&Connection) -> &String| conn.map(|c| f(c).clone()).unwrap_or_default();
        let mut info = McpServerInfo {
            server_id: self.id.clone(),
            name: config.name.clone(),
            transport: config.transport,
            status: state.status,
            mcp_version: text(|c| &c.mcp_version),
            server_name: text(|c| &c.server_name),
            server_version: text(|c| &c.server_version),
            tools_count: live.catalogue.len() as u64,
            resources_count: live
                .lists
                .resources
                .iter()
                .filter(|r| naming::allowed(&config.resource_allow_list, &r.uri))
                .count() as u64,
            prompts_count: live.lists.prompts.len() as u64,
            last_ping_ms: state.last_ping_ms,
            error: state.error,
            connected_at: conn.map(|c| c.connected_at).unwrap_or_default(),
            replica: None,
        };
        if let Some(me) = &self.replica {
            info.replica = Some(match &live.remote {
                None => me.clone(),
                Some(remote) => {
                    info.mcp_version = remote.mcp_version.clone();
                    info.server_name = remote.server_name.clone();
                    info.server_version = remote.server_version.clone();
                    info.connected_at = remote.connected_at;
                    remote.replica.clone()
                }
            });
        }
        info
    }

    /// Waits (at most `bound`) until a connection attempt started after `since` attempts finished.
    pub(super) async fn settled_after(&self, since: u64, bound: Duration) {
        let mut rx = self.state.subscribe();
        let _ = tokio::time::timeout(bound, rx.wait_for(|s| s.attempts > since)).await;
    }
}

/// The `list_changed` notifications that tell what differs between two listings.
fn changed_lists(before: &Lists, after: &Lists) -> Vec<NotificationMethod> {
    let mut moved = Vec::new();
    if before.tools != after.tools {
        moved.push(NotificationMethod::ToolsListChanged);
    }
    if before.resources != after.resources || before.templates != after.templates {
        moved.push(NotificationMethod::ResourcesListChanged);
    }
    if before.prompts != after.prompts {
        moved.push(NotificationMethod::PromptsListChanged);
    }
    moved
}
