//! The input a task waits on when its client polls for it ([`Asks::Polled`](super::Asks): the
//! 2026-07-28 tasks extension on `/mcp`): the server's requests during the task's call, shown by
//! `tasks/get` as `inputRequests` and answered by `tasks/update`.
//!
//! The replica running the call holds each request with a way back to the call. With replicas a
//! client polls and answers on whichever replica it reaches, so the requests are also written to
//! the task's row (`inputs`), and an answer given on another replica goes to the row (`answers`),
//! where the running replica finds it within [`STORED_ANSWER_EVERY`] and takes it (each answer
//! once: the row's answers are swapped only over what was read).

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{TaskError, Tasks};
use crate::caller::Caller;
use crate::hub::{Answer, AskKind, ServerRequest};
use crate::store::TaskInputs;

/// How often the replica running a polled task looks in the store for answers given on another
/// replica (with replicas only).
const STORED_ANSWER_EVERY: Duration = Duration::from_millis(200);
/// How often an answer is written again when another replica changed the answers meanwhile.
const SWAP_TRIES: usize = 8;

/// A server's request that a polled task waits on, on the replica running its call.
pub(super) struct InputWait {
    key: String,
    kind: AskKind,
    params: Value,
    answer: Option<tokio::sync::oneshot::Sender<Value>>,
}

/// A request a polled task waits on, as its client is shown it (and as the store keeps it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputRequest {
    /// Unique over the task's life; the client's answer names it.
    pub key: String,
    #[serde(with = "kind")]
    pub kind: AskKind,
    /// The MCP request's params.
    pub params: Value,
}

/// [`AskKind`] in the store: `sampling` or `elicitation`.
mod kind {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::hub::AskKind;

    pub fn serialize<S: Serializer>(kind: &AskKind, out: S) -> Result<S::Ok, S::Error> {
        out.serialize_str(match kind {
            AskKind::Sampling => "sampling",
            AskKind::Elicitation => "elicitation",
        })
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(input: D) -> Result<AskKind, D::Error> {
        match String::deserialize(input)?.as_str() {
            "sampling" => Ok(AskKind::Sampling),
            "elicitation" => Ok(AskKind::Elicitation),
            other => Err(serde::de::Error::custom(format!("no ask kind {other:?}"))),
        }
    }
}

impl Tasks {
    /// Whether replicas share this bridge's tasks (then a task's input lives in its row too).
    fn shared(&self) -> bool {
        self.hub.bus().is_some()
    }

    /// The server requests one of the caller's tasks waits on, when its requests are polled
    /// ([`Asks::Polled`](super::Asks)); none otherwise.
    pub async fn input_requests(
        &self,
        caller: &Caller,
        task_id: &str,
    ) -> Result<Vec<InputRequest>, TaskError> {
        self.own(caller, task_id).await?;
        if let Some(here) = self.waiting_here(task_id) {
            return Ok(here);
        }
        if !self.shared() {
            return Ok(Vec::new());
        }
        Ok(self.stored_inputs(task_id).await?.unwrap_or_default())
    }

    /// Hands the caller's answers (by request key) to the requests its task waits on. A key
    /// the task does not wait on (unknown, answered already, or the task has ended) is
    /// `Invalid`, and no answer is handed over.
    pub async fn answer_inputs(
        &self,
        caller: &Caller,
        task_id: &str,
        answers: impl IntoIterator<Item = (String, Value)>,
    ) -> Result<(), TaskError> {
        self.own(caller, task_id).await?;
        let answers: Vec<_> = answers.into_iter().collect();
        if self.polled_lock().contains_key(task_id) || !self.shared() {
            return self.answer_here(task_id, answers);
        }
        self.answer_in_store(task_id, answers).await
    }

