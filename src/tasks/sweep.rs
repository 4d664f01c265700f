//! Across restarts and replicas: the sweeper (expired tasks deleted, tasks ended elsewhere
//! stopped here, tasks of gone replicas taken over), and what a start restores and resumes.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio_util::sync::CancellationToken;

use super::origin::TaskOrigin;
use super::running::Running;
use super::traced;
use super::{INTERRUPTED, ORPHANED, ORPHANED_QUEUED, QUEUED, SWEEP_EVERY, Tasks};
use crate::a2e::{self, ErrorCode, TaskStatus};
use crate::store::{StoreError, StoredTask};

impl Tasks {
    /// Stops the calls this replica runs for tasks that ended elsewhere (cancelled through
    /// another replica), and stops polling the tasks whose row names another replica now
    /// (taken over, handed on): those are polled there, so they are not cancelled upstream.
    async fn stop_ended(&self) -> Result<(), StoreError> {
        let ids: Vec<String> = {
            let running = self.running.lock().unwrap_or_else(|e| e.into_inner());
            running.keys().cloned().collect()
        };
        if ids.is_empty() {
            return Ok(());
        }
        let still = self.store.running_tasks(&self.replica).await?;
        let still: std::collections::HashSet<&str> =
            still.iter().map(|t| t.task_id.as_str()).collect();
        for id in ids.iter().filter(|id| !still.contains(id.as_str())) {
            let elsewhere = self
                .store
                .task(id, a2e::now())
                .await?
                .filter(|task| {
                    [TaskStatus::Working, TaskStatus::InputRequired]
                        .iter()
                        .any(|status| task.status == status.as_str())
                })
                .is_some_and(|task| task.replica != self.replica);
            match elsewhere {
                true => self.stop_following(id),
                // Ended by this replica meanwhile: its handle is gone already.
                false => self.stop_running(id),
            }
        }
        Ok(())
    }

    /// After a start, once the servers are restored: the tasks this replica was polling on
    /// their servers are polled again, and finish normally.
    pub async fn resume(self: &Arc<Self>) -> Result<usize, StoreError> {
        // The servers are restored: from the next sweep on, tasks are taken over and handed
        // here (what this read misses, the sweep polls).
        self.resumed.store(true, Ordering::Release);
        let upstream: Vec<_> = self
            .store
            .running_tasks(&self.replica)
            .await?
            .into_iter()
            .filter(|task| task.upstream_task_id.is_some())
            .collect();
        for task in &upstream {
            tracing::info!(task_id = %task.task_id, server_id = %task.server_id, "polling a task again");
            self.poll_here(task);
        }
        Ok(upstream.len())
    }

    /// Polls a task its server runs from this replica, unless this replica already does.
    fn poll_here(self: &Arc<Self>, task: &StoredTask) {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        if running.contains_key(&task.task_id) {
            return;
        }
        let origin = TaskOrigin::new(self, task);
        let tasks = self.clone();
        let record = task.clone();
        let span = traced::span(task, true);
        let handle = traced::spawn(span, async move { tasks.follow(record, origin).await });
        running.insert(task.task_id.clone(), Running::new(handle.abort_handle()));
        drop(running);
        self.following(task);
    }

    /// Takes over the running tasks of replicas that are gone (killed: their row in `replicas`
    /// lapsed), one replica each: a task its server runs is polled here (and handed to the
    /// server's holder if that is another replica); a call the gone replica ran itself ends
    /// `failed` ([`ORPHANED`], retryable), never made again, as it may have run; one still
    /// queued there ends `failed` ([`ORPHANED_QUEUED`]), its arguments are not kept to make it.
    /// Then polls the tasks handed to this replica.
    async fn take_over(self: &Arc<Self>) -> Result<(), StoreError> {
        for mut task in self
            .store
            .orphaned_tasks(&self.replica, self.limits.lease)
            .await?
        {
            let gone = task.replica.clone();
            if !self
                .store
                .move_task(&task.task_id, &gone, &self.replica)
                .await?
            {
                continue;
            }
            task.replica = self.replica.clone();
            tracing::warn!(task_id = %task.task_id, replica = %gone, "took over a task of a replica that is gone");
            if task.upstream_task_id.is_some() {
                continue;
            }
            task.status_message = match task.status_message == QUEUED {
                true => ORPHANED_QUEUED.to_owned(),
                false => ORPHANED.to_owned(),
            };
            task.status = TaskStatus::Failed.as_str().to_owned();
            task.error_code = Some(ErrorCode::McpServerUnavailable.as_str().to_owned());
            self.finish(&mut task).await;
        }
        // Known before the store is read: a task that ends here meanwhile is not polled again.
        let known: HashSet<String> = {
            let running = self.running.lock().unwrap_or_else(|e| e.into_inner());
            running.keys().cloned().collect()
        };
        let mine = self.store.running_tasks(&self.replica).await?;
        for task in mine {
            if task.upstream_task_id.is_some() && !known.contains(&task.task_id) {
                tracing::info!(task_id = %task.task_id, server_id = %task.server_id, "polling a task handed to this replica");
                self.poll_here(&task);
            }
        }
        Ok(())
    }

    /// After a start, before the first request: every call this replica was running itself
    /// ends `failed` ("interrupted by restart"). The tasks it polled are `resume`d.
    pub async fn restore(&self) -> Result<usize, StoreError> {
        let stale = self.store.running_tasks(&self.replica).await?;
        let stale = stale.into_iter().filter(|t| t.upstream_task_id.is_none());
        let mut ended = 0;
        for mut task in stale {
            task.status = TaskStatus::Failed.as_str().to_owned();
            task.status_message = INTERRUPTED.to_owned();
            task.error_code = Some(ErrorCode::McpServerUnavailable.as_str().to_owned());
            if self.finish(&mut task).await {
                ended += 1;
            }
        }
        if ended > 0 {
            tracing::warn!(ended, "tasks the bridge was running when it stopped failed");
        }
        Ok(ended)
    }

    /// Deletes expired tasks (and stops their calls) until `shutdown`.
    pub fn spawn_sweeper(self: &Arc<Self>, shutdown: CancellationToken) {
        let tasks = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(SWEEP_EVERY);
            loop {
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = tick.tick() => {}
                }
                match tasks.store.expire_tasks(a2e::now()).await {
                    Ok(gone) => {
                        for (task_id, _) in gone {
                            tasks.stop_running(&task_id);
                        }
                    }
                    Err(error) => tracing::warn!(%error, "cannot delete expired tasks"),
                }
                tasks.expire_held().await;
                if let Err(error) = tasks.stop_ended().await {
                    tracing::warn!(%error, "cannot read which tasks ended");
                }
                if tasks.resumed.load(Ordering::Acquire)
                    && let Err(error) = tasks.take_over().await
                {
                    tracing::warn!(%error, "cannot take over the tasks of replicas that are gone");
                }
            }
        });
    }
}
