//! The outbox of the replicas' log: this replica's entries, appended in order, and kept while
//! NATS is away for as long as it takes, bounded in bytes (`MCP_BRIDGE_BUS_OUTBOX_BYTES`).
//! Entries are published ahead of their acknowledgements; when one fails, every entry not yet
//! acknowledged is published again, in order, under the same message id (JetStream drops a
//! duplicate within its window, and the log's appliers apply an id once whenever it comes).
//! Past the bound the oldest waiting entries are dropped (counted, said once per outage), and
//! once NATS is back the agents whose events were dropped are told `bridge/events_lost`.

use std::collections::{BTreeSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use async_nats::HeaderMap;
use async_nats::jetstream::context::{PublishAckFuture, PublishError};
use bytes::Bytes;
use futures::future::BoxFuture;
use serde_json::json;
use tokio::sync::mpsc;

use super::{Bus, Entry, Message};
use crate::a2e::{Message as _, NotificationMethod, ServerPush};

/// An entry waiting for its acknowledgement.
struct Waiting {
    id: String,
    payload: Bytes,
    /// Whose events it carries (`None`: every agent's).
    agent: Option<String>,
    /// Whether it is an event (only those are told lost).
    event: bool,
    ack: Option<BoxFuture<'static, Result<(), PublishError>>>,
}

/// Who lost events to the bound.
#[derive(Default)]
struct Lost {
    agents: BTreeSet<String>,
    everyone: bool,
}

impl Bus {
    pub(super) async fn append_log(self: Arc<Self>, mut outgoing: mpsc::UnboundedReceiver<Entry>) {
        let mut waiting: VecDeque<Waiting> = VecDeque::new();
        let mut bytes = 0usize;
        let mut next_id: u64 = 0;
        let mut lost = Lost::default();
        let mut failing = false;
        let mut said = false;
        let mut pause = Duration::from_millis(50);
        // Ids name this run of the process: a replica restarted under the same id (and, in a
        // container, always PID 1) must not reuse ids the others have applied already.
        let run = crate::a2e::new_id();
        loop {
            let mut take = |entry: Entry,
                            waiting: &mut VecDeque<Waiting>,
                            bytes: &mut usize,
                            lost: &mut Lost| {
                next_id += 1;
                let id = format!("{}-{run}-{next_id}", self.replica);
                let (agent, event) = match &entry {
                    Entry::Event { agent, .. } | Entry::Ask { agent, .. } => {
                        (Some(agent.clone()), true)
                    }
                    Entry::All { .. } => (None, true),
                    _ => (None, false),
                };
                let payload = self.wrap_as(&self.log_subject, &id, &Message::Log(entry));
                // NATS refuses a message over its max_payload, every time: kept, it would hold
                // up every entry behind it. Dropped here, and its agent told as for the bound.
                let max = self.client.server_info().max_payload;
                if max > 0 && payload.len() > max {
                    self.dropped
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    tracing::error!(
                        bytes = payload.len(),
                        max_payload = max,
                        "an event is larger than NATS takes (its max_payload): dropped"
                    );
                    if event {
                        match agent {
                            Some(agent) => {
                                lost.agents.insert(agent);
                            }
                            None => lost.everyone = true,
                        }
                    }
                    return;
                }
                *bytes += payload.len();
                waiting.push_back(Waiting {
                    id,
                    payload,
                    agent,
                    event,
                    ack: None,
                });
            };
            while let Ok(entry) = outgoing.try_recv() {
                take(entry, &mut waiting, &mut bytes, &mut lost);
            }
            if self.keep_within(&mut waiting, &mut bytes, &mut lost) > 0 && !said {
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
            let published = self.publish_waiting(&mut waiting).await;
            let acked = match published {
                false => false,
                true => {
                    let Some(ack) = waiting.front_mut().and_then(|w| w.ack.as_mut()) else {
                        continue;
                    };
                    let came = tokio::select! {
                        entry = outgoing.recv() => Err(entry),
                        done = ack => Ok(done.is_ok()),
                    };
                    match came {
                        Ok(acked) => acked,
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
                    bytes -= done.payload.len();
                }
                if failing {
                    failing = false;
                    said = false;
                    pause = Duration::from_millis(50);
                    tracing::info!("the replicas' log takes entries again");
                }
                continue;
            }
            // Everything not acknowledged goes again, in order, under the same ids.
            for w in waiting.iter_mut() {
                w.ack = None;
            }
            if !failing {
                failing = true;
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

    /// Publishes the entries not yet published, in order; false when one fails.
    async fn publish_waiting(&self, waiting: &mut VecDeque<Waiting>) -> bool {
        for w in waiting.iter_mut().filter(|w| w.ack.is_none()) {
            let mut headers = HeaderMap::new();
            headers.insert(async_nats::header::NATS_MESSAGE_ID, w.id.as_str());
            match self
                .js
                .publish_with_headers(self.log_subject.clone(), headers, w.payload.clone())
                .await
            {
                Ok(ack) => w.ack = Some(acknowledged(ack)),
                Err(_) => return false,
            }
        }
        true
    }

    /// Drops the oldest waiting entries past the outbox's bound; how many.
    fn keep_within(
        &self,
        waiting: &mut VecDeque<Waiting>,
        bytes: &mut usize,
        lost: &mut Lost,
    ) -> u64 {
        let mut dropped = 0u64;
        while *bytes > self.outbox_bytes && waiting.len() > 1 {
            let Some(old) = waiting.pop_front() else {
                break;
            };
            *bytes -= old.payload.len();
            dropped += 1;
            if old.event {
                match old.agent {
                    Some(agent) => {
                        lost.agents.insert(agent);
                    }
                    None => lost.everyone = true,
                }
            }
        }
        self.dropped
            .fetch_add(dropped, std::sync::atomic::Ordering::Relaxed);
        dropped
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

fn acknowledged(ack: PublishAckFuture) -> BoxFuture<'static, Result<(), PublishError>> {
    Box::pin(async move { ack.await.map(drop) })
}
