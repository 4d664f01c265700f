//! Across replicas, who holds which server, spread evenly. The lease loop renews this replica's
//! leases and its row among the live replicas, learns who holds the others, claims the servers
//! nobody holds and hands servers over to replicas that hold fewer.
//!
//! - An unheld server (new, or its holder died) goes to the live replica holding the fewest,
//!   ties broken by rendezvous (highest-random-weight) hashing of server × replica; every replica
//!   makes the same plan from the same view, so only the planned one claims it at once. Any other
//!   claims it after a grace period, so nothing stays unheld when that one is slow or gone.
//! - A replica holding `SLACK` or more servers than the one holding the fewest hands it one
//!   (the server that ranks highest for it): the lease is moved to the new holder in the store,
//!   which connects when it next renews; this replica keeps serving the server until the new
//!   holder says it is ready and its calls in flight here have ended (bounded by the call
//!   timeout), then closes its connection. Meanwhile the other replicas keep sending calls here
//!   (`Cluster::mirror` prefers a ready previous holder to a new one still connecting).
//!   When the new holder is not ready within the server's connect bound and a lease, this
//!   replica takes the lease back and goes on serving (and does not hand that server to that
//!   replica again for `HANDOVER_REFUSED_FOR` leases).
//! - Hysteresis: a replica gets servers handed to it only once it has been up for a lease
//!   without a break, and only a difference of `SLACK` moves one, so a replica that comes and
//!   goes does not make servers bounce.
//! - A replica cut off from NATS cannot be reached by the others although its leases (in the
//!   store) are live: after a lease without the bus, when the store shows another live replica
//!   reaching NATS since, it lets its servers go, says it is not up, and claims nothing until
//!   the bus is back; then it joins again and is handed its share. When NATS is down for every
//!   replica, each keeps serving what it holds (to its own callers) and claims nothing new.
//!   Without the bus a replica takes no hand-over back: it cannot hear the new holder is ready.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use super::replicas::Cluster;
use super::{Registry, ServerEntry};
use crate::hub::bus::Announcement;
use crate::store::{Store, StoreError};

/// How many more servers a replica holds than the one holding the fewest before it hands one
/// over. 3 rather than 2: two replicas with two servers registered on one stay put, and a
/// move never just swaps which replica holds one more.
const SLACK: usize = 3;

/// How long a replica cut off from NATS, seeing another reach it, waits for its own reconnect
/// before it lets its servers go: the NATS client's longest delay between attempts (4 s) and a
/// renewal.
const RECONNECT_GRACE: Duration = Duration::from_secs(5);

/// How often a replica handing a server over looks whether the new holder is ready.
const HANDOVER_POLL: Duration = Duration::from_millis(50);

/// For how many leases a server whose hand-over to a replica failed is not handed to it again.
const HANDOVER_REFUSED_FOR: u32 = 10;

/// What the loop remembers between its rounds.
#[derive(Default)]
struct Balance {
    /// Hand-overs that failed (the new holder never became ready), by (server, replica), and
    /// when: not tried again for a while.
    failed: Arc<Mutex<HashMap<(String, String), Instant>>>,
    /// Since when NATS has been unreachable, while it is.
    bus_lost: Option<Instant>,
    /// Whether this replica let its servers go because it is cut off from the bus.
    let_go: bool,
    /// Whether it kept them through an outage of NATS for every replica (said once).
    kept: bool,
    /// Since when, while this replica is cut off, the store has shown another reaching NATS.
    elsewhere_since: Option<Instant>,
    /// Servers this replica is handing over: their lease is the new holder's already, the
    /// connection here serves until that one is ready.
    handing: Arc<Mutex<HashSet<String>>>,
    /// Since when each server nobody holds has been seen so.
    unheld_since: HashMap<String, Instant>,
}

