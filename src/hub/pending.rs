//! Requests servers made that wait for an agent's answer: each a oneshot with a deadline,
//! answerable only by the agent it went to, and only once.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use serde_json::Value;
use tokio::sync::oneshot;

/// How many answered request ids are remembered to tell a second answer (409) from a stranger's.
const ANSWERED_MEMORY: usize = 4096;

/// Most server-initiated requests one agent may have waiting for its answer; more are refused
/// at once, so a server cannot pile up requests an agent does not answer.
pub const MAX_WAITING_PER_AGENT: usize = 64;

/// Why an answer was not taken.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    #[error("no request \"{0}\" waits for an answer from you")]
    NotFound(String),
    #[error("request \"{0}\" was already answered")]
    AlreadyAnswered(String),
    #[error("request \"{0}\" waits on another replica, which did not take the answer: {1}")]
    Unreachable(String, String),
}

struct Waiting {
    agent_id: String,
    kind: &'static str,
    reply: oneshot::Sender<Value>,
}

#[derive(Default)]
pub struct Pending {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    waiting: HashMap<String, Waiting>,
    answered: HashMap<String, String>,
    answered_order: VecDeque<String>,
}

impl Pending {
    /// Registers a request `id` of `kind` sent to `agent_id`; the receiver gets the answer.
    /// `None` when the agent already has [`MAX_WAITING_PER_AGENT`] requests waiting.
    pub fn insert(
        &self,
        id: &str,
        agent_id: &str,
        kind: &'static str,
    ) -> Option<oneshot::Receiver<Value>> {
        let (reply, rx) = oneshot::channel();
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let waiting = inner
            .waiting
            .values()
            .filter(|w| w.agent_id == agent_id)
            .count();
        if waiting >= MAX_WAITING_PER_AGENT {
            return None;
        }
        inner.waiting.insert(
            id.to_owned(),
            Waiting {
                agent_id: agent_id.to_owned(),
                kind,
                reply,
            },
        );
        Some(rx)
    }

    /// Stops request `id` waiting; true when it was still waiting (never answered).
    pub fn remove(&self, id: &str) -> bool {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .waiting
            .remove(id)
            .is_some()
    }

    /// Whether request `id` waits here.
    pub fn holds(&self, id: &str) -> bool {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .waiting
            .contains_key(id)
    }

    /// Delivers `agent_id`'s answer to request `id` of `kind`.
    pub fn answer(
        &self,
        id: &str,
        agent_id: &str,
        kind: &str,
        answer: Value,
    ) -> Result<(), AnswerError> {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let theirs = inner
            .waiting
            .get(id)
            .is_some_and(|w| w.agent_id == agent_id && w.kind == kind);
        if !theirs {
            return Err(match inner.answered.get(id) {
                Some(agent) if agent == agent_id => AnswerError::AlreadyAnswered(id.to_owned()),
                _ => AnswerError::NotFound(id.to_owned()),
            });
        }
        let waiting = inner.waiting.remove(id).expect("checked above");
        inner.answered.insert(id.to_owned(), agent_id.to_owned());
        inner.answered_order.push_back(id.to_owned());
        if inner.answered_order.len() > ANSWERED_MEMORY
            && let Some(old) = inner.answered_order.pop_front()
        {
            inner.answered.remove(&old);
        }
        // The server may have stopped waiting at this very moment: then the answer is moot.
        let _ = waiting.reply.send(answer);
        Ok(())
    }

    /// How many requests wait now.
    pub fn len(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .waiting
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn only_the_addressee_answers_and_only_once() {
        let pending = Pending::default();
        let rx = pending.insert("r1", "alice", "sample").unwrap();
        assert_eq!(
            pending.answer("r1", "bob", "sample", Value::Null),
            Err(AnswerError::NotFound("r1".into()))
        );
        assert_eq!(
            pending.answer("r1", "alice", "roots", Value::Null),
            Err(AnswerError::NotFound("r1".into()))
        );
        pending
            .answer("r1", "alice", "sample", Value::Bool(true))
            .unwrap();
        assert_eq!(rx.await.unwrap(), Value::Bool(true));
        assert_eq!(
            pending.answer("r1", "alice", "sample", Value::Null),
            Err(AnswerError::AlreadyAnswered("r1".into()))
        );
        assert_eq!(
            pending.answer("r1", "bob", "sample", Value::Null),
            Err(AnswerError::NotFound("r1".into()))
        );
        assert_eq!(pending.len(), 0);
    }

    #[test]
    fn an_expired_request_is_not_found() {
        let pending = Pending::default();
        let _rx = pending.insert("r2", "alice", "sample").unwrap();
        pending.remove("r2");
        assert_eq!(
            pending.answer("r2", "alice", "sample", Value::Null),
            Err(AnswerError::NotFound("r2".into()))
        );
    }

    #[test]
    fn an_agent_has_a_bounded_number_of_requests_waiting() {
        let pending = Pending::default();
        let held: Vec<_> = (0..MAX_WAITING_PER_AGENT)
            .map(|i| pending.insert(&format!("a{i}"), "alice", "sample").unwrap())
            .collect();
        assert!(pending.insert("one-more", "alice", "sample").is_none());
        assert!(pending.insert("b0", "bob", "sample").is_some(), "per agent");
        pending.remove("a0");
        assert!(pending.insert("again", "alice", "sample").is_some());
        drop(held);
    }
}
