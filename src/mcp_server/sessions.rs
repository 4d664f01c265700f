//! The 2025-11-25 sessions open on this replica: what each asked for (log level, resource
//! subscriptions), and the notifications sent to them when the catalogue or a resource changes.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use rmcp::{ErrorData, Peer, RoleServer};
use serde_json::{Value, json};

use super::elicit::{self, Elicitations};
use super::shared::SharedSessions;
use crate::http::state::AppState;
use crate::hub::McpNotice;
use crate::registry::naming;

/// The 2025-11-25 sessions open now: told when the catalogue changes, and given the resource
/// updates and log messages they asked for.
pub(super) struct Sessions {
    pub(super) open: Mutex<Vec<Session>>,
    /// The sessions replicas share: what each asked for is recorded there, and read back by
    /// the replica that sends it a notification.
    pub(super) shared: Option<SharedSessions>,
    /// The authorization links handed out as URL elicitations, to tell when they are done.
    pub(super) elicitations: Elicitations,
}

pub(super) struct Session {
    pub(super) peer: Peer<RoleServer>,
    /// Its `Mcp-Session-Id`.
    pub(super) id: Option<String>,
    /// The agent whose token opened it.
    pub(super) agent: String,
    /// The lowest log level it wants (`logging/setLevel`), if any.
    pub(super) log_level: Option<usize>,
    /// The URIs it subscribed to.
    pub(super) uris: HashSet<String>,
}

/// Log levels from least to most severe, as MCP names them.
pub(super) const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

pub(super) fn log_rank(level: &Value) -> Option<usize> {
    LOG_LEVELS.iter().position(|l| Some(*l) == level.as_str())
}

/// Whether two peers are the same session (they share the client's initialize parameters).
pub(super) fn same_session(a: &Peer<RoleServer>, b: &Peer<RoleServer>) -> bool {
    matches!((a.peer_info(), b.peer_info()), (Some(x), Some(y)) if Arc::ptr_eq(&x, &y))
}

impl Sessions {
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Session>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The lowest log level session `id` asked for, as this replica knows it.
    pub(super) fn log_level_of(&self, id: &str) -> Option<usize> {
        self.lock()
            .iter()
            .find(|s| s.id.as_deref() == Some(id))
            .and_then(|s| s.log_level)
    }

    /// The peer of session `id`, while it is open here.
    pub(super) fn peer_of(&self, id: &str) -> Option<Peer<RoleServer>> {
        self.lock()
            .iter()
            .find(|s| s.id.as_deref() == Some(id) && !s.peer.is_transport_closed())
            .map(|s| s.peer.clone())
    }

    /// Notes a session initialized here; one restored from the shared sessions (its first
    /// request on this replica) gets back what it asked for on others.
    pub(super) async fn add(
        &self,
        peer: Peer<RoleServer>,
        agent: &str,
        id: Option<&str>,
        restored: bool,
    ) {
        let interests = match (&self.shared, id, restored) {
            (Some(shared), Some(id), true) => match shared.get(id).await {
                Ok(Some(session)) => Some((session.uris, session.log_level)),
                _ => None,
            },
            _ => None,
        };
        let mut open = self.lock();
        open.retain(|s| !s.peer.is_transport_closed());
        if open.iter().any(|s| same_session(&s.peer, &peer)) {
            return;
        }
        let (uris, log_level) = interests.unwrap_or_default();
        open.push(Session {
            peer,
            id: id.map(str::to_owned),
            agent: agent.to_owned(),
            log_level: log_level.map(|l| json!(l)).as_ref().and_then(log_rank),
            uris: uris.into_iter().collect(),
        });
    }

    /// Changes the session `peer` belongs to (`id` in the request), and records what it now
    /// asks for where replicas share it.
    pub(super) async fn update(
        &self,
        peer: &Peer<RoleServer>,
        agent: &str,
        id: Option<&str>,
        change: impl FnOnce(&mut Session),
    ) {
        // Across replicas, the change is made to what the session asked for on any of them (it
        // may have subscribed through another since it was restored here), not to this
        // replica's copy, which would drop those.
        let recorded = match (&self.shared, id) {
            // A session the store lists nothing for asked for nothing (it may have unsubscribed
            // through another replica), whatever this replica's copy still says.
            (Some(shared), Some(id)) => match shared.interests().await {
                Ok(interests) => Some(
                    interests
                        .into_iter()
                        .find(|i| i.session_id == id)
                        .map(|i| (i.uris, i.log_level))
                        .unwrap_or_default(),
                ),
                Err(error) => {
                    tracing::warn!(%error, "cannot read what an /mcp session asked for; changing this replica's copy");
                    None
                }
            },
            _ => None,
        };
        let asked = {
            let mut open = self.lock();
            let index = match open.iter().position(|s| same_session(&s.peer, peer)) {
                Some(index) => index,
                None => {
                    open.push(Session {
                        peer: peer.clone(),
                        id: id.map(str::to_owned),
                        agent: agent.to_owned(),
                        log_level: None,
                        uris: Default::default(),
                    });
                    open.len() - 1
                }
            };
            let session = &mut open[index];
            if let Some((uris, level)) = recorded {
                session.uris = uris.into_iter().collect();
                session.log_level = level.map(|l| json!(l)).as_ref().and_then(log_rank);
            }
            change(session);
            let mut uris: Vec<String> = session.uris.iter().cloned().collect();
            uris.sort();
            (uris, session.log_level.map(|rank| LOG_LEVELS[rank]))
        };
        if let (Some(shared), Some(id)) = (&self.shared, id) {
            shared.set_interests(id, &asked.0, asked.1).await;
        }
    }

