//! The `approvals` table: calls held for a person's approval, and the one conditional move of
//! each out of `held` (approved, denied, expired) that decides it; and `agent_roles`, the roles
//! of the agents that opened an event stream, to find the approvers to tell.

use sqlx::Row;
use sqlx::any::AnyRow;
use tracing::instrument;

use super::{Store, StoreError};

/// A held call as stored.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StoredApproval {
    pub task_id: String,
    /// The calling agent.
    pub caller: String,
    /// JSON of the caller's identity (`{admin, roles, claims}`): the call is made as it.
    pub identity: String,
    pub tool: String,
    pub toolset: String,
    /// JSON object of the arguments.
    pub arguments: String,
    pub args_sha256: String,
    pub timeout: Option<f64>,
    pub policy: String,
    pub policy_version: String,
    /// JSON of the policy's `approvers`.
    pub approvers: String,
    /// `held`, `approved`, `denied` or `expired`.
    pub state: String,
    pub decided_by: String,
    pub created_at: f64,
    pub expires_at: f64,
}

/// What a decision does to the task of its call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decided<'a> {
    /// Approved: the task is `working` on `replica`, which makes the call.
    Approved { replica: &'a str },
    /// Denied: the task ends `failed` with `forbidden` and `message`.
    Denied { message: &'a str },
}

const COLUMNS: &str = "task_id, caller, identity, tool, toolset, arguments, args_sha256, timeout, \
    policy, policy_version, approvers, state, decided_by, created_at, expires_at";

impl StoredApproval {
    fn from_row(row: &AnyRow) -> Result<Self, StoreError> {
        Ok(Self {
            task_id: row.try_get("task_id")?,
            caller: row.try_get("caller")?,
            identity: row.try_get("identity")?,
            tool: row.try_get("tool")?,
            toolset: row.try_get("toolset")?,
            arguments: row.try_get("arguments")?,
            args_sha256: row.try_get("args_sha256")?,
            timeout: row.try_get("timeout")?,
            policy: row.try_get("policy")?,
            policy_version: row.try_get("policy_version")?,
            approvers: row.try_get("approvers")?,
            state: row.try_get("state")?,
            decided_by: row.try_get("decided_by")?,
            created_at: row.try_get("created_at")?,
            expires_at: row.try_get("expires_at")?,
        })
    }
}

impl Store {
    /// Stores a held call with its task (both or neither).
    #[instrument(skip_all, fields(task_id = %approval.task_id))]
    pub async fn insert_held(
        &self,
        task: &super::StoredTask,
        approval: &StoredApproval,
    ) -> Result<(), StoreError> {
        let mut tx = self.write_tx().await?;
        Self::insert_task_in(&mut *tx, task).await?;
        let sql = format!(
            "INSERT INTO approvals ({COLUMNS}) VALUES \
             ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)"
        );
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(&approval.task_id)
            .bind(&approval.caller)
            .bind(&approval.identity)
            .bind(&approval.tool)
            .bind(&approval.toolset)
            .bind(&approval.arguments)
            .bind(&approval.args_sha256)
            .bind(approval.timeout)
            .bind(&approval.policy)
            .bind(&approval.policy_version)
            .bind(&approval.approvers)
            .bind(&approval.state)
            .bind(&approval.decided_by)
            .bind(approval.created_at)
            .bind(approval.expires_at)
            .execute(&mut *tx)
            .await
            .map_err(StoreError::from_write)?;
        tx.commit().await?;
        Ok(())
    }

    /// The held call of task `task_id`, whatever its state.
    #[instrument(skip_all, fields(task_id))]
    pub async fn approval(&self, task_id: &str) -> Result<Option<StoredApproval>, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM approvals WHERE task_id = $1");
        let row = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(task_id)
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(StoredApproval::from_row).transpose()
    }

    /// The calls still waiting for a decision at `now` (their task not cancelled), oldest
    /// first.
    #[instrument(skip_all)]
    pub async fn pending_approvals(&self, now: f64) -> Result<Vec<StoredApproval>, StoreError> {
        let columns = COLUMNS
            .split(", ")
            .map(|c| format!("a.{c}"))
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!(
            "SELECT {columns} FROM approvals a JOIN tasks t ON t.task_id = a.task_id \
             WHERE a.state = 'held' AND a.expires_at > $1 AND t.status = 'input_required' \
             ORDER BY a.created_at, a.task_id"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
            .bind(now)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(StoredApproval::from_row).collect()
    }

    /// Decides a held call: moves it out of `held` only if it is still held, not expired at
    /// `now`, and its arguments hash to `args_sha256`, and moves its task on (running on a
    /// replica, or failed) only if it still waits; both or neither. Whether this decision won:
    /// of two decisions, on any replicas, one at most does.
    #[instrument(skip_all, fields(task_id))]
    pub async fn decide_approval(
        &self,
        task_id: &str,
        args_sha256: &str,
        decided_by: &str,
        decided: Decided<'_>,
        now: f64,
    ) -> Result<bool, StoreError> {
        // On disk before the call it allows runs: a decision lost to a power loss could be
        // made again, and the call run twice.
        let mut durable = self.durable().await?;
        let won = decide(&mut durable, task_id, args_sha256, decided_by, decided, now).await;
        durable.done().await;
        won
    }

    /// Moves the held calls whose time ran out by `now` to `expired`; their task ids (each
    /// answered to one replica only).
    #[instrument(skip_all)]
    pub async fn expire_approvals(&self, now: f64) -> Result<Vec<String>, StoreError> {
        let rows = sqlx::query(
            "UPDATE approvals SET state = 'expired' WHERE state = 'held' AND expires_at <= $1 \
             RETURNING task_id",
        )
        .bind(now)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(|row| Ok(row.try_get("task_id")?)).collect()
    }

    /// Deletes the held calls whose task is gone (expired and deleted).
    #[instrument(skip_all)]
    pub async fn forget_approvals(&self) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM approvals WHERE task_id NOT IN (SELECT task_id FROM tasks)")
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Notes an agent's roles (JSON array) as its token gave them when it opened a stream.
    #[instrument(skip_all, fields(agent_id))]
    pub async fn note_agent_roles(
        &self,
        agent_id: &str,
        roles: &str,
        now: f64,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO agent_roles (agent_id, roles, seen_at) VALUES ($1, $2, $3) \
             ON CONFLICT (agent_id) DO UPDATE SET roles = excluded.roles, seen_at = excluded.seen_at",
        )
        .bind(agent_id)
        .bind(roles)
        .bind(now)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Every agent noted, with its roles (JSON array).
    #[instrument(skip_all)]
    pub async fn agent_roles(&self) -> Result<Vec<(String, String)>, StoreError> {
        let rows = sqlx::query("SELECT agent_id, roles FROM agent_roles ORDER BY agent_id")
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|row| Ok((row.try_get("agent_id")?, row.try_get("roles")?)))
            .collect()
    }
}

