//! Replicas (a PostgreSQL store and NATS): each server is held by one replica at a time, by a
//! lease in the store that it renews, and only that replica connects it. The holder shares the
//! server's status and lists with the others (a key per holder and server in the hub's shared
//! state), so every replica lists the same; what needs the connection (calls, reads, prompts,
//! subscriptions, listings, reconnects) is forwarded to the holder. A replica that dies stops
//! renewing and the others take its servers over when its leases lapse; one that shuts down
//! releases them at once.
//!
//! Here: the cluster's state and each server's tenure; in files of their own what holders share
//! (`snapshots`), forwarding to the holder (`forward`), serving what is forwarded here
//! (`serve`), and servers changed elsewhere and handed over (`changes`).

mod changes;
mod forward;
mod serve;
mod snapshots;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::sync::{Notify, mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::{Error, Inbox, Registry, ServerEntry, Supervision, supervisor};
use crate::a2e::{ErrorCode, McpServerStatus};
use crate::hub::bus::{Bus, Peer};
use crate::store::Store;
use serve::ForwardedCalls;
use snapshots::{Snapshot, follow_snapshots, share_snapshots, shared_key};

/// This replica among the others.
pub struct Cluster {
    pub replica: String,
    pub(super) bus: Arc<Bus>,
    pub(super) lease: Duration,
    /// Each server's tenure here: `Some` (not cancelled) while this replica holds it.
    pub(super) holds: Mutex<HashMap<String, watch::Sender<Option<CancellationToken>>>>,
    /// Which replica holds each server, as the store said last.
    pub(super) holders: Mutex<HashMap<String, String>>,
    /// What each holder shared of each server, by (replica, server).
    snapshots: Mutex<HashMap<(String, String), Snapshot>>,
    /// Held while an entry is brought in line with its holder: of two mirrors that raced
    /// (one after learning the holder, one after its snapshot), the later one to apply must
    /// not be the one that read before the other's news.
    mirroring: Mutex<()>,
    /// Wakes the lease loop (a replica handed its servers over).
    pub(super) wake: Notify,
    share: mpsc::UnboundedSender<Weak<ServerEntry>>,
    shares: Mutex<Option<mpsc::UnboundedReceiver<Weak<ServerEntry>>>>,
    /// Calls and other requests sent to another replica since start.
    pub forwarded: AtomicU64,
    /// The calls other replicas forwarded here that are running, by their `call_key`.
    forwarded_calls: ForwardedCalls,
    /// Leases taken or lost here since start.
    pub lease_changes: AtomicU64,
}

/// What another replica asks the holder of a server to do: the replica protocol's requests.
pub(super) use crate::hub::bus::Request as Op;

impl Cluster {
    pub(super) fn new(bus: Arc<Bus>, supervision: &Supervision) -> Option<Arc<Self>> {
        let replica = supervision.replica.clone()?;
        let (share, shares) = mpsc::unbounded_channel();
        Some(Arc::new(Self {
            replica,
            bus,
            lease: supervision.lease,
            holds: Mutex::default(),
            holders: Mutex::default(),
            snapshots: Mutex::default(),
            mirroring: Mutex::default(),
            wake: Notify::new(),
            share,
            shares: Mutex::new(Some(shares)),
            forwarded: AtomicU64::new(0),
            forwarded_calls: ForwardedCalls::default(),
            lease_changes: AtomicU64::new(0),
        }))
    }

    /// Whether this replica holds the server now.
    pub(super) fn holds(&self, server_id: &str) -> bool {
        self.holds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(server_id)
            .is_some_and(|tx| tx.borrow().as_ref().is_some_and(|t| !t.is_cancelled()))
    }

    pub(super) fn held_ids(&self) -> Vec<String> {
        self.holds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(_, tx)| tx.borrow().as_ref().is_some_and(|t| !t.is_cancelled()))
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Starts a tenure on the server (its supervisor connects it).
    pub(super) fn begin(&self, entry: &ServerEntry) {
        if let Some(tx) = self
            .holds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&entry.id)
        {
            tx.send_replace(Some(entry.stop.child_token()));
            self.lease_changes.fetch_add(1, Ordering::Relaxed);
            tracing::info!(server_id = %entry.id, replica = %self.replica, "holding the server");
        }
    }

