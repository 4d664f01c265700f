//! The outbox of the replicas' log: this replica's entries, appended in order, and kept while
//! NATS is away for as long as it takes, bounded in bytes (`MCP_BRIDGE_BUS_OUTBOX_BYTES`).
//! Entries are published in order with up to `WINDOW` of them awaiting their acknowledgement
//! (not one per round trip: a burst of events would hold up every request and push behind it,
//! and a backlog would drain slowly after an outage). When one fails, every entry not yet
//! acknowledged is published again in order, under the same message ids (JetStream drops a
//! duplicate within its window, and the log's appliers apply an id once whenever it comes).
//! NATS keeps the order of one connection, so the log holds this replica's entries in the
//! order they were appended but for a failure that loses one and keeps a later one. Each publication
//! is sealed anew (same id, the time it is sent): an entry that waited out a long outage is as
//! fresh as any to the replicas applying it.
//! Past the bound the oldest waiting events are dropped (counted, said once per outage); an
//! agent's stream opening (`Open`) and a request's end (`Done`) are never dropped: without
//! them the replicas would disagree on who has a channel and on which requests still wait.
//! An agent has one `Open` waiting at most (one reconnecting all through an outage adds no
//! more); a `Done` is one per request that ended, and requests wait for their answer on this
//! replica (bounded by their deadlines), so these stay few next to the events.
//! Once NATS is back the agents whose events were dropped are told `bridge/events_lost`.
//! A [`Outgoing::Logged`] handed in after some entries is answered once they are all acknowledged:
//! a call's answer waits on it, so an event the call caused is in the log before the caller
//! hears back, and a replica killed right after answering takes no acknowledged event with it.

