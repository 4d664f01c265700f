//! The `oauth_links` table: the OAuth authorization links the bridge gave out and waits on, by
//! their `state`, kept in the store so the person's callback completes on any replica. What
//! finishing a link needs (its PKCE verifier among it) is opaque JSON the upstream layer writes,
//! never logged, and sealed at rest whenever the store has a key: always on SQLite (one is
//! generated), on PostgreSQL only with `MCP_BRIDGE_SECRETS_KEY`; without it the flow is stored
//! plain, like every other secret there (docs/security.md says so). The migration's comment ("always
//! sealed") cannot be corrected in place: an applied migration is never edited. A link is taken once: the take is one `DELETE … RETURNING`,
//! so of two replicas racing on one `state` only one gets it. Times are the database's clock.

use std::time::Duration;

use sqlx::{AnyConnection, Row};
use tracing::instrument;

use super::{Backend, Store, StoreError, sealed};

/// The bounds on waiting links.
#[derive(Clone, Copy, Debug)]
pub struct LinkLimits {
    /// How long a link stays good.
    pub ttl: Duration,
    /// Most links waiting at once for one agent: its oldest goes first.
    pub per_agent: usize,
    /// Most links waiting at once in all: when full, the oldest link of the agent holding the
    /// most goes.
    pub in_all: usize,
}

/// A link taken from the store, its flow opened.
pub struct StoredLink {
    pub server_id: String,
    /// Whose grant the link authorizes (`""`: the server's shared grant).
    pub grant_agent: String,
    /// What finishing the flow needs (secret: never logged).
    pub flow: String,
    /// Whether the server registered under `server_id` now is the one the link was made for
    /// (not removed, nor removed and registered again).
    pub same_server: bool,
}

/// Says which link, never its flow.
impl std::fmt::Debug for StoredLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredLink")
            .field("server_id", &self.server_id)
            .field("grant_agent", &self.grant_agent)
            .field("same_server", &self.same_server)
            .finish_non_exhaustive()
    }
}

/// The PostgreSQL advisory lock that keeping a link holds for its transaction: two replicas
/// keeping links at once count one after the other, so the caps hold exactly. (SQLite has one
/// writer at a time already.) Any fixed number no other lock of the bridge uses.
const KEEPING_LOCK: i64 = 0x6d63_705f_6c69_6e6b;