impl Balance {
    fn handing(&self) -> HashSet<String> {
        self.handing
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

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

impl Cluster {
    /// How many servers each replica holds, as the store said last.
    pub fn held_counts(&self) -> HashMap<String, u64> {
        let mut counts = HashMap::new();
        for holder in self
            .holders
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
        {
            *counts.entry(holder.clone()).or_default() += 1;
        }
        counts
    }
}

/// Renews this replica's leases, learns who holds the others, claims servers nobody holds and
/// spreads them.
async fn keep_leases(registry: Weak<Registry>, cluster: Arc<Cluster>) {
    let every = (cluster.lease / 3).min(Duration::from_secs(1));
    let mut renewed = Instant::now();
    let mut balance = Balance::default();
    loop {
        let Some(registry) = registry.upgrade() else {
            return;
        };
        let stopping = registry.hub.shutdown_token();
        if cut_off(&registry, &cluster, &mut balance).await {
            drop(registry);
            tokio::select! {
                _ = stopping.cancelled() => return,
                _ = tokio::time::sleep(every) => {}
                _ = cluster.wake.notified() => {}
            }
            continue;
        }
        // Taken before the renewal: a hand-over that ends after it (taking its lease back) is
        // still counted as handing, not as a lease taken over.
        let handing = balance.handing();
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
                    if !held.contains(&id) && !handing.contains(&id) {
                        tracing::warn!(server_id = %id, "this replica's lease was taken over");
                        cluster.end(&id);
                    }
                }
                if !stopping.is_cancelled() {
                    take_handed(&registry, &cluster, &held);
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
        if !stopping.is_cancelled()
            && let Err(error) = registry
                .store
                .replica_alive(&cluster.replica, cluster.lease, cluster.bus.connected())
                .await
        {
            tracing::warn!(%error, "cannot say this replica is up");
        }
        let views = (
            registry.store.lease_holders().await,
            registry.store.live_replicas().await,
        );
        match views {
            (Ok(holders), Ok(live)) => {
                adopt(&registry, &cluster, &holders, &live, &mut balance).await;
                // Not while NATS is away: the server handed over could not be told of.
                if balance.bus_lost.is_none() {
                    spread(&registry, &cluster, &holders, &live, &balance);
                }
            }
            (Err(error), _) | (_, Err(error)) => {
                tracing::warn!(%error, "cannot read who holds the servers")
            }
        }
        drop(registry);
        tokio::select! {
            _ = stopping.cancelled() => return,
            _ = tokio::time::sleep(every) => {}
            _ = cluster.wake.notified() => {}
        }
    }
}

/// Begins holding the servers another replica handed to this one (their leases are this
/// replica's now).
fn take_handed(registry: &Registry, cluster: &Cluster, held: &HashSet<String>) {
    for id in held {
        if cluster.holds(id) {
            continue;
        }
        // Registered elsewhere and not loaded yet: the next round takes it, once loaded.
        let Ok(entry) = registry.get(id) else {
            continue;
        };
        cluster
            .holders
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.clone(), cluster.replica.clone());
        tracing::info!(server_id = %id, "a server was handed to this replica");
        cluster.begin(&entry);
    }
}

/// Mirrors who holds what, loads servers registered elsewhere, and claims the unheld ones this
/// replica is to hold (or any, past the grace period).
async fn adopt(
    registry: &Arc<Registry>,
    cluster: &Arc<Cluster>,
    holders: &HashMap<String, String>,
    live: &HashMap<String, f64>,
    balance: &mut Balance,
) {
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
    let mut unheld = Vec::new();
    for entry in registry.entries() {
        if changed.contains(&entry.id) {
            cluster.mirror(&entry);
        }
        if !holders.contains_key(&entry.id) && !cluster.holds(&entry.id) {
            unheld.push(entry);
        }
    }
    unheld.sort_by(|a, b| a.id.cmp(&b.id));
    balance
        .unheld_since
        .retain(|id, _| unheld.iter().any(|e| &e.id == id));
    let mut loads = loads(&cluster.replica, holders, live.keys());
    // A grace of half a lease: long enough for the planned replica, which looks every third of
    // a lease, to claim it first.
    let grace = cluster.lease / 2;
    for entry in unheld {
        let since = *balance
            .unheld_since
            .entry(entry.id.clone())
            .or_insert_with(Instant::now);
        let planned = least_loaded(&loads, &entry.id, None);
        if let Some(planned) = &planned {
            *loads.entry(planned.clone()).or_default() += 1;
        }
        if planned.as_ref() != Some(&cluster.replica) && since.elapsed() < grace {
            continue;
        }
        // A replica stopping hands its servers over, and one without NATS could not be
        // reached with them: it takes none now.
        if registry.hub.shutdown_token().is_cancelled() || balance.bus_lost.is_some() {
            return;
        }
        claim(registry, cluster, &entry).await;
    }
}

async fn claim(registry: &Arc<Registry>, cluster: &Cluster, entry: &ServerEntry) {
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
            cluster.begin(entry);
        }
        Ok(false) => {}
        // Removed meanwhile (its lease row cannot refer to it any more).
        Err(StoreError::NotFound) => registry.forget(&entry.id).await,
        Err(error) => tracing::warn!(server_id = %entry.id, %error, "cannot claim a lease"),
    }
}

