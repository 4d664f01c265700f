//! An agent's own tasks: listed in pages (with cursors that keep a task's exact time), read,
//! read with what they finished with, and cancelled.

use serde_json::json;

use super::record::{info, status_of};
use super::{Outcome, PAGE, TaskError, Tasks};
use crate::a2e::{self, ErrorCode, TaskInfo, TaskStatus};
use crate::caller::Caller;
use crate::store::StoredTask;

impl Tasks {
    /// The caller's task `task_id`: another agent's is as unknown as a missing one.
    pub(super) async fn own(
        &self,
        caller: &Caller,
        task_id: &str,
    ) -> Result<StoredTask, TaskError> {
        match self.store.task(task_id, a2e::now()).await? {
            Some(task) if task.agent_id == caller.id => Ok(task),
            _ => Err(TaskError::NotFound(task_id.to_owned())),
        }
    }

    /// A page of the caller's tasks, oldest first, from `cursor` (a `next_cursor` given
    /// before; empty: the first page), at most `limit` (default and most: [`PAGE`]); the
    /// cursor of the next page, empty on the last.
    pub async fn list(
        &self,
        caller: &Caller,
        cursor: &str,
        limit: Option<usize>,
    ) -> Result<(Vec<TaskInfo>, String), TaskError> {
        let (default, most) = PAGE;
        let limit = limit.unwrap_or(default);
        if !(1..=most).contains(&limit) {
            return Err(TaskError::Invalid(format!(
                "`limit` is {limit}; it must be 1 to {most}"
            )));
        }
        let after = match cursor {
            "" => None,
            text => Some(read_cursor(text).ok_or_else(|| {
                TaskError::Invalid(format!(
                    "`cursor` \"{text}\" is not a cursor this service gave out"
                ))
            })?),
        };
        let after = after.as_ref().map(|(at, id)| (*at, id.as_str()));
        let mut tasks = self
            .store
            .tasks_page(&caller.id, a2e::now(), after, limit + 1)
            .await?;
        let next = match tasks.len() > limit {
            true => {
                tasks.truncate(limit);
                let last = &tasks[limit - 1];
                cursor_after(last.created_at, &last.task_id)
            }
            false => String::new(),
        };
        Ok((tasks.iter().map(info).collect(), next))
    }

    /// One of the caller's tasks.
    pub async fn get(&self, caller: &Caller, task_id: &str) -> Result<TaskInfo, TaskError> {
        Ok(info(&self.own(caller, task_id).await?))
    }

    /// One of the caller's tasks with what it finished with.
    pub async fn outcome(&self, caller: &Caller, task_id: &str) -> Result<Outcome, TaskError> {
        let task = self.own(caller, task_id).await?;
        let response = task
            .result
            .as_deref()
            .and_then(|json| serde_json::from_str(json).ok());
        let error = task.error_code.as_deref().map(|code| {
            let code = serde_json::from_value(json!(code)).unwrap_or(ErrorCode::Internal);
            (code, task.status_message.clone())
        });
        Ok(Outcome {
            task: info(&task),
            response,
            error,
        })
    }

    /// Cancels one of the caller's running tasks; a finished one is `Finished` (409), and
    /// nothing changes.
    pub async fn cancel(&self, caller: &Caller, task_id: &str) -> Result<TaskInfo, TaskError> {
        let mut task = self.own(caller, task_id).await?;
        task.status = TaskStatus::Cancelled.as_str().to_owned();
        task.status_message = "cancelled by the agent".to_owned();
        if !self.finish(&mut task).await {
            let now = self.own(caller, task_id).await?;
            return Err(TaskError::Finished {
                task_id: task_id.to_owned(),
                status: status_of(&now.status),
            });
        }
        // Here at once; another replica running it stops within SWEEP_EVERY (`stop_ended`).
        self.stop_running(task_id);
        self.polled_lock().remove(task_id);
        Ok(info(&task))
    }
}

/// The cursor of the page after a task created at `at`: the time's exact bits, as serde_json
/// reads a float back to within a unit in the last place only, and a time read back larger
/// than the page's last one showed that task again on the next page.
fn cursor_after(at: f64, task_id: &str) -> String {
    hex::encode(serde_json::to_vec(&(at.to_bits(), task_id)).unwrap_or_default())
}

/// What [`cursor_after`] wrote, or `None` for anything else.
fn read_cursor(text: &str) -> Option<(f64, String)> {
    let bytes = hex::decode(text).ok()?;
    let (bits, id) = serde_json::from_slice::<(u64, String)>(&bytes).ok()?;
    Some((f64::from_bits(bits), id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_gives_back_the_exact_time() {
        // Times as `a2e::now()` makes them, over a spread wide enough to meet floats that
        // serde_json reads back a unit off.
        for i in 0..200_000u64 {
            let at = 1_796_000_000.0 + i as f64 * 0.000_123_456_7;
            let (back, id) = read_cursor(&cursor_after(at, "t-1")).unwrap();
            assert_eq!(back.to_bits(), at.to_bits(), "{at}");
            assert_eq!(id, "t-1");
        }
        assert_eq!(read_cursor("zz"), None);
    }
}