impl Store {
    /// Keeps the link `state` of `server_id` (for the grant of `grant_agent`), counted against
    /// `agent`: expired links go first, then past `agent`'s cap its own oldest link, or with
    /// every link counted past the cap in all the oldest link of the agent holding the most.
    /// `NotFound` when the server is not registered.
    #[instrument(skip_all, fields(server_id = %server_id, agent = %agent))]
    pub async fn keep_oauth_link(
        &self,
        state: &str,
        server_id: &str,
        grant_agent: &str,
        agent: &str,
        flow: &str,
        limits: LinkLimits,
    ) -> Result<(), StoreError> {
        let now = self.backend.now();
        let mut tx = self.write_tx().await?;
        if self.backend == Backend::Postgres {
            sqlx::query("SELECT 1 FROM (SELECT pg_advisory_xact_lock($1)) AS held")
                .bind(KEEPING_LOCK)
                .execute(&mut *tx)
                .await?;
        }
        // A write first: on SQLite it takes the write lock, so what is counted next is what
        // is there when the link is inserted.
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "DELETE FROM oauth_links WHERE expires_at <= {now}"
        )))
        .execute(&mut *tx)
        .await?;
        let mine: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM oauth_links WHERE agent = $1")
            .bind(agent)
            .fetch_one(&mut *tx)
            .await?;
        let over = |count: i64, cap: usize| count.saturating_sub(cap as i64 - 1).max(0);
        if over(mine, limits.per_agent) > 0 {
            drop_oldest(&mut tx, agent, over(mine, limits.per_agent)).await?;
        } else {
            let all: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM oauth_links")
                .fetch_one(&mut *tx)
                .await?;
            if over(all, limits.in_all) > 0 {
                let most: Option<String> = sqlx::query_scalar(
                    "SELECT agent FROM oauth_links GROUP BY agent \
                     ORDER BY COUNT(*) DESC, agent LIMIT 1",
                )
                .fetch_optional(&mut *tx)
                .await?;
                if let Some(most) = most {
                    drop_oldest(&mut tx, &most, over(all, limits.in_all)).await?;
                }
            }
        }
        let keep = format!(
            "INSERT INTO oauth_links \
             (state, server_id, grant_agent, agent, registered_at, flow, created_at, expires_at) \
             SELECT $1, server_id, $3, $4, created_at, $5, {now}, {now} + $6 \
             FROM servers WHERE server_id = $2"
        );
        let kept = sqlx::query(sqlx::AssertSqlSafe(keep))
            .bind(state)
            .bind(server_id)
            .bind(grant_agent)
            .bind(agent)
            .bind(sealed::seal_option(self.sealer(), Some(flow)))
            .bind(limits.ttl.as_secs_f64())
            .execute(&mut *tx)
            .await
            .map_err(StoreError::from_write)?;
        if kept.rows_affected() == 0 {
            return Err(StoreError::NotFound);
        }
        tx.commit().await?;
        Ok(())
    }

    /// The link `state` names, taken: deleted in the same statement that reads it, so it
    /// works once, on whichever replica asks first. `None` when it is unknown, used or expired
    /// (an expired one is deleted too).
    #[instrument(skip_all)]
    pub async fn take_oauth_link(&self, state: &str) -> Result<Option<StoredLink>, StoreError> {
        let now = self.backend.now();
        let take = format!(
            "DELETE FROM oauth_links WHERE state = $1 AND expires_at > {now} \
             RETURNING server_id, grant_agent, registered_at, flow"
        );
        let row = sqlx::query(sqlx::AssertSqlSafe(take))
            .bind(state)
            .fetch_optional(&self.pool)
            .await?;
        let Some(row) = row else {
            sqlx::query("DELETE FROM oauth_links WHERE state = $1")
                .bind(state)
                .execute(&self.pool)
                .await?;
            return Ok(None);
        };
        let server_id: String = row.try_get("server_id")?;
        let registered_at: f64 = row.try_get("registered_at")?;
        let stored: String = row.try_get("flow")?;
        let flow = sealed::open_option(self.sealer(), Some(&stored))
            .map_err(|e| StoreError::Corrupt(format!("oauth link: {e}")))?
            .unwrap_or_default();
        let same: Option<i64> =
            sqlx::query_scalar("SELECT 1 FROM servers WHERE server_id = $1 AND created_at = $2")
                .bind(&server_id)
                .bind(registered_at)
                .fetch_optional(&self.pool)
                .await?;
        Ok(Some(StoredLink {
            server_id,
            grant_agent: row.try_get("grant_agent")?,
            flow,
            same_server: same.is_some(),
        }))
    }

    /// Seals the links stored plain before a key was set, in the caller's transaction; how
    /// many were.
    pub(super) async fn seal_plain_oauth_links(
        &self,
        conn: &mut AnyConnection,
    ) -> Result<usize, StoreError> {
        let rows: Vec<(String, String)> = sqlx::query_as("SELECT state, flow FROM oauth_links")
            .fetch_all(&mut *conn)
            .await?;
        let mut sealed_now = 0;
        for (state, flow) in rows.into_iter().filter(|(_, f)| !sealed::is_sealed(f)) {
            sqlx::query("UPDATE oauth_links SET flow = $1 WHERE state = $2")
                .bind(sealed::seal_option(self.sealer(), Some(&flow)))
                .bind(state)
                .execute(&mut *conn)
                .await?;
            sealed_now += 1;
        }
        Ok(sealed_now)
    }
}

