//! Following a task its server runs (MCP tasks): polled until it ends, its result fetched, or
//! handed to the replica that holds its server when this one cannot reach it.

use std::sync::Arc;
use std::time::Duration;

use super::origin::TaskOrigin;
use super::{POLL_INTERVAL_MS, Tasks, UPSTREAM_POLL_MS};
use crate::a2e::{self, ErrorCode, TaskStatus};
use crate::registry;
use crate::store::StoredTask;
use crate::upstream::CallOrigin;

impl Tasks {
    /// Polls a task its server runs until it ends, then fetches and stores its result. A server
    /// that cannot be reached now (down, reconnecting, after a restart) is polled again until the
    /// task expires; the sweeper then ends it.
    pub(super) async fn follow(self: Arc<Self>, mut task: StoredTask, origin: Arc<TaskOrigin>) {
        let registry = self.tools.registry().clone();
        let Some(upstream_id) = task.upstream_task_id.clone() else {
            return;
        };
        let recipient: CallOrigin = origin.clone();
        loop {
            let left = task.expires_at - a2e::now();
            if left <= 0.0 {
                return;
            }
            let polled = registry
                .task_status(&task.agent_id, &task.server_id, &upstream_id)
                .await;
            match polled {
                Ok(upstream) => {
                    if let Some(every) = upstream.poll_interval {
                        task.poll_interval_ms = poll_interval(Some(every)) as i64;
                    }
                    if upstream.status == TaskStatus::Cancelled.as_str() {
                        task.status = upstream.status;
                        task.status_message = match upstream.status_message.is_empty() {
                            true => "cancelled by the server".to_owned(),
                            false => upstream.status_message,
                        };
                        self.forget(&task.task_id);
                        self.finish(&mut task).await;
                        return;
                    }
                    if upstream.is_final() || upstream.status == "input_required" {
                        // Waits for the end, answering what the server asks meanwhile.
                        let wait = Duration::from_secs_f64(left);
                        let result = registry
                            .task_result(&task.server_id, &upstream_id, wait, recipient.clone())
                            .await;
                        match result {
                            Err(error) if transient(&error) => {
                                if self.hand_over(&task).await {
                                    return;
                                }
                            }
                            result => {
                                let server_id = task.server_id.clone();
                                let called = result.map(|result| (server_id, result));
                                return self.end(task, called).await;
                            }
                        }
                    } else if upstream.status_message != task.status_message {
                        task.status_message = upstream.status_message;
                        self.update(&mut task).await;
                    }
                }
                Err(error) if transient(&error) => {
                    tracing::debug!(task_id = %task.task_id, %error, "cannot poll a task now");
                    if self.hand_over(&task).await {
                        return;
                    }
                }
                Err(error) => return self.end(task, Err(error)).await,
            }
            tokio::time::sleep(Duration::from_millis(task.poll_interval_ms.max(0) as u64)).await;
        }
    }

    /// Hands a task polled here to the replica that holds its server now, when another one
    /// does (this one cannot reach the server: a server's tasks are polled on its connection);
    /// whether it did. That replica polls it from its next sweep.
    async fn hand_over(&self, task: &StoredTask) -> bool {
        let registry = self.tools.registry();
        let Some(holder) = registry.held_by_other(&task.server_id) else {
            return false;
        };
        match self
            .store
            .move_task(&task.task_id, &self.replica, &holder)
            .await
        {
            Ok(true) => {
                tracing::info!(task_id = %task.task_id, %holder, "a task handed to its server's holder");
                self.forget(&task.task_id);
                true
            }
            Ok(false) => false,
            Err(error) => {
                tracing::warn!(task_id = %task.task_id, %error, "cannot hand a task over");
                false
            }
        }
    }
}

/// How often to poll a server's task: what it suggests, within bounds.
pub(super) fn poll_interval(suggested: Option<u64>) -> u64 {
    let (least, most) = UPSTREAM_POLL_MS;
    suggested
        .unwrap_or(POLL_INTERVAL_MS as u64)
        .clamp(least, most)
}

/// Whether a failed poll may succeed later (the server is down or reconnecting).
fn transient(error: &registry::Error) -> bool {
    matches!(
        error.code(),
        ErrorCode::McpServerUnavailable | ErrorCode::McpTransportError | ErrorCode::Timeout
    )
}
