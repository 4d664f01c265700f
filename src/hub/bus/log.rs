//! The replicas' log: appending to it (through the outbox), reading it in order from a
//! sequence, applying it here (again after NATS comes back), and waiting until it is applied.

use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::{self, consumer};
use futures::StreamExt;
use tokio::sync::oneshot;

use super::{Applier, Bus, BusError, Entry, Envelope, Message, Outgoing, stream_names};

impl Bus {
    /// Appends an entry to the log (in order with this replica's other appends).
    pub fn append(&self, entry: Entry) {
        if self.outbox.send(Outgoing::Entry(entry)).is_err() {
            self.error();
        }
    }

    /// Resolves once every entry appended here before it is in the log (acknowledged by
    /// NATS, or dropped past the outbox's bound and told lost). `None` while NATS is away or
    /// the log refuses entries: they are kept and sent once it takes them again, and nothing
    /// should wait on an outage.
    pub fn logged(&self) -> Option<oneshot::Receiver<()>> {
        if !self.connected() || self.log_failing.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        let (logged, done) = oneshot::channel();
        self.outbox.send(Outgoing::Logged(logged)).ok()?;
        Some(done)
    }

    /// Waits until the log is applied here up to `seq`; false after `within`.
    pub async fn caught_up_to(&self, seq: u64, within: Duration) -> bool {
        let mut applied = self.applied.subscribe();
        tokio::time::timeout(within, applied.wait_for(|&at| at >= seq))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    /// Waits until what the log holds now is applied here (bounded): after it, whatever
    /// another replica appended before this call is known here.
    pub async fn catch_up(&self) -> bool {
        let last = match self.js.get_stream(&self.stream).await {
            Ok(log) => match log.get_info().await {
                Ok(info) => info.state.last_sequence,
                Err(_) => return false,
            },
            Err(_) => return false,
        };
        self.caught_up_to(last, Duration::from_secs(2)).await
    }

    pub fn applied(&self) -> u64 {
        *self.applied.borrow()
    }

    /// The log from sequence `from` on, in order.
    pub(super) async fn read_log(&self, from: u64) -> Result<consumer::pull::Ordered, BusError> {
        let log = self
            .js
            .get_stream(&self.stream)
            .await
            .map_err(|e| BusError::JetStream(e.to_string()))?;
        log.create_consumer(consumer::pull::OrderedConfig {
            deliver_policy: consumer::DeliverPolicy::ByStartSequence {
                start_sequence: from,
            },
            filter_subject: self.log_subject.clone(),
            ..Default::default()
        })
        .await
        .map_err(|e| BusError::JetStream(e.to_string()))?
        .messages()
        .await
        .map_err(|e| BusError::JetStream(e.to_string()))
    }

    /// Applies the log in order; when reading it fails (NATS went away), reads it again from
    /// after the last entry applied.
    pub(super) async fn apply_log(
        self: Arc<Self>,
        mut messages: consumer::pull::Ordered,
        applier: std::sync::Weak<dyn Applier>,
    ) {
        let mut reconnected = self.connections.subscribe();
        reconnected.mark_unchanged();
        loop {
            let next = tokio::select! {
                _ = self.shutdown.cancelled() => return,
                next = messages.next() => next,
                // Its consumer is gone with the NATS that held it.
                _ = reconnected.changed() => None,
            };
            let message = match next {
                Some(Ok(message)) => message,
                failed => {
                    if let Some(Err(error)) = failed {
                        tracing::warn!(%error, "reading the replicas' log; reading it again");
                    }
                    self.error();
                    messages = loop {
                        tokio::select! {
                            _ = self.shutdown.cancelled() => return,
                            _ = tokio::time::sleep(Duration::from_millis(500)) => {}
                        }
                        match self.read_log(self.applied() + 1).await {
                            Ok(messages) => break messages,
                            Err(error) => {
                                tracing::debug!(%error, "the replicas' log cannot be read yet")
                            }
                        }
                    };
                    continue;
                }
            };
            let Ok(seq) = message.info().map(|i| i.stream_sequence) else {
                continue;
            };
            let Some(applier) = applier.upgrade() else {
                return;
            };
            match self.unwrap(&message.subject, &message.payload) {
                Ok(Envelope {
                    message: Message::Log(entry),
                    ..
                }) => {
                    self.note_entry(&entry);
                    applier.apply(seq, entry);
                }
                Ok(_) => tracing::warn!(seq, "an entry of the replicas' log is no log entry"),
                Err(_) => {}
            }
            self.applied.send_replace(seq);
        }
    }

    /// Deletes the log (tests, after their replicas stopped).
    pub async fn delete_log(url: &str, prefix: &str) -> Result<(), BusError> {
        let client = async_nats::connect(url)
            .await
            .map_err(|e| BusError::Connect(url.to_owned(), e.to_string()))?;
        let js = jetstream::new(client);
        let (name, shared) = stream_names(prefix);
        let _ = js.delete_stream(shared).await;
        js.delete_stream(name)
            .await
            .map_err(|e| BusError::JetStream(e.to_string()))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::hub::bus::testing::*;

    #[tokio::test]
    async fn an_event_reaches_a_stream_on_another_replica_and_resumes_on_a_third() {
        let Some(replicas) = Replicas::new() else {
            return;
        };
        let a = replicas.hub("a").await;
        let b = replicas.hub("b").await;
        let mut on_b = b.open("alice", None).await;
        let mut live = on_b.take();
        a.publish("alice", "mcp/server/push", &serde_json::json!({"n": 1}));
        a.broadcast("mcp/server/push", &serde_json::json!({"n": 2}));
        let first = next(&mut live).await;
        let second = next(&mut live).await;
        assert_eq!(&*first.data, r#"{"n":1}"#);
        assert_eq!(&*second.data, r#"{"n":2}"#);
        assert!(second.id > first.id);
        // A replica joining later applies the log: it resumes the stream after the first event.
        let c = replicas.hub("c").await;
        let mut on_c = c.open("alice", Some(first.id)).await;
        let resumed = on_c.take();
        assert_eq!(resumed.lost_after, None);
        assert_eq!(
            resumed.replay.iter().map(|e| e.id).collect::<Vec<_>>(),
            [second.id]
        );
        // Before the log began, events are not known: the stream is told.
        let from_nowhere = c.open("alice", Some(u64::MAX / 2)).await.take();
        assert_eq!(from_nowhere.lost_after, Some(u64::MAX / 2));
    }
}
