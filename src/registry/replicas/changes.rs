//! Servers registered, changed or removed on one replica, announced to the others (which read
//! them again from the store), and this replica's servers handed over when it shuts down.

use std::sync::Arc;

use serde_json::json;

use crate::a2e::NotificationMethod;
use crate::hub::bus::Announcement;
use crate::registry::{Registry, ServerEntry};

impl Registry {
    /// Across replicas: a server was registered, changed or removed on another replica; its
    /// config is read again from the store.
    pub(in crate::registry) async fn reload(self: &Arc<Self>, server_id: &str) {
        let stored = match self.store.server(server_id).await {
            Ok(stored) => stored,
            Err(error) => {
                tracing::warn!(%server_id, %error, "cannot read a changed server from the store");
                return;
            }
        };
        match (stored, self.get(server_id)) {
            (None, Ok(_)) => self.forget(server_id).await,
            (Some(stored), Err(_)) => {
                // This replica's own limits on stdio commands hold for servers registered on
                // others too: it neither lists nor ever runs one they leave out.
                if self.disallowed_command(&stored.config).is_some()
                    || self.disallowed_env(&stored.config).is_some()
                {
                    tracing::debug!(%server_id, "a server registered elsewhere is not allowed here");
                    return;
                }
                let (entry, inbox) = ServerEntry::new(
                    stored.owner,
                    stored.config,
                    self.hub.clone(),
                    self.store.clone(),
                    &self.supervision,
                );
                // Registered here meanwhile (its lease, claimed before the registration ends,
                // made the lease loop look for it): the registration's entry is the one.
                let registering = self
                    .reserved
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .contains_key(server_id);
                if registering || self.get(server_id).is_ok() {
                    return;
                }
                self.insert_held(entry, inbox, false);
                // Who holds it now (usually the replica that registered it), without waiting
                // for the next look at the leases.
                if let (Some(cluster), Ok(holders)) =
                    (&self.cluster, self.store.lease_holders().await)
                    && let Some(holder) = holders.get(server_id)
                {
                    cluster
                        .holders
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(server_id.to_owned(), holder.clone());
                    if let Ok(entry) = self.get(server_id) {
                        cluster.mirror(&entry);
                    }
                }
            }
            (Some(stored), Ok(entry)) => {
                let old = entry.config();
                if *old == stored.config {
                    return;
                }
                let new = stored.config;
                let reconnect = crate::registry::needs_reconnect(&old, &new);
                *entry.config.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(new.clone());
                let tools_moved = new.tool_allow_list != old.tool_allow_list;
                let resources_moved = new.resource_allow_list != old.resource_allow_list;
                match (entry.held_here(), reconnect) {
                    (true, true) => {
                        let _ = entry.control.send(crate::registry::Control::Reconnect);
                    }
                    // As an update on this replica would: the lists follow the allow lists.
                    (true, false) => {
                        entry.replace_lists(None);
                        if tools_moved {
                            entry.push_to_all(NotificationMethod::ToolsListChanged, json!({}));
                        }
                        if resources_moved {
                            entry.push_to_all(NotificationMethod::ResourcesListChanged, json!({}));
                        }
                    }
                    // The holder shares its lists; the catalogue follows the new allow lists.
                    (false, _) => {
                        if let Some(cluster) = &self.cluster {
                            cluster.mirror(&entry);
                        }
                    }
                }
            }
            (None, Err(_)) => {}
        }
    }

    /// Drops a server removed on another replica (closing its connection when held here).
    pub(in crate::registry) async fn forget(&self, server_id: &str) {
        let removed = self
            .servers
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(server_id);
        if let Some(entry) = removed {
            entry.stop.cancel();
            entry.close_sessions().await;
            tracing::info!(%server_id, "server removed on another replica");
        }
    }

    /// Tells the other replicas a server was registered, changed or removed here.
    pub(in crate::registry) fn announce_change(&self, server_id: &str) {
        if let Some(cluster) = &self.cluster {
            cluster.bus.announce(Announcement::ServerChanged {
                server_id: server_id.to_owned(),
            });
        }
    }

    /// Across replicas: hands every server held here over (their connections are closed by
    /// then), so the others take them at once.
    pub(in crate::registry) async fn hand_over(&self) {
        let Some(cluster) = &self.cluster else {
            return;
        };
        for id in cluster.held_ids() {
            cluster.end(&id);
        }
        if let Err(error) = self.store.release_leases(&cluster.replica).await {
            tracing::warn!(%error, "cannot release this replica's leases; they lapse instead");
        }
        // Not counted among the live replicas any more: nothing is planned for it.
        if let Err(error) = self.store.replica_gone(&cluster.replica).await {
            tracing::warn!(%error, "cannot say this replica is stopping; it lapses instead");
        }
        cluster.bus.announce(Announcement::HandedOver);
        cluster.bus.leave().await;
    }
}
