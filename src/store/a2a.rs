//! The `a2a_agents` table: registered A2A agents with their last fetched card.

use std::collections::BTreeMap;

use serde_json::Value;
use sqlx::AnyConnection;
use sqlx::Row;
use tracing::instrument;

use super::{Store, StoreError, sealed};
use crate::a2e;

/// A registered A2A agent as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredAgent {
    pub agent_id: String,
    pub owner: String,
    pub url: String,
    pub headers: BTreeMap<String, String>,
    pub card: Value,
}

fn json(value: &impl serde::Serialize) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|e| StoreError::Corrupt(e.to_string()))
}

impl Store {
    #[instrument(skip_all, fields(agent_id = %agent.agent_id))]
    pub async fn insert_agent(&self, agent: &StoredAgent) -> Result<(), StoreError> {
        let now = a2e::now();
        sqlx::query(
            "INSERT INTO a2a_agents (agent_id, owner, url, headers, card, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $6)",
        )
        .bind(&agent.agent_id)
        .bind(&agent.owner)
        .bind(&agent.url)
        .bind(json(&sealed::seal_values(self.sealer(), &agent.headers))?)
        .bind(json(&agent.card)?)
        .bind(now)
        .execute(&self.pool)
        .await
        .map_err(StoreError::from_write)?;
        Ok(())
    }

    #[instrument(skip_all, fields(agent_id))]
    pub async fn update_agent_card(&self, agent_id: &str, card: &Value) -> Result<(), StoreError> {
        let done =
            sqlx::query("UPDATE a2a_agents SET card = $1, updated_at = $2 WHERE agent_id = $3")
                .bind(json(card)?)
                .bind(a2e::now())
                .bind(agent_id)
                .execute(&self.pool)
                .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    #[instrument(skip_all, fields(agent_id))]
    pub async fn delete_agent(&self, agent_id: &str) -> Result<(), StoreError> {
        let done = sqlx::query("DELETE FROM a2a_agents WHERE agent_id = $1")
            .bind(agent_id)
            .execute(&self.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    /// Rewrites an agent's headers (sealed when a key is configured).
    async fn write_agent_headers(
        &self,
        conn: &mut AnyConnection,
        agent_id: &str,
        headers: &BTreeMap<String, String>,
    ) -> Result<(), StoreError> {
        sqlx::query("UPDATE a2a_agents SET headers = $1 WHERE agent_id = $2")
            .bind(json(&sealed::seal_values(self.sealer(), headers))?)
            .bind(agent_id)
            .execute(&mut *conn)
            .await?;
        Ok(())
    }

    /// Seals the header values of the agents that still hold a plain one; how many did. Headers
    /// that cannot be opened are left as they are.
    pub(super) async fn seal_plain_agents(
        &self,
        conn: &mut AnyConnection,
    ) -> Result<usize, StoreError> {
        let rows: Vec<(String, String)> =
            sqlx::query_as("SELECT agent_id, headers FROM a2a_agents")
                .fetch_all(&mut *conn)
                .await?;
        let mut sealed_now = 0;
        for (agent_id, stored) in rows {
            let Ok(headers) = serde_json::from_str::<BTreeMap<String, String>>(&stored) else {
                continue;
            };
            if !sealed::any_plain(headers.values()) {
                continue;
            }
            if let Ok(opened) = sealed::open_values(self.sealer(), &headers) {
                self.write_agent_headers(conn, &agent_id, &opened).await?;
                sealed_now += 1;
            }
        }
        Ok(sealed_now)
    }

    /// Every registered agent; a row that no longer parses is logged and skipped.
    #[instrument(skip_all)]
    pub async fn list_agents(&self) -> Result<Vec<StoredAgent>, StoreError> {
        let rows = sqlx::query(
            "SELECT agent_id, owner, url, headers, card FROM a2a_agents ORDER BY agent_id",
        )
        .fetch_all(&self.pool)
        .await?;
        let mut agents = Vec::with_capacity(rows.len());
        for row in &rows {
            let agent_id: String = row.try_get("agent_id")?;
            let headers: String = row.try_get("headers")?;
            let card: String = row.try_get("card")?;
            let headers = serde_json::from_str(&headers)
                .map_err(|e| e.to_string())
                .and_then(|h| sealed::open_values(self.sealer(), &h).map_err(|e| e.to_string()));
            match (headers, serde_json::from_str(&card)) {
                (Ok(headers), Ok(card)) => agents.push(StoredAgent {
                    agent_id,
                    owner: row.try_get("owner")?,
                    url: row.try_get("url")?,
                    headers,
                    card,
                }),
                (Err(error), _) => {
                    tracing::error!(%agent_id, %error, "stored agent unusable; skipped")
                }
                _ => tracing::error!(%agent_id, "stored agent does not parse; skipped"),
            }
        }
        Ok(agents)
    }
}

/// What a caller can own at an A2A agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owned {
    Task,
    Context,
}

impl Owned {
    fn as_str(self) -> &'static str {
        match self {
            Owned::Task => "task",
            Owned::Context => "context",
        }
    }
}

impl Store {
    /// Records that `caller` created task or context `id` at `agent_id`; a first record stays.
    #[instrument(skip_all, fields(agent_id))]
    pub async fn insert_a2a_owned(
        &self,
        agent_id: &str,
        kind: Owned,
        id: &str,
        caller: &str,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO a2a_owned (agent_id, kind, id, caller, created_at) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT DO NOTHING",
        )
        .bind(agent_id)
        .bind(kind.as_str())
        .bind(id)
        .bind(caller)
        .bind(a2e::now())
        .execute(&self.pool)
        .await
        .map_err(StoreError::from_write)?;
        Ok(())
    }

    /// Who created task or context `id` at `agent_id`, when the bridge knows.
    #[instrument(skip_all, fields(agent_id))]
    pub async fn a2a_owner(
        &self,
        agent_id: &str,
        kind: Owned,
        id: &str,
    ) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT caller FROM a2a_owned WHERE agent_id = $1 AND kind = $2 AND id = $3",
        )
        .bind(agent_id)
        .bind(kind.as_str())
        .bind(id)
        .fetch_optional(&self.pool)
        .await?)
    }
}
