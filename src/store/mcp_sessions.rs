//! The `mcp_sessions` table: the 2025-11-25 sessions of `/mcp` that replicas share, so that any
//! replica serves any request of a session (see `mcp_server/shared.rs`). A session is live while
//! it has been used within the idle timeout it is given, on the database's clock.

use std::time::Duration;

use sqlx::Row;
use tracing::instrument;

use super::{Store, StoreError};

/// A live shared session as stored.
#[derive(Debug, Clone)]
pub struct SharedSession {
    /// The agent that opened it; `None` only until its opener's answer has gone out.
    pub agent_id: Option<String>,
    /// rmcp's `SessionState` (the client's initialize parameters) as JSON.
    pub state: String,
    /// The URIs it subscribed to.
    pub uris: Vec<String>,
    /// The lowest log level it asked for.
    pub log_level: Option<String>,
    /// Seconds since it was last marked used.
    pub idle_secs: f64,
    /// The replica that holds its GET stream, once one has.
    pub stream_replica: Option<String>,
}

/// What a live session asked to be sent.
#[derive(Debug, Clone)]
pub struct SessionInterests {
    pub session_id: String,
    pub uris: Vec<String>,
    pub log_level: Option<String>,
}

impl Store {
    /// Records session `id` with rmcp's state for it (again: the same state, kept).
    #[instrument(skip_all)]
    pub async fn insert_mcp_session(&self, id: &str, state: &str) -> Result<(), StoreError> {
        let now = self.backend.now();
        let insert = format!(
            "INSERT INTO mcp_sessions (session_id, state, created_at, used_at) \
             VALUES ($1, $2, {now}, {now}) \
             ON CONFLICT (session_id) DO UPDATE SET state = excluded.state, used_at = {now}"
        );
        sqlx::query(sqlx::AssertSqlSafe(insert))
            .bind(id)
            .bind(state)
            .execute(&self.pool)
            .await
            .map_err(StoreError::from_write)?;
        Ok(())
    }

    /// Names the agent that opened session `id`.
    #[instrument(skip_all, fields(agent_id))]
    pub async fn set_mcp_session_agent(&self, id: &str, agent_id: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE mcp_sessions SET agent_id = $2 WHERE session_id = $1")
            .bind(id)
            .bind(agent_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Session `id`, when it has been used within `idle`.
    #[instrument(skip_all)]
    pub async fn mcp_session(
        &self,
        id: &str,
        idle: Duration,
    ) -> Result<Option<SharedSession>, StoreError> {
        let now = self.backend.now();
        let select = format!(
            "SELECT agent_id, state, uris, log_level, stream_replica, {now} - used_at AS idle_secs \
             FROM mcp_sessions WHERE session_id = $1 AND used_at >= {now} - $2"
        );
        let row = sqlx::query(sqlx::AssertSqlSafe(select))
            .bind(id)
            .bind(idle.as_secs_f64())
            .fetch_optional(&self.pool)
            .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let uris: String = row.try_get("uris")?;
        Ok(Some(SharedSession {
            agent_id: row.try_get("agent_id")?,
            state: row.try_get("state")?,
            uris: serde_json::from_str(&uris).map_err(|e| StoreError::Corrupt(e.to_string()))?,
            log_level: row.try_get("log_level")?,
            idle_secs: row.try_get("idle_secs")?,
            stream_replica: row.try_get("stream_replica")?,
        }))
    }

    /// Names the replica that holds session `id`'s GET stream now.
    #[instrument(skip_all, fields(replica))]
    pub async fn set_mcp_session_stream(&self, id: &str, replica: &str) -> Result<(), StoreError> {
        sqlx::query("UPDATE mcp_sessions SET stream_replica = $2 WHERE session_id = $1")
            .bind(id)
            .bind(replica)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Marks session `id` used now.
    #[instrument(skip_all)]
    pub async fn touch_mcp_session(&self, id: &str) -> Result<(), StoreError> {
        let now = self.backend.now();
        let touch = format!("UPDATE mcp_sessions SET used_at = {now} WHERE session_id = $1");
        sqlx::query(sqlx::AssertSqlSafe(touch))
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Ends session `id`.
    #[instrument(skip_all)]
    pub async fn delete_mcp_session(&self, id: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM mcp_sessions WHERE session_id = $1")
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// How many sessions `agent_id` has that were used within `idle`; the older ones are
    /// removed on the way.
    #[instrument(skip_all, fields(agent_id))]
    pub async fn count_mcp_sessions(
        &self,
        agent_id: &str,
        idle: Duration,
    ) -> Result<usize, StoreError> {
        let now = self.backend.now();
        let prune = format!("DELETE FROM mcp_sessions WHERE used_at < {now} - $1");
        sqlx::query(sqlx::AssertSqlSafe(prune))
            .bind(idle.as_secs_f64())
            .execute(&self.pool)
            .await?;
        let count: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM mcp_sessions WHERE agent_id = $1")
                .bind(agent_id)
                .fetch_one(&self.pool)
                .await?;
        Ok(usize::try_from(count).unwrap_or_default())
    }

    /// Sets what session `id` asked to be sent: the URIs it follows and its lowest log level.
    #[instrument(skip_all)]
    pub async fn set_mcp_session_interests(
        &self,
        id: &str,
        uris: &[String],
        log_level: Option<&str>,
    ) -> Result<(), StoreError> {
        let uris = serde_json::to_string(uris).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        sqlx::query("UPDATE mcp_sessions SET uris = $2, log_level = $3 WHERE session_id = $1")
            .bind(id)
            .bind(uris)
            .bind(log_level)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The URIs and log level of every live session that asked for either, by session id.
    #[instrument(skip_all)]
    pub async fn mcp_session_interests(
        &self,
        idle: Duration,
    ) -> Result<Vec<SessionInterests>, StoreError> {
        let now = self.backend.now();
        let select = format!(
            "SELECT session_id, uris, log_level FROM mcp_sessions \
             WHERE (uris <> '[]' OR log_level IS NOT NULL) AND used_at >= {now} - $1"
        );
        let rows = sqlx::query(sqlx::AssertSqlSafe(select))
            .bind(idle.as_secs_f64())
            .fetch_all(&self.pool)
            .await?;
        rows.into_iter()
            .map(|row| {
                let uris: String = row.try_get("uris")?;
                let uris =
                    serde_json::from_str(&uris).map_err(|e| StoreError::Corrupt(e.to_string()))?;
                Ok(SessionInterests {
                    session_id: row.try_get("session_id")?,
                    uris,
                    log_level: row.try_get("log_level")?,
                })
            })
            .collect()
    }
}
