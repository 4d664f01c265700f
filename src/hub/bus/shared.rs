//! State one replica shares with all (a JetStream stream keeping each key's last value): puts
//! kept in order and made again after a reconnect, and a watch of every key's value.

use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::consumer;
use futures::StreamExt;
use serde_json::Value;
use tokio::sync::mpsc;

use super::{Bus, BusError, Envelope, Message};

impl Bus {
    /// Shares `value` under `key` (subject tokens) with every replica; the last value per key
    /// is kept.
    pub async fn share(&self, key: &str, value: &Value) -> Result<(), BusError> {
        self.put_shared(key, Some(value.clone())).await
    }

    /// Stops sharing `key`.
    pub async fn unshare(&self, key: &str) {
        if self.put_shared(key, None).await.is_err() {
            tracing::warn!(key, "cannot withdraw a shared value");
        }
    }

    async fn put_shared(&self, key: &str, value: Option<Value>) -> Result<(), BusError> {
        let mut own = self.own_shared.lock().await;
        own.insert(key.to_owned(), value.clone());
        self.store_shared(key, value).await
    }

    /// A share buffered by the NATS client across a reconnect may be stored long after it was
    /// sealed, and then refused by every replica for good: after each reconnect this replica
    /// puts its shared values again, sealed anew.
    pub(super) async fn share_again_on_reconnect(self: Arc<Self>) {
        let mut reconnected = self.connections.subscribe();
        reconnected.mark_unchanged();
        loop {
            tokio::select! {
                _ = self.shutdown.cancelled() => return,
                changed = reconnected.changed() => if changed.is_err() { return },
            }
            let own = self.own_shared.lock().await;
            for (key, value) in own.iter() {
                if self.store_shared(key, value.clone()).await.is_err() {
                    tracing::warn!(key, "cannot share a value again after a reconnect");
                }
            }
        }
    }

