//! Changing a registered server: a change of config (checked, stored, audited, then applied by
//! reconnecting or re-listing) and a reconnect asked for.

use std::sync::Arc;
use std::time::Duration;

use super::{Control, Error, Registry, ServerEntry, replicas, validate};
use crate::a2e::{McpServerConfig, NotificationMethod, REDACTED, ServerUpdateRequest};
use crate::caller::Caller;
use crate::store::StoreError;

impl Registry {
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
        self.check_identity_rights(agent, &new)?;
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
        if forget_oauth || new.identity != old.identity {
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
}

/// Whether a change of config needs a new connection.
pub(super) fn needs_reconnect(old: &McpServerConfig, new: &McpServerConfig) -> bool {
    new.cmd != old.cmd
        || new.env != old.env
        || new.cwd != old.cwd
        || new.url != old.url
        || new.headers != old.headers
        || new.connect_timeout != old.connect_timeout
        || new.protocol_version != old.protocol_version
        || new.auth != old.auth
        || new.identity != old.identity
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
    new.auth = change
        .auth
        .map(|auth| auth.keeping_secrets(old.auth.as_ref()))
        .apply(new.auth.take());
    new.identity = change.identity.apply(new.identity.take());
    new
}
