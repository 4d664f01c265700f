//! The `tasks` table: asynchronous tool calls, their status and, once done, their result, kept
//! until their `expires_at`. A finished task is never changed again: every update is
//! conditional on the task still running, so a cancel racing a completion has one winner.

use sqlx::Row;
use sqlx::any::AnyRow;
use tracing::instrument;

use super::{Store, StoreError};

/// The statuses of a task that has not finished (MCP's names).
const RUNNING: &str = "status IN ('working', 'input_required')";

/// A task as stored.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StoredTask {
    pub task_id: String,
    /// The agent that created it; no other may see it.
    pub agent_id: String,
    /// The A2E request id of the call that created it.
    pub req_id: String,
    /// The tool as the caller named it.
    pub name: String,
    /// Where it runs: the server (empty until known, and for an agent-bridge tool).
    pub server_id: String,
    /// The upstream tool name (empty until known).
    pub tool: String,
    /// `working`, `input_required`, `completed`, `failed` or `cancelled`.
    pub status: String,
    pub status_message: String,
    /// The upstream's task id when the upstream runs the call as an MCP task.
    pub upstream_task_id: Option<String>,
    /// The replica that runs or polls it.
    pub replica: String,
    /// `completed`: the JSON of the tool call response; `failed`: of its error body.
    pub result: Option<String>,
    /// `failed`: the A2E error code.
    pub error_code: Option<String>,
    pub ttl_ms: i64,
    pub poll_interval_ms: i64,
    pub created_at: f64,
    pub updated_at: f64,
    pub expires_at: f64,
    /// The trace it was created in, as a JSON object of W3C trace context fields (none when
    /// no trace was exported): a task polled again after a restart links to it.
    pub trace: Option<String>,
}

/// What a running task waits on, as its row keeps it (both JSON; see `tasks/inputs.rs`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskInputs {
    /// The server's requests it waits on.
    pub inputs: Option<String>,
    /// Its client's answers not yet taken by the replica running its call.
    pub answers: Option<String>,
}

impl StoredTask {
    fn from_row(row: &AnyRow) -> Result<Self, StoreError> {
        Ok(Self {
            task_id: row.try_get("task_id")?,
            agent_id: row.try_get("agent_id")?,
            req_id: row.try_get("req_id")?,
            name: row.try_get("name")?,
            server_id: row.try_get("server_id")?,
            tool: row.try_get("tool")?,
            status: row.try_get("status")?,
            status_message: row.try_get("status_message")?,
            upstream_task_id: row.try_get("upstream_task_id")?,
            replica: row.try_get("replica")?,
            result: row.try_get("result")?,
            error_code: row.try_get("error_code")?,
            ttl_ms: row.try_get("ttl_ms")?,
            poll_interval_ms: row.try_get("poll_interval_ms")?,
            created_at: row.try_get("created_at")?,
            updated_at: row.try_get("updated_at")?,
            expires_at: row.try_get("expires_at")?,
            trace: row.try_get("trace")?,
        })
    }
}

const COLUMNS: &str = "task_id, agent_id, req_id, name, server_id, tool, status, status_message, \
    upstream_task_id, replica, result, error_code, ttl_ms, poll_interval_ms, created_at, \
    updated_at, expires_at, trace";

impl Store {
    /// Stores a new task. `Conflict` when its id is taken.
    #[instrument(skip_all, fields(task_id = %task.task_id))]
    pub async fn insert_task(&self, task: &StoredTask) -> Result<(), StoreError> {
        Self::insert_task_in(&self.pool, task).await
    }

