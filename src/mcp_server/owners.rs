//! Which agent opened each 2025-11-25 session of `/mcp`, by its `Mcp-Session-Id`: a session is
//! its agent's alone, and an agent has at most `MCP_BRIDGE_AGENT_MCP_SESSIONS` open (without a
//! cap one agent opened 5,000 sessions in 15 s, 284 MB, each kept until it idles out). Another
//! agent's token with a leaked session id is answered as if the session did not exist (it can
//! neither call through it, listen to it, nor end it). Across replicas the owner and the count
//! come from the shared sessions (shared.rs), so the same holds whichever replica is asked.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionHandle, LocalSessionManager,
};

use super::shared::SharedSessions;
use crate::store::SessionClaim;

/// Sessions recorded before the ones rmcp has closed (or let expire) are looked for.
const PRUNE_FROM: usize = 1024;

pub struct SessionOwners {
    manager: Arc<LocalSessionManager>,
    /// Sessions per agent; 0: no limit.
    cap: usize,
    owners: Mutex<Owners>,
    /// The sessions replicas share, when there are replicas.
    shared: Option<SharedSessions>,
}

#[derive(Default)]
struct Owners {
    by_session: HashMap<String, String>,
    per_agent: HashMap<String, usize>,
    /// How many entries make the next prune.
    prune_at: usize,
}

impl Owners {
    fn count(&mut self, agent: &str, by: isize) {
        let n = self.per_agent.entry(agent.to_owned()).or_default();
        *n = n.saturating_add_signed(by);
        if *n == 0 {
            self.per_agent.remove(agent);
        }
    }
}

impl SessionOwners {
    pub fn new(
        manager: Arc<LocalSessionManager>,
        cap: usize,
        shared: Option<SharedSessions>,
    ) -> Self {
        Self {
            manager,
            cap,
            owners: Mutex::new(Owners {
                prune_at: PRUNE_FROM,
                ..Owners::default()
            }),
            shared,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Owners> {
        self.owners.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `agent` may use session `id`. A session not recorded is not open (rmcp answers
    /// it as unknown). Across replicas the shared record decides: a session another replica
    /// ended (or that expired) is ended here too, and one the database cannot be asked about
    /// is allowed only to the agent this replica saw open or use it; `None` when this replica
    /// never saw it (a 404 would tell the client its session is gone for good).
    pub async fn allows(&self, id: &str, agent: &str) -> Option<bool> {
        let local = |owners: &Owners| owners.by_session.get(id).map(|owner| owner == agent);
        let Some(shared) = &self.shared else {
            return Some(local(&self.lock()).unwrap_or(true));
        };
        match shared.get(id).await {
            Ok(Some(session)) if session.agent_id.as_deref() == Some(agent) => {
                self.lock()
                    .by_session
                    .entry(id.to_owned())
                    .or_insert_with(|| agent.to_owned());
                Some(true)
            }
            Ok(Some(_)) => Some(false),
            Ok(None) => {
                self.closed(id);
                if self.is_open(id).await
                    && let Err(error) = self.manager.close_session(&id.into()).await
                {
                    tracing::debug!(%error, "cannot end an /mcp session ended elsewhere");
                }
                Some(false)
            }
            Err(error) => {
                tracing::warn!(%error, "cannot look up an /mcp session; going by this replica's own");
                local(&self.lock())
            }
        }
    }

    /// Whether rmcp still has session `id` (it has not ended nor expired).
    pub async fn is_open(&self, id: &str) -> bool {
        self.manager.sessions.read().await.contains_key(id)
    }

    /// Ends session `id` in rmcp, when it has it.
    pub async fn close(&self, id: &str) -> Result<(), String> {
        self.closed(id);
        match self.is_open(id).await {
            true => self
                .manager
                .close_session(&id.into())
                .await
                .map_err(|e| e.to_string()),
            false => Ok(()),
        }
    }

    /// rmcp's handle of session `id`, while it has it.
    pub async fn handle(&self, id: &str) -> Option<LocalSessionHandle> {
        self.manager.sessions.read().await.get(id).cloned()
    }

    /// The cap, when `agent` has reached it (sessions rmcp has dropped no longer count; across
    /// replicas, its live sessions on every replica count).
    pub async fn full(&self, agent: &str) -> Option<usize> {
        if let Some(shared) = &self.shared
            && self.cap > 0
        {
            match shared.count(agent).await {
                Ok(open) => return (open >= self.cap).then_some(self.cap),
                Err(error) => tracing::warn!(%error, "cannot count an agent's /mcp sessions"),
            }
        }
        let at_cap = |owners: &Owners| {
            self.cap > 0 && owners.per_agent.get(agent).is_some_and(|n| *n >= self.cap)
        };
        if !at_cap(&self.lock()) {
            return None;
        }
        self.prune().await;
        at_cap(&self.lock()).then_some(self.cap)
    }

    /// Records the session `agent` has just opened; now and then forgets the sessions rmcp no
    /// longer has. Across replicas, whether the agent may keep it: the cap is checked again,
    /// with the recording, as one step (concurrent opens may all have passed [`Self::full`]),
    /// and a session the shared store could not record is no session another replica knows.
    pub async fn opened(&self, id: &str, agent: String) -> SessionClaim {
        if let Some(shared) = &self.shared {
            let claim = shared.opened(id, &agent, self.cap).await;
            if claim != SessionClaim::Claimed {
                return claim;
            }
        }
        let prune = {
            let mut owners = self.lock();
            if owners
                .by_session
                .insert(id.to_owned(), agent.clone())
                .is_none()
            {
                owners.count(&agent, 1);
            }
            owners.by_session.len() >= owners.prune_at
        };
        if prune {
            self.prune().await;
        }
        SessionClaim::Claimed
    }

    /// The cap of sessions per agent.
    pub fn cap(&self) -> usize {
        self.cap
    }

    pub fn closed(&self, id: &str) {
        let mut owners = self.lock();
        if let Some(agent) = owners.by_session.remove(id) {
            owners.count(&agent, -1);
        }
    }

    /// Forgets the sessions rmcp no longer has (deleted, or expired).
    async fn prune(&self) {
        let open: HashSet<String> = self
            .manager
            .sessions
            .read()
            .await
            .keys()
            .map(|id| id.to_string())
            .collect();
        let mut owners = self.lock();
        let gone: Vec<String> = owners
            .by_session
            .keys()
            .filter(|id| !open.contains(*id))
            .cloned()
            .collect();
        for id in gone {
            if let Some(agent) = owners.by_session.remove(&id) {
                owners.count(&agent, -1);
            }
        }
        owners.prune_at = (owners.by_session.len() * 2).max(PRUNE_FROM);
    }
}
