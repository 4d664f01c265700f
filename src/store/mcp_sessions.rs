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

/// What claiming a session for the agent that opened it came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionClaim {
    /// The session is the agent's.
    Claimed,
    /// The agent has its cap of sessions already.
    Capped,
    /// The session is not in the store (rmcp could not record it, or the store failed).
    Unrecorded,
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

    /// Names the agent that opened session `id`, unless `agent_id` already has `cap` live
    /// sessions (used within `idle`; 0: no cap), or the session is not in the store. Sessions unused for
    /// longer than `idle` are removed on the way, whether or not there is a cap. The count and
    /// the naming are one step: concurrent opens by one agent, on any replica, are taken one at
    /// a time (PostgreSQL: a transaction lock on the agent; SQLite writes one at a time).
    #[instrument(skip_all, fields(agent_id))]
    pub async fn claim_mcp_session(
        &self,
        id: &str,
        agent_id: &str,
        cap: usize,
        idle: Duration,
    ) -> Result<SessionClaim, StoreError> {
        let now = self.backend.now();
        let mut tx = self.write_tx().await?;
        if self.backend == super::Backend::Postgres {
            sqlx::query("SELECT pg_advisory_xact_lock(hashtext('mcp_sessions:' || $1))")
                .bind(agent_id)
                .execute(&mut *tx)
                .await?;
        }
        let prune = format!("DELETE FROM mcp_sessions WHERE used_at < {now} - $1");
        sqlx::query(sqlx::AssertSqlSafe(prune))
            .bind(idle.as_secs_f64())
            .execute(&mut *tx)
            .await?;
        let claim = format!(
            "UPDATE mcp_sessions SET agent_id = $2, used_at = {now} WHERE session_id = $1 \
             AND ($3 = 0 OR (SELECT COUNT(*) FROM mcp_sessions \
                 WHERE agent_id = $2 AND session_id <> $1) < $3)"
        );
        let claimed = sqlx::query(sqlx::AssertSqlSafe(claim))
            .bind(id)
            .bind(agent_id)
            .bind(i64::try_from(cap).unwrap_or(i64::MAX))
            .execute(&mut *tx)
            .await
            .map_err(StoreError::from_write)?
            .rows_affected()
            == 1;
        let claim = match claimed {
            true => SessionClaim::Claimed,
            false => {
                let exists = sqlx::query("SELECT 1 FROM mcp_sessions WHERE session_id = $1")
                    .bind(id)
                    .fetch_optional(&mut *tx)
                    .await?
                    .is_some();
                match exists {
                    true => SessionClaim::Capped,
                    false => SessionClaim::Unrecorded,
                }
            }
        };
        tx.commit().await?;
        Ok(claim)
    }

    /// Forgets that `replica` holds session `id`'s GET stream (it has ended there).
    #[instrument(skip_all, fields(replica))]
    pub async fn clear_mcp_session_stream(
        &self,
        id: &str,
        replica: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE mcp_sessions SET stream_replica = NULL \
             WHERE session_id = $1 AND stream_replica = $2",
        )
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing::backends;

    const IDLE: Duration = Duration::from_secs(60);

    #[tokio::test]
    async fn racing_opens_never_pass_the_cap() {
        for db in backends().await {
            let store = db.open().await;
            for i in 0..8 {
                store
                    .insert_mcp_session(&format!("s{i}"), "{}")
                    .await
                    .unwrap();
            }
            let claims = (0..8).map(|i| {
                let store = store.clone();
                tokio::spawn(async move {
                    store
                        .claim_mcp_session(&format!("s{i}"), "alice", 3, IDLE)
                        .await
                        .unwrap()
                })
            });
            let claims: Vec<SessionClaim> = futures::future::join_all(claims)
                .await
                .into_iter()
                .map(|claim| claim.unwrap())
                .collect();
            let won: Vec<usize> = (0..8)
                .filter(|i| claims[*i] == SessionClaim::Claimed)
                .collect();
            assert_eq!(won.len(), 3, "{claims:?}");
            assert!(
                claims
                    .iter()
                    .all(|c| matches!(c, SessionClaim::Claimed | SessionClaim::Capped)),
                "{claims:?}"
            );
            assert_eq!(store.count_mcp_sessions("alice", IDLE).await.unwrap(), 3);
            // Claiming one it already has is no new session, at the cap.
            let again = store
                .claim_mcp_session(&format!("s{}", won[0]), "alice", 3, IDLE)
                .await
                .unwrap();
            assert_eq!(again, SessionClaim::Claimed);
            // One the store does not have (rmcp could not record it) is told apart.
            let missing = store
                .claim_mcp_session("never-stored", "bob", 3, IDLE)
                .await
                .unwrap();
            assert_eq!(missing, SessionClaim::Unrecorded);
        }
    }

    #[tokio::test]
    async fn an_open_without_a_cap_removes_expired_sessions() {
        for db in backends().await {
            let store = db.open().await;
            store.insert_mcp_session("old", "{}").await.unwrap();
            sqlx::query("UPDATE mcp_sessions SET used_at = used_at - 1000")
                .execute(&store.pool)
                .await
                .unwrap();
            store.insert_mcp_session("new", "{}").await.unwrap();
            assert_eq!(
                store
                    .claim_mcp_session("new", "bob", 0, IDLE)
                    .await
                    .unwrap(),
                SessionClaim::Claimed
            );
            assert!(
                store
                    .mcp_session("old", Duration::from_secs(1 << 30))
                    .await
                    .unwrap()
                    .is_none()
            );
            // A session that stops listening on its replica forgets it, not another's.
            store.set_mcp_session_stream("new", "r1").await.unwrap();
            store.clear_mcp_session_stream("new", "r2").await.unwrap();
            let kept = store.mcp_session("new", IDLE).await.unwrap().unwrap();
            assert_eq!(kept.stream_replica.as_deref(), Some("r1"));
            store.clear_mcp_session_stream("new", "r1").await.unwrap();
            let cleared = store.mcp_session("new", IDLE).await.unwrap().unwrap();
            assert_eq!(cleared.stream_replica, None);
        }
    }
}
