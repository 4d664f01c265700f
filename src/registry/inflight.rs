//! The tool calls in flight that their agents may cancel, by (agent, A2E request id): what
//! `DELETE /v1/calls/{id}` finds and stops.

use foldhash::HashMap;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

type Key = (String, String);

/// The cancellable calls in flight. Several calls may share an id (an agent that reuses ids):
/// a cancel stops them all.
#[derive(Default)]
pub struct InFlight {
    calls: Mutex<HashMap<Key, Vec<(u64, CancellationToken)>>>,
    next: std::sync::atomic::AtomicU64,
}

/// A call's place in flight, given up when it ends (answered, failed, cancelled or dropped).
pub struct Running {
    in_flight: Arc<InFlight>,
    key: Key,
    serial: u64,
    pub token: CancellationToken,
}

impl InFlight {
    /// Registers `agent`'s call `id` until the returned guard is dropped.
    pub fn start(self: &Arc<Self>, agent: &str, id: &str) -> Running {
        let serial = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let token = CancellationToken::new();
        let key = (agent.to_owned(), id.to_owned());
        self.lock()
            .entry(key.clone())
            .or_default()
            .push((serial, token.clone()));
        Running {
            in_flight: self.clone(),
            key,
            serial,
            token,
        }
    }

    /// Cancels `agent`'s calls `id`; false when none is in flight (unknown, another agent's,
    /// ended, or cancelled already).
    pub fn cancel(&self, agent: &str, id: &str) -> bool {
        let key = (agent.to_owned(), id.to_owned());
        let Some(calls) = self.lock().remove(&key) else {
            return false;
        };
        for (_, token) in &calls {
            token.cancel();
        }
        !calls.is_empty()
    }

    /// How many calls are in flight.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.lock().values().map(Vec::len).sum()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Vec<(u64, CancellationToken)>>> {
        self.calls.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let mut calls = self.in_flight.lock();
        if let Some(same) = calls.get_mut(&self.key) {
            same.retain(|(serial, _)| *serial != self.serial);
            if same.is_empty() {
                calls.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_cancelled_once_by_its_own_agent_only() {
        let in_flight = Arc::new(InFlight::default());
        let call = in_flight.start("a", "1");
        assert!(!in_flight.cancel("b", "1"), "another agent's call");
        assert!(!in_flight.cancel("a", "2"), "an unknown id");
        assert!(in_flight.cancel("a", "1"));
        assert!(call.token.is_cancelled());
        assert!(!in_flight.cancel("a", "1"), "cancelled twice");
        drop(call);
        assert_eq!(in_flight.len(), 0);
    }

    #[test]
    fn an_ended_call_is_forgotten() {
        let in_flight = Arc::new(InFlight::default());
        let first = in_flight.start("a", "1");
        let second = in_flight.start("a", "1");
        drop(first);
        assert_eq!(in_flight.len(), 1);
        drop(second);
        assert!(!in_flight.cancel("a", "1"));
    }
}