/// [`Store::decide_approval`]'s transaction, on `durable`.
async fn decide(
    durable: &mut super::Durable,
    task_id: &str,
    args_sha256: &str,
    decided_by: &str,
    decided: Decided<'_>,
    now: f64,
) -> Result<bool, StoreError> {
    let mut tx = durable.write_tx().await?;
    let state = match decided {
        Decided::Approved { .. } => "approved",
        Decided::Denied { .. } => "denied",
    };
    let moved = sqlx::query(
        "UPDATE approvals SET state = $3, decided_by = $4 \
         WHERE task_id = $1 AND state = 'held' AND args_sha256 = $2 AND expires_at > $5",
    )
    .bind(task_id)
    .bind(args_sha256)
    .bind(state)
    .bind(decided_by)
    .bind(now)
    .execute(&mut *tx)
    .await?;
    if moved.rows_affected() != 1 {
        tx.rollback().await?;
        return Ok(false);
    }
    let task = match decided {
        Decided::Approved { replica } => sqlx::query(
            "UPDATE tasks SET status = 'working', status_message = '', replica = $2, \
             updated_at = $3 WHERE task_id = $1 AND status = 'input_required' AND replica = ''",
        )
        .bind(task_id)
        .bind(replica)
        .bind(now),
        Decided::Denied { message } => sqlx::query(
            "UPDATE tasks SET status = 'failed', status_message = $2, \
             error_code = 'forbidden', updated_at = $3 \
             WHERE task_id = $1 AND status = 'input_required' AND replica = ''",
        )
        .bind(task_id)
        .bind(message)
        .bind(now),
    };
    if task.execute(&mut *tx).await?.rows_affected() != 1 {
        tx.rollback().await?;
        return Ok(false);
    }
    tx.commit().await?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StoredTask;
    use crate::store::testing::backends;

    fn held(id: &str, expires_at: f64) -> (StoredTask, StoredApproval) {
        let task = StoredTask {
            task_id: id.into(),
            agent_id: "intern".into(),
            req_id: "r".into(),
            name: "ev__get-sum".into(),
            status: "input_required".into(),
            ttl_ms: 1000,
            created_at: 1.0,
            updated_at: 1.0,
            expires_at: 1000.0,
            ..Default::default()
        };
        let approval = StoredApproval {
            task_id: id.into(),
            caller: "intern".into(),
            identity: "{}".into(),
            tool: "ev__get-sum".into(),
            arguments: "{}".into(),
            args_sha256: "abc".into(),
            policy: "p".into(),
            approvers: "{}".into(),
            state: "held".into(),
            created_at: 1.0,
            expires_at,
            ..Default::default()
        };
        (task, approval)
    }

    #[tokio::test]
    async fn one_decision_wins_and_only_on_the_held_arguments_in_time() {
        for db in backends().await {
            let store = db.open().await;
            let (task, approval) = held("a", 100.0);
            store.insert_held(&task, &approval).await.unwrap();
            let (task, approval) = held("b", 100.0);
            store.insert_held(&task, &approval).await.unwrap();
            assert_eq!(store.pending_approvals(5.0).await.unwrap().len(), 2);
            let approve = Decided::Approved { replica: "r-1" };
            assert!(
                !store
                    .decide_approval("a", "other", "lead", approve, 5.0)
                    .await
                    .unwrap()
            );
            assert!(
                !store
                    .decide_approval("a", "abc", "lead", approve, 200.0)
                    .await
                    .unwrap()
            );
            assert!(
                store
                    .decide_approval("a", "abc", "lead", approve, 5.0)
                    .await
                    .unwrap()
            );
            assert!(
                !store
                    .decide_approval("a", "abc", "lead", approve, 5.0)
                    .await
                    .unwrap()
            );
            let deny = Decided::Denied { message: "no" };
            assert!(
                !store
                    .decide_approval("a", "abc", "lead", deny, 5.0)
                    .await
                    .unwrap()
            );
            let running = store.task("a", 5.0).await.unwrap().unwrap();
            assert_eq!(
                (running.status.as_str(), running.replica.as_str()),
                ("working", "r-1")
            );
            assert_eq!(
                store.approval("a").await.unwrap().unwrap().state,
                "approved"
            );
            // A cancelled task is decided by nobody.
            let mut cancelled = store.task("b", 5.0).await.unwrap().unwrap();
            cancelled.status = "cancelled".into();
            assert!(store.finish_task(&cancelled).await.unwrap());
            assert!(store.pending_approvals(5.0).await.unwrap().is_empty());
            assert!(
                !store
                    .decide_approval("b", "abc", "lead", approve, 5.0)
                    .await
                    .unwrap()
            );
            assert_eq!(store.approval("b").await.unwrap().unwrap().state, "held");
            assert_eq!(store.expire_approvals(200.0).await.unwrap(), ["b"]);
            assert!(store.expire_approvals(200.0).await.unwrap().is_empty());
            store
                .note_agent_roles("lead", "[\"lead\"]", 1.0)
                .await
                .unwrap();
            store
                .note_agent_roles("lead", "[\"lead\",\"x\"]", 2.0)
                .await
                .unwrap();
            assert_eq!(
                store.agent_roles().await.unwrap(),
                [("lead".to_owned(), "[\"lead\",\"x\"]".to_owned())]
            );
        }
    }
}