use std::collections::{BTreeSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use async_nats::HeaderMap;
use async_nats::jetstream::context::{PublishAckFuture, PublishError};
use futures::future::BoxFuture;
use serde_json::json;
use tokio::sync::{mpsc, oneshot};

use super::{Bus, Entry, Message, Outgoing};
use crate::a2e::{Message as _, NotificationMethod, ServerPush};

/// How many entries are published at most before the first of them is acknowledged.
pub(super) const WINDOW: usize = 64;

/// An entry waiting for its acknowledgement.
struct Waiting {
    id: String,
    entry: Message,
    /// Its size sealed (what the bound counts).
    size: usize,
    /// Whose events it carries (`None`: every agent's).
    agent: Option<String>,
    /// Whether it is an event (only those are told lost).
    event: bool,
    /// Whether it may be dropped past the bound (not `Open`, not `Done`).
    droppable: bool,
    /// Who waits for it (and for every entry before it) to be acknowledged.
    logged: Vec<oneshot::Sender<()>>,
}

impl Waiting {
    fn new(id: String, entry: Entry, size: usize) -> Self {
        let (agent, event) = match &entry {
            Entry::Event { agent, .. } | Entry::Ask { agent, .. } => (Some(agent.clone()), true),
            Entry::All { .. } => (None, true),
            Entry::Open { .. } | Entry::Done { .. } => (None, false),
        };
        Self {
            id,
            entry: Message::Log(entry),
            size,
            agent,
            event,
            droppable: event,
            logged: Vec::new(),
        }
    }
}

/// Who lost events to the bound.
#[derive(Default)]
struct Lost {
    agents: BTreeSet<String>,
    everyone: bool,
}

impl Lost {
    fn add(&mut self, agent: Option<String>) {
        match agent {
            Some(agent) => {
                self.agents.insert(agent);
            }
            None => self.everyone = true,
        }
    }
}

impl Bus {
    pub(super) async fn append_log(
        self: Arc<Self>,
        mut outgoing: mpsc::UnboundedReceiver<Outgoing>,
    ) {
        let mut waiting: VecDeque<Waiting> = VecDeque::new();
        let mut bytes = 0usize;
        let mut next_id: u64 = 0;
        let mut lost = Lost::default();
        let mut failing = false;
        let mut said = false;
        let mut pause = Duration::from_millis(50);
        // The acknowledgements of the first entries waiting, published in order.
        let mut in_flight: VecDeque<BoxFuture<'static, Result<(), PublishError>>> = VecDeque::new();
        // Ids name this run of the process: a replica restarted under the same id (and, in a
        // container, always PID 1) must not reuse ids the others have applied already.
        let run = crate::a2e::new_id();
        loop {
            let mut take = |handed: Outgoing,
                            waiting: &mut VecDeque<Waiting>,
                            bytes: &mut usize,
                            lost: &mut Lost| {
                let entry = match handed {
                    Outgoing::Entry(entry) => entry,
                    Outgoing::Logged(logged) => {
                        match waiting.back_mut() {
                            Some(last) => last.logged.push(logged),
                            None => drop(logged.send(())),
                        }
                        return;
                    }
                };
                // An agent reconnecting while NATS is away opens its stream again and again:
                // one opening waiting is enough (applying it twice changes nothing).
                if opening_waits(waiting, &entry) {
                    return;
                }
                next_id += 1;
                let id = format!("{}-{run}-{next_id}", self.replica);
                let size = self
                    .wrap_as(&self.log_subject, &id, &Message::Log(entry.clone()))
                    .len();
                let w = Waiting::new(id, entry, size);
                // NATS refuses a message over its max_payload, every time: kept, it would hold
                // up every entry behind it. Dropped here, and its agent told as for the bound.
                let max = self.client.server_info().max_payload;
                if max > 0 && size > max {
                    self.dropped
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    tracing::error!(
                        bytes = size,
                        max_payload = max,
                        "an event is larger than NATS takes (its max_payload): dropped"
                    );
                    if w.event {
                        lost.add(w.agent);
                    }
                    return;
                }
                *bytes += size;
                waiting.push_back(w);
            };
            while let Ok(entry) = outgoing.try_recv() {
                take(entry, &mut waiting, &mut bytes, &mut lost);
            }
            let dropped = keep_within(
                self.outbox_bytes,
                in_flight.len(),
                &mut waiting,
                &mut bytes,
                &mut lost,
            );
            self.dropped
                .fetch_add(dropped, std::sync::atomic::Ordering::Relaxed);
            if dropped > 0 && !said {
                said = true;
                tracing::error!(
                    bound = self.outbox_bytes,
                    "NATS has been away so long that the events waiting for it passed MCP_BRIDGE_BUS_OUTBOX_BYTES: dropping the oldest (their agents are told bridge/events_lost)"
                );
            }
            if waiting.is_empty() {
                if !failing && (lost.everyone || !lost.agents.is_empty()) {
                    self.tell_lost(std::mem::take(&mut lost));
                    continue;
                }
                match outgoing.recv().await {
                    Some(entry) => take(entry, &mut waiting, &mut bytes, &mut lost),
                    None => return,
                }
                continue;
            }
            // Up to a window of entries in flight, in order, each sealed as it is published.
            // Not while NATS is away: the client would keep them, sealed now, and send them
            // whenever it reconnects.
            if self.connected() {
                while in_flight.len() < WINDOW && in_flight.len() < waiting.len() {
                    match self.publish_entry(&waiting[in_flight.len()]).await {
                        Some(pending) => in_flight.push_back(pending),
                        None => break,
                    }
                }
                self.most_in_flight
                    .fetch_max(in_flight.len() as u64, std::sync::atomic::Ordering::Relaxed);
            }
            let acked = match in_flight.front_mut() {
                None => false,
                Some(pending) => {
                    let came = tokio::select! {
                        entry = outgoing.recv() => Err(entry),
                        done = pending => Ok(done.is_ok()),
                    };
                    match came {
                        Ok(acked) => {
                            in_flight.pop_front();
                            acked
                        }
                        Err(Some(entry)) => {
                            take(entry, &mut waiting, &mut bytes, &mut lost);
                            continue;
                        }
                        Err(None) => return,
                    }
                }
            };
            if acked {
                if let Some(done) = waiting.pop_front() {
                    bytes -= done.size;
                    for logged in done.logged {
                        let _ = logged.send(());
                    }
                }
                if failing {
                    failing = false;
                    self.log_failing.store(false, Ordering::Relaxed);
                    said = false;
                    pause = Duration::from_millis(50);
                    tracing::info!("the replicas' log takes entries again");
                }
                continue;
            }
            // Everything unacknowledged goes again, in order (sealed anew, under the same ids)
            // once the pause is over; what the log took already it drops as a duplicate.
            in_flight.clear();
            if !failing {
                failing = true;
                self.log_failing.store(true, Ordering::Relaxed);
                self.error();
                tracing::warn!(
                    waiting = waiting.len(),
                    "the replicas' log takes no entries (NATS away?); keeping them until it does"
                );
            }
            tokio::select! {
                _ = self.shutdown.cancelled() => return,
                _ = tokio::time::sleep(pause) => {}
            }
            pause = (pause * 2).min(Duration::from_secs(1));
        }
    }

    /// Publishes `w`, sealed now: its acknowledgement, or `None` when it cannot be sent.
    async fn publish_entry(
        &self,
        w: &Waiting,
    ) -> Option<BoxFuture<'static, Result<(), PublishError>>> {
        let payload = self.wrap_as(&self.log_subject, &w.id, &w.entry);
        let mut headers = HeaderMap::new();
        headers.insert(async_nats::header::NATS_MESSAGE_ID, w.id.as_str());
        self.js
            .publish_with_headers(self.log_subject.clone(), headers, payload)
            .await
            .ok()
            .map(acknowledged)
    }

    /// Tells the agents whose events were dropped.
    fn tell_lost(&self, lost: Lost) {
        let push = ServerPush {
            method: NotificationMethod::EventsLost.as_str().into(),
            params: json!({"reason": "events were dropped while the replicas' bus (NATS) was away longer than MCP_BRIDGE_BUS_OUTBOX_BYTES holds"}),
            ..Default::default()
        };
        let Ok(data) = serde_json::to_string(&push) else {
            return;
        };
        let entries: Vec<Entry> = match lost.everyone {
            true => vec![Entry::All {
                kind: ServerPush::TYPE.into(),
                data: data.into(),
            }],
            false => lost
                .agents
                .into_iter()
                .map(|agent| Entry::Event {
                    agent,
                    kind: ServerPush::TYPE.into(),
                    data: data.as_str().into(),
                })
                .collect(),
        };
        for entry in entries {
            self.append(entry);
        }
    }
}

