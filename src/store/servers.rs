//! The `servers` table: each registered server's config (as JSON, its secret values sealed) and
//! owner.

use sqlx::AnyConnection;
use sqlx::Row;
use tracing::instrument;

use super::{Store, StoreError, sealed};
use crate::a2e::{self, McpServerConfig};

/// A registered server as stored.
#[derive(Debug, Clone)]
pub struct StoredServer {
    pub owner: String,
    pub config: McpServerConfig,
}

impl Store {
    /// The config as stored: JSON, with its secret values sealed when a key is configured.
    fn config_json(&self, config: &McpServerConfig) -> Result<String, StoreError> {
        let mut stored = config.clone();
        stored.env = sealed::seal_values(self.sealer(), &config.env);
        stored.headers = sealed::seal_values(self.sealer(), &config.headers);
        if let Some(auth) = &mut stored.auth {
            auth.client_secret = sealed::seal_option(self.sealer(), auth.client_secret.as_deref());
            auth.private_key = sealed::seal_option(self.sealer(), auth.private_key.as_deref());
            auth.identity_assertion =
                sealed::seal_option(self.sealer(), auth.identity_assertion.as_deref());
            if let Some(idp) = &mut auth.idp {
                idp.client_secret =
                    sealed::seal_option(self.sealer(), idp.client_secret.as_deref());
            }
        }
        serde_json::to_string(&stored).map_err(|e| StoreError::Corrupt(e.to_string()))
    }

    #[instrument(skip_all, fields(server_id = %server.config.server_id))]
    pub async fn insert_server(&self, server: &StoredServer) -> Result<(), StoreError> {
        let config = self.config_json(&server.config)?;
        let now = a2e::now();
        sqlx::query(
            "INSERT INTO servers (server_id, owner, config, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)",
        )
        .bind(&server.config.server_id)
        .bind(&server.owner)
        .bind(config)
        .bind(now)
        .execute(&self.pool)
        .await
        .map_err(StoreError::from_write)?;
        Ok(())
    }

    /// Rewrites a server's config; `NotFound` when it is not registered.
    #[instrument(skip_all, fields(server_id = %config.server_id))]
    pub async fn update_server_config(&self, config: &McpServerConfig) -> Result<(), StoreError> {
        let mut conn = self.pool.acquire().await?;
        self.write_config(&mut conn, config).await
    }

    /// Rewrites a server's config and forgets its OAuth grants (they were for its old URL or
    /// settings), both or neither.
    #[instrument(skip_all, fields(server_id = %config.server_id))]
    pub async fn update_server_config_clearing_oauth(
        &self,
        config: &McpServerConfig,
    ) -> Result<(), StoreError> {
        let mut tx = self.write_tx().await?;
        self.write_config(&mut tx, config).await?;
        sqlx::query("DELETE FROM oauth_grants WHERE server_id = $1")
            .bind(&config.server_id)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }

