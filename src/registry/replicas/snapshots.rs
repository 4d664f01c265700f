//! What the holder of a server shares of it (its status and lists, a key per holder and server
//! in the hub's shared state), and how every other replica mirrors the holder from it.

use std::collections::HashSet;
use std::sync::{Arc, Weak};

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use super::Cluster;
use crate::a2e::McpServerStatus;
use crate::registry::entry::Remote;
use crate::registry::{Registry, ServerEntry, State};
use crate::upstream::Lists;

/// What the holder shares of a server.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Snapshot {
    remote: Remote,
    lists: Lists,
    status: McpServerStatus,
    error: String,
    last_ping_ms: f64,
    attempts: u64,
    connections: u64,
    /// Tools held back until approved (tool pinning); every replica hides the same.
    #[serde(default)]
    held_back: Vec<String>,
}

impl Cluster {
    /// What the others should show of the server now: the holder's latest snapshot.
    pub(in crate::registry) fn mirror(&self, entry: &ServerEntry) {
        if self.holds(&entry.id) {
            return;
        }
        let _one_at_a_time = self.mirroring.lock().unwrap_or_else(|e| e.into_inner());
        let holder = self
            .holders
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&entry.id)
            .cloned();
        let snapshot = holder
            .as_ref()
            .and_then(|holder| self.serving(holder, &entry.id));
        match (holder, snapshot) {
            (Some(_), Some(snapshot)) => {
                let state = State {
                    status: snapshot.status,
                    error: snapshot.error,
                    last_ping_ms: snapshot.last_ping_ms,
                    attempts: snapshot.attempts,
                    connections: snapshot.connections,
                    ..State::default()
                };
                entry.mirror(snapshot.remote, snapshot.lists, state, snapshot.held_back);
            }
            // Held, but nothing shared yet: it is connecting there.
            (Some(holder), None) => {
                let mut state = entry.state();
                state.status = McpServerStatus::Connecting;
                let held_back = entry.held_back();
                entry.mirror(
                    Remote::at(holder),
                    entry.lists().as_ref().clone(),
                    state,
                    held_back,
                );
            }
            // Nobody holds it (its holder died): one of the replicas takes it over shortly.
            (None, _) => {
                let mut state = entry.state();
                state.status = McpServerStatus::Disconnected;
                let held_back = entry.held_back();
                entry.mirror(
                    Remote::at(String::new()),
                    entry.lists().as_ref().clone(),
                    state,
                    held_back,
                );
            }
        }
    }

    /// What the replica serving a server held by `holder` shared: the holder's snapshot, or,
    /// while the holder is not ready with it yet, that of a previous holder that still is (it
    /// serves the server until the new holder is ready: a hand-over, `balance.rs`).
    fn serving(&self, holder: &str, server_id: &str) -> Option<Snapshot> {
        let snapshots = self.snapshots.lock().unwrap_or_else(|e| e.into_inner());
        let own = snapshots
            .get(&(holder.to_owned(), server_id.to_owned()))
            .cloned();
        if own
            .as_ref()
            .is_some_and(|s| s.status == McpServerStatus::Ready)
        {
            return own;
        }
        let up = self.bus.others();
        snapshots
            .iter()
            .find(|((replica, id), snapshot)| {
                id == server_id
                    && replica != holder
                    && snapshot.status == McpServerStatus::Ready
                    && up.contains(replica)
            })
            .map(|(_, snapshot)| snapshot.clone())
            .or(own)
    }

    /// Whether `replica` says the server is ready there.
    pub(in crate::registry) fn ready_on(&self, replica: &str, server_id: &str) -> bool {
        self.snapshots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(replica.to_owned(), server_id.to_owned()))
            .is_some_and(|s| s.status == McpServerStatus::Ready)
    }
}

/// The shared key of a server held by `replica`: subject tokens (a server id may hold dots).
pub(super) fn shared_key(replica: &str, server_id: &str) -> String {
    format!("{replica}.{}", hex::encode(server_id))
}

/// Publishes what changed on the servers held here.
pub(super) async fn share_snapshots(
    cluster: Arc<Cluster>,
    mut shares: mpsc::UnboundedReceiver<Weak<ServerEntry>>,
) {
    while let Some(first) = shares.recv().await {
        // Changes that came together are shared once.
        let mut batch = vec![first];
        while let Ok(more) = shares.try_recv() {
            batch.push(more);
        }
        let mut seen = HashSet::new();
        for entry in batch.iter().filter_map(Weak::upgrade) {
            if !seen.insert(entry.id.clone()) || !cluster.holds(&entry.id) {
                continue;
            }
            let info = entry.info();
            let state = entry.state();
            let snapshot = Snapshot {
                remote: Remote {
                    replica: cluster.replica.clone(),
                    mcp_version: info.mcp_version,
                    server_name: info.server_name,
                    server_version: info.server_version,
                    connected_at: info.connected_at,
                    capabilities: entry.capabilities().unwrap_or_default(),
                },
                lists: entry.lists().as_ref().clone(),
                status: state.status,
                error: state.error,
                last_ping_ms: state.last_ping_ms,
                attempts: state.attempts,
                connections: state.connections,
                held_back: entry.held_back(),
            };
            let key = shared_key(&cluster.replica, &entry.id);
            match serde_json::to_value(&snapshot) {
                Ok(value) => {
                    if let Err(error) = cluster.bus.share(&key, &value).await {
                        tracing::warn!(server_id = %entry.id, %error, "cannot share a server's state");
                    }
                }
                Err(error) => tracing::error!(%error, "cannot serialise a server's state"),
            }
        }
    }
}

/// Applies what the holders share to the entries here.
pub(super) async fn follow_snapshots(registry: Weak<Registry>, cluster: Arc<Cluster>) {
    let mut values = cluster.bus.shared_values();
    while let Some((key, value)) = values.recv().await {
        let Some((replica, server_id)) = key
            .split_once('.')
            .and_then(|(r, s)| Some((r, String::from_utf8(hex::decode(s).ok()?).ok()?)))
        else {
            continue;
        };
        let id = (replica.to_owned(), server_id.clone());
        {
            let mut snapshots = cluster.snapshots.lock().unwrap_or_else(|e| e.into_inner());
            match value.and_then(|v| serde_json::from_value::<Snapshot>(v).ok()) {
                Some(snapshot) => snapshots.insert(id, snapshot),
                None => snapshots.remove(&id),
            };
        }
        let Some(registry) = registry.upgrade() else {
            return;
        };
        if let Ok(entry) = registry.get(&server_id) {
            cluster.mirror(&entry);
        }
    }
}