/// How many servers each of `replicas` (and `me`) holds.
fn loads<'a>(
    me: &str,
    holders: &HashMap<String, String>,
    replicas: impl Iterator<Item = &'a String>,
) -> HashMap<String, usize> {
    let mut loads: HashMap<String, usize> = replicas.map(|r| (r.clone(), 0)).collect();
    loads.entry(me.to_owned()).or_default();
    for holder in holders.values() {
        if let Some(load) = loads.get_mut(holder) {
            *load += 1;
        }
    }
    loads
}

/// The replica holding the fewest, other than `but`; of those, the one `server_id` ranks
/// highest (rendezvous hashing), so every replica picks the same.
fn least_loaded(
    loads: &HashMap<String, usize>,
    server_id: &str,
    but: Option<&str>,
) -> Option<String> {
    loads
        .iter()
        .filter(|(replica, _)| Some(replica.as_str()) != but)
        .min_by_key(|(replica, load)| (**load, std::cmp::Reverse(weight(server_id, replica))))
        .map(|(replica, _)| replica.clone())
}

/// The rendezvous weight of a server on a replica: the same on every replica and every build
/// (SHA-256, not the standard library's unspecified hasher).
fn weight(server_id: &str, replica: &str) -> u64 {
    let mut input = Vec::with_capacity(server_id.len() + replica.len() + 1);
    input.extend_from_slice(server_id.as_bytes());
    input.push(0);
    input.extend_from_slice(replica.as_bytes());
    let digest = ring::digest::digest(&ring::digest::SHA256, &input);
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest.as_ref()[..8]);
    u64::from_be_bytes(first)
}

/// Hands one server over when this replica holds `SLACK` or more than a replica that has been
/// up for a lease; one at a time, so each move is planned on what the last one left.
fn spread(
    registry: &Arc<Registry>,
    cluster: &Arc<Cluster>,
    holders: &HashMap<String, String>,
    live: &HashMap<String, f64>,
    balance: &Balance,
) {
    if registry.hub.shutdown_token().is_cancelled()
        || !balance
            .handing
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
    {
        return;
    }
    let settled = live
        .iter()
        .filter(|(_, up)| **up >= cluster.lease.as_secs_f64())
        .map(|(replica, _)| replica);
    let loads = loads(&cluster.replica, holders, settled);
    let mine = loads.get(&cluster.replica).copied().unwrap_or_default();
    let Some(to) = least_loaded(&loads, "", Some(&cluster.replica)) else {
        return;
    };
    if mine < loads[&to] + SLACK {
        return;
    }
    // Of the servers held here (the store agreeing), the one that ranks highest for `to`, but
    // none `to` failed to take lately.
    let refused_for = cluster.lease * HANDOVER_REFUSED_FOR;
    let failed = {
        let mut failed = balance.failed.lock().unwrap_or_else(|e| e.into_inner());
        failed.retain(|_, at| at.elapsed() < refused_for);
        failed.clone()
    };
    let Some(server_id) = cluster
        .held_ids()
        .into_iter()
        .filter(|id| holders.get(id) == Some(&cluster.replica))
        .filter(|id| !failed.contains_key(&(id.clone(), to.clone())))
        .max_by_key(|id| weight(id, &to))
    else {
        return;
    };
    let Ok(entry) = registry.get(&server_id) else {
        return;
    };
    balance
        .handing
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(server_id.clone());
    let (handing, failed) = (balance.handing.clone(), balance.failed.clone());
    let (store, cluster) = (registry.store.clone(), cluster.clone());
    tokio::spawn(async move {
        if !hand_over(&store, &cluster, &entry, &to).await {
            failed
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert((server_id.clone(), to), Instant::now());
        }
        handing
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&server_id);
    });
}

