//! The `leases` table: which replica runs each server. A replica holds a server while its lease
//! is live and renews it; once it has expired, any replica may take it over. Every method is one
//! statement, so two replicas racing for a lease cannot both win, and every time is the
//! database's own (`Backend::now`), so the replicas' clocks do not matter. Beside them, the
//! `replicas` table says which replicas are up (and since when), so servers can be spread.

use std::collections::HashMap;
use std::time::Duration;

use tracing::instrument;

use super::{Store, StoreError};

/// How many leases a replica's row outlives its last renewal before the others delete it.
const DEAD_REPLICA_KEPT: f64 = 10.0;

impl Store {
    /// Takes the lease of `server_id` for `replica` for `ttl` when it is free, expired or
    /// already `replica`'s (then it is extended); `false` while another replica holds a live
    /// one. `NotFound` when the server is not registered.
    #[instrument(skip_all, fields(server_id, replica))]
    pub async fn claim_lease(
        &self,
        server_id: &str,
        replica: &str,
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        let now = self.backend.now();
        // `acquired_at` says since when the holder has held it without a break.
        let claim = format!(
            "INSERT INTO leases (server_id, replica, expires_at, acquired_at) \
             VALUES ($1, $2, {now} + $3, {now}) \
             ON CONFLICT (server_id) DO UPDATE SET \
             replica = excluded.replica, expires_at = excluded.expires_at, \
             acquired_at = CASE WHEN leases.replica = excluded.replica AND leases.expires_at >= {now} \
             THEN leases.acquired_at ELSE excluded.acquired_at END \
             WHERE leases.expires_at < {now} OR leases.replica = excluded.replica"
        );
        let done = sqlx::query(sqlx::AssertSqlSafe(claim))
            .bind(server_id)
            .bind(replica)
            .bind(ttl.as_secs_f64())
            .execute(&self.pool)
            .await
            .map_err(StoreError::from_write)?;
        Ok(done.rows_affected() == 1)
    }

