//! One agent's channel: a bounded replay buffer of events with increasing ids, and the live
//! fan-out to every stream the agent has open.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use tokio::sync::broadcast;

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

/// One event as it goes out on the SSE stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Increasing within the channel, across restarts too (it starts at the creation time in µs).
    pub id: u64,
    /// The A2E message type, the SSE `event:` field.
    pub kind: String,
    /// The A2E message, serialised.
    pub data: Arc<str>,
}

/// Events a stream may fall behind the live feed by before it catches up from the replay buffer
/// (each slot is allocated up front, per agent, so the replay buffer is what holds history).
const LIVE_CAPACITY: usize = 64;

/// What a stream gets when it opens: events to replay first, then the live feed.
pub struct Opened {
    pub replay: Vec<Arc<Event>>,
    /// The id of the last event before the live feed starts.
    pub position: u64,
    /// Set when `Last-Event-ID` is older than the buffer: events in between are gone.
    pub lost_after: Option<u64>,
    pub live: broadcast::Receiver<Arc<Event>>,
}

struct State {
    next_id: u64,
    buffer: VecDeque<Arc<Event>>,
}

pub struct Channel {
    state: Mutex<State>,
    live: broadcast::Sender<Arc<Event>>,
    capacity: usize,
    /// Streams open now.
    streams: AtomicUsize,
    /// When the last stream closed (seconds since the epoch); 0 while one is open.
    idle_since: AtomicU64,
}

impl Channel {
    pub fn new(capacity: usize) -> Self {
        let first_id = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros() as u64)
            .unwrap_or(1);
        Self {
            state: Mutex::new(State {
                next_id: first_id,
                buffer: VecDeque::with_capacity(capacity.min(64)),
            }),
            live: broadcast::channel(LIVE_CAPACITY).0,
            capacity,
            streams: AtomicUsize::new(0),
            idle_since: AtomicU64::new(now_secs()),
        }
    }

    /// Appends an event and sends it to every open stream.
    pub fn publish(&self, kind: &str, data: Arc<str>) -> u64 {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let event = Arc::new(Event {
            id: state.next_id,
            kind: kind.to_owned(),
            data,
        });
        state.next_id += 1;
        if state.buffer.len() == self.capacity {
            state.buffer.pop_front();
        }
        state.buffer.push_back(event.clone());
        // Sent under the lock, so a stream opening now sees each event exactly once.
        let _ = self.live.send(event.clone());
        event.id
    }

    /// Opens a stream: the events after `last_event_id` still buffered, then the live feed.
    pub fn open(&self, last_event_id: Option<u64>) -> Opened {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let live = self.live.subscribe();
        let position = state.next_id - 1;
        let Some(last) = last_event_id else {
            return Opened {
                replay: Vec::new(),
                position,
                lost_after: None,
                live,
            };
        };
        let oldest = state.buffer.front().map_or(state.next_id, |e| e.id);
        let lost_after = (last.saturating_add(1) < oldest || last >= state.next_id).then_some(last);
        let replay = state
            .buffer
            .iter()
            .filter(|e| e.id > last || lost_after.is_some())
            .cloned()
            .collect();
        Opened {
            replay,
            position,
            lost_after,
            live,
        }
    }

    pub fn stream_opened(&self) {
        self.streams.fetch_add(1, Ordering::AcqRel);
        self.idle_since.store(0, Ordering::Release);
    }

    pub fn stream_closed(&self) {
        if self.streams.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.idle_since.store(now_secs(), Ordering::Release);
        }
    }

    /// Whether no stream has been open for at least `secs` seconds.
    pub fn idle_for(&self, secs: u64) -> bool {
        let since = self.idle_since.load(Ordering::Acquire);
        !self.connected() && since != 0 && now_secs().saturating_sub(since) >= secs
    }

    /// Whether the agent has a stream open now.
    pub fn connected(&self) -> bool {
        self.streams.load(Ordering::Acquire) > 0
    }

    pub fn stream_count(&self) -> usize {
        self.streams.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(events: &[Arc<Event>]) -> Vec<u64> {
        events.iter().map(|e| e.id).collect()
    }

    #[test]
    fn replay_after_the_last_seen_id() {
        let channel = Channel::new(4);
        let first = channel.publish("a", "1".into());
        for _ in 0..2 {
            channel.publish("a", "x".into());
        }
        let opened = channel.open(Some(first));
        assert_eq!(ids(&opened.replay), [first + 1, first + 2]);
        assert_eq!(opened.lost_after, None);
        // Up to date: nothing to replay.
        assert!(channel.open(Some(first + 2)).replay.is_empty());
        // No Last-Event-ID: live only.
        assert!(channel.open(None).replay.is_empty());
    }

    #[test]
    fn past_the_buffer_says_events_were_lost() {
        let channel = Channel::new(2);
        let first = channel.publish("a", "1".into());
        for _ in 0..4 {
            channel.publish("a", "x".into());
        }
        let opened = channel.open(Some(first));
        assert_eq!(opened.lost_after, Some(first));
        assert_eq!(ids(&opened.replay), [first + 3, first + 4]);
        // An id from another incarnation (ahead of this one) is lost too.
        assert_eq!(
            channel.open(Some(u64::MAX - 1)).lost_after,
            Some(u64::MAX - 1)
        );
    }

    #[test]
    fn a_channel_is_idle_only_without_streams() {
        let channel = Channel::new(4);
        assert!(channel.idle_for(0));
        channel.stream_opened();
        assert!(!channel.idle_for(0));
        channel.stream_closed();
        assert!(channel.idle_for(0));
        assert!(!channel.idle_for(3600));
    }

    #[tokio::test]
    async fn live_events_reach_every_open_stream() {
        let channel = Channel::new(8);
        let mut one = channel.open(None).live;
        let mut two = channel.open(None).live;
        let id = channel.publish("k", "{}".into());
        assert_eq!(one.recv().await.unwrap().id, id);
        assert_eq!(two.recv().await.unwrap().id, id);
    }
}