/// Whether `entry` opens an agent's stream that an entry waiting opens already.
fn opening_waits(waiting: &VecDeque<Waiting>, entry: &Entry) -> bool {
    let Entry::Open { agent } = entry else {
        return false;
    };
    waiting
        .iter()
        .any(|w| matches!(&w.entry, Message::Log(Entry::Open { agent: a }) if a == agent))
}

/// Drops the oldest droppable entries past `bound` bytes, never the first `in_flight` (nor
/// the head, which may be published next) nor an `Open` or `Done`; how many.
fn keep_within(
    bound: usize,
    in_flight: usize,
    waiting: &mut VecDeque<Waiting>,
    bytes: &mut usize,
    lost: &mut Lost,
) -> u64 {
    if *bytes <= bound {
        return 0;
    }
    let mut dropped = 0u64;
    let mut kept = VecDeque::with_capacity(waiting.len());
    for _ in 0..in_flight.max(1) {
        kept.extend(waiting.pop_front());
    }
    while let Some(w) = waiting.pop_front() {
        if *bytes > bound && w.droppable {
            *bytes -= w.size;
            dropped += 1;
            if w.event {
                lost.add(w.agent);
            }
            // Who waited for it waits for what came before it instead, still to be logged.
            if let Some(before) = kept.back_mut() {
                before.logged.extend(w.logged);
            }
        } else {
            kept.push_back(w);
        }
    }
    *waiting = kept;
    dropped
}

impl Bus {
    /// Log entries dropped since start, NATS away past the outbox's bound.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// The most log entries awaiting their acknowledgement at once since start.
    pub fn most_in_flight(&self) -> usize {
        self.most_in_flight.load(Ordering::Relaxed) as usize
    }
}

