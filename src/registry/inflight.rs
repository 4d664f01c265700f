//! The tool calls in flight that their agents may cancel, by (agent, A2E request id): what
//! `DELETE /v1/calls/{id}` finds and stops.

use foldhash::HashMap;
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

/// The cancellable calls in flight, by a serial number of their own. Several calls may share
/// an id (an agent that reuses ids): a cancel stops them all. A cancel looks at every call in
/// flight; a call's start and end touch only its own entry (its id and agent copied once, not
/// also into a key its guard keeps).
#[derive(Default)]
pub struct InFlight {
    calls: Mutex<HashMap<u64, Call>>,
    next: std::sync::atomic::AtomicU64,
}

struct Call {
    agent: String,
    id: String,
    token: CancellationToken,
}

/// A call's place in flight, given up when it ends (answered, failed, cancelled or dropped).
pub struct Running {
    in_flight: Arc<InFlight>,
    serial: u64,
    pub token: CancellationToken,
}

impl InFlight {
    /// Registers `agent`'s call `id` until the returned guard is dropped.
    pub fn start(self: &Arc<Self>, agent: &str, id: &str) -> Running {
        let serial = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let token = CancellationToken::new();
        let call = Call {
            agent: agent.to_owned(),
            id: id.to_owned(),
            token: token.clone(),
        };
        self.lock().insert(serial, call);
        Running {
            in_flight: self.clone(),
            serial,
            token,
        }
    }

    /// Cancels `agent`'s calls `id`; false when none is in flight (unknown, another agent's,
    /// ended, or cancelled already).
    pub fn cancel(&self, agent: &str, id: &str) -> bool {
        let mut cancelled = false;
        // Forgotten at once: cancelled twice, a call is not found the second time.
        self.lock().retain(|_, call| {
            let this = call.agent == agent && call.id == id;
            if this {
                call.token.cancel();
                cancelled = true;
            }
            !this
        });
        cancelled
    }

    /// How many calls are in flight.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Call>> {
        self.calls.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.in_flight.lock().remove(&self.serial);
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
