//! The registry: every registered server (config, owner, live connection, status) and the synced
//! catalogue built from them. Allow lists are applied here, on listing and on every call.
//!
//! | module | what it owns |
//! |---|---|
//! | `error` | [`Error`], and the A2E code each failure answers with |
//! | `entry` | one registered server: config, connection, lists, status, channels |
//! | `register` | registering and unregistering; who may manage a server |
//! | `update` | a change of config, and a reconnect asked for |
//! | `validate` | the checks on a config before anything is connected or stored |
//! | `supervisor` | the task per server that connects, reconnects and re-lists |
//! | `catalogue` | the synced tool catalogue and its pages |
//! | `calls` | a catalogue name resolved to its server and tool, and the call |
//! | `route` | which server(s) a listing or a request by name or URI goes to |
//! | `tasks` | tool calls an upstream runs as MCP tasks |
//! | `inflight` | the calls in flight their agents may cancel |
//! | `pins` | tool pinning: definitions digested, changes told, approved |
//! | `merge` | one list across many servers, in pages |
//! | `resources`, `template` | resources and templates across servers; URI templates matched |
//! | `prompts` | prompts across servers, and completions |
//! | `apps` | MCP Apps `_meta` on tools (`ui://` resources, visibility) |
//! | `authorize`, `links` | OAuth authorizations of servers, and the links given out |
//! | `replicas`, `balance`, `relay` | across replicas: holding, spreading, forwarding servers |

pub mod apps;
mod authorize;
mod balance;
mod calls;
mod catalogue;
mod entry;
mod error;
mod identity;
mod inflight;
mod links;
mod merge;
pub use crate::naming;
mod pins;
mod prompts;
mod register;
mod relay;
mod replicas;
mod resources;
mod route;
mod supervisor;
mod tasks;
mod template;
mod update;
mod validate;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use crate::hub::Hub;
use crate::store::Store;
use crate::upstream;
pub use calls::exposes_tool;
pub use catalogue::Entry as Exposed;
pub use entry::{Control, Inbox, Live, ServerEntry, State};
pub use error::Error;
pub use identity::Identities;
pub use merge::{Listed, MergedPage};
pub use prompts::{prompt_messages, prompt_model};
pub use replicas::Cluster;
pub use resources::{resource_model, template_model};
pub use supervisor::Supervision;
pub use tasks::TaskStart;
pub use validate::check_config;

use calls::call_bound;
use route::ready;
use update::needs_reconnect;

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

    /// The shape of a merged page of resources, templates or prompts: one server's listing
    /// (`server_id` given) fails with that server, the whole catalogue's only leaves it out.
    fn page_spec(&self, server_id: &str) -> merge::PageSpec {
        merge::PageSpec {
            size: self.page_size,
            strict: !server_id.is_empty(),
            within: self.supervision.list_timeout,
        }
    }

    /// The agents' verified tokens, kept for the servers that carry each agent's identity.
    pub fn identities(&self) -> &Identities {
        &self.supervision.identities
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

    /// Stops every supervisor and waits (bounded) for their connections to close; across
    /// replicas, then hands the servers over to the others at once.
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