    async fn store_shared(&self, key: &str, value: Option<Value>) -> Result<(), BusError> {
        let subject = format!("{}.shared.{key}", self.prefix);
        let payload = self.wrap(&subject, &Message::Shared(value));
        let stored = match self.js.publish(subject, payload).await {
            Ok(ack) => ack.await.map(drop).map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        stored.map_err(|e| {
            self.error();
            BusError::JetStream(e)
        })
    }

    /// Every shared key's last value, then each change as it happens (`None`: withdrawn).
    pub fn shared_values(self: &Arc<Self>) -> mpsc::UnboundedReceiver<(String, Option<Value>)> {
        let (tx, rx) = mpsc::unbounded_channel();
        let bus = self.clone();
        tokio::spawn(async move {
            let prefix = format!("{}.shared.", bus.prefix);
            loop {
                let mut reconnected = bus.connections.subscribe();
                reconnected.mark_unchanged();
                match bus.watch_shared().await {
                    Ok(mut messages) => loop {
                        let next = tokio::select! {
                            _ = bus.shutdown.cancelled() => return,
                            next = messages.next() => next,
                            _ = reconnected.changed() => None,
                        };
                        let message = match next {
                            Some(Ok(message)) => message,
                            // Read again from the start (each key's last value).
                            Some(Err(error)) => {
                                bus.error();
                                tracing::warn!(%error, "reading the replicas' shared state");
                                break;
                            }
                            None => break,
                        };
                        let Some(key) = message.subject.as_str().strip_prefix(&prefix) else {
                            continue;
                        };
                        let stored = message.info().ok().map(|info| {
                            let ms = info.published.unix_timestamp_nanos() / 1_000_000;
                            u64::try_from(ms).unwrap_or(0)
                        });
                        let value =
                            match bus.unwrap_stored(&message.subject, &message.payload, stored) {
                                Ok(Envelope {
                                    message: Message::Shared(value),
                                    ..
                                }) => value,
                                _ => continue,
                            };
                        if tx.send((key.to_owned(), value)).is_err() {
                            return;
                        }
                    },
                    Err(error) => {
                        bus.error();
                        tracing::warn!(%error, "watching the replicas' shared state");
                    }
                }
                tokio::select! {
                    _ = bus.shutdown.cancelled() => return,
                    _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                }
            }
        });
        rx
    }

    async fn watch_shared(&self) -> Result<consumer::pull::Ordered, BusError> {
        let shared = self
            .js
            .get_stream(&self.shared)
            .await
            .map_err(|e| BusError::JetStream(e.to_string()))?;
        shared
            .create_consumer(consumer::pull::OrderedConfig {
                deliver_policy: consumer::DeliverPolicy::LastPerSubject,
                filter_subject: format!("{}.shared.>", self.prefix),
                ..Default::default()
            })
            .await
            .map_err(|e| BusError::JetStream(e.to_string()))?
            .messages()
            .await
            .map_err(|e| BusError::JetStream(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    use async_nats::jetstream;

    use crate::hub::bus::testing::*;
    use crate::hub::bus::{BusKey, now_ms, protocol, stream_names};

    /// A shared value captured and stored again later (the stream keeps the last value of
    /// each key) is refused: its sealed time is far from when NATS stored it. The replay is
    /// stored while the watcher runs (a value on another key shows it does) and is the first
    /// value of its key it sees, so only its time refuses it.
    #[tokio::test]
    async fn a_shared_value_stored_again_later_is_refused() {
        let Some(replicas) = Replicas::new() else {
            return;
        };
        let a = replicas.hub("a").await;
        let bus = a.bus().unwrap();
        let mut values = bus.shared_values();
        let mut next_value = async || {
            tokio::time::timeout(Duration::from_secs(5), values.recv())
                .await
                .expect("a value within 5 s")
                .unwrap()
        };
        bus.share("ready", &serde_json::json!("first"))
            .await
            .unwrap();
        let (key, value) = next_value().await;
        assert_eq!(
            (key.as_str(), value),
            ("ready", Some(serde_json::json!("first")))
        );
        let refused = bus.refused();
        let subject = format!("{}.shared.k", replicas.prefix);
        let replayed = sealed(
            &subject,
            "s1",
            now_ms() - 10 * 60_000,
            &Message::Shared(Some(serde_json::json!("old"))),
        );
        let js = jetstream::new(async_nats::connect(&replicas.url).await.unwrap());
        js.publish(subject, replayed.into())
            .await
            .unwrap()
            .await
            .unwrap();
        let wait = Instant::now();
        while bus.refused() == refused {
            assert!(
                wait.elapsed() < Duration::from_secs(5),
                "the replayed value is not refused"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        bus.share("k", &serde_json::json!("new")).await.unwrap();
        let (key, value) = next_value().await;
        assert_eq!((key.as_str(), value), ("k", Some(serde_json::json!("new"))));
    }

    /// After a reconnect the replica puts what it shares again, sealed anew: a put the client
    /// buffered across the reconnect and NATS stored late is replaced by a fresh one.
    #[tokio::test]
    async fn a_shared_value_is_put_again_after_a_reconnect() {
        let Some(replicas) = Replicas::new() else {
            return;
        };
        let a = replicas.hub("a").await;
        let bus = a.bus().unwrap().clone();
        bus.share("k", &serde_json::json!("v")).await.unwrap();
        let js = jetstream::new(async_nats::connect(&replicas.url).await.unwrap());
        let shared = js
            .get_stream(stream_names(&replicas.prefix).1)
            .await
            .unwrap();
        let subject = format!("{}.shared.k", replicas.prefix);
        let first = shared
            .get_last_raw_message_by_subject(&subject)
            .await
            .unwrap()
            .sequence;
        bus.client.force_reconnect().await.unwrap();
        let wait = Instant::now();
        loop {
            let last = shared
                .get_last_raw_message_by_subject(&subject)
                .await
                .unwrap();
            if last.sequence > first {
                let (_, plain) = BusKey::derive(&TEST_KEY)
                    .open(&last.subject, &last.payload)
                    .unwrap();
                let envelope = protocol::decode(&plain).unwrap();
                assert!(matches!(
                    envelope.message,
                    Message::Shared(Some(ref v)) if v == "v"
                ));
                break;
            }
            assert!(
                wait.elapsed() < Duration::from_secs(5),
                "the value is not put again"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
