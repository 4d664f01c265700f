//! The `oauth_grants` table: what the bridge holds to reach an OAuth-protected server, the shared
//! grant (agent `""`) or one per agent. The client registration and the credentials are opaque
//! JSON the upstream layer writes; both are sealed at rest, and neither is ever logged.

use sqlx::AnyConnection;
use sqlx::Row;
use tracing::instrument;

use super::{Store, StoreError, sealed};
use crate::a2e;

/// One server's grant, for one agent (`""`: shared by every caller), its values opened.
#[derive(Clone, PartialEq, Eq)]
pub struct StoredOAuthGrant {
    pub agent: String,
    /// The OAuth client registration (JSON), when there is one.
    pub client: Option<String>,
    /// The credentials with the tokens (JSON), once authorized.
    pub credentials: Option<String>,
}

/// Says what is held, never what it is.
impl std::fmt::Debug for StoredOAuthGrant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let held = |v: &Option<String>| v.as_ref().map(|_| a2e::REDACTED);
        f.debug_struct("StoredOAuthGrant")
            .field("agent", &self.agent)
            .field("client", &held(&self.client))
            .field("credentials", &held(&self.credentials))
            .finish()
    }
}

/// Which column a save writes.
#[derive(Clone, Copy)]
enum Part {
    Client,
    Credentials,
}

impl Store {
    /// The grant `agent` (`""` for the shared one) holds for `server_id`, if any.
    #[instrument(skip_all, fields(server_id = %server_id, agent = %agent))]
    pub async fn oauth_grant(
        &self,
        server_id: &str,
        agent: &str,
    ) -> Result<Option<StoredOAuthGrant>, StoreError> {
        let row = sqlx::query(
            "SELECT agent, client, credentials FROM oauth_grants WHERE server_id = $1 AND agent = $2",
        )
        .bind(server_id)
        .bind(agent)
        .fetch_optional(&self.pool)
        .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let open = |column: &str| -> Result<Option<String>, StoreError> {
            let stored: Option<String> = row.try_get(column)?;
            sealed::open_option(self.sealer(), stored.as_deref())
                .map_err(|e| StoreError::Corrupt(format!("oauth grant {column}: {e}")))
        };
        Ok(Some(StoredOAuthGrant {
            agent: row.try_get("agent")?,
            client: open("client")?,
            credentials: open("credentials")?,
        }))
    }

    /// Stores (or with `None` clears) the client registration of `agent`'s grant for
    /// `server_id`; `NotFound` when the server is not registered.
    #[instrument(skip_all, fields(server_id = %server_id, agent = %agent))]
    pub async fn save_oauth_client(
        &self,
        server_id: &str,
        agent: &str,
        client_json: Option<&str>,
    ) -> Result<(), StoreError> {
        self.save_oauth(server_id, agent, Part::Client, client_json)
            .await
    }

    /// Stores (or with `None` clears) the credentials of `agent`'s grant for `server_id`;
    /// `NotFound` when the server is not registered.
    #[instrument(skip_all, fields(server_id = %server_id, agent = %agent))]
    pub async fn save_oauth_credentials(
        &self,
        server_id: &str,
        agent: &str,
        credentials_json: Option<&str>,
    ) -> Result<(), StoreError> {
        self.save_oauth(server_id, agent, Part::Credentials, credentials_json)
            .await
    }

