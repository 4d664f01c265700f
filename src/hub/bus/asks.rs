//! Requests waiting for an agent's answer, across replicas: where each stands (as the log
//! tells every replica), and answers relayed to the replica where the request waits.

use std::collections::{HashMap, VecDeque};

use super::{Bus, BusError, Entry, Envelope, Message, RelayOutcome, RelayedAnswer, subject_token};

/// How many ended requests are remembered, to tell "already answered" from "no such request".
const ENDED_MEMORY: usize = 4096;

/// Where a request stands, as the log tells every replica.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asked {
    Waiting {
        replica: String,
        agent: String,
        kind: String,
    },
    Ended {
        agent: String,
        answered: bool,
    },
}

#[derive(Default)]
pub(super) struct Asks {
    waiting: HashMap<String, Asked>,
    ended: VecDeque<String>,
}

impl Bus {
    /// Where request `id` stands, as far as the log applied here says.
    pub fn asked(&self, id: &str) -> Option<Asked> {
        self.asks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .waiting
            .get(id)
            .cloned()
    }

    /// Keeps the table of requests in step with the log (called by the applier, in order).
    pub fn note_entry(&self, entry: &Entry) {
        let mut asks = self.asks.lock().unwrap_or_else(|e| e.into_inner());
        match entry {
            Entry::Ask {
                agent,
                kind,
                id,
                replica,
                ..
            } => {
                asks.waiting.insert(
                    id.clone(),
                    Asked::Waiting {
                        replica: replica.clone(),
                        agent: agent.clone(),
                        kind: kind.clone(),
                    },
                );
            }
            Entry::Done {
                id,
                agent,
                answered,
            } => {
                asks.waiting.insert(
                    id.clone(),
                    Asked::Ended {
                        agent: agent.clone(),
                        answered: *answered,
                    },
                );
                asks.ended.push_back(id.clone());
                if asks.ended.len() > ENDED_MEMORY
                    && let Some(old) = asks.ended.pop_front()
                {
                    asks.waiting.remove(&old);
                }
            }
            _ => {}
        }
    }

    /// Relays an agent's answer to the replica where its request waits.
    pub async fn relay_answer(
        &self,
        replica: &str,
        answer: &RelayedAnswer,
    ) -> Result<RelayOutcome, BusError> {
        let subject = format!("{}.answer.{}", self.prefix, subject_token(replica));
        let payload = self.wrap(&subject, &Message::Answer(answer.clone()));
        match self
            .until_disconnected(self.client.request(subject, payload))
            .await
        {
            Ok(reply) => match self.unwrap(&reply.subject, &reply.payload) {
                Ok(Envelope {
                    message: Message::Relayed(outcome),
                    ..
                }) => Ok(outcome),
                Ok(_) => Err(BusError::Relay(
                    replica.to_owned(),
                    "it answered something else".into(),
                )),
                Err(refused) => Err(BusError::Relay(replica.to_owned(), refused.to_string())),
            },
            // Nobody listens there any more: the replica (and so the request) is gone.
            Err(e) if e.kind() == async_nats::RequestErrorKind::NoResponders => {
                Ok(RelayOutcome::NotFound)
            }
            Err(e) => {
                self.error();
                Err(BusError::Relay(replica.to_owned(), e.to_string()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use serde_json::Value;

    use crate::hub::bus::testing::*;

    #[tokio::test]
    async fn a_request_waiting_on_one_replica_is_answered_on_another_once() {
        let Some(replicas) = Replicas::new() else {
            return;
        };
        let a = replicas.hub("a").await;
        let b = replicas.hub("b").await;
        assert!(!a.is_connected("alice"));
        let mut stream = b.open("alice", None).await;
        let mut live = stream.take();
        let wait = Instant::now();
        while !a.is_connected("alice") {
            assert!(
                wait.elapsed() < Duration::from_secs(5),
                "presence reaches a"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let asking = {
            let a = a.clone();
            tokio::spawn(async move {
                a.ask(
                    "alice",
                    "mcp/sample/req",
                    "req-1",
                    &serde_json::json!({"q": 1}),
                    Duration::from_secs(10),
                )
                .await
            })
        };
        let request = next(&mut live).await;
        assert_eq!(request.kind, "mcp/sample/req");
        let c = replicas.hub("c").await;
        assert_eq!(
            c.answer("bob", "mcp/sample/req", "req-1", Value::Null)
                .await,
            Err(crate::hub::AnswerError::NotFound("req-1".into())),
            "only the addressee answers"
        );
        c.answer("alice", "mcp/sample/req", "req-1", serde_json::json!("yes"))
            .await
            .unwrap();
        assert_eq!(asking.await.unwrap(), Ok(serde_json::json!("yes")));
        // Once the end is in the log, every replica knows the request was answered.
        assert!(c.bus().unwrap().catch_up().await);
        let again = c
            .answer("alice", "mcp/sample/req", "req-1", Value::Null)
            .await;
        assert_eq!(
            again,
            Err(crate::hub::AnswerError::AlreadyAnswered("req-1".into()))
        );
        assert_eq!(
            b.answer("alice", "mcp/sample/req", "nope", Value::Null)
                .await,
            Err(crate::hub::AnswerError::NotFound("nope".into()))
        );
        drop(stream);
        let wait = Instant::now();
        while a.is_connected("alice") {
            assert!(
                wait.elapsed() < Duration::from_secs(5),
                "a hears the stream closed"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
