//! The `audit` table: who registered, changed or removed which server or A2A agent, and when.
//! Details name what changed, never a secret value.

use serde::Serialize;
use sqlx::Row;
use utoipa::ToSchema;

use super::{Store, StoreError};

/// One change, as `GET /v1/audit` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct AuditEntry {
    /// Increasing; `before` of the next page.
    pub id: i64,
    /// When, in seconds since the epoch.
    pub at: f64,
    /// The agent (token `sub`) that made the change.
    pub actor: String,
    /// `server.register`, `server.update`, `server.unregister`, `agent.register`,
    /// `agent.refresh` or `agent.unregister`; a refusal (`tool.call.denied`, …); a hook's
    /// decision (`hook.deny`, `hook.modify`, `hook.failed`, `hook.allow`).
    pub action: String,
    /// The server or agent id.
    pub target: String,
    /// What changed (field names, a transport, a command or a redacted URL).
    pub detail: String,
}

impl Store {
    /// Records a change. A failure is logged, not returned: the change itself has happened.
    pub async fn record(&self, actor: &str, action: &str, target: &str, detail: &str) {
        let at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or_default();
        let inserted = sqlx::query(
            "INSERT INTO audit (at, actor, action, target, detail) VALUES ($1, $2, $3, $4, $5)",
        )
        .bind(at)
        .bind(actor)
        .bind(action)
        .bind(target)
        .bind(detail)
        .execute(&self.pool)
        .await;
        if let Err(error) = inserted {
            tracing::error!(%error, actor, action, target, "cannot write the audit log");
        }
    }

    /// Applies the audit log's retention: deletes the entries older than `before` (seconds
    /// since the epoch; none when `None`) and all but the newest `max_rows` (no bound when
    /// `None`). Returns how many were deleted.
    #[tracing::instrument(skip_all)]
    pub async fn prune_audit(
        &self,
        before: Option<f64>,
        max_rows: Option<u64>,
    ) -> Result<u64, StoreError> {
        let mut deleted = 0;
        if let Some(before) = before {
            deleted += sqlx::query("DELETE FROM audit WHERE at < $1")
                .bind(before)
                .execute(&self.pool)
                .await?
                .rows_affected();
        }
        if let Some(max_rows) = max_rows {
            // The id of the newest entry past the bound, and every one up to it (none when
            // there are fewer rows: the comparison with NULL holds for none).
            deleted += sqlx::query(
                "DELETE FROM audit WHERE id <= \
                 (SELECT id FROM audit ORDER BY id DESC LIMIT 1 OFFSET $1)",
            )
            .bind(i64::try_from(max_rows).unwrap_or(i64::MAX))
            .execute(&self.pool)
            .await?
            .rows_affected();
        }
        Ok(deleted)
    }

    /// The newest `limit` entries older than `before` (all when `None`), newest first.
    pub async fn audit(
        &self,
        before: Option<i64>,
        limit: u32,
    ) -> Result<Vec<AuditEntry>, StoreError> {
        let rows = sqlx::query(
            "SELECT id, at, actor, action, target, detail FROM audit \
             WHERE id < $1 ORDER BY id DESC LIMIT $2",
        )
        .bind(before.unwrap_or(i64::MAX))
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                Ok(AuditEntry {
                    id: row.try_get("id")?,
                    at: row.try_get("at")?,
                    actor: row.try_get("actor")?,
                    action: row.try_get("action")?,
                    target: row.try_get("target")?,
                    detail: row.try_get("detail")?,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::store::Store;
    use crate::store::testing::backends;

    #[tokio::test]
    async fn entries_come_newest_first_in_pages() {
        for db in backends().await {
            entries_come_newest_first_on(db.open().await).await;
        }
    }

    #[tokio::test]
    async fn retention_deletes_by_age_and_beyond_the_row_bound() {
        for db in backends().await {
            retention_on(db.open().await).await;
        }
    }

    async fn retention_on(store: Store) {
        for i in 0..10 {
            store
                .record("root", "server.authorize", &format!("s{i}"), "")
                .await;
        }
        // Nothing to do: every entry is newer and within the bound.
        let now = crate::a2e::now();
        assert_eq!(
            store.prune_audit(Some(now - 60.0), Some(10)).await.unwrap(),
            0
        );
        assert_eq!(store.prune_audit(None, Some(4)).await.unwrap(), 6);
        let kept = store.audit(None, 100).await.unwrap();
        let targets: Vec<&str> = kept.iter().map(|e| e.target.as_str()).collect();
        assert_eq!(targets, ["s9", "s8", "s7", "s6"], "the newest are kept");
        // By age: every entry is older than a second from now.
        assert_eq!(store.prune_audit(Some(now + 1.0), None).await.unwrap(), 4);
        assert!(store.audit(None, 100).await.unwrap().is_empty());
    }

    async fn entries_come_newest_first_on(store: Store) {
        for i in 0..5 {
            store
                .record("root", "server.register", &format!("s{i}"), "stdio")
                .await;
        }
        let first = store.audit(None, 3).await.unwrap();
        let targets: Vec<&str> = first.iter().map(|e| e.target.as_str()).collect();
        assert_eq!(targets, ["s4", "s3", "s2"]);
        let rest = store.audit(Some(first[2].id), 3).await.unwrap();
        let targets: Vec<&str> = rest.iter().map(|e| e.target.as_str()).collect();
        assert_eq!(targets, ["s1", "s0"]);
        assert_eq!(rest[0].actor, "root");
        // Seconds since the epoch, to well under a second (a 4-byte REAL would be off by minutes).
        let now = crate::a2e::now();
        assert!((rest[0].at - now).abs() < 5.0, "{} vs {now}", rest[0].at);
    }
}
