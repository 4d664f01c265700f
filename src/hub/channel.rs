//! One agent's channel: a replay buffer of events with increasing ids, bounded in events and in
//! bytes (`budget.rs`), and the live fan-out to every stream the agent has open.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use tokio::sync::broadcast;

use super::budget::{Budget, Buffer, Charge, Kind, Payload};

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
    /// The A2E message type, the SSE `event:` field (shared by every channel it went to).
    pub kind: Kind,
    /// The A2E message, serialised (shared by every channel it went to).
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

/// An event kept for replay, with its share of the global budget.
struct Kept {
    event: Arc<Event>,
    _charge: Arc<Charge>,
}

struct State {
    /// The live fan-out; none once the service stops, which ends every stream (each sees its
    /// receiver closed) without a stream waiting on the shutdown at every event.
    live: Option<broadcast::Sender<Arc<Event>>>,
    next_id: u64,
    /// Events up to this id are not known here (evicted, or before this channel began): a
    /// stream resuming before it has lost some. The buffer is always every event after it.
    floor: u64,
    buffer: VecDeque<Kept>,
    /// Bytes of the data in `buffer`, each event counted whole.
    bytes: usize,
}

pub struct Channel {
    state: Mutex<State>,
    budget: Arc<Budget>,
    /// Streams open now.
    streams: AtomicUsize,
    /// When the last stream closed (seconds since the epoch); 0 while one is open.
    idle_since: AtomicU64,
}

impl Channel {
    pub fn new(budget: &Arc<Budget>) -> Self {
        let first_id = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros() as u64)
            .unwrap_or(1);
        Self::starting_at(budget, first_id, first_id - 1)
    }

    /// A channel whose next event is `next_id` at the earliest, knowing nothing up to `floor`
    /// (across replicas: ids are the log's sequence numbers, not contiguous per agent).
    pub fn starting_at(budget: &Arc<Budget>, next_id: u64, floor: u64) -> Self {
        Self {
            state: Mutex::new(State {
                live: Some(broadcast::channel(LIVE_CAPACITY).0),
                next_id,
                floor,
                buffer: VecDeque::with_capacity(budget.limits.events.min(64)),
                bytes: 0,
            }),
            budget: budget.clone(),
            streams: AtomicUsize::new(0),
            idle_since: AtomicU64::new(now_secs()),
        }
    }

    #[cfg(test)]
    pub fn publish(self: &Arc<Self>, kind: &str, data: Arc<str>) -> u64 {
        self.publish_payload(&self.budget.payload(kind.into(), data))
    }

    /// Publishes `payload` (possibly shared with other channels) with the next id.
    pub fn publish_payload(self: &Arc<Self>, payload: &Payload) -> u64 {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let id = state.next_id;
        let kept = self.push(&mut state, id, payload);
        drop(state);
        if kept {
            self.budget.queue(Arc::downgrade(self) as _, id);
        }
        id
    }

    /// Publishes an event whose id was given elsewhere (the replicas' log); an id not above the
    /// last one is ignored.
    pub fn publish_at(self: &Arc<Self>, id: u64, payload: &Payload) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if id >= state.next_id && self.push(&mut state, id, payload) {
            drop(state);
            self.budget.queue(Arc::downgrade(self) as _, id);
        }
    }

    /// Sends the event live and keeps it when it fits the budgets (evicting the oldest to make
    /// room); says whether it was kept.
    fn push(&self, state: &mut State, id: u64, payload: &Payload) -> bool {
        let event = Arc::new(Event {
            id,
            kind: payload.kind.clone(),
            data: payload.data.clone(),
        });
        state.next_id = id + 1;
        let size = payload.data.len();
        let limits = self.budget.limits;
        if let Some(live) = &state.live {
            let _ = live.send(event.clone());
        }
        if size > limits.agent_bytes || size > limits.bytes {
            // Delivered live, not kept: so that the buffer stays every event after the floor,
            // the older ones go too, and a resume before this one is told events were lost.
            self.evict(state, usize::MAX);
            state.floor = id;
            return false;
        }
        while !state.buffer.is_empty()
            && (state.buffer.len() >= limits.events || state.bytes + size > limits.agent_bytes)
        {
            self.evict(state, 1);
        }
        state.buffer.push_back(Kept {
            event,
            _charge: payload.charge.clone(),
        });
        state.bytes += size;
        self.budget.kept_one();
        true
    }

    /// Drops the `n` oldest kept events, raising the floor past them.
    fn evict(&self, state: &mut State, n: usize) {
        let mut dropped = 0;
        while dropped < n
            && let Some(kept) = state.buffer.pop_front()
        {
            state.floor = kept.event.id;
            state.bytes -= kept.event.data.len();
            dropped += 1;
        }
        self.budget.dropped(dropped);
    }

    /// Bytes of event data this channel keeps (each event counted whole).
    #[cfg(test)]
    pub fn bytes(&self) -> usize {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).bytes
    }

    pub fn open(&self, last_event_id: Option<u64>) -> Opened {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let live = match &state.live {
            Some(live) => live.subscribe(),
            // Closed: a receiver whose sender is gone ends the stream at once.
            None => broadcast::channel(1).1,
        };
        let position = state.next_id - 1;
        let Some(last) = last_event_id else {
            return Opened {
                replay: Vec::new(),
                position,
                lost_after: None,
                live,
            };
        };
        let lost_after = (last < state.floor || last >= state.next_id).then_some(last);
        let replay = state
            .buffer
            .iter()
            .filter(|k| k.event.id > last || lost_after.is_some())
            .map(|k| k.event.clone())
            .collect();
        Opened {
            replay,
            position,
            lost_after,
            live,
        }
    }

    /// Ends every stream of this channel, now and from now on (the service is stopping).
    pub fn close(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).live = None;
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