    /// Upserts one part of a grant, sealed; a grant left holding nothing is removed.
    async fn save_oauth(
        &self,
        server_id: &str,
        agent: &str,
        part: Part,
        value: Option<&str>,
    ) -> Result<(), StoreError> {
        let mut tx = self.write_tx().await?;
        self.write_oauth(&mut tx, server_id, agent, part, value)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    /// [`Self::save_oauth`] on `conn`, in the transaction the caller holds.
    async fn write_oauth(
        &self,
        conn: &mut AnyConnection,
        server_id: &str,
        agent: &str,
        part: Part,
        value: Option<&str>,
    ) -> Result<(), StoreError> {
        // The column is one of two fixed names, never input.
        let upsert = match part {
            Part::Client => {
                "INSERT INTO oauth_grants (server_id, agent, client, updated_at) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (server_id, agent) DO UPDATE SET client = excluded.client, \
                 updated_at = excluded.updated_at"
            }
            Part::Credentials => {
                "INSERT INTO oauth_grants (server_id, agent, credentials, updated_at) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (server_id, agent) DO UPDATE SET credentials = excluded.credentials, \
                 updated_at = excluded.updated_at"
            }
        };
        sqlx::query(upsert)
            .bind(server_id)
            .bind(agent)
            .bind(sealed::seal_option(self.sealer(), value))
            .bind(a2e::now())
            .execute(&mut *conn)
            .await
            .map_err(StoreError::from_write)?;
        sqlx::query(
            "DELETE FROM oauth_grants WHERE server_id = $1 AND agent = $2 \
             AND client IS NULL AND credentials IS NULL",
        )
        .bind(server_id)
        .bind(agent)
        .execute(&mut *conn)
        .await?;
        Ok(())
    }

    /// The agents (not the shared grant) holding credentials for `server_id`, sorted.
    #[instrument(skip_all, fields(server_id = %server_id))]
    pub async fn oauth_agents(&self, server_id: &str) -> Result<Vec<String>, StoreError> {
        Ok(sqlx::query_scalar(
            "SELECT agent FROM oauth_grants WHERE server_id = $1 AND agent <> '' \
             AND credentials IS NOT NULL ORDER BY agent",
        )
        .bind(server_id)
        .fetch_all(&self.pool)
        .await?)
    }

    /// Forgets every grant of `server_id` (shared and per agent).
    #[instrument(skip_all, fields(server_id = %server_id))]
    pub async fn clear_oauth(&self, server_id: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM oauth_grants WHERE server_id = $1")
            .bind(server_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Seals the grants stored plain before a key was set, in the caller's transaction; how
    /// many were.
    pub(super) async fn seal_plain_oauth_grants(
        &self,
        conn: &mut AnyConnection,
    ) -> Result<usize, StoreError> {
        let rows: Vec<(String, String, Option<String>, Option<String>)> =
            sqlx::query_as("SELECT server_id, agent, client, credentials FROM oauth_grants")
                .fetch_all(&mut *conn)
                .await?;
        let mut sealed_now = 0;
        for (server_id, agent, client, credentials) in rows {
            let plain = |v: &Option<String>| v.as_deref().is_some_and(|v| !sealed::is_sealed(v));
            for (part, value) in [(Part::Client, &client), (Part::Credentials, &credentials)] {
                if plain(value) {
                    self.write_oauth(conn, &server_id, &agent, part, value.as_deref())
                        .await?;
                }
            }
            sealed_now += usize::from(plain(&client) || plain(&credentials));
        }
        Ok(sealed_now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2e::McpServerConfig;
    use crate::store::StoredServer;
    use crate::store::testing::{TestDb, backends, with_servers};

    const CLIENT: &str = r#"{"client_id":"dyn-client-4711","client_secret":"dyn-s3cret"}"#;
    const TOKENS: &str = r#"{"access_token":"at-very-secret","refresh_token":"rt-very-secret"}"#;

    /// The store on `db`, sealing with `key`, with the servers `ids` registered.
    async fn store_with(db: &TestDb, key: Option<[u8; 32]>, ids: &[&str]) -> Store {
        let mut store = db.open().await;
        if let Some(key) = key {
            store = store.sealing(&key).await.unwrap();
        }
        with_servers(&store, ids).await;
        store
    }

    #[tokio::test]
    async fn grants_round_trip_and_clear() {
        for db in backends().await {
            grants_round_trip_and_clear_on(&db).await;
        }
    }

    async fn grants_round_trip_and_clear_on(db: &TestDb) {
        let store = store_with(db, None, &["hosted"]).await;
        assert_eq!(store.oauth_grant("hosted", "").await.unwrap(), None);
        store
            .save_oauth_client("hosted", "", Some(CLIENT))
            .await
            .unwrap();
        let grant = store.oauth_grant("hosted", "").await.unwrap().unwrap();
        assert_eq!(grant.client.as_deref(), Some(CLIENT));
        assert_eq!(grant.credentials, None);
        store
            .save_oauth_credentials("hosted", "", Some(TOKENS))
            .await
            .unwrap();
        let newer = TOKENS.replace("at-very", "at-newer");
        store
            .save_oauth_credentials("hosted", "", Some(&newer))
            .await
            .unwrap();
        assert_eq!(
            store.oauth_grant("hosted", "").await.unwrap(),
            Some(StoredOAuthGrant {
                agent: String::new(),
                client: Some(CLIENT.into()),
                credentials: Some(newer),
            })
        );
        // Each part clears on its own; a grant holding nothing is gone.
        store
            .save_oauth_credentials("hosted", "", None)
            .await
            .unwrap();
        let grant = store.oauth_grant("hosted", "").await.unwrap().unwrap();
        assert_eq!(
            (grant.client.as_deref(), grant.credentials),
            (Some(CLIENT), None)
        );
        store.save_oauth_client("hosted", "", None).await.unwrap();
        assert_eq!(store.oauth_grant("hosted", "").await.unwrap(), None);
        // Printing a grant shows what is held, not what it is.
        let printed = format!(
            "{:?}",
            StoredOAuthGrant {
                agent: "a".into(),
                client: Some(CLIENT.into()),
                credentials: None,
            }
        );
        assert!(!printed.contains("dyn-s3cret"), "{printed}");
    }

    #[tokio::test]
    async fn a_grant_needs_its_server() {
        for db in backends().await {
            a_grant_needs_its_server_on(&db).await;
        }
    }

    async fn a_grant_needs_its_server_on(db: &TestDb) {
        let store = store_with(db, None, &[]).await;
        assert!(matches!(
            store.save_oauth_client("ghost", "", Some(CLIENT)).await,
            Err(StoreError::NotFound)
        ));
        assert!(matches!(
            store
                .save_oauth_credentials("ghost", "bob", Some(TOKENS))
                .await,
            Err(StoreError::NotFound)
        ));
    }

    #[tokio::test]
    async fn grants_are_sealed_at_rest_and_need_the_key() {
        for db in backends().await {
            grants_are_sealed_at_rest_and_need_the_key_on(&db).await;
        }
    }

    async fn grants_are_sealed_at_rest_and_need_the_key_on(db: &TestDb) {
        let key = [5u8; 32];
        let store = store_with(db, Some(key), &["hosted"]).await;
        store
            .save_oauth_client("hosted", "", Some(CLIENT))
            .await
            .unwrap();
        store
            .save_oauth_credentials("hosted", "bob", Some(TOKENS))
            .await
            .unwrap();
        let raw = db.at_rest().await;
        for plain in [
            "dyn-client-4711",
            "dyn-s3cret",
            "at-very-secret",
            "rt-very-secret",
        ] {
            assert!(!raw.contains(plain), "{plain} is at rest");
        }
        assert!(raw.contains("enc:v1:"));
        let grant = store.oauth_grant("hosted", "bob").await.unwrap().unwrap();
        assert_eq!(grant.credentials.as_deref(), Some(TOKENS));
        // Without the key a sealed grant is an error, never its sealed text.
        let keyless = db.open().await;
        assert!(matches!(
            keyless.oauth_grant("hosted", "bob").await,
            Err(StoreError::Corrupt(_))
        ));
    }

    #[tokio::test]
    async fn grants_stored_plain_are_sealed_when_a_key_is_set() {
        for db in backends().await {
            grants_stored_plain_are_sealed_when_a_key_is_set_on(&db).await;
        }
    }

    async fn grants_stored_plain_are_sealed_when_a_key_is_set_on(db: &TestDb) {
        let plain = store_with(db, None, &["hosted"]).await;
        plain
            .save_oauth_credentials("hosted", "", Some(TOKENS))
            .await
            .unwrap();
        plain.pool.close().await;
        let sealed = db.open().await.sealing(&[6; 32]).await.unwrap();
        let stored: String = sqlx::query_scalar("SELECT credentials FROM oauth_grants")
            .fetch_one(&sealed.pool)
            .await
            .unwrap();
        assert!(sealed::is_sealed(&stored) && !stored.contains("at-very-secret"));
        let grant = sealed.oauth_grant("hosted", "").await.unwrap().unwrap();
        assert_eq!(grant.credentials.as_deref(), Some(TOKENS));
    }

    #[tokio::test]
    async fn grants_are_per_agent_and_go_with_their_server() {
        for db in backends().await {
            grants_are_per_agent_and_go_with_their_server_on(&db).await;
        }
    }

    async fn grants_are_per_agent_and_go_with_their_server_on(db: &TestDb) {
        let store = store_with(db, Some([7; 32]), &["hosted", "other"]).await;
        for agent in ["carol", "", "bob"] {
            let tokens = format!(r#"{{"access_token":"token-of-{agent}"}}"#);
            store
                .save_oauth_credentials("hosted", agent, Some(&tokens))
                .await
                .unwrap();
        }
        // A registration alone is no authorization.
        store
            .save_oauth_client("hosted", "dave", Some(CLIENT))
            .await
            .unwrap();
        store
            .save_oauth_credentials("other", "erin", Some(TOKENS))
            .await
            .unwrap();
        assert_eq!(
            store.oauth_agents("hosted").await.unwrap(),
            ["bob", "carol"]
        );
        let bob = store.oauth_grant("hosted", "bob").await.unwrap().unwrap();
        assert_eq!(bob.agent, "bob");
        assert_eq!(
            bob.credentials.as_deref(),
            Some(r#"{"access_token":"token-of-bob"}"#)
        );
        let shared = store.oauth_grant("hosted", "").await.unwrap().unwrap();
        assert_eq!(
            shared.credentials.as_deref(),
            Some(r#"{"access_token":"token-of-"}"#)
        );
        assert_eq!(store.oauth_grant("hosted", "erin").await.unwrap(), None);

        store.delete_server("hosted").await.unwrap();
        assert!(store.oauth_agents("hosted").await.unwrap().is_empty());
        assert_eq!(store.oauth_grant("hosted", "").await.unwrap(), None);
        assert_eq!(store.oauth_agents("other").await.unwrap(), ["erin"]);
        store.clear_oauth("other").await.unwrap();
        assert!(store.oauth_agents("other").await.unwrap().is_empty());
        // A server registered again under the same id starts with no grant.
        let again = StoredServer {
            owner: "alice".into(),
            config: McpServerConfig {
                server_id: "hosted".into(),
                ..Default::default()
            },
        };
        store.insert_server(&again).await.unwrap();
        assert_eq!(store.oauth_grant("hosted", "bob").await.unwrap(), None);
    }
}
