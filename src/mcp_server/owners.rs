//! Which agent opened each 2025-11-25 session of `/mcp`, by its `Mcp-Session-Id`: a session is
//! its agent's alone. Another agent's token with a leaked session id is answered as if the
//! session did not exist (it can neither call through it, listen to it, nor end it).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

/// Sessions recorded before the ones rmcp has closed (or let expire) are looked for.
const PRUNE_FROM: usize = 1024;

pub struct SessionOwners {
    manager: Arc<LocalSessionManager>,
    owners: Mutex<Owners>,
}

#[derive(Default)]
struct Owners {
    by_session: HashMap<String, String>,
    /// How many entries make the next prune.
    prune_at: usize,
}

impl SessionOwners {
    pub fn new(manager: Arc<LocalSessionManager>) -> Self {
        Self {
            manager,
            owners: Mutex::new(Owners {
                prune_at: PRUNE_FROM,
                ..Owners::default()
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Owners> {
        self.owners.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `agent` may use session `id`. A session not recorded is not open (rmcp answers
    /// it as unknown).
    pub fn allows(&self, id: &str, agent: &str) -> bool {
        self.lock()
            .by_session
            .get(id)
            .is_none_or(|owner| owner == agent)
    }

    /// Records the session `agent` has just opened; now and then forgets the sessions rmcp no
    /// longer has.
    pub async fn opened(&self, id: &str, agent: String) {
        let prune = {
            let mut owners = self.lock();
            owners.by_session.insert(id.to_owned(), agent);
            owners.by_session.len() >= owners.prune_at
        };
        if prune {
            let open: HashSet<String> = self
                .manager
                .sessions
                .read()
                .await
                .keys()
                .map(|id| id.to_string())
                .collect();
            let mut owners = self.lock();
            owners.by_session.retain(|id, _| open.contains(id));
            owners.prune_at = (owners.by_session.len() * 2).max(PRUNE_FROM);
        }
    }

    pub fn closed(&self, id: &str) {
        self.lock().by_session.remove(id);
    }
}
