//! The `roots` table: the filesystem roots each agent exposes, in order.

use sqlx::Row;
use tracing::instrument;

use super::{Store, StoreError};
use crate::a2e::McpRoot;

impl Store {
    /// Replaces the agent's roots.
    #[instrument(skip_all, fields(agent_id))]
    pub async fn set_roots(&self, agent_id: &str, roots: &[McpRoot]) -> Result<(), StoreError> {
        let mut tx = self.write_tx().await?;
        sqlx::query("DELETE FROM roots WHERE agent_id = $1")
            .bind(agent_id)
            .execute(&mut *tx)
            .await?;
        for (position, root) in roots.iter().enumerate() {
            sqlx::query(
                "INSERT INTO roots (agent_id, position, uri, name) VALUES ($1, $2, $3, $4)",
            )
            .bind(agent_id)
            .bind(position as i64)
            .bind(&root.uri)
            .bind(&root.name)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The agent's roots, in the order it gave them.
    #[instrument(skip_all, fields(agent_id))]
    pub async fn roots(&self, agent_id: &str) -> Result<Vec<McpRoot>, StoreError> {
        let rows = sqlx::query("SELECT uri, name FROM roots WHERE agent_id = $1 ORDER BY position")
            .bind(agent_id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|row| {
                Ok(McpRoot {
                    uri: row.try_get("uri")?,
                    name: row.try_get("name")?,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::a2e::McpRoot;
    use crate::store::Store;
    use crate::store::testing::backends;

    #[tokio::test]
    async fn roots_are_replaced_whole_and_kept_in_order() {
        for db in backends().await {
            roots_are_replaced_whole_on(db.open().await).await;
        }
    }

    async fn roots_are_replaced_whole_on(store: Store) {
        let root = |uri: &str| McpRoot {
            uri: uri.into(),
            name: String::new(),
        };
        store
            .set_roots("alice", &[root("file:///b"), root("file:///a")])
            .await
            .unwrap();
        assert_eq!(
            store.roots("alice").await.unwrap(),
            [root("file:///b"), root("file:///a")]
        );
        store
            .set_roots("alice", &[root("file:///c")])
            .await
            .unwrap();
        assert_eq!(store.roots("alice").await.unwrap(), [root("file:///c")]);
        assert!(store.roots("bob").await.unwrap().is_empty());
    }
}
