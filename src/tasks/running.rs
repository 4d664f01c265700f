//! The calls this replica runs or polls, by task id: their handles, where their servers run
//! them, and stopping them (cancelled upstream, or left to the replica that polls them now).

use tokio::task::AbortHandle;

use super::Tasks;
use crate::store::StoredTask;

/// A task this replica runs or polls.
pub(super) struct Running {
    abort: AbortHandle,
    /// Where its server runs it, once it does.
    upstream: Option<Upstream>,
}

impl Running {
    pub(super) fn new(abort: AbortHandle) -> Self {
        Self {
            abort,
            upstream: None,
        }
    }
}

/// A task its server runs.
struct Upstream {
    agent_id: String,
    server_id: String,
    task_id: String,
}

impl Tasks {
    /// Records that the task's call runs on its server, so stopping it cancels it there.
    pub(super) fn following(&self, task: &StoredTask) {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(run) = running.get_mut(&task.task_id) {
            run.upstream = task.upstream_task_id.clone().map(|id| Upstream {
                agent_id: task.agent_id.clone(),
                server_id: task.server_id.clone(),
                task_id: id,
            });
        }
    }

    pub(super) fn forget(&self, task_id: &str) {
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(task_id);
    }

    /// Stops the call of a task this bridge runs or polls, if it still does: a bridge-run call
    /// is dropped (which tells its server), a server's task is cancelled there.
    pub(super) fn stop_running(&self, task_id: &str) {
        let run = self
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(task_id);
        let Some(run) = run else {
            return;
        };
        run.abort.abort();
        if let Some(upstream) = run.upstream {
            let registry = self.tools.registry().clone();
            tokio::spawn(async move {
                let Upstream {
                    agent_id,
                    server_id,
                    task_id,
                } = upstream;
                if let Err(error) = registry.cancel_task(&agent_id, &server_id, &task_id).await {
                    tracing::warn!(%server_id, %task_id, %error, "cannot cancel a task upstream");
                }
            });
        }
    }

    /// Stops polling a task its row no longer names this replica for, leaving it running on
    /// its server for the replica that polls it now.
    pub(super) fn stop_following(&self, task_id: &str) {
        let run = self
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(task_id);
        if let Some(run) = run {
            run.abort.abort();
            tracing::info!(%task_id, "stopped polling a task another replica polls now");
        }
    }
}