/// Deletes the `count` oldest links of `agent`.
async fn drop_oldest(conn: &mut AnyConnection, agent: &str, count: i64) -> Result<(), StoreError> {
    sqlx::query(
        "DELETE FROM oauth_links WHERE state IN (SELECT state FROM oauth_links \
         WHERE agent = $1 ORDER BY created_at, state LIMIT $2)",
    )
    .bind(agent)
    .bind(count)
    .execute(&mut *conn)
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing::{TestDb, backends, with_servers};

    const FLOW: &str = r#"{"pkce_verifier":"verifier-very-secret"}"#;

    fn limits(per_agent: usize, in_all: usize) -> LinkLimits {
        LinkLimits {
            ttl: Duration::from_secs(900),
            per_agent,
            in_all,
        }
    }

    async fn keep(store: &Store, state: &str, agent: &str, limits: LinkLimits) {
        store
            .keep_oauth_link(state, "hosted", "", agent, FLOW, limits)
            .await
            .unwrap();
    }

    async fn live(store: &Store, state: &str) -> bool {
        store.take_oauth_link(state).await.unwrap().is_some()
    }

    #[tokio::test]
    async fn a_link_is_taken_once_and_sealed_at_rest() {
        for db in backends().await {
            a_link_is_taken_once_and_sealed_at_rest_on(&db).await;
        }
    }

    async fn a_link_is_taken_once_and_sealed_at_rest_on(db: &TestDb) {
        let store = db.open().await.sealing(&[9; 32]).await.unwrap();
        with_servers(&store, &["hosted"]).await;
        store
            .keep_oauth_link("s1", "hosted", "bob", "bob", FLOW, limits(20, 100))
            .await
            .unwrap();
        assert!(!db.at_rest().await.contains("verifier-very-secret"));
        let link = store.take_oauth_link("s1").await.unwrap().unwrap();
        assert_eq!(
            (link.server_id.as_str(), link.grant_agent.as_str()),
            ("hosted", "bob")
        );
        assert_eq!(link.flow, FLOW);
        assert!(link.same_server);
        assert!(!format!("{link:?}").contains("verifier"));
        assert!(store.take_oauth_link("s1").await.unwrap().is_none());
        // Two replicas racing on one state: one wins.
        for round in 0..20 {
            let state = format!("race{round}");
            keep(&store, &state, "bob", limits(20, 100)).await;
            let (one, other) =
                tokio::join!(store.take_oauth_link(&state), store.take_oauth_link(&state));
            let won = [one.unwrap(), other.unwrap()]
                .iter()
                .filter(|taken| taken.is_some())
                .count();
            assert_eq!(won, 1, "{}", db.url());
        }
        // A server that is not registered gets no link.
        assert!(matches!(
            store
                .keep_oauth_link("s2", "ghost", "", "bob", FLOW, limits(20, 100))
                .await,
            Err(StoreError::NotFound)
        ));
        // A link outlives its server, and says it is not the server registered now.
        keep(&store, "s3", "bob", limits(20, 100)).await;
        store.delete_server("hosted").await.unwrap();
        with_servers(&store, &["hosted"]).await;
        let link = store.take_oauth_link("s3").await.unwrap().unwrap();
        assert!(!link.same_server);
    }

    #[tokio::test]
    async fn caps_drop_the_oldest_links_and_expired_ones_go() {
        for db in backends().await {
            caps_drop_the_oldest_links_and_expired_ones_go_on(&db).await;
        }
    }

    async fn caps_drop_the_oldest_links_and_expired_ones_go_on(db: &TestDb) {
        let store = db.open().await;
        with_servers(&store, &["hosted"]).await;
        // Per agent: her oldest goes, his stays.
        keep(&store, "his", "bob", limits(2, 100)).await;
        for state in ["h1", "h2", "h3"] {
            keep(&store, state, "alice", limits(2, 100)).await;
        }
        assert!(!live(&store, "h1").await);
        for state in ["his", "h2", "h3"] {
            assert!(live(&store, state).await, "{state}");
        }
        // In all: the oldest link of the agent holding the most goes.
        for state in ["a1", "a2", "a3"] {
            keep(&store, state, "alice", limits(10, 4)).await;
        }
        keep(&store, "b1", "bob", limits(10, 4)).await;
        keep(&store, "c1", "carol", limits(10, 4)).await;
        assert!(!live(&store, "a1").await);
        for state in ["a2", "a3", "b1", "c1"] {
            assert!(live(&store, state).await, "{state}");
        }
        // An expired link is never taken, and is gone.
        let gone = LinkLimits {
            ttl: Duration::ZERO,
            ..limits(10, 10)
        };
        keep(&store, "old", "bob", gone).await;
        assert!(!live(&store, "old").await);
        let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM oauth_links")
            .fetch_one(&store.pool)
            .await
            .unwrap();
        assert_eq!(left, 0);
    }
}