fn acknowledged(ack: PublishAckFuture) -> BoxFuture<'static, Result<(), PublishError>> {
    Box::pin(async move { ack.await.map(drop) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    use async_nats::jetstream;
    use serde_json::Value;

    use crate::hub::bus::testing::*;
    use crate::hub::bus::{BusKey, now_ms, outbox, protocol, stream_names};

    fn waiting(entries: Vec<Entry>) -> (VecDeque<Waiting>, usize) {
        let waiting: VecDeque<Waiting> = entries
            .into_iter()
            .enumerate()
            .map(|(i, entry)| Waiting::new(format!("w-{i}"), entry, 100))
            .collect();
        let bytes = waiting.len() * 100;
        (waiting, bytes)
    }

    fn event(agent: &str) -> Entry {
        Entry::Event {
            agent: agent.into(),
            kind: "mcp/server/push".into(),
            data: "{}".into(),
        }
    }

    /// Past the bound the oldest events go (their agents told), down to the bound; a stream's
    /// opening and a request's end never do, nor the head, which may be in flight.
    #[test]
    fn the_bound_drops_the_oldest_events_and_never_an_open_or_a_done() {
        let (mut queue, mut bytes) = waiting(vec![
            event("head"),
            Entry::Open {
                agent: "alice".into(),
            },
            event("bob"),
            Entry::Done {
                id: "r-1".into(),
                agent: "carol".into(),
                answered: false,
            },
            Entry::All {
                kind: "mcp/server/push".into(),
                data: "{}".into(),
            },
            event("dave"),
            event("erin"),
        ]);
        let mut lost = Lost::default();
        assert_eq!(keep_within(450, 1, &mut queue, &mut bytes, &mut lost), 3);
        assert_eq!(bytes, 400);
        let ids: Vec<&str> = queue.iter().map(|w| w.id.as_str()).collect();
        assert_eq!(ids, ["w-0", "w-1", "w-3", "w-6"]);
        assert!(lost.everyone);
        assert_eq!(
            lost.agents.iter().map(String::as_str).collect::<Vec<_>>(),
            ["bob", "dave"]
        );
        // Only what may not be dropped left: kept, over the bound.
        let (mut queue, mut bytes) = waiting(vec![
            event("head"),
            Entry::Open {
                agent: "alice".into(),
            },
            Entry::Open {
                agent: "bob".into(),
            },
        ]);
        let mut lost = Lost::default();
        assert_eq!(keep_within(100, 1, &mut queue, &mut bytes, &mut lost), 0);
        assert_eq!((queue.len(), bytes), (3, 300));
        assert!(!lost.everyone && lost.agents.is_empty());
    }

    /// An event NATS will never take (over its max_payload, 1 MiB by default) is dropped and
    /// told, rather than retried at the head of the outbox with every later event behind it.
    #[tokio::test]
    async fn an_event_too_large_for_nats_is_told_lost_and_holds_nothing_up() {
        let Some(replicas) = Replicas::new() else {
            return;
        };
        let a = replicas.hub("a").await;
        let mut opened = a.open("alice", None).await;
        let mut live = opened.take();
        let big = "x".repeat(2 << 20);
        a.publish("alice", "mcp/server/push", &serde_json::json!({"big": big}));
        a.publish("alice", "mcp/server/push", &serde_json::json!({"n": 1}));
        let first = next(&mut live).await;
        let second = next(&mut live).await;
        assert_eq!(&*first.data, r#"{"n":1}"#);
        assert!(
            second.data.contains("bridge/events_lost"),
            "{}",
            second.data
        );
        assert_eq!(a.bus().unwrap().dropped(), 1);
    }

    /// The outbox keeps MCP_BRIDGE_BUS_OUTBOX_BYTES of entries while the log takes none (here
    /// its stream is gone until another replica makes it again): past it the oldest events are
    /// dropped and counted, never the stream's opening; once the log is back the rest arrive,
    /// newest included, and the agent is told events were lost.
    #[tokio::test]
    async fn the_outbox_keeps_its_byte_bound_and_the_opening_of_a_stream() {
        let Some(replicas) = Replicas::new() else {
            return;
        };
        let a = replicas.hub_with("a", 64 * 1024).await;
        let js = jetstream::new(async_nats::connect(&replicas.url).await.unwrap());
        js.delete_stream(stream_names(&replicas.prefix).0)
            .await
            .unwrap();
        let _on_a = a.open("alice", None).await;
        let filler = "x".repeat(1024);
        for n in 0..100 {
            a.publish(
                "alice",
                "mcp/server/push",
                &serde_json::json!({"n": n, "filler": filler}),
            );
        }
        let bus = a.bus().unwrap().clone();
        let wait = Instant::now();
        while bus.dropped() == 0 {
            assert!(wait.elapsed() < Duration::from_secs(5), "nothing dropped");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let dropped = bus.dropped();
        // ~1.1 KiB each: about 57 fit in 64 KiB.
        assert!((30..=60).contains(&dropped), "{dropped} dropped");
        // b makes the log again; a's outbox flushes into it.
        let b = replicas.hub("b").await;
        let mut on_b = b.open("alice", Some(0)).await;
        let mut live = on_b.take();
        let mut seen: Vec<Arc<crate::hub::Event>> = std::mem::take(&mut live.replay);
        while !seen.iter().any(|e| e.data.contains("bridge/events_lost")) {
            seen.push(next(&mut live).await);
        }
        let numbers: Vec<u64> = seen
            .iter()
            .filter_map(|e| serde_json::from_str::<Value>(&e.data).ok()?["n"].as_u64())
            .collect();
        assert!(numbers.contains(&99), "the newest arrives: {numbers:?}");
        assert!(!numbers.contains(&0), "the oldest went: {numbers:?}");
        assert_eq!(numbers.len() as u64, 100 - dropped, "{numbers:?}");
        assert_eq!(bus.dropped(), dropped);
    }

    /// An entry that waited in the outbox is sealed when it is published at last, not when it
    /// was appended: after an outage longer than the log's freshness it is still taken.
    #[tokio::test]
    async fn an_entry_that_waited_is_sealed_when_it_is_published() {
        let Some(replicas) = Replicas::new() else {
            return;
        };
        let a = replicas.hub("a").await;
        let bus = a.bus().unwrap().clone();
        let js = jetstream::new(async_nats::connect(&replicas.url).await.unwrap());
        let name = stream_names(&replicas.prefix).0;
        js.delete_stream(&name).await.unwrap();
        let errors = bus.errors();
        let _on_a = a.open("alice", None).await;
        a.publish(
            "alice",
            "mcp/server/push",
            &serde_json::json!({"waited": true}),
        );
        let wait = Instant::now();
        while bus.errors() == errors {
            assert!(wait.elapsed() < Duration::from_secs(5), "no append failed");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let back = now_ms();
        // b makes the log again; a's outbox publishes into it.
        let _b = replicas.hub("b").await;
        let log = js.get_stream(&name).await.unwrap();
        let key = BusKey::derive(&TEST_KEY);
        let wait = Instant::now();
        let at = 'found: loop {
            assert!(
                wait.elapsed() < Duration::from_secs(5),
                "the event is not in the log"
            );
            let last = log.get_info().await.unwrap().state.last_sequence;
            for seq in 1..=last {
                let Ok(stored) = log.get_raw_message(seq).await else {
                    continue;
                };
                let (_, plain) = key.open(&stored.subject, &stored.payload).unwrap();
                let envelope = protocol::decode(&plain).unwrap();
                if let Message::Log(Entry::Event { data, .. }) = &envelope.message
                    && data.contains("waited")
                {
                    break 'found envelope.at;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert!(
            at >= back,
            "sealed at {at}, before the log was back at {back}"
        );
    }

    /// An agent reconnecting again and again while the log takes nothing adds one opening of
    /// its stream to the outbox, not one per attempt: the log gets one from this replica.
    #[tokio::test]
    async fn an_agent_reopening_during_an_outage_waits_as_one_opening() {
        let Some(replicas) = Replicas::new() else {
            return;
        };
        let a = replicas.hub("a").await;
        let bus = a.bus().unwrap().clone();
        let js = jetstream::new(async_nats::connect(&replicas.url).await.unwrap());
        let name = stream_names(&replicas.prefix).0;
        js.delete_stream(&name).await.unwrap();
        let errors = bus.errors();
        for _ in 0..50 {
            drop(a.open("alice", None).await);
        }
        let _on_a = a.open("alice", None).await;
        a.publish(
            "alice",
            "mcp/server/push",
            &serde_json::json!({"last": true}),
        );
        let wait = Instant::now();
        while bus.errors() == errors {
            assert!(wait.elapsed() < Duration::from_secs(5), "no append failed");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // b makes the log again; a's outbox publishes into it.
        let _b = replicas.hub("b").await;
        let log = js.get_stream(&name).await.unwrap();
        let key = BusKey::derive(&TEST_KEY);
        let wait = Instant::now();
        let opens = 'found: loop {
            assert!(
                wait.elapsed() < Duration::from_secs(5),
                "the event is not in the log"
            );
            let last = log.get_info().await.unwrap().state.last_sequence;
            let mut opens = 0;
            for seq in 1..=last {
                let Ok(stored) = log.get_raw_message(seq).await else {
                    continue;
                };
                let (_, plain) = key.open(&stored.subject, &stored.payload).unwrap();
                let envelope = protocol::decode(&plain).unwrap();
                match &envelope.message {
                    Message::Log(Entry::Open { .. }) if envelope.from == "a" => opens += 1,
                    Message::Log(Entry::Event { data, .. }) if data.contains("last") => {
                        break 'found opens;
                    }
                    _ => {}
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert_eq!(opens, 1);
    }

    /// The outbox keeps a window of entries in flight rather than one per round trip: a burst
    /// reaches the log with many entries awaiting their acknowledgement at once.
    #[tokio::test]
    async fn a_burst_reaches_the_log_with_a_window_in_flight() {
        let Some(replicas) = Replicas::new() else {
            return;
        };
        let a = replicas.hub("a").await;
        let bus = a.bus().unwrap().clone();
        let js = jetstream::new(async_nats::connect(&replicas.url).await.unwrap());
        let mut log = js
            .get_stream(stream_names(&replicas.prefix).0)
            .await
            .unwrap();
        let _on_a = a.open("alice", None).await;
        let start = Instant::now();
        for n in 0..1000 {
            a.publish("alice", "mcp/server/push", &serde_json::json!({"n": n}));
        }
        while log.info().await.unwrap().state.messages < 1001 {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "the burst is not in the log"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        eprintln!("1,000 entries in the log after {:?}", start.elapsed());
        let most = bus.most_in_flight();
        assert!(most > 1, "at most {most} entry in flight");
        assert!(most <= outbox::WINDOW, "{most} in flight");
    }

    /// `logged` resolves once what was appended before it is in the log, and not while the log
    /// takes nothing (its stream gone until another replica makes it again).
    #[tokio::test]
    async fn logged_waits_until_the_log_holds_what_came_before() {
        let Some(replicas) = Replicas::new() else {
            return;
        };
        let a = replicas.hub("a").await;
        let js = jetstream::new(async_nats::connect(&replicas.url).await.unwrap());
        let name = stream_names(&replicas.prefix).0;
        let _on_a = a.open("alice", None).await;
        for n in 0..100 {
            a.publish("alice", "mcp/server/push", &serde_json::json!({"n": n}));
        }
        a.logged().wait().await;
        let mut log = js.get_stream(&name).await.unwrap();
        // The opening of alice's stream, then the 100 events.
        assert_eq!(log.info().await.unwrap().state.messages, 101);

        js.delete_stream(&name).await.unwrap();
        a.publish("alice", "mcp/server/push", &serde_json::json!({"n": 100}));
        let logged = tokio::spawn(a.logged().wait());
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(
            !logged.is_finished(),
            "resolved with no log to hold the event"
        );
        // b makes the log again; a's outbox flushes into it.
        let _b = replicas.hub("b").await;
        tokio::time::timeout(Duration::from_secs(10), logged)
            .await
            .expect("not resolved once the log is back")
            .unwrap();
    }
}
