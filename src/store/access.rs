//! The `policies` and `toolsets` tables: access policies and toolsets defined through the API,
//! each stored whole as its JSON body under its name.

use serde::Serialize;
use serde::de::DeserializeOwned;
use sqlx::Row;
use tracing::instrument;

use super::{Store, StoreError};
use crate::a2e::{Policy, Toolset};

/// The two tables of named documents.
#[derive(Clone, Copy)]
enum Table {
    Policies,
    Toolsets,
}

/// The statements of each table, written out (sqlx takes only static SQL).
impl Table {
    fn name(self) -> &'static str {
        match self {
            Self::Policies => "policies",
            Self::Toolsets => "toolsets",
        }
    }

    fn select_all(self) -> &'static str {
        match self {
            Self::Policies => "SELECT name, body FROM policies ORDER BY name",
            Self::Toolsets => "SELECT name, body FROM toolsets ORDER BY name",
        }
    }

    fn exists(self) -> &'static str {
        match self {
            Self::Policies => "SELECT 1 AS found FROM policies WHERE name = $1",
            Self::Toolsets => "SELECT 1 AS found FROM toolsets WHERE name = $1",
        }
    }

    fn upsert(self) -> &'static str {
        match self {
            Self::Policies => {
                "INSERT INTO policies (name, body) VALUES ($1, $2) \
                 ON CONFLICT (name) DO UPDATE SET body = excluded.body"
            }
            Self::Toolsets => {
                "INSERT INTO toolsets (name, body) VALUES ($1, $2) \
                 ON CONFLICT (name) DO UPDATE SET body = excluded.body"
            }
        }
    }

    fn delete(self) -> &'static str {
        match self {
            Self::Policies => "DELETE FROM policies WHERE name = $1",
            Self::Toolsets => "DELETE FROM toolsets WHERE name = $1",
        }
    }
}

impl Store {
    /// Every stored policy, by name.
    #[instrument(skip_all)]
    pub async fn policies(&self) -> Result<Vec<(String, Policy)>, StoreError> {
        self.documents(Table::Policies).await
    }

    /// Creates or replaces a policy; answers whether it existed.
    #[instrument(skip_all, fields(name))]
    pub async fn put_policy(&self, name: &str, policy: &Policy) -> Result<bool, StoreError> {
        self.put_document(Table::Policies, name, policy).await
    }

    /// Removes a policy (`NotFound` when there is none).
    #[instrument(skip_all, fields(name))]
    pub async fn delete_policy(&self, name: &str) -> Result<(), StoreError> {
        self.delete_document(Table::Policies, name).await
    }

    /// Every stored toolset, by name.
    #[instrument(skip_all)]
    pub async fn toolsets(&self) -> Result<Vec<(String, Toolset)>, StoreError> {
        self.documents(Table::Toolsets).await
    }

    /// Creates or replaces a toolset; answers whether it existed.
    #[instrument(skip_all, fields(name))]
    pub async fn put_toolset(&self, name: &str, toolset: &Toolset) -> Result<bool, StoreError> {
        self.put_document(Table::Toolsets, name, toolset).await
    }

    /// Removes a toolset (`NotFound` when there is none).
    #[instrument(skip_all, fields(name))]
    pub async fn delete_toolset(&self, name: &str) -> Result<(), StoreError> {
        self.delete_document(Table::Toolsets, name).await
    }

    async fn documents<T: DeserializeOwned>(
        &self,
        table: Table,
    ) -> Result<Vec<(String, T)>, StoreError> {
        let rows = sqlx::query(table.select_all())
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|row| {
                let name: String = row.try_get("name")?;
                let body: String = row.try_get("body")?;
                let value = serde_json::from_str(&body).map_err(|e| {
                    StoreError::Corrupt(format!("{} \"{name}\": {e}", table.name()))
                })?;
                Ok((name, value))
            })
            .collect()
    }

    async fn put_document<T: Serialize>(
        &self,
        table: Table,
        name: &str,
        value: &T,
    ) -> Result<bool, StoreError> {
        let body = serde_json::to_string(value).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        let mut tx = self.write_tx().await?;
        let existed = sqlx::query(table.exists())
            .bind(name)
            .fetch_optional(&mut *tx)
            .await?
            .is_some();
        sqlx::query(table.upsert())
            .bind(name)
            .bind(body)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(existed)
    }

    async fn delete_document(&self, table: Table, name: &str) -> Result<(), StoreError> {
        let done = sqlx::query(table.delete())
            .bind(name)
            .execute(&self.pool)
            .await?;
        match done.rows_affected() {
            0 => Err(StoreError::NotFound),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::a2e::{AccessRules, Policy, Toolset};
    use crate::store::Store;
    use crate::store::testing::backends;

    #[tokio::test]
    async fn policies_and_toolsets_are_kept_replaced_and_removed() {
        for db in backends().await {
            kept_replaced_and_removed_on(db.open().await).await;
        }
    }

    async fn kept_replaced_and_removed_on(store: Store) {
        let mut policy = Policy {
            deny: Some(AccessRules {
                tools: Some(vec!["*__delete_*".into()]),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert!(!store.put_policy("no-deletes", &policy).await.unwrap());
        policy.matches.roles = vec!["reader".into()];
        assert!(store.put_policy("no-deletes", &policy).await.unwrap());
        assert_eq!(
            store.policies().await.unwrap(),
            [("no-deletes".to_owned(), policy)]
        );
        store.delete_policy("no-deletes").await.unwrap();
        assert!(store.policies().await.unwrap().is_empty());
        assert!(matches!(
            store.delete_policy("no-deletes").await,
            Err(crate::store::StoreError::NotFound)
        ));

        let toolset = Toolset {
            tools: vec!["ev__echo".into()],
            deferred: true,
            ..Default::default()
        };
        assert!(!store.put_toolset("team", &toolset).await.unwrap());
        assert_eq!(
            store.toolsets().await.unwrap(),
            [("team".to_owned(), toolset)]
        );
        store.delete_toolset("team").await.unwrap();
        assert!(store.toolsets().await.unwrap().is_empty());
    }
}
