//! Putting a message on the bus and taking one off: sealed with this replica's name, an id and
//! the time; taken only if sealed for its subject, of a known version and kind, and fresh.
//! What is refused is counted and warned about (once per sender and version, or per subject).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::protocol::{self, Envelope, Message, Refused};
use super::seal::Unfit;
use super::{Bus, CLOCK_SKEW, REPLAY_WINDOW, now_ms};

impl Bus {
    /// A message as this replica puts it on `subject`: sealed, with a new id.
    pub(super) fn wrap(&self, subject: &str, message: &Message) -> Bytes {
        self.wrap_as(subject, &uuid::Uuid::new_v4().simple().to_string(), message)
    }

    /// A message with id `id` as this replica puts it on `subject`.
    pub(super) fn wrap_as(&self, subject: &str, id: &str, message: &Message) -> Bytes {
        let plain = protocol::encode(&self.replica, id, now_ms(), message);
        let version = u8::try_from(protocol::VERSION).unwrap_or(u8::MAX);
        self.key.seal(version, subject, &plain).into()
    }

    /// A message another replica put on `subject`, if sealed with the bus key for it, of a
    /// version and kind known here, and fresh: a log entry not applied before, anything else
    /// sent within the replay window and not seen before. A refusal is counted and said once
    /// per sender and version (or at most every 10 s per subject) without its content.
    pub(super) fn unwrap(&self, subject: &str, payload: &[u8]) -> Result<Envelope, Refused> {
        self.unwrap_stored(subject, payload, None)
    }

    /// [`Self::unwrap`] for a message a stream stored at `stored` (ms since the epoch).
    pub(super) fn unwrap_stored(
        &self,
        subject: &str,
        payload: &[u8],
        stored: Option<u64>,
    ) -> Result<Envelope, Refused> {
        let refused = match self.take(subject, payload, stored) {
            Ok(envelope) => return Ok(envelope),
            Err(refused) => refused,
        };
        self.refused.fetch_add(1, Ordering::Relaxed);
        let first = match &refused {
            Refused::Version { from, v } | Refused::NotUnderstood { from, v, .. } => self
                .warned
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert((from.clone(), *v)),
            _ => self.lapsed_since_warned(subject),
        };
        if first {
            tracing::warn!(%subject, replica = %self.replica, "a message between replicas is refused: {refused}");
        }
        Err(refused)
    }

    fn take(
        &self,
        subject: &str,
        payload: &[u8],
        stored: Option<u64>,
    ) -> Result<Envelope, Refused> {
        let (version, plain) = self.key.open(subject, payload).ok_or(Refused::Unsealed)?;
        let envelope = protocol::decode(&plain)?;
        if u32::from(version) != envelope.v {
            return Err(Refused::Unsealed);
        }
        let now = now_ms();
        let stale = |envelope: Envelope| Refused::Stale {
            age_secs: (i128::from(now) - i128::from(envelope.at))
                .div_euclid(1000)
                .clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64,
            from: envelope.from,
        };
        let seen = match envelope.message {
            // A log entry is sealed when it is published (again, after an outage), and the log
            // keeps entries for LOG_MAX_AGE: one sealed longer ago than that (plus the skew) is
            // no entry the log can still hold, so a replay of it is refused by its time, and
            // one younger is in the log after its original, whose id is known by then.
            Message::Log(_) => &self.seen_log,
            // The stream keeps the last value of each key however old, so a value is judged
            // by when NATS stored it: a genuine one is sealed just before, a replayed capture
            // is stored long after. And a key's value never goes back in time.
            Message::Shared(_) => {
                let window = REPLAY_WINDOW.as_millis() as u64;
                let fresh = stored.is_some_and(|stored| {
                    stored.abs_diff(envelope.at) <= window
                        && envelope.at <= now.saturating_add(CLOCK_SKEW.as_millis() as u64)
                });
                let mut last = self.shared_at.lock().unwrap_or_else(|e| e.into_inner());
                let later = last.get(subject).is_none_or(|&at| envelope.at >= at);
                if !fresh || !later {
                    return Err(stale(envelope));
                }
                last.insert(subject.to_owned(), envelope.at);
                return Ok(envelope);
            }
            _ => &self.seen,
        };
        let taken = seen.lock().unwrap_or_else(|e| e.into_inner()).take(
            &format!("{}/{}", envelope.from, envelope.id),
            envelope.at,
            now,
        );
        match taken {
            Ok(()) => Ok(envelope),
            Err(Unfit::Future | Unfit::Old) => Err(stale(envelope)),
            Err(Unfit::Replayed) => Err(Refused::Replayed {
                from: envelope.from,
            }),
        }
    }

    /// Whether a warning about `subject` is due (one every 10 s at most).
    fn lapsed_since_warned(&self, subject: &str) -> bool {
        let mut last = self.last_warned.lock().unwrap_or_else(|e| e.into_inner());
        let due = last
            .get(subject)
            .is_none_or(|at| at.elapsed() >= Duration::from_secs(10));
        if due {
            if last.len() > 1024 {
                last.clear();
            }
            last.insert(subject.to_owned(), Instant::now());
        }
        due
    }

    /// Messages refused since start.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hub::bus::testing::*;
    use crate::hub::bus::{Entry, LOG_MAX_AGE, Request};

    /// What a replica takes is fresh: a request sealed before it started (its seen set knows
    /// nothing older, so it would take a replay), one from the future beyond the clock skew,
    /// and a log entry older than the log keeps entries are refused; fresh ones are taken.
    #[tokio::test]
    async fn stale_future_and_pre_start_messages_are_refused() {
        let Some(replicas) = Replicas::new() else {
            return;
        };
        let a = replicas.hub("a").await;
        let bus = a.bus().unwrap();
        let rpc = format!("{}.rpc.a", replicas.prefix);
        let ping = Message::Request(Request::Ping);
        let now = now_ms();
        let before_start = bus.unwrap(&rpc, &sealed(&rpc, "m1", now - 30_000, &ping));
        assert!(
            matches!(before_start, Err(Refused::Stale { .. })),
            "{before_start:?}"
        );
        let ahead = bus.unwrap(&rpc, &sealed(&rpc, "m2", now + 30_000, &ping));
        assert!(matches!(ahead, Err(Refused::Stale { .. })), "{ahead:?}");
        assert!(
            bus.unwrap(&rpc, &sealed(&rpc, "m3", now_ms(), &ping))
                .is_ok()
        );
        let log = format!("{}.log", replicas.prefix);
        let open = Message::Log(Entry::Open {
            agent: "alice".into(),
        });
        let old = bus.unwrap(&log, &sealed(&log, "l1", now - 90 * 60_000, &open));
        assert!(matches!(old, Err(Refused::Stale { .. })), "{old:?}");
        let ahead = bus.unwrap(&log, &sealed(&log, "l2", now + 30 * 60_000, &open));
        assert!(matches!(ahead, Err(Refused::Stale { .. })), "{ahead:?}");
        assert!(
            bus.unwrap(&log, &sealed(&log, "l3", now_ms(), &open))
                .is_ok()
        );
        // The log still holds an entry stored just inside its max age, and one from a sender
        // whose clock lags by up to the skew: both are taken.
        let hour = LOG_MAX_AGE.as_millis() as u64;
        let kept = bus.unwrap(&log, &sealed(&log, "l4", now_ms() - hour + 5_000, &open));
        assert!(kept.is_ok(), "{kept:?}");
        let lagging = bus.unwrap(&log, &sealed(&log, "l5", now_ms() - hour - 5_000, &open));
        assert!(lagging.is_ok(), "{lagging:?}");
    }
}
