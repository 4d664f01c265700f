//! The `subscriptions` table: which agent follows which resource URI of which server.

use tracing::instrument;

use super::{Store, StoreError};
use crate::a2e;

impl Store {
    /// Records a subscription; `false` when the agent already had it, `NotFound` when the server
    /// is gone.
    #[instrument(skip_all, fields(agent_id, server_id))]
    pub async fn insert_subscription(
        &self,
        agent_id: &str,
        server_id: &str,
        uri: &str,
    ) -> Result<bool, StoreError> {
        let done = sqlx::query(
            "INSERT INTO subscriptions (agent_id, server_id, uri, created_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT DO NOTHING",
        )
        .bind(agent_id)
        .bind(server_id)
        .bind(uri)
        .bind(a2e::now())
        .execute(&self.pool)
        .await
        .map_err(StoreError::from_write)?;
        Ok(done.rows_affected() == 1)
    }

    /// Removes a subscription; `NotFound` when the agent had none.
    #[instrument(skip_all, fields(agent_id, server_id))]
    pub async fn delete_subscription(
        &self,
        agent_id: &str,
        server_id: &str,
        uri: &str,
    ) -> Result<(), StoreError> {
        let done = sqlx::query(
            "DELETE FROM subscriptions WHERE agent_id = $1 AND server_id = $2 AND uri = $3",
        )
        .bind(agent_id)
        .bind(server_id)
        .bind(uri)
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    /// How many agents follow `uri` on `server_id`.
    #[instrument(skip_all, fields(server_id))]
    pub async fn subscriber_count(&self, server_id: &str, uri: &str) -> Result<i64, StoreError> {
        let count = sqlx::query_scalar(
            "SELECT COUNT(*) FROM subscriptions WHERE server_id = $1 AND uri = $2",
        )
        .bind(server_id)
        .bind(uri)
        .fetch_one(&self.pool)
        .await?;
        Ok(count)
    }

    /// The agents following `uri` on `server_id`.
    #[instrument(skip_all, fields(server_id))]
    pub async fn subscribers(&self, server_id: &str, uri: &str) -> Result<Vec<String>, StoreError> {
        let agents = sqlx::query_scalar(
            "SELECT agent_id FROM subscriptions WHERE server_id = $1 AND uri = $2 ORDER BY agent_id",
        )
        .bind(server_id)
        .bind(uri)
        .fetch_all(&self.pool)
        .await?;
        Ok(agents)
    }

    /// The URIs of `server_id` that at least one agent follows.
    #[instrument(skip_all, fields(server_id))]
    pub async fn subscribed_uris(&self, server_id: &str) -> Result<Vec<String>, StoreError> {
        let uris = sqlx::query_scalar(
            "SELECT DISTINCT uri FROM subscriptions WHERE server_id = $1 ORDER BY uri",
        )
        .bind(server_id)
        .fetch_all(&self.pool)
        .await?;
        Ok(uris)
    }

    /// The servers on which `agent_id` follows `uri`.
    #[instrument(skip_all, fields(agent_id))]
    pub async fn subscription_servers(
        &self,
        agent_id: &str,
        uri: &str,
    ) -> Result<Vec<String>, StoreError> {
        let servers = sqlx::query_scalar(
            "SELECT server_id FROM subscriptions WHERE agent_id = $1 AND uri = $2 ORDER BY server_id",
        )
        .bind(agent_id)
        .bind(uri)
        .fetch_all(&self.pool)
        .await?;
        Ok(servers)
    }
}

#[cfg(test)]
mod tests {
    use crate::a2e::McpServerConfig;
    use crate::store::testing::backends;
    use crate::store::{Store, StoreError, StoredServer};

    #[tokio::test]
    async fn subscriptions_are_per_agent_and_go_with_their_server() {
        for db in backends().await {
            subscriptions_are_per_agent_on(db.open().await).await;
        }
    }

    async fn subscriptions_are_per_agent_on(store: Store) {
        let config = McpServerConfig {
            server_id: "ev".into(),
            ..Default::default()
        };
        store
            .insert_server(&StoredServer {
                owner: "a".into(),
                config,
            })
            .await
            .unwrap();
        assert!(
            store
                .insert_subscription("alice", "ev", "demo://1")
                .await
                .unwrap()
        );
        assert!(
            !store
                .insert_subscription("alice", "ev", "demo://1")
                .await
                .unwrap()
        );
        assert!(
            store
                .insert_subscription("bob", "ev", "demo://1")
                .await
                .unwrap()
        );
        assert!(
            store
                .insert_subscription("bob", "ev", "demo://2")
                .await
                .unwrap()
        );
        assert!(matches!(
            store
                .insert_subscription("alice", "ghost", "demo://1")
                .await,
            Err(StoreError::NotFound)
        ));
        assert_eq!(store.subscriber_count("ev", "demo://1").await.unwrap(), 2);
        assert_eq!(
            store.subscribers("ev", "demo://1").await.unwrap(),
            ["alice", "bob"]
        );
        assert_eq!(
            store.subscribed_uris("ev").await.unwrap(),
            ["demo://1", "demo://2"]
        );
        assert_eq!(
            store
                .subscription_servers("alice", "demo://1")
                .await
                .unwrap(),
            ["ev"]
        );
        store
            .delete_subscription("alice", "ev", "demo://1")
            .await
            .unwrap();
        assert!(matches!(
            store.delete_subscription("alice", "ev", "demo://1").await,
            Err(StoreError::NotFound)
        ));
        store.delete_server("ev").await.unwrap();
        assert!(store.subscribed_uris("ev").await.unwrap().is_empty());
    }
}