/// Moves the lease of `entry` to `to`, serves it here until `to` is ready with it and the calls
/// in flight here have ended, then closes the connection here. When `to` is not ready within
/// the server's connect bound and a lease, takes the lease back and goes on serving: false.
async fn hand_over(store: &Store, cluster: &Cluster, entry: &ServerEntry, to: &str) -> bool {
    let server_id = entry.id.as_str();
    match store
        .transfer_lease(server_id, &cluster.replica, to, cluster.lease)
        .await
    {
        Ok(true) => {}
        Ok(false) => return true,
        Err(error) => {
            tracing::warn!(%server_id, %error, "cannot hand a server over");
            return true;
        }
    }
    tracing::info!(%server_id, %to, "handing the server over to a replica holding fewer");
    cluster
        .holders
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(server_id.to_owned(), to.to_owned());
    // Wakes the new holder's lease loop (and the others', which learn who holds it).
    cluster.bus.announce(Announcement::HandedOver);
    let config = entry.config();
    let connecting = config.connect_bound() + cluster.lease;
    let started = Instant::now();
    while !cluster.ready_on(to, server_id)
        && started.elapsed() < connecting
        && cluster.holds(server_id)
    {
        tokio::time::sleep(HANDOVER_POLL).await;
    }
    let ready = cluster.ready_on(to, server_id);
    if taking_back(ready, cluster.bus.connected(), cluster.holds(server_id))
        && take_back(store, cluster, server_id, to).await
    {
        return false;
    }
    let calls = Duration::from_secs(config.timeout);
    let draining = Instant::now();
    while entry.connection().is_some_and(|c| c.calls_in_flight() > 0)
        && draining.elapsed() < calls
        && cluster.holds(server_id)
    {
        tokio::time::sleep(HANDOVER_POLL).await;
    }
    cluster.end(server_id);
    true
}

/// Whether a hand-over whose new holder is not `ready` (as heard over NATS) is taken back: only
/// while this replica's `bus` is connected (without it, it cannot hear that the new holder is
/// ready, and may well serve fine), and only while it is still `serving` the server (not once
/// it let its servers go).
fn taking_back(ready: bool, bus: bool, serving: bool) -> bool {
    !ready && bus && serving
}

/// Takes back the lease of `server_id` handed to `to`, which did not become ready with it (it
/// cannot run it, or is stuck): whether this replica holds it again, and so keeps serving it.
async fn take_back(store: &Store, cluster: &Cluster, server_id: &str, to: &str) -> bool {
    let back = match store
        .transfer_lease(server_id, to, &cluster.replica, cluster.lease)
        .await
    {
        Ok(true) => true,
        // `to` let it go meanwhile: free to claim, unless a third replica was quicker.
        Ok(false) => matches!(
            store
                .claim_lease(server_id, &cluster.replica, cluster.lease)
                .await,
            Ok(true)
        ),
        Err(error) => {
            tracing::warn!(%server_id, %to, %error, "cannot take a server's lease back");
            false
        }
    };
    if back {
        tracing::warn!(%server_id, %to, "the replica a server was handed to never became ready with it; serving it here again");
        cluster
            .holders
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(server_id.to_owned(), cluster.replica.clone());
        // `to` learns it lost the lease, and the others who holds it, at once.
        cluster.bus.announce(Announcement::HandedOver);
    }
    back
}

