//! `/mcp` sessions in the shared store: the cap on open sessions across replicas, expired and
//! ended sessions removed, a session that only listens kept, limits checked before the database,
//! and a delete or a task request reaching a session another replica holds.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;

use crate::cluster::*;
use crate::helpers::*;

use super::RoundRobin;

/// The shared database of `replicas`, to look at (and age) the sessions it holds.
async fn database(replicas: &Replicas) -> sqlx::PgConnection {
    use sqlx::Connection;
    sqlx::PgConnection::connect(&replicas.database)
        .await
        .unwrap()
}

/// Where session `id` listens, as the shared database says (`None`: nowhere, or no such row).
async fn stream_replica(db: &mut sqlx::PgConnection, id: &str) -> Option<String> {
    sqlx::query_scalar("SELECT stream_replica FROM mcp_sessions WHERE session_id = $1")
        .bind(id)
        .fetch_optional(db)
        .await
        .unwrap()
        .flatten()
}

/// An initialize opening a new session on `replica` for `token`: its status.
async fn initialize(replica: &Replica, token: &str) -> StatusCode {
    let client = RoundRobin::new(&[replica], token);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "racer", "version": "1"}}});
    client
        .send(reqwest::Method::POST, Some(body))
        .await
        .status()
}

/// Concurrent opens by one agent on three replicas cannot pass its cap together: the count and
/// the recording are one step in the store.
#[tokio::test]
async fn concurrent_opens_on_every_replica_stay_within_the_cap() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let cap = [("MCP_BRIDGE_AGENT_MCP_SESSIONS", "2")];
    let a = replicas.start_with("a", &cap).await;
    let b = replicas.start_with("b", &cap).await;
    let c = replicas.start_with("c", &cap).await;
    let opens =
        [&a, &b, &c, &a, &b, &c, &a, &b, &c].map(|replica| initialize(replica, &a.app.alice));
    let statuses = futures::future::join_all(opens).await;
    let opened = statuses.iter().filter(|s| **s == StatusCode::OK).count();
    assert!(
        opened <= 2,
        "{opened} sessions opened past a cap of 2: {statuses:?}"
    );
    assert!(
        statuses
            .iter()
            .all(|s| *s == StatusCode::OK || *s == StatusCode::TOO_MANY_REQUESTS),
        "{statuses:?}"
    );
    let mut db = database(&replicas).await;
    let kept: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM mcp_sessions")
        .fetch_one(&mut db)
        .await
        .unwrap();
    assert_eq!(usize::try_from(kept).unwrap(), opened);
}

/// Without a per-agent cap, expired sessions are removed from the store all the same (here
/// when another session opens).
#[tokio::test]
async fn expired_sessions_are_removed_without_a_cap() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let no_cap = [("MCP_BRIDGE_AGENT_MCP_SESSIONS", "0")];
    let a = replicas.start_with("a", &no_cap).await;
    let b = replicas.start_with("b", &no_cap).await;
    let mut old = RoundRobin::new(&[&a], &a.app.alice);
    old.open(json!({})).await;
    let old = old.session.unwrap();
    let mut db = database(&replicas).await;
    sqlx::query("UPDATE mcp_sessions SET used_at = used_at - 100000 WHERE session_id = $1")
        .bind(&old)
        .execute(&mut db)
        .await
        .unwrap();
    assert_eq!(initialize(&b, &b.app.alice).await, StatusCode::OK);
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM mcp_sessions WHERE session_id = $1")
        .bind(&old)
        .fetch_one(&mut db)
        .await
        .unwrap();
    assert_eq!(left, 0, "the expired session is still stored");
}

/// A session whose GET stream ends no longer names the replica that held it.
#[tokio::test]
async fn an_ended_get_stream_is_no_longer_where_the_session_listens() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let mut client = RoundRobin::new(&[&a, &b], &a.app.alice);
    client.open(json!({})).await; // a, then b
    let id = client.session.clone().unwrap();
    let stream = client.send(reqwest::Method::GET, None).await; // a
    assert_eq!(stream.status(), StatusCode::OK);
    let mut db = database(&replicas).await;
    assert_eq!(stream_replica(&mut db, &id).await.as_deref(), Some("a"));
    drop(stream); // the client goes away
    wait_until(
        "the stream's replica forgotten",
        Duration::from_secs(40),
        async || match stream_replica(&mut db, &id).await {
            None => Ok(()),
            Some(replica) => Err(replica),
        },
    )
    .await;
}

