//! A caller's own A2A tasks: read as the agent has them now, cancelled (a finished one is a
//! conflict), and followed again after a dropped stream.

use serde_json::{Value, json};

use super::client::translate;
use super::stream::{self, Assembly, Kind, Update};
use super::{A2a, A2aAgent, A2aError, Origin};

impl A2a {
    /// `caller`'s task `task_id` as the agent has it now (`GetTask`).
    pub async fn get_task(
        &self,
        caller: &str,
        agent: &A2aAgent,
        task_id: &str,
        timeout_secs: u64,
    ) -> Result<Value, A2aError> {
        self.own_task(caller, agent, task_id).await?;
        let method = translate("GetTask", agent.endpoint.protocol);
        self.rpc(agent, method, json!({"id": task_id}), timeout_secs)
            .await
            .map_err(|e| task_error(e, agent, task_id))
    }

    /// Cancels `caller`'s task `task_id` (`CancelTask`): the task as the agent has it then. A
    /// finished task is a conflict, whichever SDK the agent runs (some answer a second cancel
    /// with the task, some with an error).
    pub async fn cancel_task(
        &self,
        caller: &str,
        agent: &A2aAgent,
        task_id: &str,
        timeout_secs: u64,
    ) -> Result<Value, A2aError> {
        let task = self.get_task(caller, agent, task_id, timeout_secs).await?;
        if let Some(state) = task.get("status").and_then(stream::state_of)
            && stream::is_terminal(&state)
        {
            return Err(already_over(task_id, &state));
        }
        let method = translate("CancelTask", agent.endpoint.protocol);
        self.store
            .record(caller, "agent.task.cancel", &agent.agent_id, task_id)
            .await;
        match self
            .rpc(agent, method, json!({"id": task_id}), timeout_secs)
            .await
        {
            // TaskNotCancelableError: it ended meanwhile.
            Err(error) if error.reason() == Some("TASK_NOT_CANCELABLE") => {
                Err(already_over(task_id, "finished"))
            }
            other => other.map_err(|e| task_error(e, agent, task_id)),
        }
    }

    /// Follows `caller`'s task again after its stream was dropped (`SubscribeToTask`): its
    /// updates go to the caller's event channel until it is over; the answer is the final
    /// task. A task that is over already is answered at once.
    pub async fn subscribe(
        &self,
        origin: Origin<'_>,
        agent: &A2aAgent,
        task_id: &str,
        timeout_secs: u64,
    ) -> Result<Value, A2aError> {
        let task = self
            .get_task(origin.agent_id, agent, task_id, timeout_secs)
            .await?;
        let over = task
            .get("status")
            .and_then(stream::state_of)
            .is_some_and(|s| stream::is_terminal(&s));
        if over || !agent.streams() {
            let mut assembly = Assembly::default();
            assembly.apply(&Update {
                kind: Kind::Task,
                payload: task,
                task_id: Some(task_id.to_owned()),
                context_id: None,
                append: false,
                last_chunk: false,
                last: true,
            });
            return Ok(assembly.result(agent.endpoint.protocol).unwrap_or_default());
        }
        let method = translate("SubscribeToTask", agent.endpoint.protocol);
        self.stream(origin, agent, method, json!({"id": task_id}), timeout_secs)
            .await
            .map_err(|e| task_error(e, agent, task_id))
    }
}

/// A task that is over cannot be cancelled.
fn already_over(task_id: &str, state: &str) -> A2aError {
    A2aError::Conflict(format!(
        "task \"{task_id}\" is already {state}: a task that is over cannot be cancelled"
    ))
}

/// The agent's `TaskNotFoundError` for a task the bridge saw as the caller's (the agent forgot
/// it) as the bridge's own not-found; other errors as they are.
fn task_error(error: A2aError, agent: &A2aAgent, task_id: &str) -> A2aError {
    match error {
        e if e.reason() == Some("TASK_NOT_FOUND") => A2aError::TaskNotFound {
            agent_id: agent.agent_id.clone(),
            task_id: task_id.to_owned(),
        },
        other => other,
    }
}