    /// Extends every live lease `replica` holds by `ttl` from now; the servers it still holds,
    /// sorted. A lease that expired before this renewal is not renewed (another replica may
    /// have taken it, or may be about to): claim it again.
    #[instrument(skip_all, fields(replica))]
    pub async fn renew_leases(
        &self,
        replica: &str,
        ttl: Duration,
    ) -> Result<Vec<String>, StoreError> {
        let now = self.backend.now();
        let renew = format!(
            "UPDATE leases SET expires_at = {now} + $2 \
             WHERE replica = $1 AND expires_at >= {now} RETURNING server_id"
        );
        let mut held: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(renew))
            .bind(replica)
            .bind(ttl.as_secs_f64())
            .fetch_all(&self.pool)
            .await?;
        held.sort();
        Ok(held)
    }

    /// Gives up `replica`'s lease of `server_id` (a graceful hand-over: another replica may
    /// take it at once); nothing when another replica holds it.
    #[instrument(skip_all, fields(server_id, replica))]
    pub async fn release_lease(&self, server_id: &str, replica: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM leases WHERE server_id = $1 AND replica = $2")
            .bind(server_id)
            .bind(replica)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Gives up every lease `replica` holds (it is stopping).
    #[instrument(skip_all, fields(replica))]
    pub async fn release_leases(&self, replica: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM leases WHERE replica = $1")
            .bind(replica)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The replica holding each server with a live lease.
    #[instrument(skip_all)]
    pub async fn lease_holders(&self) -> Result<HashMap<String, String>, StoreError> {
        let now = self.backend.now();
        let live = format!("SELECT server_id, replica FROM leases WHERE expires_at >= {now}");
        let rows: Vec<(String, String)> = sqlx::query_as(sqlx::AssertSqlSafe(live))
            .fetch_all(&self.pool)
            .await?;
        Ok(rows.into_iter().collect())
    }

    /// The replica holding each server with a live lease, and since when (seconds since the
    /// epoch, on the database's clock) it has held it without a break.
    #[instrument(skip_all)]
    pub async fn lease_tenures(&self) -> Result<HashMap<String, (String, f64)>, StoreError> {
        let now = self.backend.now();
        let live =
            format!("SELECT server_id, replica, acquired_at FROM leases WHERE expires_at >= {now}");
        let rows: Vec<(String, String, f64)> = sqlx::query_as(sqlx::AssertSqlSafe(live))
            .fetch_all(&self.pool)
            .await?;
        Ok(rows
            .into_iter()
            .map(|(server, replica, since)| (server, (replica, since)))
            .collect())
    }

    /// Hands `from`'s live lease of `server_id` to `to` for `ttl` (a rebalancing: `to` finds
    /// it when it next renews its leases, and connects the server); false when `from` does not
    /// hold it any more.
    #[instrument(skip_all, fields(server_id, from, to))]
    pub async fn transfer_lease(
        &self,
        server_id: &str,
        from: &str,
        to: &str,
        ttl: Duration,
    ) -> Result<bool, StoreError> {
        let now = self.backend.now();
        let transfer = format!(
            "UPDATE leases SET replica = $3, expires_at = {now} + $4, acquired_at = {now} \
             WHERE server_id = $1 AND replica = $2 AND expires_at >= {now}"
        );
        let done = sqlx::query(sqlx::AssertSqlSafe(transfer))
            .bind(server_id)
            .bind(from)
            .bind(to)
            .bind(ttl.as_secs_f64())
            .execute(&self.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Says `replica` is up for `ttl` more, and, when `bus` (its NATS is connected), that it
    /// reaches NATS now; `joined_at` starts again when its row had lapsed.
    #[instrument(skip_all, fields(replica))]
    pub async fn replica_alive(
        &self,
        replica: &str,
        ttl: Duration,
        bus: bool,
    ) -> Result<(), StoreError> {
        let now = self.backend.now();
        let alive = format!(
            "INSERT INTO replicas (replica, expires_at, joined_at, bus_at) \
             VALUES ($1, {now} + $2, {now}, CASE WHEN $3 = 1 THEN {now} ELSE NULL END) \
             ON CONFLICT (replica) DO UPDATE SET expires_at = excluded.expires_at, \
             joined_at = CASE WHEN replicas.expires_at >= {now} \
             THEN replicas.joined_at ELSE excluded.joined_at END, \
             bus_at = COALESCE(excluded.bus_at, replicas.bus_at)"
        );
        sqlx::query(sqlx::AssertSqlSafe(alive))
            .bind(replica)
            .bind(ttl.as_secs_f64())
            .bind(i64::from(bus))
            .execute(&self.pool)
            .await?;
        // The rows of replicas that died without saying so (killed, their node lost), once
        // they have been gone for `DEAD_REPLICA_KEPT` leases: one coming back after that joins
        // afresh, as it would have anyway.
        let dead = format!("DELETE FROM replicas WHERE expires_at < {now} - $1");
        sqlx::query(sqlx::AssertSqlSafe(dead))
            .bind(DEAD_REPLICA_KEPT * ttl.as_secs_f64())
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// `replica` is stopping: the others stop counting it at once.
    #[instrument(skip_all, fields(replica))]
    pub async fn replica_gone(&self, replica: &str) -> Result<(), StoreError> {
        sqlx::query("DELETE FROM replicas WHERE replica = $1")
            .bind(replica)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Whether another live replica than `replica` reached NATS within the last `lease`, and
    /// at least `margin` after `replica` last did: NATS is up and `replica` alone is cut off
    /// from it (when NATS is down for all, the others lost it about when `replica` did).
    #[instrument(skip_all, fields(replica))]
    pub async fn bus_reached_elsewhere(
        &self,
        replica: &str,
        lease: Duration,
        margin: Duration,
    ) -> Result<bool, StoreError> {
        let now = self.backend.now();
        let reached = format!(
            "SELECT COUNT(*) FROM replicas WHERE replica <> $1 AND expires_at >= {now} \
             AND bus_at >= {now} - $2 \
             AND bus_at >= COALESCE((SELECT bus_at FROM replicas WHERE replica = $1), 0) + $3"
        );
        let count: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(reached))
            .bind(replica)
            .bind(lease.as_secs_f64())
            .bind(margin.as_secs_f64())
            .fetch_one(&self.pool)
            .await?;
        Ok(count > 0)
    }

    /// The replicas up now, each with how long (seconds) it has been up without a break.
    #[instrument(skip_all)]
    pub async fn live_replicas(&self) -> Result<HashMap<String, f64>, StoreError> {
        let now = self.backend.now();
        let live =
            format!("SELECT replica, {now} - joined_at FROM replicas WHERE expires_at >= {now}");
        let rows: Vec<(String, f64)> = sqlx::query_as(sqlx::AssertSqlSafe(live))
            .fetch_all(&self.pool)
            .await?;
        Ok(rows.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing::{backends, with_servers};

    const TTL: Duration = Duration::from_secs(60);

    /// Moves every lease `by` seconds into the past, as time passing would.
    async fn age(store: &Store, by: f64) {
        sqlx::query("UPDATE leases SET expires_at = expires_at - $1")
            .bind(by)
            .execute(&store.pool)
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn one_replica_holds_a_lease_while_it_is_live() {
        for db in backends().await {
            let store = db.open().await;
            with_servers(&store, &["fs", "git"]).await;
            assert!(store.claim_lease("fs", "r1", TTL).await.unwrap());
            assert!(!store.claim_lease("fs", "r2", TTL).await.unwrap());
            // Claiming again extends its own lease.
            assert!(store.claim_lease("fs", "r1", TTL).await.unwrap());
            assert!(store.claim_lease("git", "r2", TTL).await.unwrap());
            let holders = store.lease_holders().await.unwrap();
            assert_eq!(
                holders,
                HashMap::from([("fs".into(), "r1".into()), ("git".into(), "r2".into())])
            );
            assert!(matches!(
                store.claim_lease("ghost", "r1", TTL).await,
                Err(StoreError::NotFound)
            ));
            // Removed with its server.
            store.delete_server("git").await.unwrap();
            assert_eq!(store.lease_holders().await.unwrap().len(), 1);
        }
    }

    #[tokio::test]
    async fn racing_replicas_never_both_win() {
        for db in backends().await {
            let store = db.open().await;
            with_servers(&store, &["fs"]).await;
            let claims = (0..8).map(|i| {
                let store = store.clone();
                tokio::spawn(async move {
                    store
                        .claim_lease("fs", &format!("r{i}"), TTL)
                        .await
                        .unwrap()
                })
            });
            let won = futures::future::join_all(claims)
                .await
                .into_iter()
                .filter(|won| *won.as_ref().unwrap())
                .count();
            assert_eq!(won, 1);
        }
    }

    #[tokio::test]
    async fn an_expired_lease_is_taken_over_and_its_renewal_returns_nothing() {
        for db in backends().await {
            let store = db.open().await;
            with_servers(&store, &["fs", "git"]).await;
            assert!(store.claim_lease("fs", "r1", TTL).await.unwrap());
            assert!(store.claim_lease("git", "r1", TTL).await.unwrap());
            assert_eq!(store.renew_leases("r1", TTL).await.unwrap(), ["fs", "git"]);
            age(&store, 2.0 * TTL.as_secs_f64()).await;
            assert!(store.lease_holders().await.unwrap().is_empty(), "expired");
            assert!(store.claim_lease("fs", "r2", TTL).await.unwrap());
            assert_eq!(
                store.lease_holders().await.unwrap(),
                HashMap::from([("fs".into(), "r2".into())])
            );
            // r1 comes back: it holds nothing any more, and must claim what it wants again.
            assert!(store.renew_leases("r1", TTL).await.unwrap().is_empty());
            assert!(!store.claim_lease("fs", "r1", TTL).await.unwrap());
            assert!(store.claim_lease("git", "r1", TTL).await.unwrap());
            assert_eq!(store.renew_leases("r1", TTL).await.unwrap(), ["git"]);
            assert_eq!(store.renew_leases("r2", TTL).await.unwrap(), ["fs"]);
        }
    }

    #[tokio::test]
    async fn a_lease_expires_on_the_database_clock() {
        for db in backends().await {
            let store = db.open().await;
            with_servers(&store, &["fs"]).await;
            // Long enough that a loaded machine does not see it expire between two statements.
            let short = Duration::from_secs(1);
            assert!(store.claim_lease("fs", "r1", short).await.unwrap());
            assert!(!store.claim_lease("fs", "r2", short).await.unwrap());
            tokio::time::sleep(Duration::from_millis(1500)).await;
            assert!(store.claim_lease("fs", "r2", short).await.unwrap());
            let (expires_at, acquired_at): (f64, f64) =
                sqlx::query_as("SELECT expires_at, acquired_at FROM leases")
                    .fetch_one(&store.pool)
                    .await
                    .unwrap();
            let now = crate::a2e::now();
            let ttl = expires_at - acquired_at;
            assert!((ttl - 1.0).abs() < 0.01, "{expires_at} - {acquired_at}");
            assert!((acquired_at - now).abs() < 5.0, "{acquired_at} vs {now}");
        }
    }

    #[tokio::test]
    async fn a_lease_is_handed_to_another_replica_only_by_its_holder() {
        for db in backends().await {
            let store = db.open().await;
            with_servers(&store, &["fs"]).await;
            assert!(store.claim_lease("fs", "r1", TTL).await.unwrap());
            assert!(!store.transfer_lease("fs", "r2", "r3", TTL).await.unwrap());
            assert!(store.transfer_lease("fs", "r1", "r2", TTL).await.unwrap());
            let tenures = store.lease_tenures().await.unwrap();
            assert_eq!(tenures["fs"].0, "r2");
            // The new holder finds it when it renews; the old one holds nothing.
            assert_eq!(store.renew_leases("r2", TTL).await.unwrap(), ["fs"]);
            assert!(store.renew_leases("r1", TTL).await.unwrap().is_empty());
            // An expired lease is not handed over (another replica may be taking it).
            age(&store, 2.0 * TTL.as_secs_f64()).await;
            assert!(!store.transfer_lease("fs", "r2", "r1", TTL).await.unwrap());
        }
    }

    #[tokio::test]
    async fn replicas_are_live_while_they_say_so_and_rejoin_afresh() {
        for db in backends().await {
            let store = db.open().await;
            store.replica_alive("r1", TTL, true).await.unwrap();
            store.replica_alive("r2", TTL, true).await.unwrap();
            sqlx::query("UPDATE replicas SET joined_at = joined_at - 30")
                .execute(&store.pool)
                .await
                .unwrap();
            store.replica_alive("r1", TTL, true).await.unwrap();
            let live = store.live_replicas().await.unwrap();
            assert_eq!(live.len(), 2);
            assert!(live["r1"] >= 29.0, "kept its start: {live:?}");
            store.replica_gone("r2").await.unwrap();
            assert_eq!(store.live_replicas().await.unwrap().len(), 1);
            // Lapsed, then back: up since now.
            sqlx::query("UPDATE replicas SET expires_at = expires_at - 1000")
                .execute(&store.pool)
                .await
                .unwrap();
            assert!(store.live_replicas().await.unwrap().is_empty());
            store.replica_alive("r1", TTL, true).await.unwrap();
            assert!(store.live_replicas().await.unwrap()["r1"] < 5.0);
        }
    }

    #[tokio::test]
    async fn released_leases_are_free_at_once() {
        for db in backends().await {
            let store = db.open().await;
            with_servers(&store, &["fs", "git", "web"]).await;
            for id in ["fs", "git"] {
                assert!(store.claim_lease(id, "r1", TTL).await.unwrap());
            }
            assert!(store.claim_lease("web", "r2", TTL).await.unwrap());
            // Only the holder's release counts.
            store.release_lease("fs", "r2").await.unwrap();
            assert!(!store.claim_lease("fs", "r2", TTL).await.unwrap());
            store.release_lease("fs", "r1").await.unwrap();
            assert!(store.claim_lease("fs", "r2", TTL).await.unwrap());
            store.release_leases("r1").await.unwrap();
            assert_eq!(
                store.lease_holders().await.unwrap(),
                HashMap::from([("fs".into(), "r2".into()), ("web".into(), "r2".into())])
            );
            assert!(store.renew_leases("r1", TTL).await.unwrap().is_empty());
            assert!(store.claim_lease("git", "r3", TTL).await.unwrap());
        }
    }

    /// A replica that died without saying so (killed, its node lost) leaves its row; once it
    /// has been gone for a bound the others delete it, so the table does not grow with every
    /// replica id a deployment ever used.
    #[tokio::test]
    async fn the_rows_of_replicas_long_gone_are_deleted() {
        for db in backends().await {
            let store = db.open().await;
            store.replica_alive("r1", TTL, true).await.unwrap();
            store.replica_alive("dead", TTL, true).await.unwrap();
            store.replica_alive("lapsed", TTL, true).await.unwrap();
            // `dead` stopped renewing long ago, `lapsed` only just.
            sqlx::query("UPDATE replicas SET expires_at = expires_at - $1 WHERE replica = 'dead'")
                .bind(100.0 * TTL.as_secs_f64())
                .execute(&store.pool)
                .await
                .unwrap();
            sqlx::query(
                "UPDATE replicas SET expires_at = expires_at - $1 WHERE replica = 'lapsed'",
            )
            .bind(2.0 * TTL.as_secs_f64())
            .execute(&store.pool)
            .await
            .unwrap();
            store.replica_alive("r1", TTL, true).await.unwrap();
            let mut rows: Vec<String> = sqlx::query_scalar("SELECT replica FROM replicas")
                .fetch_all(&store.pool)
                .await
                .unwrap();
            rows.sort();
            assert_eq!(rows, ["lapsed", "r1"]);
        }
    }

    #[tokio::test]
    async fn the_bus_is_reached_elsewhere_only_when_another_replica_reached_it_well_after() {
        let lease = Duration::from_secs(10);
        let margin = Duration::from_secs(5);
        for db in backends().await {
            let store = db.open().await;
            // Both reach NATS now: nobody is cut off.
            store.replica_alive("r1", TTL, true).await.unwrap();
            store.replica_alive("r2", TTL, true).await.unwrap();
            assert!(
                !store
                    .bus_reached_elsewhere("r1", lease, margin)
                    .await
                    .unwrap()
            );
            // Both lost it 8 seconds ago (NATS down for all), and say they are up without it:
            // their last contact with the bus stays where it was.
            sqlx::query("UPDATE replicas SET bus_at = bus_at - 8")
                .execute(&store.pool)
                .await
                .unwrap();
            store.replica_alive("r1", TTL, false).await.unwrap();
            store.replica_alive("r2", TTL, false).await.unwrap();
            assert!(
                !store
                    .bus_reached_elsewhere("r1", lease, margin)
                    .await
                    .unwrap()
            );
            // r2 reaches it again, r1 not: r1 alone is cut off.
            store.replica_alive("r2", TTL, true).await.unwrap();
            assert!(
                store
                    .bus_reached_elsewhere("r1", lease, margin)
                    .await
                    .unwrap()
            );
            assert!(
                !store
                    .bus_reached_elsewhere("r2", lease, margin)
                    .await
                    .unwrap()
            );
            // Only while r2 is live, and its contact recent.
            sqlx::query("UPDATE replicas SET bus_at = bus_at - 11 WHERE replica = 'r2'")
                .execute(&store.pool)
                .await
                .unwrap();
            assert!(
                !store
                    .bus_reached_elsewhere("r1", lease, margin)
                    .await
                    .unwrap()
            );
            store.replica_alive("r2", TTL, true).await.unwrap();
            store.replica_gone("r2").await.unwrap();
            assert!(
                !store
                    .bus_reached_elsewhere("r1", lease, margin)
                    .await
                    .unwrap()
            );
        }
    }
}
