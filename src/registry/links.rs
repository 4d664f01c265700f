//! The OAuth authorization links the bridge gave out and is waiting on, kept in the store by
//! `state` (so the callback completes on any replica), and the step-ups asked per grant.
//!
//! Across replicas the store holds what must hold everywhere: a link works once (taken by one
//! `DELETE … RETURNING`), the caps per agent and in all (counted in the store), expiry (the
//! database's clock). The per-grant lock and the step-up counts stay on each replica: the lock
//! only spares a second registration with the authorization server when one replica makes two
//! links at once (two replicas at once may each register: each link finishes with the
//! registration it was made with, which is kept with its tokens), and step-ups are counted per
//! replica.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::store::{LinkLimits, Store, StoreError, StoredLink};
use crate::upstream::oauth::{self, GrantKey, Pending};

/// The bounds on links waiting for their person.
const LIMITS: LinkLimits = LinkLimits {
    // How long a link stays good.
    ttl: Duration::from_secs(15 * 60),
    per_agent: MAX_LINKS_PER_AGENT,
    // A bound on the table: when full, the oldest link of the agent holding the most goes.
    in_all: 10_000,
};
/// Most links waiting at once for one agent: its oldest goes first, others' are untouched.
pub const MAX_LINKS_PER_AGENT: usize = 20;
/// Most step-up authorizations (more scope after `403 insufficient_scope`) in a row for one
/// grant before a call fails instead of asking again.
pub const MAX_STEP_UPS: u32 = 2;

/// What one grant's links are made under.
type GrantLock = Arc<tokio::sync::Mutex<()>>;

/// Where the bridge is reached for OAuth, the links waiting for their person (in the store),
/// and what each replica keeps per grant.
pub struct Authorizations {
    pub settings: Arc<oauth::Settings>,
    /// One lock per grant, held while that grant's link is made (two at once would each
    /// register the bridge with its authorization server); never one for all servers.
    beginning: Mutex<HashMap<(String, String), GrantLock>>,
    /// Step-up authorizations asked in a row, by grant.
    step_ups: Mutex<HashMap<(String, String), u32>>,
}

impl Authorizations {
    pub fn new(settings: oauth::Settings) -> Arc<Self> {
        Arc::new(Self {
            settings: Arc::new(settings),
            beginning: Mutex::default(),
            step_ups: Mutex::default(),
        })
    }

    /// The lock of `key`'s links (made on first use, dropped when nobody holds it).
    pub(super) fn grant_lock(&self, key: &GrantKey) -> GrantLock {
        let mut locks = self.beginning.lock().unwrap_or_else(|e| e.into_inner());
        locks.retain(|_, lock| Arc::strong_count(lock) > 1);
        locks
            .entry((key.server_id.clone(), key.agent.clone()))
            .or_default()
            .clone()
    }

    /// Keeps `pending` in `store`, made for `agent`: past the agent's cap its own oldest link
    /// goes. `NotFound` when the server is no longer registered.
    pub(super) async fn keep(
        &self,
        store: &Store,
        agent: &str,
        pending: &Pending,
    ) -> Result<(), StoreError> {
        // (A link whose server is gone or changed stays, counted, until it expires: opened, it
        // says so.)
        store
            .keep_oauth_link(
                &pending.state,
                &pending.key.server_id,
                &pending.key.agent,
                agent,
                &pending.flow,
                LIMITS,
            )
            .await
    }

    /// The authorization `state` names, taken from `store`: a state works once, on whichever
    /// replica the person comes back to first.
    pub(super) async fn take(
        &self,
        store: &Store,
        state: &str,
    ) -> Result<Option<StoredLink>, StoreError> {
        store.take_oauth_link(state).await
    }

    /// Counts a step-up for `key`; false once there were too many in a row.
    pub(super) fn step_up(&self, key: &GrantKey) -> bool {
        let mut counts = self.step_ups.lock().unwrap_or_else(|e| e.into_inner());
        let count = counts
            .entry((key.server_id.clone(), key.agent.clone()))
            .or_insert(0);
        *count += 1;
        *count <= MAX_STEP_UPS
    }

    /// A call of `server_id` for the grant of `agent` went through: its step-ups start again.
    /// (On every call: nothing is allocated unless a step-up is counted.)
    pub(super) fn steps_done(&self, server_id: &str, agent: &str) {
        let mut counts = self.step_ups.lock().unwrap_or_else(|e| e.into_inner());
        if !counts.is_empty() {
            counts.retain(|(server, grant), _| server != server_id || grant != agent);
        }
    }
}