/// Follows whether NATS is reachable. After a lease without it, when another live replica
/// still reaches NATS (the store says so: this replica alone is cut off, and the others cannot
/// reach its servers), lets every server held here go (released in the store, so the others take
/// them at once) and says this replica is not up, once. When NATS is down for all, it keeps
/// serving what it holds (the others forward nothing meanwhile anyway; its own callers are
/// served) and claims nothing new. Whether this replica let go (then the lease loop does nothing
/// else this round).
async fn cut_off(registry: &Registry, cluster: &Cluster, balance: &mut Balance) -> bool {
    if cluster.bus.connected() {
        if balance.bus_lost.take().is_some() {
            tracing::info!("NATS is reachable again; taking servers again");
        }
        balance.let_go = false;
        balance.kept = false;
        balance.elsewhere_since = None;
        return false;
    }
    let since = *balance.bus_lost.get_or_insert_with(Instant::now);
    if since.elapsed() < cluster.lease {
        return false;
    }
    if balance.let_go {
        return true;
    }
    // Another replica reached NATS half a lease or more after this one last did: NATS is up.
    let elsewhere = registry
        .store
        .bus_reached_elsewhere(&cluster.replica, cluster.lease, cluster.lease / 2)
        .await;
    match elsewhere {
        // After an outage for all, replicas reconnect some seconds apart: the first back is
        // not yet a sign that this one alone is cut off.
        Ok(true) => {
            let first = *balance.elsewhere_since.get_or_insert_with(Instant::now);
            if first.elapsed() < RECONNECT_GRACE {
                return false;
            }
        }
        Ok(false) => {
            balance.elsewhere_since = None;
            if !std::mem::replace(&mut balance.kept, true) {
                tracing::error!(
                    "NATS unreachable for a lease, for every replica: serving the servers held here meanwhile"
                );
            }
            return false;
        }
        // The store away too: the renewals fail as well, and let them go past a lease.
        Err(error) => {
            tracing::warn!(%error, "cannot tell whether the other replicas reach NATS");
            return false;
        }
    }
    tracing::error!(
        "NATS unreachable for a lease, the others reaching it: letting this replica's servers go"
    );
    for id in cluster.held_ids() {
        cluster.end(&id);
    }
    let released = registry.store.release_leases(&cluster.replica).await;
    let gone = registry.store.replica_gone(&cluster.replica).await;
    match (released, gone) {
        (Ok(()), Ok(())) => balance.let_go = true,
        // Tried again next round; the leases lapse meanwhile, not renewed.
        (Err(error), _) | (_, Err(error)) => {
            tracing::warn!(%error, "cannot release this replica's leases yet")
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holders(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(s, r)| (s.to_string(), r.to_string()))
            .collect()
    }

    #[test]
    fn the_least_loaded_replica_is_planned_and_ties_go_by_rendezvous() {
        let live = ["a".to_owned(), "b".to_owned(), "c".to_owned()];
        let loads = loads(
            "a",
            &holders(&[("x", "a"), ("y", "a"), ("z", "b")]),
            live.iter(),
        );
        assert_eq!(loads["a"], 2);
        assert_eq!(least_loaded(&loads, "s", None).as_deref(), Some("c"));
        // b and c tie once c has one: each server picks by its own weights, the same anywhere.
        let mut tied = loads.clone();
        tied.insert("c".into(), 1);
        let picks: HashSet<String> = (0..32)
            .filter_map(|i| least_loaded(&tied, &format!("s{i}"), Some("a")))
            .collect();
        assert_eq!(picks.len(), 2, "both tied replicas get some: {picks:?}");
        for i in 0..32 {
            let server = format!("s{i}");
            assert_eq!(
                least_loaded(&tied, &server, None),
                least_loaded(&tied.clone(), &server, None)
            );
        }
    }

    #[test]
    fn a_replica_that_is_not_live_counts_for_nothing() {
        let live = ["a".to_owned()];
        let loads = loads("b", &holders(&[("x", "a"), ("y", "gone")]), live.iter());
        assert_eq!(loads.len(), 2);
        assert_eq!(loads["a"], 1);
        assert_eq!(loads["b"], 0);
    }

    #[test]
    fn a_hand_over_is_taken_back_only_while_the_bus_is_connected_and_the_server_served() {
        assert!(taking_back(false, true, true));
        // Ready: nothing to take back.
        assert!(!taking_back(true, true, true));
        // Without the bus this replica cannot know the new holder is ready.
        assert!(!taking_back(false, false, true));
        // It let its servers go (cut off from the bus): it takes none back.
        assert!(!taking_back(false, true, false));
    }

    #[test]
    fn weights_are_stable_and_spread() {
        assert_eq!(weight("fs", "a"), weight("fs", "a"));
        assert_ne!(weight("fs", "a"), weight("fs", "b"));
        // The separator keeps ("ab", "c") and ("a", "bc") apart.
        assert_ne!(weight("ab", "c"), weight("a", "bc"));
    }
}