    /// [`Tasks::answer_inputs`] for a task whose call runs here.
    fn answer_here(&self, task_id: &str, answers: Vec<(String, Value)>) -> Result<(), TaskError> {
        let mut polled = self.polled_lock();
        let waits = match polled.get_mut(task_id) {
            Some(waits) => waits,
            None if answers.is_empty() => return Ok(()),
            None => return Err(waits_on_nothing(task_id)),
        };
        if let Some((key, _)) = answers
            .iter()
            .find(|(key, _)| !waits.iter().any(|w| &w.key == key && w.answer.is_some()))
        {
            return Err(waits_on_no(task_id, key));
        }
        for (key, answer) in answers {
            if let Some(wait) = waits.iter_mut().find(|w| w.key == key)
                && let Some(tx) = wait.answer.take()
            {
                let _ = tx.send(answer);
            }
        }
        waits.retain(|w| w.answer.is_some());
        Ok(())
    }

    /// [`Tasks::answer_inputs`] for a task whose call runs on another replica: the answers go to
    /// its row, for that replica to take.
    async fn answer_in_store(
        &self,
        task_id: &str,
        answers: Vec<(String, Value)>,
    ) -> Result<(), TaskError> {
        for _ in 0..SWAP_TRIES {
            let Some(TaskInputs {
                inputs,
                answers: given,
            }) = self.store.task_inputs(task_id).await?
            else {
                return match answers.is_empty() {
                    true => Ok(()),
                    false => Err(waits_on_nothing(task_id)),
                };
            };
            let inputs = parse::<Vec<InputRequest>>(inputs.as_deref()).unwrap_or_default();
            let mut merged = parse::<Map<String, Value>>(given.as_deref()).unwrap_or_default();
            if let Some((key, _)) = answers.iter().find(|(key, _)| {
                !inputs.iter().any(|i| &i.key == key) || merged.contains_key(key.as_str())
            }) {
                return Err(waits_on_no(task_id, key));
            }
            if answers.is_empty() {
                return Ok(());
            }
            merged.extend(answers.iter().cloned());
            let new = Value::Object(merged).to_string();
            if self
                .store
                .swap_task_answers(task_id, given.as_deref(), Some(&new))
                .await?
            {
                return Ok(());
            }
        }
        Err(TaskError::Invalid(format!(
            "task \"{task_id}\" is answered by others at the same time; send the answers again"
        )))
    }