    /// [`Store::insert_task`] on `executor` (the pool, or a transaction).
    pub(super) async fn insert_task_in<'e, E>(
        executor: E,
        task: &StoredTask,
    ) -> Result<(), StoreError>
    where
        E: sqlx::Executor<'e, Database = sqlx::Any>,
    {
        let sql = format!(
            "INSERT INTO tasks ({COLUMNS}) VALUES \
             ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)"
        );
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(&task.task_id)
            .bind(&task.agent_id)
            .bind(&task.req_id)
            .bind(&task.name)
            .bind(&task.server_id)
            .bind(&task.tool)
            .bind(&task.status)
            .bind(&task.status_message)
            .bind(&task.upstream_task_id)
            .bind(&task.replica)
            .bind(&task.result)
            .bind(&task.error_code)
            .bind(task.ttl_ms)
            .bind(task.poll_interval_ms)
            .bind(task.created_at)
            .bind(task.updated_at)
            .bind(task.expires_at)
            .bind(&task.trace)
            .execute(executor)
            .await
            .map_err(StoreError::from_write)?;
        Ok(())
    }

    /// The task `task_id` unless it expired before `now`.
    #[instrument(skip_all, fields(task_id))]
    pub async fn task(&self, task_id: &str, now: f64) -> Result<Option<StoredTask>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM tasks WHERE task_id = $1 AND expires_at > $2");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(task_id)
            .bind(now)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(StoredTask::from_row).transpose()
    }

    /// An agent's tasks that have not expired before `now`, oldest first.
    #[instrument(skip_all, fields(agent_id))]
    pub async fn tasks_of(&self, agent_id: &str, now: f64) -> Result<Vec<StoredTask>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM tasks WHERE agent_id = $1 AND expires_at > $2 \
             ORDER BY created_at, task_id"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(agent_id)
            .bind(now)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(StoredTask::from_row).collect()
    }

    /// A page of an agent's tasks that have not expired before `now`, oldest first, from after
    /// `after` (the `created_at` and id of the last task of the previous page): at most `limit`.
    #[instrument(skip_all, fields(agent_id))]
    pub async fn tasks_page(
        &self,
        agent_id: &str,
        now: f64,
        after: Option<(f64, &str)>,
        limit: usize,
    ) -> Result<Vec<StoredTask>, StoreError> {
        let (created, task_id) = after.unwrap_or((f64::MIN, ""));
        let sql = format!(
            "SELECT {COLUMNS} FROM tasks WHERE agent_id = $1 AND expires_at > $2 \
             AND (created_at > $3 OR (created_at = $3 AND task_id > $4)) \
             ORDER BY created_at, task_id LIMIT $5"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(agent_id)
            .bind(now)
            .bind(created)
            .bind(task_id)
            .bind(limit as i64)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(StoredTask::from_row).collect()
    }

    /// How many of an agent's tasks have not finished (queued ones included).
    #[instrument(skip_all, fields(agent_id))]
    pub async fn running_task_count(&self, agent_id: &str) -> Result<i64, StoreError> {
        let sql = format!("SELECT COUNT(*) FROM tasks WHERE agent_id = $1 AND {RUNNING}");
        let count = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .bind(agent_id)
            .fetch_one(&self.pool)
            .await?;
        Ok(count)
    }

    /// An agent's stored results that have not expired before `now`: each task's id and the
    /// result's length, oldest finished first.
    #[instrument(skip_all, fields(agent_id))]
    pub async fn task_results(
        &self,
        agent_id: &str,
        now: f64,
    ) -> Result<Vec<(String, i64)>, StoreError> {
        let rows = sqlx::query(
            "SELECT task_id, CAST(LENGTH(result) AS BIGINT) AS size FROM tasks \
             WHERE agent_id = $1 AND result IS NOT NULL AND expires_at > $2 \
             ORDER BY updated_at, task_id",
        )
        .bind(agent_id)
        .bind(now)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| Ok((row.try_get("task_id")?, row.try_get("size")?)))
            .collect()
    }

    /// Drops a finished task's result, saying why in its status message (the task stays).
    #[instrument(skip_all, fields(task_id))]
    pub async fn evict_task_result(&self, task_id: &str, why: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE tasks SET result = NULL, status_message = $2 WHERE task_id = $1")
            .bind(task_id)
            .bind(why)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The tasks `replica` was running or polling that have not finished.
    #[instrument(skip_all, fields(replica))]
    pub async fn running_tasks(&self, replica: &str) -> Result<Vec<StoredTask>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM tasks WHERE replica = $1 AND {RUNNING}");
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(replica)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(StoredTask::from_row).collect()
    }

    /// The running tasks of replicas other than `replica` that are gone (their row in
    /// `replicas` lapsed more than a `lease` ago, or is deleted: killed, or stopped without
    /// ending them), while `replica` itself is up and has been for a `lease` (none otherwise:
    /// a replica that does not say it is up, as one alone, takes nothing over). The grace on
    /// both sides keeps a store outage longer than a lease, after which every row has lapsed,
    /// from handing the first replica back the tasks of all the others, which are alive. The
    /// time is the database's, as for the leases. A call held for approval is on no replica
    /// (`replica` empty) and nobody's to take over.
    #[instrument(skip_all, fields(replica))]
    pub async fn orphaned_tasks(
        &self,
        replica: &str,
        lease: std::time::Duration,
    ) -> Result<Vec<StoredTask>, StoreError> {
        let now = self.backend.now();
        let sql = format!(
            "SELECT {COLUMNS} FROM tasks WHERE replica <> $1 AND replica <> '' AND {RUNNING} \
             AND replica NOT IN \
             (SELECT replica FROM replicas WHERE expires_at >= {now} - $2) AND EXISTS \
             (SELECT 1 FROM replicas WHERE replica = $1 AND expires_at >= {now} \
             AND joined_at <= {now} - $2)"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(replica)
            .bind(lease.as_secs_f64())
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(StoredTask::from_row).collect()
    }

    /// Hands a running task from replica `from` to `to`; false when it has finished or `from`
    /// no longer runs it (another replica took it first: one winner).
    #[instrument(skip_all, fields(task_id, from, to))]
    pub async fn move_task(&self, task_id: &str, from: &str, to: &str) -> Result<bool, StoreError> {
        let sql = format!(
            "UPDATE tasks SET replica = $3 WHERE task_id = $1 AND replica = $2 AND {RUNNING}"
        );
        let done = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(task_id)
            .bind(from)
            .bind(to)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Sets a running task's status (`working` or `input_required`) and message, and where it
    /// runs once known; whether it was still running.
    #[instrument(skip_all, fields(task_id = %task.task_id))]
    pub async fn update_task(&self, task: &StoredTask) -> Result<bool, StoreError> {
        let sql = format!(
            "UPDATE tasks SET status = $2, status_message = $3, server_id = $4, tool = $5, \
             upstream_task_id = $6, poll_interval_ms = $7, updated_at = $8 \
             WHERE task_id = $1 AND {RUNNING}"
        );
        let done = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(&task.task_id)
            .bind(&task.status)
            .bind(&task.status_message)
            .bind(&task.server_id)
            .bind(&task.tool)
            .bind(&task.upstream_task_id)
            .bind(task.poll_interval_ms)
            .bind(task.updated_at)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Finishes a running task: its final status, message, result or error; whether it was
    /// still running (a finished task keeps what it finished with).
    #[instrument(skip_all, fields(task_id = %task.task_id))]
    pub async fn finish_task(&self, task: &StoredTask) -> Result<bool, StoreError> {
        let sql = format!(
            "UPDATE tasks SET status = $2, status_message = $3, server_id = $4, result = $5, \
             error_code = $6, updated_at = $7 WHERE task_id = $1 AND {RUNNING}"
        );
        let done = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(&task.task_id)
            .bind(&task.status)
            .bind(&task.status_message)
            .bind(&task.server_id)
            .bind(&task.result)
            .bind(&task.error_code)
            .bind(task.updated_at)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Sets the input a running task waits on (`inputs`, JSON; None: nothing), for any replica
    /// to show its client.
    #[instrument(skip_all, fields(task_id))]
    pub async fn set_task_inputs(
        &self,
        task_id: &str,
        inputs: Option<&str>,
    ) -> Result<(), StoreError> {
        let sql = format!("UPDATE tasks SET inputs = $2 WHERE task_id = $1 AND {RUNNING}");
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(task_id)
            .bind(inputs)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The input a running task waits on and the answers given to it not yet taken; None when
    /// the task is not running.
    #[instrument(skip_all, fields(task_id))]
    pub async fn task_inputs(&self, task_id: &str) -> Result<Option<TaskInputs>, StoreError> {
        let sql = format!("SELECT inputs, answers FROM tasks WHERE task_id = $1 AND {RUNNING}");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(task_id)
            .fetch_optional(&self.pool)
            .await?;
        row.map(|row| {
            Ok(TaskInputs {
                inputs: row.try_get("inputs")?,
                answers: row.try_get("answers")?,
            })
        })
        .transpose()
    }

    /// Replaces a running task's untaken answers `old` with `new` (both JSON, None: none) if
    /// they are still `old`; whether they were (replicas give and take answers concurrently).
    #[instrument(skip_all, fields(task_id))]
    pub async fn swap_task_answers(
        &self,
        task_id: &str,
        old: Option<&str>,
        new: Option<&str>,
    ) -> Result<bool, StoreError> {
        let sql = format!(
            "UPDATE tasks SET answers = $3 \
             WHERE task_id = $1 AND COALESCE(answers, '') = $2 AND {RUNNING}"
        );
        let done = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(task_id)
            .bind(old.unwrap_or(""))
            .bind(new)
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Deletes the tasks that expired before `now`; their ids and agents.
    #[instrument(skip_all)]
    pub async fn expire_tasks(&self, now: f64) -> Result<Vec<(String, String)>, StoreError> {
        let rows = sqlx::query(
            "DELETE FROM tasks WHERE expires_at <= $1 RETURNING task_id, agent_id, status",
        )
        .bind(now)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| Ok((row.try_get("task_id")?, row.try_get("agent_id")?)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing::backends;

    fn task(id: &str, agent: &str, expires_at: f64) -> StoredTask {
        StoredTask {
            task_id: id.into(),
            agent_id: agent.into(),
            req_id: "r".into(),
            name: "s__t".into(),
            status: "working".into(),
            replica: "r-1".into(),
            ttl_ms: 1000,
            poll_interval_ms: 500,
            created_at: 1.0,
            updated_at: 1.0,
            expires_at,
            ..Default::default()
        }
    }

    #[tokio::test]
    async fn a_tasks_input_and_answers_are_swapped_by_one_replica_at_a_time() {
        for db in backends().await {
            let store = db.open().await;
            store.insert_task(&task("i", "alice", 100.0)).await.unwrap();
            let nothing = TaskInputs::default();
            assert_eq!(store.task_inputs("i").await.unwrap(), Some(nothing));
            store.set_task_inputs("i", Some("[1]")).await.unwrap();
            assert!(
                store
                    .swap_task_answers("i", None, Some("{\"k\":1}"))
                    .await
                    .unwrap()
            );
            // A second writer that read the old answers loses.
            assert!(
                !store
                    .swap_task_answers("i", None, Some("{}"))
                    .await
                    .unwrap()
            );
            let row = store.task_inputs("i").await.unwrap().unwrap();
            assert_eq!(row.inputs.as_deref(), Some("[1]"));
            assert_eq!(row.answers.as_deref(), Some("{\"k\":1}"));
            assert!(
                store
                    .swap_task_answers("i", row.answers.as_deref(), None)
                    .await
                    .unwrap()
            );
            // A finished task waits on nothing.
            let mut done = task("i", "alice", 100.0);
            done.status = "completed".into();
            assert!(store.finish_task(&done).await.unwrap());
            assert_eq!(store.task_inputs("i").await.unwrap(), None);
            store.set_task_inputs("i", Some("[2]")).await.unwrap();
            assert!(
                !store
                    .swap_task_answers("i", None, Some("{}"))
                    .await
                    .unwrap()
            );
        }
    }

    #[tokio::test]
    async fn a_tasks_trace_is_kept_through_its_updates() {
        for db in backends().await {
            let store = db.open().await;
            let trace =
                r#"{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}"#;
            let mut traced = task("t", "alice", 100.0);
            traced.trace = Some(trace.into());
            store.insert_task(&traced).await.unwrap();
            store.insert_task(&task("u", "alice", 100.0)).await.unwrap();
            traced.status_message = "queued".into();
            assert!(store.update_task(&traced).await.unwrap());
            let read = store.task("t", 1.0).await.unwrap().unwrap();
            assert_eq!(read.trace.as_deref(), Some(trace));
            assert_eq!(read.status_message, "queued");
            let running = store.running_tasks("r-1").await.unwrap();
            assert_eq!(running.len(), 2);
            let untraced = running.iter().find(|t| t.task_id == "u").unwrap();
            assert_eq!(untraced.trace, None);
        }
    }

    #[tokio::test]
    async fn a_finished_task_stays_finished_and_expired_ones_go() {
        for db in backends().await {
            let store = db.open().await;
            store.insert_task(&task("a", "alice", 100.0)).await.unwrap();
            store.insert_task(&task("b", "bob", 10.0)).await.unwrap();
            assert!(matches!(
                store.insert_task(&task("a", "alice", 100.0)).await,
                Err(StoreError::Conflict)
            ));
            let mut done = task("a", "alice", 100.0);
            done.status = "completed".into();
            done.result = Some("{}".into());
            assert!(store.finish_task(&done).await.unwrap());
            let mut cancelled = done.clone();
            cancelled.status = "cancelled".into();
            assert!(!store.finish_task(&cancelled).await.unwrap());
            assert!(!store.update_task(&task("a", "alice", 100.0)).await.unwrap());
            let stored = store.task("a", 5.0).await.unwrap().unwrap();
            assert_eq!(stored.status, "completed");
            assert_eq!(stored.result.as_deref(), Some("{}"));
            assert_eq!(store.running_tasks("r-1").await.unwrap().len(), 1);
            assert!(store.task("b", 11.0).await.unwrap().is_none());
            assert_eq!(store.tasks_of("alice", 5.0).await.unwrap().len(), 1);
            assert_eq!(store.running_task_count("alice").await.unwrap(), 0);
            assert_eq!(store.running_task_count("bob").await.unwrap(), 1);
            assert_eq!(
                store.task_results("alice", 5.0).await.unwrap(),
                vec![("a".to_owned(), 2)]
            );
            store.evict_task_result("a", "evicted").await.unwrap();
            assert!(store.task_results("alice", 5.0).await.unwrap().is_empty());
            for id in ["c", "d", "e"] {
                store.insert_task(&task(id, "alice", 100.0)).await.unwrap();
            }
            let first = store.tasks_page("alice", 5.0, None, 2).await.unwrap();
            let ids: Vec<_> = first.iter().map(|t| t.task_id.as_str()).collect();
            assert_eq!(ids, ["a", "c"]);
            let last = &first[1];
            let rest = store
                .tasks_page("alice", 5.0, Some((last.created_at, &last.task_id)), 2)
                .await
                .unwrap();
            let ids: Vec<_> = rest.iter().map(|t| t.task_id.as_str()).collect();
            assert_eq!(ids, ["d", "e"]);
            // Only r-2 is up: r-1's running tasks are its orphans, and only one replica takes
            // each. A replica that is not up takes none.
            let minute = std::time::Duration::from_secs(60);
            assert!(
                store
                    .orphaned_tasks("r-2", minute)
                    .await
                    .unwrap()
                    .is_empty()
            );
            store.replica_alive("r-2", minute, true).await.unwrap();
            // Up for less than a lease: it may just be back from an outage the others rode
            // out too, and takes nothing yet.
            assert!(
                store
                    .orphaned_tasks("r-2", minute)
                    .await
                    .unwrap()
                    .is_empty()
            );
            sqlx::query("UPDATE replicas SET joined_at = joined_at - 61 WHERE replica = 'r-2'")
                .execute(&store.pool)
                .await
                .unwrap();
            let orphans = store.orphaned_tasks("r-2", minute).await.unwrap();
            let mut ids: Vec<_> = orphans.iter().map(|t| t.task_id.as_str()).collect();
            ids.sort();
            assert_eq!(ids, ["b", "c", "d", "e"]);
            assert!(
                store
                    .orphaned_tasks("r-1", minute)
                    .await
                    .unwrap()
                    .is_empty()
            );
            assert!(store.move_task("c", "r-1", "r-2").await.unwrap());
            assert!(!store.move_task("c", "r-1", "r-3").await.unwrap());
            assert!(!store.move_task("a", "r-1", "r-2").await.unwrap());
            assert_eq!(store.running_tasks("r-2").await.unwrap().len(), 1);
            store.replica_gone("r-2").await.unwrap();
            store.replica_alive("r-1", minute, true).await.unwrap();
            sqlx::query("UPDATE replicas SET joined_at = joined_at - 61 WHERE replica = 'r-1'")
                .execute(&store.pool)
                .await
                .unwrap();
            let orphans = store.orphaned_tasks("r-1", minute).await.unwrap();
            let ids: Vec<_> = orphans.iter().map(|t| t.task_id.as_str()).collect();
            assert_eq!(ids, ["c"]);
            assert!(
                store
                    .orphaned_tasks("r-2", minute)
                    .await
                    .unwrap()
                    .is_empty()
            );
            // A replica whose row lapsed less than a lease ago (a store outage all rode out)
            // keeps its tasks; one lapsed longer ago loses them.
            store.replica_alive("r-2", minute, true).await.unwrap();
            sqlx::query("UPDATE replicas SET expires_at = expires_at - 90 WHERE replica = 'r-2'")
                .execute(&store.pool)
                .await
                .unwrap();
            assert!(
                store
                    .orphaned_tasks("r-1", minute)
                    .await
                    .unwrap()
                    .is_empty()
            );
            sqlx::query("UPDATE replicas SET expires_at = expires_at - 40 WHERE replica = 'r-2'")
                .execute(&store.pool)
                .await
                .unwrap();
            assert_eq!(store.orphaned_tasks("r-1", minute).await.unwrap().len(), 1);
            let gone = store.expire_tasks(11.0).await.unwrap();
            assert_eq!(gone, vec![("b".to_owned(), "bob".to_owned())]);
            assert!(store.task("b", 5.0).await.unwrap().is_none());
        }
    }
}
