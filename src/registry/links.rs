//! The OAuth authorization links the bridge gave out and is waiting on, by `state`, and the
//! step-ups asked per grant.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::upstream::oauth::{self, GrantKey, Pending};

/// How long a link stays good.
const LINK_TTL: Duration = Duration::from_secs(15 * 60);
/// Most links waiting at once for one agent: its oldest goes first, others' are untouched.
pub const MAX_LINKS_PER_AGENT: usize = 20;
/// Most links waiting at once in all (a bound on memory): when full, the oldest link of the
/// agent holding the most goes.
const MAX_WAITING: usize = 10_000;
/// Most step-up authorizations (more scope after `403 insufficient_scope`) in a row for one
/// grant before a call fails instead of asking again.
pub const MAX_STEP_UPS: u32 = 2;

/// What one grant's links are made under.
type GrantLock = Arc<tokio::sync::Mutex<()>>;

/// A link waiting for its person.
struct Link {
    at: Instant,
    /// The agent the link was made for (counted against its cap).
    agent: String,
    pending: Pending,
}

/// The authorizations waiting for their person, by `state`, and where the bridge is reached.
pub struct Authorizations {
    pub settings: Arc<oauth::Settings>,
    waiting: Mutex<HashMap<String, Link>>,
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
            waiting: Mutex::default(),
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

    /// Keeps `pending`, made for `agent`: past the agent's cap its own oldest link goes.
    pub(super) fn keep(&self, agent: &str, pending: Pending) {
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        // (A link whose server is gone or changed stays, counted, until it expires: opened, it
        // says so.)
        waiting.retain(|_, link| link.at.elapsed() < LINK_TTL);
        let oldest_of = |waiting: &HashMap<String, Link>, agent: &str| {
            waiting
                .iter()
                .filter(|(_, link)| link.agent == agent)
                .min_by_key(|(_, link)| link.at)
                .map(|(state, _)| state.clone())
        };
        let mine = waiting.values().filter(|link| link.agent == agent).count();
        if mine >= MAX_LINKS_PER_AGENT
            && let Some(oldest) = oldest_of(&waiting, agent)
        {
            waiting.remove(&oldest);
        } else if waiting.len() >= MAX_WAITING {
            let mut counts: HashMap<&str, usize> = HashMap::new();
            for link in waiting.values() {
                *counts.entry(link.agent.as_str()).or_default() += 1;
            }
            let most = counts
                .into_iter()
                .max_by_key(|(_, n)| *n)
                .map(|(agent, _)| agent.to_owned());
            if let Some(oldest) = most.and_then(|most| oldest_of(&waiting, &most)) {
                waiting.remove(&oldest);
            }
        }
        let link = Link {
            at: Instant::now(),
            agent: agent.to_owned(),
            pending,
        };
        waiting.insert(link.pending.state.clone(), link);
    }

    /// The authorization `state` names, taken: a state works once.
    pub(super) fn take(&self, state: &str) -> Option<Pending> {
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        let link = waiting.remove(state)?;
        (link.at.elapsed() < LINK_TTL).then_some(link.pending)
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
