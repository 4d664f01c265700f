//! A task's record: each status change stored and announced (`bridge/task_status`), and what
//! the API shows of a stored task and of the call it ended with.

use rmcp::model::CallToolResult;
use serde_json::json;

use super::Tasks;
use crate::a2e::{
    self, ErrorCode, Message, NotificationMethod, Response, ServerPush, TaskInfo, TaskStatus,
    ToolCallResponse,
};
use crate::registry;
use crate::store::StoredTask;

impl Tasks {
    /// Stores a final status (unless the task finished otherwise meanwhile) and announces it.
    pub(super) async fn finish(&self, task: &mut StoredTask) -> bool {
        task.updated_at = a2e::now();
        match self.store.finish_task(task).await {
            Ok(true) => {
                self.announce(task);
                true
            }
            Ok(false) => false,
            Err(error) => {
                tracing::error!(task_id = %task.task_id, %error, "cannot store a task's end");
                false
            }
        }
    }

    /// Stores a running task's new status and announces it.
    pub(super) async fn update(&self, task: &mut StoredTask) {
        task.updated_at = a2e::now();
        match self.store.update_task(task).await {
            Ok(true) => self.announce(task),
            Ok(false) => {}
            Err(error) => tracing::error!(task_id = %task.task_id, %error, "cannot store a task"),
        }
    }

    /// `bridge/task_status` to the task's agent.
    pub(super) fn announce(&self, task: &StoredTask) {
        let push = ServerPush {
            server_id: task.server_id.clone(),
            method: NotificationMethod::TaskStatus.as_str().to_owned(),
            params: serde_json::to_value(info(task)).unwrap_or_else(|_| json!({})),
            req_id: Some(task.req_id.clone()),
            ..Default::default()
        };
        self.hub.publish(&task.agent_id, ServerPush::TYPE, &push);
    }
}

/// A stored task as the API shows it.
pub fn info(task: &StoredTask) -> TaskInfo {
    TaskInfo {
        task_id: task.task_id.clone(),
        status: status_of(&task.status),
        status_message: task.status_message.clone(),
        name: task.name.clone(),
        server_id: task.server_id.clone(),
        call_id: task.req_id.clone(),
        upstream: task.upstream_task_id.is_some(),
        ttl: task.ttl_ms.max(0) as u64,
        poll_interval: task.poll_interval_ms.max(0) as u64,
        created_at: task.created_at,
        updated_at: task.updated_at,
        expires_at: task.expires_at,
    }
}

pub(super) fn status_of(name: &str) -> TaskStatus {
    TaskStatus::parse(name).unwrap_or(TaskStatus::Failed)
}

/// The tool call response a finished call makes (as `POST /v1/tools/call` would answer).
pub(super) fn response_of(task: &StoredTask, result: CallToolResult) -> ToolCallResponse {
    let mut resp = ToolCallResponse::answering(&task.req_id);
    resp.name = task.name.clone();
    resp.server_id = task.server_id.clone();
    resp.content = result.content;
    resp.structured_content = result.structured_content;
    resp.is_error = result.is_error.unwrap_or(false);
    resp
}

/// The code and sentence a failed call answers with (an internal error's details only in the
/// log, as for a blocking call).
pub(super) fn error_of(error: &registry::Error) -> (ErrorCode, String) {
    match error.code() {
        ErrorCode::Internal => (ErrorCode::Internal, a2e::internal_error(error)),
        code => (code, error.to_string()),
    }
}
