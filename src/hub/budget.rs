//! The replay buffers' memory, in bytes: each agent's buffer has its own budget, and all of them
//! together one global budget, so that however many agents and however large their events, the
//! history kept for `Last-Event-ID` never takes the service out of memory.
//!
//! Accounting: an agent's budget charges it the whole size of every event it keeps (it is what
//! that agent could replay). The global budget charges a payload once however many buffers share
//! it (a `resources/updated` to 2,000 subscribers is one allocation, see `Hub::publish_to`): the
//! payload carries a [`Charge`] that adds its size when made and gives it back when the last buffer
//! holding it lets it go. Bytes still on their way to an open stream (its live queue, a replay
//! being sent) are not counted: they are bounded by the streams, not by history.
//!
//! Eviction across agents is oldest first: every event a buffer keeps is also queued here as
//! (its channel, its id). Over the global budget, the oldest of them is evicted from its channel
//! (with everything older there), which raises that channel's floor. Each entry is queued once
//! and popped once, so the cost is constant per event whatever the number of agents; entries of
//! events a buffer already dropped on its own are skipped when reached, and swept out when they
//! outnumber the events kept.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// A buffer the global budget can evict from (an agent's channel).
pub trait Buffer: Send + Sync {
    /// Drops the kept events up to `id`, raising the floor past them.
    fn evict_through(&self, id: u64);
    /// The id of the oldest event kept.
    fn oldest(&self) -> Option<u64>;
}

/// Default global budget: 256 MiB. Sized so that a replica on a 1 GiB container keeps a good
/// share of its memory for connections and calls; at 1 MiB per agent, 256 agents can each fill
/// their buffer before the oldest history anywhere goes.
pub const DEFAULT_BYTES: usize = 256 * 1024 * 1024;
/// Default per-agent budget: 1 MiB, about 450 events of 2.25 KB, 1000 small ones.
pub const DEFAULT_AGENT_BYTES: usize = 1024 * 1024;

/// How much each agent's buffer, and all of them together, may keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Events per agent.
    pub events: usize,
    /// Bytes of event data per agent.
    pub agent_bytes: usize,
    /// Bytes of event data in every buffer together, a shared payload counted once.
    pub bytes: usize,
}

impl From<usize> for Limits {
    /// `events` per agent, with the default byte budgets.
    fn from(events: usize) -> Self {
        Self {
            events,
            agent_bytes: DEFAULT_AGENT_BYTES,
            bytes: DEFAULT_BYTES,
        }
    }
}

/// An event's type, shared by every channel it goes to (not a `String` per channel).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kind(Arc<str>);

impl Kind {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Kind {
    fn from(kind: &str) -> Self {
        Self(kind.into())
    }
}

impl PartialEq<&str> for Kind {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

impl std::ops::Deref for Kind {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

/// One payload's share of the global budget, given back when the last buffer drops it.
pub struct Charge {
    bytes: usize,
    budget: Arc<Budget>,
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.budget.held.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

/// An event's content, made once and handed to every channel it goes to.
#[derive(Clone)]
pub struct Payload {
    pub kind: Kind,
    pub data: Arc<str>,
    pub charge: Arc<Charge>,
}

pub struct Budget {
    pub limits: Limits,
    /// Bytes of the payloads kept in some buffer (each counted once).
    held: AtomicUsize,
    /// Events kept in the buffers, counting a shared one once per buffer.
    kept: AtomicUsize,
    /// Every event a buffer kept, oldest first (some already gone from it).
    queue: Mutex<VecDeque<(Weak<dyn Buffer>, u64)>>,
}

impl Budget {
    pub fn new(limits: Limits) -> Arc<Self> {
        Arc::new(Self {
            limits,
            held: AtomicUsize::new(0),
            kept: AtomicUsize::new(0),
            queue: Mutex::default(),
        })
    }

    /// The payload of an event, charged to the global budget until no buffer keeps it.
    pub fn payload(self: &Arc<Self>, kind: Kind, data: Arc<str>) -> Payload {
        let bytes = data.len();
        self.held.fetch_add(bytes, Ordering::AcqRel);
        Payload {
            kind,
            data,
            charge: Arc::new(Charge {
                bytes,
                budget: self.clone(),
            }),
        }
    }

    /// Bytes of event data the buffers keep now.
    pub fn held(&self) -> usize {
        self.held.load(Ordering::Acquire)
    }

    pub(super) fn kept_one(&self) {
        self.kept.fetch_add(1, Ordering::AcqRel);
    }

    pub(super) fn dropped(&self, events: usize) {
        self.kept.fetch_sub(events, Ordering::AcqRel);
    }

