//! The `tool_pins` table: the digest of each tool's definition as first seen or last approved,
//! with that definition, per server (removed with it); and `tool_baselines`: the servers whose
//! first listing has been pinned, after which a tool is new to the bridge.

use std::collections::HashMap;

use sqlx::Row;
use tracing::instrument;

use super::{Store, StoreError};
use crate::a2e;

/// A pinned tool definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPin {
    /// Hex SHA-256 of `definition`.
    pub digest: String,
    /// The canonical JSON that was pinned.
    pub definition: String,
}

impl Store {
    /// The pins of a server's tools, by upstream tool name.
    #[instrument(skip_all, fields(server_id))]
    pub async fn tool_pins(
        &self,
        server_id: &str,
    ) -> Result<HashMap<String, StoredPin>, StoreError> {
        let rows =
            sqlx::query("SELECT tool, digest, definition FROM tool_pins WHERE server_id = $1")
                .bind(server_id)
                .fetch_all(&self.pool)
                .await?;
        rows.iter()
            .map(|row| {
                let pin = StoredPin {
                    digest: row.try_get("digest")?,
                    definition: row.try_get("definition")?,
                };
                Ok((row.try_get("tool")?, pin))
            })
            .collect()
    }

    /// Pins tools: `replace` puts each pin in place of the one there (a change accepted or
    /// approved); otherwise a tool already pinned keeps its pin (first seen wins, also between
    /// two replicas racing). In one transaction. `NotFound` when the server is gone.
    #[instrument(skip_all, fields(server_id, count = pins.len()))]
    pub async fn pin_tools(
        &self,
        server_id: &str,
        pins: &[(String, StoredPin)],
        replace: bool,
    ) -> Result<(), StoreError> {
        if pins.is_empty() {
            return Ok(());
        }
        let sql = match replace {
            true => {
                "INSERT INTO tool_pins (server_id, tool, digest, definition, pinned_at) \
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT (server_id, tool) DO UPDATE SET \
                 digest = excluded.digest, definition = excluded.definition, pinned_at = excluded.pinned_at"
            }
            false => {
                "INSERT INTO tool_pins (server_id, tool, digest, definition, pinned_at) \
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING"
            }
        };
        let mut tx = self.write_tx().await?;
        for (tool, pin) in pins {
            sqlx::query(sql)
                .bind(server_id)
                .bind(tool)
                .bind(&pin.digest)
                .bind(&pin.definition)
                .bind(a2e::now())
                .execute(&mut *tx)
                .await
                .map_err(StoreError::from_write)?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// Whether the server's first listing has been pinned (see [`Store::note_first_listing`]).
    #[instrument(skip_all, fields(server_id))]
    pub async fn first_listing_pinned(&self, server_id: &str) -> Result<bool, StoreError> {
        let row = sqlx::query("SELECT 1 AS one FROM tool_baselines WHERE server_id = $1")
            .bind(server_id)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.is_some())
    }

    /// Notes that the server's first listing has been pinned (once; a second note changes
    /// nothing). `NotFound` when the server is gone.
    #[instrument(skip_all, fields(server_id))]
    pub async fn note_first_listing(&self, server_id: &str) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO tool_baselines (server_id, listed_at) VALUES ($1, $2) \
             ON CONFLICT DO NOTHING",
        )
        .bind(server_id)
        .bind(a2e::now())
        .execute(&self.pool)
        .await
        .map_err(StoreError::from_write)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing::{backends, with_servers};

    fn pin(digest: &str) -> StoredPin {
        StoredPin {
            digest: digest.into(),
            definition: format!("{{\"description\":\"{digest}\"}}"),
        }
    }

    #[tokio::test]
    async fn first_seen_wins_until_replaced_and_pins_go_with_their_server() {
        for db in backends().await {
            let store = db.open().await;
            with_servers(&store, &["fs", "git"]).await;
            let first = [
                ("read".to_owned(), pin("a")),
                ("write".to_owned(), pin("b")),
            ];
            store.pin_tools("fs", &first, false).await.unwrap();
            store
                .pin_tools("git", &[("log".to_owned(), pin("c"))], false)
                .await
                .unwrap();
            // Seen again with another definition: the first pin stays.
            store
                .pin_tools("fs", &[("read".to_owned(), pin("x"))], false)
                .await
                .unwrap();
            assert_eq!(store.tool_pins("fs").await.unwrap()["read"], pin("a"));
            store
                .pin_tools("fs", &[("read".to_owned(), pin("x"))], true)
                .await
                .unwrap();
            let pins = store.tool_pins("fs").await.unwrap();
            assert_eq!((pins["read"].clone(), pins.len()), (pin("x"), 2));
            assert!(matches!(
                store.pin_tools("ghost", &first, false).await,
                Err(StoreError::NotFound)
            ));
            // The first listing, noted once; gone with its server too.
            assert!(!store.first_listing_pinned("fs").await.unwrap());
            store.note_first_listing("fs").await.unwrap();
            store.note_first_listing("fs").await.unwrap();
            assert!(store.first_listing_pinned("fs").await.unwrap());
            assert!(!store.first_listing_pinned("git").await.unwrap());
            assert!(matches!(
                store.note_first_listing("ghost").await,
                Err(StoreError::NotFound)
            ));
            store.delete_server("fs").await.unwrap();
            assert!(store.tool_pins("fs").await.unwrap().is_empty());
            assert!(!store.first_listing_pinned("fs").await.unwrap());
            assert_eq!(store.tool_pins("git").await.unwrap().len(), 1);
        }
    }
}
