//! Input-required rounds for stateless (2026-07-28) clients of `/mcp`: such a client cannot be
//! sent a request, so when a server asks for sampling or elicitation during its call, the call
//! answers with an input-required result carrying the request, and the client calls again with
//! its answers and the `requestState` it was given. Meanwhile the upstream call keeps running,
//! waiting for those answers.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolResult, InputRequests, InputRequiredResult, InputResponses};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

use super::recipient::InputAsk;
use crate::registry;

/// How long a paused call waits for its client to come back before it is given up (and the
/// server's requests refused).
const COME_BACK_WITHIN: Duration = Duration::from_secs(300);

/// What a call ends with.
pub type Outcome = Result<(String, CallToolResult), registry::Error>;

/// A call of a stateless client, running upstream; stopped when dropped (its client went away,
/// or never came back with its answers).
pub struct Running {
    result: JoinHandle<Outcome>,
    asks: mpsc::UnboundedReceiver<InputAsk>,
}

impl Running {
    pub fn new(result: JoinHandle<Outcome>, asks: mpsc::UnboundedReceiver<InputAsk>) -> Self {
        Self { result, asks }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.result.abort();
    }
}

/// Where a call stands once its client must be told something.
pub enum Step {
    Done(Outcome),
    /// The client must answer these and call again with this `requestState`.
    InputRequired(InputRequiredResult),
}

/// A call whose client was handed input requests: who it belongs to, and where each answer goes.
struct Paused {
    agent_id: String,
    running: Running,
    waiting: Vec<(String, oneshot::Sender<Result<Value, String>>)>,
}

/// The calls waiting for their clients, by `requestState`.
#[derive(Default, Clone)]
pub struct Suspended {
    paused: Arc<Mutex<HashMap<String, Paused>>>,
    /// The `requestState`s of servers' input-required results handed to stateless clients
    /// (hub::InputRounds), with the agent each went to: only that agent may bring one back.
    handed: Arc<Mutex<HashMap<String, String>>>,
}

impl Suspended {
    /// Notes that a server's input-required result with `state` went to `agent_id`.
    pub fn handed_out(&self, agent_id: &str, state: &str) {
        let handed = self.handed.clone();
        let state = state.to_owned();
        lock(&handed).insert(state.clone(), agent_id.to_owned());
        tokio::spawn(async move {
            tokio::time::sleep(COME_BACK_WITHIN).await;
            lock(&handed).remove(&state);
        });
    }

    /// Whether `state` is a server's, handed to `agent_id` (and not yet brought back).
    pub fn take_handed(&self, agent_id: &str, state: &str) -> bool {
        let mut handed = lock(&self.handed);
        match handed.get(state) {
            Some(agent) if agent == agent_id => handed.remove(state).is_some(),
            _ => false,
        }
    }

    /// Runs the call until it ends or its server asks the client something.
    pub async fn drive(&self, agent_id: &str, mut running: Running) -> Step {
        let first = tokio::select! {
            biased;
            done = &mut running.result => return Step::Done(done.unwrap_or_else(|e| {
                Err(registry::Error::Internal(format!("the call's task failed: {e}")))
            })),
            Some(ask) = running.asks.recv() => ask,
        };
        let mut asks = vec![first];
        while let Ok(more) = running.asks.try_recv() {
            asks.push(more);
        }
        let mut requests = InputRequests::new();
        let mut waiting = Vec::with_capacity(asks.len());
        for (n, ask) in asks.into_iter().enumerate() {
            let key = format!("bridge-{n}");
            requests.insert(key.clone(), ask.request);
            waiting.push((key, ask.answer));
        }
        let state = uuid::Uuid::new_v4().to_string();
        self.lock().insert(
            state.clone(),
            Paused {
                agent_id: agent_id.to_owned(),
                running,
                waiting,
            },
        );
        self.expire(state.clone());
        Step::InputRequired(InputRequiredResult::new(Some(requests), Some(state)))
    }

    /// Hands the client's answers to the paused call and runs it on; `None` when no call of this
    /// agent waits under `state` (unknown, expired, or another agent's).
    pub async fn resume(
        &self,
        agent_id: &str,
        state: &str,
        mut answers: InputResponses,
    ) -> Option<Step> {
        let paused = {
            let mut paused = self.lock();
            match paused.get(state) {
                Some(p) if p.agent_id == agent_id => paused.remove(state),
                _ => None,
            }
        }?;
        for (key, answer) in paused.waiting {
            let given = answers
                .remove(&key)
                .ok_or_else(|| format!("the MCP client gave no answer for \"{key}\""));
            let _ = answer.send(given);
        }
        Some(self.drive(agent_id, paused.running).await)
    }

    /// Forgets a paused call its client did not come back for: its server's requests are refused
    /// (their answer channels close) and the call ends upstream.
    fn expire(&self, state: String) {
        let suspended = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(COME_BACK_WITHIN).await;
            suspended.lock().remove(&state);
        });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Paused>> {
        lock(&self.paused)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