    /// Called once `buffer` keeps event `id` (its lock released): queues it, then evicts the
    /// oldest events anywhere while over the global budget.
    pub(super) fn queue(&self, buffer: Weak<dyn Buffer>, id: u64) {
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        queue.push_back((buffer, id));
        while self.held() > self.limits.bytes {
            let Some((channel, id)) = queue.pop_front() else {
                break;
            };
            if let Some(channel) = channel.upgrade() {
                channel.evict_through(id);
            }
        }
        // Entries of events gone on their own (per-agent eviction, forgotten channels): swept
        // when they are more than the events kept, so the queue stays within twice the kept.
        let kept = self.kept.load(Ordering::Acquire);
        if queue.len() > 2 * kept + 1024 {
            queue.retain(|(channel, id)| {
                channel
                    .upgrade()
                    .is_some_and(|channel| channel.oldest().is_some_and(|oldest| oldest <= *id))
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hub::channel::Channel;

    fn budget(events: usize, agent_bytes: usize, bytes: usize) -> Arc<Budget> {
        Budget::new(Limits {
            events,
            agent_bytes,
            bytes,
        })
    }

    fn replayed(channel: &Channel, last: u64) -> (Vec<String>, Option<u64>) {
        let opened = channel.open(Some(last));
        let data = opened.replay.iter().map(|e| e.data.to_string()).collect();
        (data, opened.lost_after)
    }

    #[test]
    fn over_an_agents_bytes_the_oldest_go_and_raise_the_floor() {
        let budget = budget(100, 10, 1000);
        let channel = Arc::new(Channel::new(&budget));
        let first = channel.publish("k", "aaaa".into());
        let second = channel.publish("k", "bbbb".into());
        channel.publish("k", "cccc".into());
        // 12 bytes do not fit in 10: the first went.
        assert_eq!(channel.bytes(), 8);
        assert_eq!(budget.held(), 8);
        assert_eq!(
            replayed(&channel, first),
            (vec!["bbbb".to_owned(), "cccc".to_owned()], None),
            "a stream that saw the first lost nothing"
        );
        assert_eq!(replayed(&channel, first - 1).1, Some(first - 1));
        assert_eq!(replayed(&channel, second).0, ["cccc"]);
    }

    #[test]
    fn over_the_global_bytes_the_oldest_anywhere_go() {
        let budget = budget(100, 100, 10);
        let one = Arc::new(Channel::new(&budget));
        let two = Arc::new(Channel::new(&budget));
        let a = one.publish("k", "aaaa".into());
        let b = two.publish("k", "bbbb".into());
        let c = one.publish("k", "cccc".into());
        // 12 bytes over 10: "aaaa", the oldest of all, went; two kept its own.
        assert_eq!(budget.held(), 8);
        assert_eq!(
            replayed(&one, a - 1),
            (vec!["cccc".to_owned()], Some(a - 1))
        );
        assert_eq!(replayed(&one, a), (vec!["cccc".to_owned()], None));
        assert_eq!(replayed(&two, b - 1), (vec!["bbbb".to_owned()], None));
        two.publish("k", "dddd".into());
        // Then "bbbb", the oldest left.
        assert_eq!(budget.held(), 8);
        assert_eq!(replayed(&two, b - 1).1, Some(b - 1));
        assert_eq!(replayed(&one, c - 1).0, ["cccc"]);
    }

    #[test]
    fn a_payload_shared_by_channels_counts_once_until_the_last_lets_it_go() {
        let budget = budget(2, 100, 100);
        let channels: Vec<_> = (0..3).map(|_| Arc::new(Channel::new(&budget))).collect();
        let payload = budget.payload("k".into(), "shared".into());
        for channel in &channels {
            channel.publish_payload(&payload);
        }
        drop(payload);
        assert_eq!(budget.held(), 6);
        assert!(channels.iter().all(|c| c.bytes() == 6));
        // Every channel holds the same bytes, not a copy.
        let first = channels[0].open(Some(0)).replay[0].data.clone();
        for channel in &channels {
            assert!(Arc::ptr_eq(&channel.open(Some(0)).replay[0].data, &first));
        }
        // Evicted from two channels (count limit 2): still held by the third.
        for channel in &channels[..2] {
            channel.publish("k", "x".into());
            channel.publish("k", "y".into());
        }
        assert_eq!(budget.held(), 6 + 4);
        drop(channels);
        assert_eq!(budget.held(), 0);
    }

    #[tokio::test]
    async fn an_event_over_the_agents_budget_is_sent_live_not_kept() {
        let budget = budget(100, 10, 1000);
        let channel = Arc::new(Channel::new(&budget));
        let before = channel.publish("k", "small".into());
        let mut live = channel.open(None).live;
        let big = channel.publish("k", "far too large".into());
        assert_eq!(&*live.recv().await.unwrap().data, "far too large");
        assert_eq!(budget.held(), 0);
        // Nothing before it is kept either: a resume from before it has lost it.
        assert_eq!(replayed(&channel, before), (vec![], Some(before)));
        assert_eq!(replayed(&channel, big), (vec![], None));
        let after = channel.publish("k", "next".into());
        assert_eq!(replayed(&channel, big).0, ["next"]);
        assert_eq!(replayed(&channel, after).0, Vec::<String>::new());
    }

    #[test]
    fn the_queue_of_evictions_stays_bounded() {
        // Per-agent evictions leave entries behind; they are swept.
        let budget = budget(1, 100, 1_000_000);
        let channel = Arc::new(Channel::new(&budget));
        for _ in 0..10_000 {
            channel.publish("k", "x".into());
        }
        let queued = budget.queue.lock().unwrap().len();
        assert!(queued <= 2 + 1024 + 1, "{queued}");
        assert_eq!(budget.held(), 1);
    }
}
