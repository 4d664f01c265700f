//! Streamed replies (`SendStreamingMessage`, `SubscribeToTask` and their 0.3 names
//! `message/stream`, `tasks/resubscribe`): the agent's server-sent events read one at a time,
//! each bounded, classified as task, message, status or artifact updates (A2A 1.0 and 0.3
//! shapes alike), and put together into the final task or message the tool answers with.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::{Stream, StreamExt};
use serde_json::{Map, Value, json};

use super::{A2aError, Binding};
use crate::a2e::A2aProtocol;

/// What one event of a stream says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The task as a whole (the first event of a task's stream, or of a resubscription).
    Task,
    /// A message: a reply without a task; it ends the stream.
    Message,
    /// The task's new status.
    Status,
    /// An artifact, or a chunk of one.
    Artifact,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Task => "task",
            Self::Message => "message",
            Self::Status => "status",
            Self::Artifact => "artifact",
        }
    }
}

/// One event of a stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Update {
    pub kind: Kind,
    /// The task, the message, the status or the artifact.
    pub payload: Value,
    pub task_id: Option<String>,
    pub context_id: Option<String>,
    /// For an artifact: whether it appends to the one with its id, and whether it is the last
    /// chunk.
    pub append: bool,
    pub last_chunk: bool,
    /// Whether the stream ends with it: a message, or a status that is terminal or waits for
    /// the user (input or auth required).
    pub last: bool,
}

/// A task state in one spelling (`TASK_STATE_INPUT_REQUIRED` and `input-required` alike).
fn state_name(state: &str) -> String {
    let lower = state.to_ascii_lowercase();
    lower
        .strip_prefix("task_state_")
        .unwrap_or(&lower)
        .replace('_', "-")
}

/// The state of a task or of a status.
pub fn state_of(status: &Value) -> Option<String> {
    status.get("state").and_then(Value::as_str).map(state_name)
}

/// Whether a task in `state` is over: it can no longer change nor be cancelled.
pub fn is_terminal(state: &str) -> bool {
    matches!(
        state_name(state).as_str(),
        "completed" | "canceled" | "cancelled" | "failed" | "rejected"
    )
}

/// Whether a stream ends at a task in `state`: over, or waiting for the user.
fn ends_stream(state: &str) -> bool {
    is_terminal(state)
        || matches!(
            state_name(state).as_str(),
            "input-required" | "auth-required"
        )
}