/// A client that only listens on its GET stream keeps its shared session past the idle
/// timeout (3 s here): the replica holding the stream marks it used.
#[tokio::test]
async fn a_session_that_only_listens_outlives_the_idle_timeout() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let idle = [("MCP_BRIDGE_MCP_SESSION_IDLE_SECS", "3")];
    let a = replicas.start_with("a", &idle).await;
    let b = replicas.start_with("b", &idle).await;
    let mut client = RoundRobin::new(&[&a, &b], &a.app.alice);
    client.open(json!({})).await; // a, then b
    let _stream = client.listen().await; // a
    // Time passing is what is tested: three idle timeouts with nothing but the stream open.
    tokio::time::sleep(Duration::from_secs(9)).await;
    let mut db = database(&replicas).await;
    let unused: f64 = sqlx::query_scalar(
        "SELECT extract(epoch from now())::double precision - used_at FROM mcp_sessions \
         WHERE session_id = $1",
    )
    .bind(client.session.as_deref().unwrap())
    .fetch_one(&mut db)
    .await
    .unwrap();
    assert!(
        unused < 3.0,
        "unused for {unused} s while its stream was open"
    );
    assert_eq!(client.result(2, "ping", json!({})).await, json!({})); // b
}

/// The caller's limits come before its session is looked up: while the database does not
/// answer, a caller past its rate is told so (429), not sent to the database (503).
#[tokio::test]
async fn a_sessions_limits_are_checked_before_the_database() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let (mut proxy, direct) = replicas.database_through_proxy().await;
    let env = [
        ("MCP_BRIDGE_LEASE_SECS", "30"),
        ("MCP_BRIDGE_AGENT_RATE", "1"),
        ("MCP_BRIDGE_AGENT_BURST", "2"),
    ];
    let a = replicas.start_with("a", &env).await;
    let b = replicas.start_with("b", &env).await;
    let mut on_a = RoundRobin::new(&[&a], &a.app.alice);
    on_a.open(json!({})).await;
    let mut on_b = RoundRobin::new(&[&b], &b.app.alice);
    on_b.session = on_a.session.clone();
    proxy.cut().await;
    let ping = || json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    // Five at once against a burst of two: past it even if a slow machine spreads them over
    // a refill or two.
    let pings = (0..5).map(|_| on_b.send(reqwest::Method::POST, Some(ping())));
    let statuses: Vec<StatusCode> = futures::future::join_all(pings)
        .await
        .iter()
        .map(|resp| resp.status())
        .collect();
    proxy.restore().await;
    replicas.database = direct;
    assert!(
        statuses.contains(&StatusCode::TOO_MANY_REQUESTS),
        "{statuses:?}"
    );
}

/// A session deleted on one replica closes its GET stream held on another at once.
#[tokio::test]
async fn a_delete_closes_the_sessions_stream_on_another_replica() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let mut client = RoundRobin::new(&[&a, &b], &a.app.alice);
    client.open(json!({})).await; // a, then b
    let mut stream = client.listen().await; // a
    let mut db = database(&replicas).await;
    let id = client.session.clone().unwrap();
    assert_eq!(stream_replica(&mut db, &id).await.as_deref(), Some("a"));
    let ended = client.send(reqwest::Method::DELETE, None).await; // b
    assert_eq!(ended.status(), StatusCode::NO_CONTENT);
    // At once in practice; the bound is for a loaded machine (without the notice the stream
    // stays open for good).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(12);
    loop {
        match tokio::time::timeout_at(deadline, stream.recv()).await {
            Ok(Some(_)) => continue,
            Ok(None) => break,
            Err(_) => panic!("the GET stream on a is still open 12 s after the DELETE on b"),
        }
    }
}

/// A task request of a session this replica has not seen restores the session, as any other
/// request does, instead of answering that it does not exist.
#[tokio::test]
async fn a_task_request_restores_a_session_unseen_here() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let mut on_a = RoundRobin::new(&[&a], &a.app.alice);
    on_a.open(json!({})).await;
    let mut on_b = RoundRobin::new(&[&b], &b.app.alice);
    on_b.session = on_a.session.clone();
    let listed = on_b.result(2, "tasks/list", json!({})).await; // b, which never saw it
    assert!(listed["tasks"].is_array(), "{listed}");
    assert_eq!(on_b.result(3, "ping", json!({})).await, json!({}));
}