    async fn write_config(
        &self,
        conn: &mut AnyConnection,
        config: &McpServerConfig,
    ) -> Result<(), StoreError> {
        let json = self.config_json(config)?;
        let done =
            sqlx::query("UPDATE servers SET config = $1, updated_at = $2 WHERE server_id = $3")
                .bind(json)
                .bind(a2e::now())
                .bind(&config.server_id)
                .execute(&mut *conn)
                .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    #[instrument(skip_all, fields(server_id))]
    pub async fn delete_server(&self, server_id: &str) -> Result<(), StoreError> {
        let done = sqlx::query("DELETE FROM servers WHERE server_id = $1")
            .bind(server_id)
            .execute(&self.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    /// A stored config with its secret values opened.
    fn open_config(&self, stored: &str) -> Result<McpServerConfig, String> {
        let mut config =
            serde_json::from_str::<McpServerConfig>(stored).map_err(|e| e.to_string())?;
        let open = |map| sealed::open_values(self.sealer(), map).map_err(|e| e.to_string());
        (config.env, config.headers) = (open(&config.env)?, open(&config.headers)?);
        if let Some(auth) = &mut config.auth {
            let open = |v: &Option<String>| {
                sealed::open_option(self.sealer(), v.as_deref()).map_err(|e| e.to_string())
            };
            auth.client_secret = open(&auth.client_secret)?;
            auth.private_key = open(&auth.private_key)?;
            auth.identity_assertion = open(&auth.identity_assertion)?;
            if let Some(idp) = &mut auth.idp {
                idp.client_secret = open(&idp.client_secret)?;
            }
        }
        Ok(config)
    }

    /// Every stored server, oldest first. A row that no longer parses is logged and left in
    /// place rather than failing the rest.
    #[instrument(skip_all)]
    /// One stored server; `None` when it is not stored (or its config no longer parses, which
    /// is logged).
    #[instrument(skip_all, fields(server_id))]
    pub async fn server(&self, server_id: &str) -> Result<Option<StoredServer>, StoreError> {
        let row = sqlx::query("SELECT owner, config FROM servers WHERE server_id = $1")
            .bind(server_id)
            .fetch_optional(&self.pool)
            .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let config: String = row.try_get("config")?;
        match self.open_config(&config) {
            Ok(config) => Ok(Some(StoredServer {
                owner: row.try_get("owner")?,
                config,
            })),
            Err(error) => {
                tracing::error!(%server_id, %error, "stored config unusable; skipped");
                Ok(None)
            }
        }
    }

    pub async fn list_servers(&self) -> Result<Vec<StoredServer>, StoreError> {
        let rows = sqlx::query(
            "SELECT server_id, owner, config FROM servers ORDER BY created_at, server_id",
        )
        .fetch_all(&self.pool)
        .await?;
        let mut servers = Vec::with_capacity(rows.len());
        for row in &rows {
            let server_id: String = row.try_get("server_id")?;
            let config: String = row.try_get("config")?;
            match self.open_config(&config) {
                Ok(config) => servers.push(StoredServer {
                    owner: row.try_get("owner")?,
                    config,
                }),
                Err(error) => {
                    tracing::error!(%server_id, %error, "stored config unusable; skipped")
                }
            }
        }
        Ok(servers)
    }

    /// Seals the secret values of the configs that still hold a plain one (stored before a key
    /// was set); how many were. A config that cannot be opened is left as it is.
    pub(super) async fn seal_plain_servers(
        &self,
        conn: &mut AnyConnection,
    ) -> Result<usize, StoreError> {
        let rows: Vec<(String, String)> = sqlx::query_as("SELECT server_id, config FROM servers")
            .fetch_all(&mut *conn)
            .await?;
        let mut sealed_now = 0;
        for (_, stored) in rows {
            let plain = serde_json::from_str::<McpServerConfig>(&stored).is_ok_and(|c| {
                let auth = c
                    .auth
                    .iter()
                    .flat_map(|a| {
                        let idp = a.idp.iter().flat_map(|idp| idp.client_secret.iter());
                        a.client_secret
                            .iter()
                            .chain(a.private_key.iter())
                            .chain(idp)
                    })
                    .chain(c.auth.iter().flat_map(|a| a.identity_assertion.iter()));
                sealed::any_plain(c.env.values().chain(c.headers.values()).chain(auth))
            });
            if let (true, Ok(config)) = (plain, self.open_config(&stored)) {
                self.write_config(conn, &config).await?;
                sealed_now += 1;
            }
        }
        Ok(sealed_now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::store::testing::backends;

    #[tokio::test]
    async fn servers_round_trip_and_conflict() {
        for db in backends().await {
            servers_round_trip_and_conflict_on(db.open().await).await;
        }
    }

    async fn servers_round_trip_and_conflict_on(store: Store) {
        let mut config = McpServerConfig {
            server_id: "fs".into(),
            tool_allow_list: vec!["read".into()],
            ..Default::default()
        };
        config.env.insert("TOKEN".into(), "s3cret".into());
        let server = StoredServer {
            owner: "alice".into(),
            config: config.clone(),
        };
        store.insert_server(&server).await.unwrap();
        assert!(matches!(
            store.insert_server(&server).await,
            Err(StoreError::Conflict)
        ));

        config.timeout = 7;
        store.update_server_config(&config).await.unwrap();
        let all = store.list_servers().await.unwrap();
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].owner, "alice");
        assert_eq!(all[0].config, config);

        store.delete_server("fs").await.unwrap();
        assert!(matches!(
            store.delete_server("fs").await,
            Err(StoreError::NotFound)
        ));
        assert!(store.list_servers().await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_config_change_can_forget_the_oauth_grants_with_it() {
        for db in backends().await {
            a_config_change_can_forget_the_oauth_grants_on(db.open().await).await;
        }
    }

    async fn a_config_change_can_forget_the_oauth_grants_on(store: Store) {
        let mut config = McpServerConfig {
            server_id: "hosted".into(),
            url: "https://one.example/mcp".into(),
            ..Default::default()
        };
        let server = StoredServer {
            owner: "alice".into(),
            config: config.clone(),
        };
        store.insert_server(&server).await.unwrap();
        store
            .save_oauth_credentials("hosted", "", Some("{}"))
            .await
            .unwrap();
        // A server that is gone: nothing changes, and no grant is forgotten.
        let ghost = McpServerConfig {
            server_id: "ghost".into(),
            ..Default::default()
        };
        assert!(matches!(
            store.update_server_config_clearing_oauth(&ghost).await,
            Err(StoreError::NotFound)
        ));
        config.timeout = 9;
        store.update_server_config(&config).await.unwrap();
        assert!(store.oauth_grant("hosted", "").await.unwrap().is_some());
        config.url = "https://two.example/mcp".into();
        store
            .update_server_config_clearing_oauth(&config)
            .await
            .unwrap();
        assert_eq!(store.oauth_grant("hosted", "").await.unwrap(), None);
        assert_eq!(store.list_servers().await.unwrap()[0].config, config);
    }

    #[tokio::test]
    async fn secret_values_are_sealed_at_rest_and_need_the_key() {
        for db in backends().await {
            secret_values_are_sealed_at_rest_on(db.url()).await;
        }
    }

    async fn secret_values_are_sealed_at_rest_on(url: &str) {
        let mut config = McpServerConfig {
            server_id: "fs".into(),
            ..Default::default()
        };
        config.env.insert("TOKEN".into(), "s3cret".into());
        config
            .headers
            .insert("Authorization".into(), "Bearer s3cret-too".into());
        config.auth = Some(a2e::OAuthConfig {
            grant_type: a2e::OAuthGrant::ClientCredentials,
            client_id: Some("bridge-client".into()),
            client_secret: Some("client-s3cret".into()),
            private_key: Some(
                "-----BEGIN PRIVATE KEY-----\nMIGHs3cretKEY\n-----END PRIVATE KEY-----\n".into(),
            ),
            ..Default::default()
        });
        // Stored before a key was set; the first start with the key seals it.
        let plain = Store::open(url).await.unwrap();
        let server = StoredServer {
            owner: "alice".into(),
            config: config.clone(),
        };
        plain.insert_server(&server).await.unwrap();
        let raw = || async {
            let store = Store::open(url).await.unwrap();
            sqlx::query_scalar::<_, String>("SELECT config FROM servers")
                .fetch_one(&store.pool)
                .await
                .unwrap()
        };
        assert!(raw().await.contains("s3cret"));
        let key = [9u8; 32];
        let sealed = Store::open(url).await.unwrap().sealing(&key).await.unwrap();
        let stored = raw().await;
        assert!(
            !stored.contains("s3cret") && stored.contains("enc:v1:"),
            "{stored}"
        );
        assert!(
            stored.contains("bridge-client") && !stored.contains("PRIVATE KEY"),
            "only the secrets of `auth` are sealed: {stored}"
        );
        assert_eq!(sealed.list_servers().await.unwrap()[0].config, config);
        // Without the key, or with another one, the row is not used, and not lost either.
        let keyless = Store::open(url).await.unwrap();
        assert!(keyless.list_servers().await.unwrap().is_empty());
        let wrong = Store::open(url)
            .await
            .unwrap()
            .sealing(&[1; 32])
            .await
            .unwrap();
        assert!(wrong.list_servers().await.unwrap().is_empty());
        let before = raw().await;
        let again = Store::open(url).await.unwrap().sealing(&key).await.unwrap();
        assert_eq!(
            raw().await,
            before,
            "a sealed row is not written again at start"
        );
        assert_eq!(again.list_servers().await.unwrap()[0].config, config);
        // Written sealed from then on.
        let mut changed = config.clone();
        changed.env.insert("OTHER".into(), "more-s3cret".into());
        again.update_server_config(&changed).await.unwrap();
        assert!(!raw().await.contains("s3cret"));
    }
}
