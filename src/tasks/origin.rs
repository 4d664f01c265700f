//! The recipient of a task's call: its agent's channel, with the task `input_required` while
//! the agent (or the task's MCP client) is asked something.

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;

use super::Tasks;
use crate::a2e::{ServerPush, TaskStatus};
use crate::hub::{AgentChannel, Answer, Recipient, ServerRequest};
use crate::store::StoredTask;

/// The recipient of a task's call: the agent's channel, with the task `input_required` while
/// the agent is asked something.
pub(super) struct TaskOrigin {
    channel: AgentChannel,
    tasks: Arc<Tasks>,
    task: Mutex<StoredTask>,
}

impl std::fmt::Debug for TaskOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskOrigin")
            .field("channel", &self.channel)
            .finish()
    }
}

impl TaskOrigin {
    pub(super) fn new(tasks: &Arc<Tasks>, task: &StoredTask) -> Arc<Self> {
        Arc::new(Self {
            channel: AgentChannel::new(
                tasks.hub.clone(),
                task.agent_id.clone(),
                task.req_id.clone(),
            ),
            tasks: tasks.clone(),
            task: Mutex::new(task.clone()),
        })
    }

    /// The record its status changes start from, once it changed.
    pub(super) fn replace(&self, task: &StoredTask) {
        *self.task.lock().unwrap_or_else(|e| e.into_inner()) = task.clone();
    }

    fn task_id(&self) -> String {
        let task = self.task.lock().unwrap_or_else(|e| e.into_inner());
        task.task_id.clone()
    }

    async fn set(&self, status: TaskStatus, message: &str) {
        let mut task = self.task.lock().unwrap_or_else(|e| e.into_inner()).clone();
        task.status = status.as_str().to_owned();
        task.status_message = message.to_owned();
        self.tasks.update(&mut task).await;
    }
}

impl Recipient for TaskOrigin {
    fn agent_id(&self) -> &str {
        self.channel.agent_id()
    }

    fn call_id(&self) -> Option<String> {
        self.channel.call_id()
    }

    fn progress(&self, push: ServerPush) -> BoxFuture<'_, ()> {
        self.channel.progress(push)
    }

    fn ask(&self, request: ServerRequest) -> BoxFuture<'_, Result<Answer, String>> {
        Box::pin(async move {
            let asking = format!(
                "waiting for the agent's answer to {}",
                request.kind.a2e_type()
            );
            self.set(TaskStatus::InputRequired, &asking).await;
            let task_id = self.task_id();
            let answer = match self.tasks.ask_polled(&task_id, &request).await {
                Some(answer) => answer,
                None => self.channel.ask(request).await,
            };
            self.set(TaskStatus::Working, "").await;
            answer
        })
    }
}