    /// Ends the tenure on the server (its connection is closed), and stops sharing it.
    pub(super) fn end(&self, server_id: &str) {
        let ended = self
            .holds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(server_id)
            .and_then(|tx| tx.send_replace(None));
        if let Some(token) = ended {
            token.cancel();
            self.lease_changes.fetch_add(1, Ordering::Relaxed);
            tracing::info!(%server_id, replica = %self.replica, "no longer holding the server");
            let bus = self.bus.clone();
            let key = shared_key(&self.replica, server_id);
            tokio::spawn(async move { bus.unshare(&key).await });
        }
    }
}

/// Supervises a server across replicas: while this replica holds it, a tenure of the supervisor;
/// otherwise nothing (the entry mirrors the holder).
pub(super) fn spawn_hold(
    entry: Arc<ServerEntry>,
    mut inbox: Inbox,
    store: Store,
    supervision: Supervision,
    cluster: &Arc<Cluster>,
    held: bool,
) {
    let (tx, mut tenure) = watch::channel(None);
    cluster
        .holds
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(entry.id.clone(), tx);
    let _ = entry.shared.set(cluster.share.clone());
    entry.set_held_here(held);
    if held {
        cluster.begin(&entry);
    } else {
        cluster.mirror(&entry);
    }
    let cluster = cluster.clone();
    tokio::spawn(async move {
        loop {
            let token = tokio::select! {
                _ = entry.stop.cancelled() => break,
                changed = tenure.wait_for(|t| t.as_ref().is_some_and(|t| !t.is_cancelled())) => {
                    match changed {
                        Ok(token) => token.clone().expect("waited for"),
                        Err(_) => break,
                    }
                }
            };
            entry.set_held_here(true);
            // Shared at once, so the others see which replica holds it (connecting here now,
            // unless registration here already connected it).
            match entry.connection() {
                Some(_) => entry.update_state(|_| {}),
                // Counted afresh here: the supervisor reads attempts without a connection as a
                // registration waiting for its authorization, and this one must connect.
                None => entry.update_state(|s| {
                    s.status = McpServerStatus::Connecting;
                    s.attempts = 0;
                }),
            }
            supervisor::tenure(&entry, &mut inbox, &store, &supervision, &token).await;
            entry.set_held_here(false);
            cluster.mirror(&entry);
        }
        // Only its own: an entry loaded again meanwhile (a reload racing a registration here)
        // has put its own there, and dropping ours ended this loop.
        let mut holds = cluster.holds.lock().unwrap_or_else(|e| e.into_inner());
        if holds
            .get(&entry.id)
            .is_some_and(|tx| tenure.same_channel(&tx.subscribe()))
        {
            holds.remove(&entry.id);
        }
        drop(holds);
        entry.stopped.cancel();
    });
}

impl Registry {
    /// Across replicas: mirrors what the holders share and serves what other replicas forward
    /// here (the leases are kept by `balance`).
    pub(super) fn serve_replicas(self: &Arc<Self>) {
        let Some(cluster) = self.cluster.clone() else {
            return;
        };
        let peer: Weak<dyn Peer> = Arc::downgrade(self) as Weak<Registry>;
        cluster.bus.serve(peer);
        tokio::spawn(follow_snapshots(Arc::downgrade(self), cluster.clone()));
        let shares = cluster
            .shares
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(shares) = shares {
            tokio::spawn(share_snapshots(cluster, shares));
        }
    }

    pub fn cluster(&self) -> Option<&Arc<Cluster>> {
        self.cluster.as_ref()
    }
}

/// The answer to a request forwarded here for a server this replica does not hold (any more):
/// the sender's view of the holder is out of date.
pub(super) fn not_held(server_id: &str) -> Error {
    Error::Remote(
        ErrorCode::McpServerUnavailable,
        format!(
            "server \"{server_id}\" {}; try again",
            super::relay::NOT_HELD
        ),
    )
}
