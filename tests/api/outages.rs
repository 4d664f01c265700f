//! Replicas while PostgreSQL is away: readiness keeps them in a load balancer for one lease, and
//! what cannot work without the database says so with a retryable 503. Skipped unless
//! `MCP_BRIDGE_TEST_POSTGRES` and `MCP_BRIDGE_TEST_NATS` are set (scripts/test.sh sets both).

use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::cluster::*;
use crate::helpers::*;

async fn readyz(replica: &Replica) -> (StatusCode, Value) {
    replica.app.send(Method::GET, "/readyz", None, None).await
}

#[tokio::test]
async fn readiness_outlasts_a_database_outage_by_one_lease() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let (mut proxy, direct) = replicas.database_through_proxy().await;
    let lease = [("MCP_BRIDGE_LEASE_SECS", "6")];
    let a = replicas.start_with("a", &lease).await;
    let b = replicas.start_with("b", &lease).await;

    proxy.cut().await;
    // Within the lease every replica stays ready, saying the store is away.
    for replica in [&a, &b] {
        wait_until(
            "readiness noticing the store is away",
            WAIT,
            async || match readyz(replica).await {
                (StatusCode::OK, body) if body["status"] != "ok" => Ok(body),
                other => Err(format!("{}: {other:?}", replica.id)),
            },
        )
        .await;
    }
    // Past it, unready.
    for replica in [&a, &b] {
        wait_until(
            "readiness giving up after a lease",
            WAIT,
            async || match readyz(replica).await {
                (StatusCode::SERVICE_UNAVAILABLE, body) => Ok(body),
                other => Err(format!("{}: {other:?}", replica.id)),
            },
        )
        .await;
    }
    proxy.restore().await;
    replicas.database = direct;
    for replica in [&a, &b] {
        replica.wait_ready().await;
        let (_, body) = readyz(replica).await;
        assert_eq!(body["status"], "ok", "{body}");
    }
}
