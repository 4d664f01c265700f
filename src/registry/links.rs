//! The OAuth authorization links the bridge gave out and is waiting on, by `state`, and the
//! step-ups asked per grant.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::upstream::oauth::{self, GrantKey, Pending};

/// How long a link stays good.
const LINK_TTL: Duration = Duration::from_secs(15 * 60);
/// Most links waiting at once (older ones are dropped first).
const MAX_WAITING: usize = 1000;
/// Most step-up authorizations (more scope after `403 insufficient_scope`) in a row for one
/// grant before a call fails instead of asking again.
pub const MAX_STEP_UPS: u32 = 2;

/// The authorizations waiting for their person, by `state`, and where the bridge is reached.
pub struct Authorizations {
    pub settings: Arc<oauth::Settings>,
    waiting: Mutex<HashMap<String, (Instant, Pending)>>,
    /// Held while a link is made.
    pub(super) beginning: tokio::sync::Mutex<()>,
    /// Step-up authorizations asked in a row, by grant.
    step_ups: Mutex<HashMap<(String, String), u32>>,
}

impl Authorizations {
    pub fn new(settings: oauth::Settings) -> Arc<Self> {
        Arc::new(Self {
            settings: Arc::new(settings),
            waiting: Mutex::default(),
            beginning: tokio::sync::Mutex::new(()),
            step_ups: Mutex::default(),
        })
    }

    pub(super) fn keep(&self, pending: Pending) {
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        waiting.retain(|_, (at, _)| at.elapsed() < LINK_TTL);
        if waiting.len() >= MAX_WAITING
            && let Some(oldest) = waiting
                .iter()
                .min_by_key(|(_, (at, _))| *at)
                .map(|(state, _)| state.clone())
        {
            waiting.remove(&oldest);
        }
        waiting.insert(pending.state.clone(), (Instant::now(), pending));
    }

    /// The authorization `state` names, taken: a state works once.
    pub(super) fn take(&self, state: &str) -> Option<Pending> {
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        let (at, pending) = waiting.remove(state)?;
        (at.elapsed() < LINK_TTL).then_some(pending)
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