    /// Across replicas: what each session open here asked for, as last recorded by any
    /// replica (it may have subscribed through another since it was restored here).
    pub(super) async fn refresh(&self) {
        let Some(shared) = &self.shared else {
            return;
        };
        let interests = match shared.interests().await {
            Ok(interests) => interests,
            Err(error) => {
                tracing::warn!(%error, "cannot read what /mcp sessions asked for; using what this replica knows");
                return;
            }
        };
        let by_id: std::collections::HashMap<String, (Vec<String>, Option<String>)> = interests
            .into_iter()
            .map(|i| (i.session_id, (i.uris, i.log_level)))
            .collect();
        for session in self.lock().iter_mut() {
            let Some(id) = &session.id else { continue };
            let (uris, level) = by_id.get(id).cloned().unwrap_or_default();
            session.uris = uris.into_iter().collect();
            session.log_level = level.map(|l| json!(l)).as_ref().and_then(log_rank);
        }
    }

    /// The peers a notification goes to, each with the params it gets: a resource update
    /// names the URI in the form the session subscribed with (plain, or qualified with its server).
    pub(super) fn recipients(&self, notice: &McpNotice) -> Vec<(Peer<RoleServer>, Value)> {
        use crate::a2e::NotificationMethod as Method;
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        open.retain(|s| !s.peer.is_transport_closed());
        let params = &notice.params;
        match Method::parse(&notice.method) {
            Some(Method::ResourcesUpdated) => {
                let Some(uri) = params.get("uri").and_then(Value::as_str) else {
                    return Vec::new();
                };
                let qualified = naming::qualify_uri(&notice.server_id, uri);
                let ui = naming::qualify_ui(&notice.server_id, uri).unwrap_or_default();
                open.iter()
                    .filter_map(|s| {
                        let form = [uri, qualified.as_str(), ui.as_str()]
                            .into_iter()
                            .find(|form| !form.is_empty() && s.uris.contains(*form))?;
                        let mut params = params.clone();
                        params["uri"] = json!(form);
                        Some((s.peer.clone(), params))
                    })
                    .collect()
            }
            // A server's log is its owner's, and its caller's during the only call in flight.
            Some(Method::Message) => open
                .iter()
                .filter(|s| notice.except_session.is_none() || s.id != notice.except_session)
                .filter(|s| {
                    notice
                        .agents
                        .as_ref()
                        .is_none_or(|agents| agents.contains(&s.agent))
                })
                .filter(|s| {
                    matches!((s.log_level, params.get("level").and_then(log_rank)), (Some(min), Some(level)) if level >= min)
                })
                .map(|s| (s.peer.clone(), params.clone()))
                .collect(),
            _ => open
                .iter()
                .map(|s| (s.peer.clone(), params.clone()))
                .collect(),
        }
    }
}

pub(super) fn spawn_change_notifier(state: &AppState, sessions: Arc<Sessions>) {
    let mut notifications = state.hub.mcp_client_notifications();
    let shutdown = state.hub.shutdown_token();
    tokio::spawn(async move {
        loop {
            let notice = tokio::select! {
                _ = shutdown.cancelled() => return,
                next = notifications.recv() => match next {
                    Ok(notice) => notice,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => McpNotice {
                        server_id: String::new(),
                        method: crate::a2e::NotificationMethod::ToolsListChanged.as_str().to_owned(),
                        params: json!({}),
                        agents: None,
                        except_session: None,
                    },
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                },
            };
            let method = &notice.method;
            if method == crate::hub::AUTHORIZED {
                let agents = notice.agents.as_deref().unwrap_or_default();
                for (peer, id) in sessions.elicitations.completed(agents, &notice.server_id) {
                    if let Err(error) = elicit::complete(&peer, &id).await {
                        tracing::debug!(%error, "cannot tell an /mcp client its elicitation is done");
                    }
                }
                continue;
            }
            if matches!(
                crate::a2e::NotificationMethod::parse(method),
                Some(
                    crate::a2e::NotificationMethod::ResourcesUpdated
                        | crate::a2e::NotificationMethod::Message
                )
            ) {
                sessions.refresh().await;
            }
            for (peer, params) in sessions.recipients(&notice) {
                if let Err(error) = notify(&peer, method, &params).await {
                    tracing::debug!(%error, %method, "cannot notify an /mcp client");
                }
            }
        }
    });
}

#[allow(deprecated)] // Logging is how 2025-11-25 clients get a server's log messages.
pub(super) async fn notify(
    peer: &Peer<RoleServer>,
    method: &str,
    params: &Value,
) -> Result<(), rmcp::ServiceError> {
    use crate::a2e::NotificationMethod as Method;
    let parse_error = |e: serde_json::Error| {
        rmcp::ServiceError::McpError(ErrorData::internal_error(e.to_string(), None))
    };
    match Method::parse(method) {
        Some(Method::ResourcesListChanged) => peer.notify_resource_list_changed().await,
        Some(Method::PromptsListChanged) => peer.notify_prompt_list_changed().await,
        Some(Method::ToolsListChanged) => peer.notify_tool_list_changed().await,
        Some(Method::ResourcesUpdated) => {
            peer.notify_resource_updated(
                serde_json::from_value(params.clone()).map_err(parse_error)?,
            )
            .await
        }
        Some(Method::Message) => {
            peer.notify_logging_message(
                serde_json::from_value(params.clone()).map_err(parse_error)?,
            )
            .await
        }
        _ => Ok(()),
    }
}