fn text(object: &Value, name: &str) -> Option<String> {
    object
        .get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// Classifies one JSON-RPC `result` of a stream: 0.3 objects say their `kind`, 1.0 results
/// wrap the object in a field named after it.
pub fn classify(result: &Value) -> Option<Update> {
    let (kind, object) = match result.get("kind").and_then(Value::as_str) {
        Some("task") => (Kind::Task, result),
        Some("message") => (Kind::Message, result),
        Some("status-update") => (Kind::Status, result),
        Some("artifact-update") => (Kind::Artifact, result),
        _ => [
            ("task", Kind::Task),
            ("message", Kind::Message),
            ("statusUpdate", Kind::Status),
            ("artifactUpdate", Kind::Artifact),
        ]
        .into_iter()
        .find_map(|(field, kind)| {
            result
                .get(field)
                .filter(|v| v.is_object())
                .map(|v| (kind, v))
        })?,
    };
    let flag = |name| object.get(name).and_then(Value::as_bool).unwrap_or(false);
    let mut update = Update {
        kind,
        payload: object.clone(),
        task_id: text(object, "taskId"),
        context_id: text(object, "contextId"),
        append: false,
        last_chunk: false,
        last: false,
    };
    match kind {
        Kind::Task => {
            update.task_id = text(object, "id");
            update.last = object
                .get("status")
                .and_then(state_of)
                .is_some_and(|s| is_terminal(&s));
        }
        Kind::Message => update.last = true,
        Kind::Status => {
            let status = object.get("status").cloned().unwrap_or_default();
            update.last = flag("final") || state_of(&status).is_some_and(|s| ends_stream(&s));
            update.payload = status;
        }
        Kind::Artifact => {
            update.payload = object.get("artifact").cloned().unwrap_or_default();
            update.append = flag("append");
            update.last_chunk = flag("lastChunk");
        }
    }
    Some(update)
}

/// The final task or message of a stream, put together from its events as an A2A client does:
/// the task from its snapshot, each status replacing the last, artifact chunks appended.
#[derive(Debug, Default)]
pub struct Assembly {
    task: Option<Value>,
    message: Option<Value>,
}

impl Assembly {
    pub fn apply(&mut self, update: &Update) {
        match update.kind {
            Kind::Task => self.task = Some(update.payload.clone()),
            Kind::Message => self.message = Some(update.payload.clone()),
            Kind::Status | Kind::Artifact => {
                let task = self.task.get_or_insert_with(
                    || json!({"id": update.task_id, "contextId": update.context_id}),
                );
                let Some(task) = task.as_object_mut() else {
                    return;
                };
                if update.kind == Kind::Status {
                    task.insert("status".into(), update.payload.clone());
                } else {
                    add_artifact(task, update);
                }
            }
        }
    }

    /// The task or message, in the shape the agent's `SendMessage` (1.0: `{task}` or
    /// `{message}`) or `message/send` (0.3: the object itself) answers with.
    pub fn result(self, protocol: A2aProtocol) -> Option<Value> {
        let (field, object) = match (self.message, self.task) {
            (Some(message), _) => ("message", message),
            (None, Some(task)) => ("task", task),
            (None, None) => return None,
        };
        Some(match protocol {
            A2aProtocol::V1_0 => json!({ field: object }),
            _ => object,
        })
    }

    /// The task's id, once an event named it.
    pub fn task_id(&self) -> Option<&str> {
        self.task
            .as_ref()
            .and_then(|t| t.get("id"))
            .and_then(Value::as_str)
    }
}

fn add_artifact(task: &mut Map<String, Value>, update: &Update) {
    let artifacts = task
        .entry("artifacts")
        .or_insert_with(|| Value::Array(Vec::new()));
    let Some(artifacts) = artifacts.as_array_mut() else {
        return;
    };
    let id = update.payload.get("artifactId");
    let existing = artifacts
        .iter_mut()
        .find(|a| id.is_some() && a.get("artifactId") == id);
    match existing {
        Some(artifact) if update.append => {
            let more = update.payload.get("parts").and_then(Value::as_array);
            if let (Some(parts), Some(more)) = (
                artifact.get_mut("parts").and_then(Value::as_array_mut),
                more,
            ) {
                parts.extend(more.iter().cloned());
            }
        }
        Some(artifact) => *artifact = update.payload.clone(),
        None => artifacts.push(update.payload.clone()),
    }
}

/// Why a stream stopped early.
pub enum StreamError {
    /// An event longer than the limit.
    TooLarge,
    Read(String),
}

/// The `data` of each event of `resp`, read as it arrives; an event is refused as soon as what
/// has arrived of it passes `limit` bytes, so nothing larger is ever held.
pub fn events(
    resp: reqwest::Response,
    limit: usize,
) -> impl Stream<Item = Result<String, StreamError>> + Send {
    // Bytes taken in since the last whole event: the parser holds at most this much.
    let pending = Arc::new(AtomicUsize::new(0));
    let counted = pending.clone();
    let chunks = futures::stream::unfold(resp, |mut resp| async move {
        let chunk = resp
            .chunk()
            .await
            .map_err(std::io::Error::other)
            .transpose()?;
        Some((chunk, resp))
    })
    .map(move |chunk| {
        let chunk = chunk?;
        if counted.fetch_add(chunk.len(), Ordering::Relaxed) + chunk.len() > limit {
            return Err(std::io::Error::other("too large"));
        }
        Ok(chunk)
    });
    sse_stream::SseStream::from_bytes_stream(chunks).filter_map(move |parsed| {
        let pending = pending.clone();
        async move {
            match parsed {
                Ok(sse) => {
                    pending.store(0, Ordering::Relaxed);
                    sse.data.filter(|d| !d.trim().is_empty()).map(Ok)
                }
                Err(_) if pending.load(Ordering::Relaxed) > limit => {
                    Some(Err(StreamError::TooLarge))
                }
                Err(error) => Some(Err(StreamError::Read(error.to_string()))),
            }
        }
    })
}

/// The `result` of one event's JSON-RPC answer (the agent's JSON-RPC error as it is), or an
/// HTTP+JSON event as it is (its `google.rpc.Status` error as `A2aError::Status`).
pub fn result_of(data: &str, binding: Binding) -> Result<Value, A2aError> {
    let answer: Value = serde_json::from_str(data)
        .map_err(|e| A2aError::Protocol(format!("a streamed event that is not JSON: {e}")))?;
    if binding == Binding::HttpJson {
        return match super::rest::status_of(&answer) {
            Some(status) => Err(A2aError::Status(status)),
            None => Ok(answer),
        };
    }
    if let Some(error) = answer.get("error") {
        return Err(A2aError::Rpc(error.clone()));
    }
    answer
        .get("result")
        .cloned()
        .ok_or_else(|| A2aError::Protocol(format!("a streamed event with no result: {answer}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_of_both_protocol_versions_are_classified() {
        let v1 = json!({"statusUpdate": {"taskId": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_WORKING"}}});
        let update = classify(&v1).unwrap();
        assert_eq!(update.kind, Kind::Status);
        assert_eq!(update.task_id.as_deref(), Some("t"));
        assert!(!update.last);
        let v03 =
            json!({"kind": "status-update", "taskId": "t", "status": {"state": "input-required"}});
        assert!(classify(&v03).unwrap().last);
        let done =
            json!({"statusUpdate": {"taskId": "t", "status": {"state": "TASK_STATE_CANCELED"}}});
        assert!(classify(&done).unwrap().last);
        let message = json!({"message": {"messageId": "m", "parts": []}});
        assert!(classify(&message).unwrap().last);
        assert!(classify(&json!({"other": 1})).is_none());
    }

    #[test]
    fn artifact_chunks_are_put_together() {
        let mut assembly = Assembly::default();
        assembly.apply(
            &classify(&json!({"task": {"id": "t", "status": {"state": "TASK_STATE_SUBMITTED"}}}))
                .unwrap(),
        );
        for (text, append) in [("a", false), ("b", true)] {
            let event = json!({"artifactUpdate": {"taskId": "t", "append": append,
                "artifact": {"artifactId": "x", "parts": [{"text": text}]}}});
            assembly.apply(&classify(&event).unwrap());
        }
        assembly.apply(&classify(&json!({"statusUpdate": {"taskId": "t", "status": {"state": "TASK_STATE_COMPLETED"}}})).unwrap());
        assert_eq!(assembly.task_id(), Some("t"));
        let task = assembly.result(A2aProtocol::V1_0).unwrap();
        assert_eq!(
            task["task"]["artifacts"][0]["parts"],
            json!([{"text": "a"}, {"text": "b"}])
        );
        assert_eq!(task["task"]["status"]["state"], "TASK_STATE_COMPLETED");
        assert!(is_terminal("TASK_STATE_COMPLETED") && !is_terminal("working"));
    }
}
