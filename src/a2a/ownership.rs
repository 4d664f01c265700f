//! Whose tasks and contexts: each task and context an agent holds through the bridge is the
//! caller's that started it, recorded as replies name them; another caller's is refused as the
//! agent refuses a task it does not have.

use serde_json::{Value, json};

use super::{A2a, A2aAgent, A2aError};
use crate::store::Owned;

impl A2a {
    /// Whether `caller` created task or context `id` at `agent` through the bridge.
    pub(super) async fn owner(
        &self,
        agent: &A2aAgent,
        kind: Owned,
        id: &str,
    ) -> Result<Option<String>, A2aError> {
        Ok(self.store.a2a_owner(&agent.agent_id, kind, id).await?)
    }

    /// Refuses a message that names a task or a context of another caller, as the agent refuses
    /// a task it does not have. A task must be the caller's; a context the bridge has not seen
    /// is a new one (a client may choose its context id) and becomes the caller's.
    pub(super) async fn check_message(
        &self,
        caller: &str,
        agent: &A2aAgent,
        message: Option<&Value>,
    ) -> Result<(), A2aError> {
        let field = |name| message.and_then(|m| m.get(name)).and_then(Value::as_str);
        if let Some(task) = field("taskId")
            && self.owner(agent, Owned::Task, task).await?.as_deref() != Some(caller)
        {
            return Err(task_not_found());
        }
        if let Some(context) = field("contextId")
            && self
                .owner(agent, Owned::Context, context)
                .await?
                .is_some_and(|owner| owner != caller)
        {
            return Err(task_not_found());
        }
        Ok(())
    }

    /// Records the tasks and contexts a reply to `caller`'s message names as the caller's.
    pub(super) async fn remember(&self, caller: &str, agent: &A2aAgent, result: &Value) {
        let mut owned = Vec::new();
        for object in [Some(result), result.get("task"), result.get("message")]
            .into_iter()
            .flatten()
        {
            let text = |name| object.get(name).and_then(Value::as_str);
            let is_task = object.get("status").is_some() || text("kind") == Some("task");
            if is_task && let Some(id) = text("id") {
                owned.push((Owned::Task, id));
            }
            if let Some(id) = text("taskId") {
                owned.push((Owned::Task, id));
            }
            if let Some(id) = text("contextId") {
                owned.push((Owned::Context, id));
            }
        }
        for (kind, id) in owned {
            if let Err(error) = self
                .store
                .insert_a2a_owned(&agent.agent_id, kind, id, caller)
                .await
            {
                tracing::error!(agent_id = %agent.agent_id, %error, "could not record who owns an A2A task");
            }
        }
    }

    /// Refuses a task that `caller` did not start (or that the bridge never saw).
    pub(super) async fn own_task(
        &self,
        caller: &str,
        agent: &A2aAgent,
        task_id: &str,
    ) -> Result<(), A2aError> {
        match self.owner(agent, Owned::Task, task_id).await? {
            Some(owner) if owner == caller => Ok(()),
            _ => Err(A2aError::TaskNotFound {
                agent_id: agent.agent_id.clone(),
                task_id: task_id.to_owned(),
            }),
        }
    }
}

/// What an A2A agent answers for a task it does not have (`TaskNotFoundError`); a task or a
/// context of another caller is answered the same.
pub(super) fn task_not_found() -> A2aError {
    A2aError::Rpc(json!({"code": -32001, "message": "Task not found"}))
}
