//! Across replicas, who holds which server: the lease loop renews this replica's leases,
//! learns who holds the others and claims the servers nobody holds.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use super::Registry;
use super::replicas::Cluster;
use crate::store::StoreError;

impl Registry {
    /// Across replicas: claims, renews and takes over leases, mirrors what the holders share and
    /// serves what other replicas forward here. Call once, after the stored servers are restored.
    pub fn start_replicas(self: &Arc<Self>) {
        let Some(cluster) = self.cluster().cloned() else {
            return;
        };
        self.serve_replicas();
        tokio::spawn(keep_leases(Arc::downgrade(self), cluster));
    }
}

/// Renews this replica's leases, learns who holds the others, and claims servers nobody holds.
async fn keep_leases(registry: Weak<Registry>, cluster: Arc<Cluster>) {
    let every = (cluster.lease / 3).min(Duration::from_secs(1));
    let mut renewed = Instant::now();
    loop {
        let Some(registry) = registry.upgrade() else {
            return;
        };
        let stopping = registry.hub.shutdown_token();
        // What this replica holds: renewed, or lost to another.
        match registry
            .store
            .renew_leases(&cluster.replica, cluster.lease)
            .await
        {
            Ok(held) => {
                renewed = Instant::now();
                let held: HashSet<String> = held.into_iter().collect();
                for id in cluster.held_ids() {
                    if !held.contains(&id) {
                        tracing::warn!(server_id = %id, "this replica's lease was taken over");
                        cluster.end(&id);
                    }
                }
            }
            Err(error) if renewed.elapsed() >= cluster.lease => {
                // Past the lease another replica may hold them: stop holding them here.
                tracing::error!(%error, "cannot renew this replica's leases; letting them go");
                for id in cluster.held_ids() {
                    cluster.end(&id);
                }
            }
            Err(error) => tracing::warn!(%error, "cannot renew this replica's leases yet"),
        }
        match registry.store.lease_holders().await {
            Ok(holders) => adopt(&registry, &cluster, holders).await,
            Err(error) => tracing::warn!(%error, "cannot read who holds the servers"),
        }
        drop(registry);
        tokio::select! {
            _ = stopping.cancelled() => return,
            _ = tokio::time::sleep(every) => {}
            _ = cluster.wake.notified() => {}
        }
    }
}

/// Mirrors who holds what, loads servers registered elsewhere, and claims the unheld ones.
async fn adopt(registry: &Arc<Registry>, cluster: &Arc<Cluster>, holders: HashMap<String, String>) {
    for server_id in holders.keys() {
        if registry.get(server_id).is_err() {
            registry.reload(server_id).await;
        }
    }
    let changed: Vec<String> = {
        let mut known = cluster.holders.lock().unwrap_or_else(|e| e.into_inner());
        let changed = registry
            .entries()
            .into_iter()
            .filter(|e| known.get(&e.id) != holders.get(&e.id))
            .map(|e| e.id.clone())
            .collect();
        *known = holders.clone();
        changed
    };
    for entry in registry.entries() {
        if changed.contains(&entry.id) {
            cluster.mirror(&entry);
        }
        if holders.contains_key(&entry.id) || cluster.holds(&entry.id) {
            continue;
        }
        // A replica stopping hands its servers over: it takes none now.
        if registry.hub.shutdown_token().is_cancelled() {
            return;
        }
        match registry
            .store
            .claim_lease(&entry.id, &cluster.replica, cluster.lease)
            .await
        {
            Ok(true) => {
                cluster
                    .holders
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(entry.id.clone(), cluster.replica.clone());
                cluster.begin(&entry);
            }
            Ok(false) => {}
            // Removed meanwhile (its lease row cannot refer to it any more).
            Err(StoreError::NotFound) => registry.forget(&entry.id).await,
            Err(error) => tracing::warn!(server_id = %entry.id, %error, "cannot claim a lease"),
        }
    }
}