/// The global budget's eviction.
impl Buffer for Channel {
    fn evict_through(&self, id: u64) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let n = state.buffer.iter().take_while(|k| k.event.id <= id).count();
        self.evict(&mut state, n);
    }

    fn oldest(&self) -> Option<u64> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.buffer.front().map(|k| k.event.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn channel(events: usize) -> Arc<Channel> {
        Arc::new(Channel::new(&Budget::new(events.into())))
    }

    fn ids(events: &[Arc<Event>]) -> Vec<u64> {
        events.iter().map(|e| e.id).collect()
    }

    #[test]
    fn replay_after_the_last_seen_id() {
        let channel = channel(4);
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
        let channel = channel(2);
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
        let channel = channel(4);
        assert!(channel.idle_for(0));
        channel.stream_opened();
        assert!(!channel.idle_for(0));
        channel.stream_closed();
        assert!(channel.idle_for(0));
        assert!(!channel.idle_for(3600));
    }

    #[test]
    fn ids_from_the_log_need_not_be_contiguous() {
        let channel = Arc::new(Channel::starting_at(&Budget::new(2.into()), 10, 9));
        let at = |id, data: &str| {
            channel.publish_at(id, &channel.budget.payload("a".into(), data.into()))
        };
        at(10, "1");
        at(50, "2");
        at(40, "late");
        let opened = channel.open(Some(10));
        assert_eq!((ids(&opened.replay), opened.lost_after), (vec![50], None));
        at(70, "3");
        // 10 is evicted: a stream that saw it lost nothing, one before it did.
        assert_eq!(channel.open(Some(10)).lost_after, None);
        assert_eq!(channel.open(Some(9)).lost_after, Some(9));
        assert_eq!(channel.open(Some(70)).lost_after, None);
        assert_eq!(channel.open(Some(71)).lost_after, Some(71));
    }

    #[tokio::test]
    async fn live_events_reach_every_open_stream() {
        let channel = channel(8);
        let mut one = channel.open(None).live;
        let mut two = channel.open(None).live;
        let id = channel.publish("k", "{}".into());
        assert_eq!(one.recv().await.unwrap().id, id);
        assert_eq!(two.recv().await.unwrap().id, id);
    }
}