    pub(super) fn polled_lock(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::HashMap<String, Vec<InputWait>>> {
        self.polled.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What a task whose call runs here waits on; None when its call does not run here.
    fn waiting_here(&self, task_id: &str) -> Option<Vec<InputRequest>> {
        self.polled_lock().get(task_id).map(|waits| {
            waits
                .iter()
                .filter(|w| w.answer.is_some())
                .map(|w| InputRequest {
                    key: w.key.clone(),
                    kind: w.kind,
                    params: w.params.clone(),
                })
                .collect()
        })
    }

    /// Asks a polled task's client `request` (kept until `tasks/update` answers it, or its
    /// deadline); `None` when the task's requests are not polled.
    pub(super) async fn ask_polled(
        &self,
        task_id: &str,
        request: &ServerRequest,
    ) -> Option<Result<Answer, String>> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let key = {
            let mut polled = self.polled_lock();
            let waits = polled.get_mut(task_id)?;
            let key = format!("input-{}", crate::a2e::new_id());
            waits.push(InputWait {
                key: key.clone(),
                kind: request.kind,
                params: request.params.clone(),
                answer: Some(tx),
            });
            key
        };
        self.keep_inputs(task_id).await;
        let answered =
            match tokio::time::timeout(request.deadline, self.answer_to(task_id, &key, rx)).await {
                Ok(Some(answer)) => Ok(Answer::Mcp(answer)),
                Ok(None) => Err("the task ended before its client answered".to_owned()),
                Err(_) => Err(format!(
                    "the task's client did not answer within {} s",
                    request.deadline.as_secs()
                )),
            };
        if let Some(waits) = self.polled_lock().get_mut(task_id) {
            waits.retain(|w| w.key != key);
        }
        self.keep_inputs(task_id).await;
        Some(answered)
    }

    /// The answer to `key`: given here (`rx`), or, with replicas, on another replica (found in
    /// the task's row); None when the task ended first.
    async fn answer_to(
        &self,
        task_id: &str,
        key: &str,
        mut rx: tokio::sync::oneshot::Receiver<Value>,
    ) -> Option<Value> {
        if !self.shared() {
            return rx.await.ok();
        }
        let mut every = tokio::time::interval(STORED_ANSWER_EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tokio::select! {
                answer = &mut rx => return answer.ok(),
                _ = every.tick() => {
                    if let Some(answer) = self.take_stored_answer(task_id, key).await {
                        return Some(answer);
                    }
                }
            }
        }
    }

    /// Takes the answer to `key` from the task's row, if another replica put it there.
    async fn take_stored_answer(&self, task_id: &str, key: &str) -> Option<Value> {
        for _ in 0..SWAP_TRIES {
            let given = match self.store.task_inputs(task_id).await {
                Ok(row) => row?.answers,
                Err(error) => {
                    tracing::debug!(%task_id, %error, "cannot read a task's answers now");
                    return None;
                }
            };
            let mut answers = parse::<Map<String, Value>>(given.as_deref())?;
            let answer = answers.remove(key)?;
            let rest = (!answers.is_empty()).then(|| Value::Object(answers).to_string());
            match self
                .store
                .swap_task_answers(task_id, given.as_deref(), rest.as_deref())
                .await
            {
                Ok(true) => return Some(answer),
                Ok(false) => continue,
                Err(error) => {
                    tracing::debug!(%task_id, %error, "cannot take a task's answer now");
                    return None;
                }
            }
        }
        None
    }

    /// With replicas: writes what the task waits on here to its row, for any replica to show.
    async fn keep_inputs(&self, task_id: &str) {
        if !self.shared() {
            return;
        }
        let inputs = self
            .waiting_here(task_id)
            .filter(|inputs| !inputs.is_empty())
            .and_then(|inputs| serde_json::to_string(&inputs).ok());
        if let Err(error) = self.store.set_task_inputs(task_id, inputs.as_deref()).await {
            tracing::warn!(%task_id, %error, "cannot keep a task's input requests in the store");
        }
    }

    /// What the task's row says it waits on; None when it waits on nothing or has ended.
    async fn stored_inputs(&self, task_id: &str) -> Result<Option<Vec<InputRequest>>, TaskError> {
        let row = self.store.task_inputs(task_id).await?;
        Ok(row.and_then(|row| parse(row.inputs.as_deref())))
    }
}

/// A JSON column's value; None when empty or not what it should be.
fn parse<T: serde::de::DeserializeOwned>(text: Option<&str>) -> Option<T> {
    let text = text?;
    match serde_json::from_str(text) {
        Ok(value) => Some(value),
        Err(error) => {
            tracing::warn!(%error, "a task's stored input is not valid: ignored");
            None
        }
    }
}

fn waits_on_nothing(task_id: &str) -> TaskError {
    TaskError::Invalid(format!("task \"{task_id}\" waits on no input request"))
}

fn waits_on_no(task_id: &str, key: &str) -> TaskError {
    TaskError::Invalid(format!(
        "task \"{task_id}\" waits on no input request \"{key}\""
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_input_request_keeps_its_kind_in_the_store() {
        let asked = InputRequest {
            key: "input-1".into(),
            kind: AskKind::Elicitation,
            params: serde_json::json!({"message": "name?"}),
        };
        let text = serde_json::to_string(std::slice::from_ref(&asked)).unwrap();
        assert!(text.contains(r#""kind":"elicitation""#), "{text}");
        let back: Vec<InputRequest> = parse(Some(&text)).unwrap();
        assert_eq!(back, [asked]);
        assert!(parse::<Vec<InputRequest>>(Some("[{\"kind\": \"x\"}]")).is_none());
    }
}
