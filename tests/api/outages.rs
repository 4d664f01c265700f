//! Replicas while PostgreSQL is away: readiness keeps them in a load balancer for one lease, and
//! what cannot work without the database says so with a retryable 503. Skipped unless
//! `MCP_BRIDGE_TEST_POSTGRES` and `MCP_BRIDGE_TEST_NATS` are set (scripts/test.sh sets both).

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

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

#[tokio::test]
async fn registering_an_oauth_server_while_the_database_is_away_is_a_retryable_503() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let peer = oauth_peer(&[]).await;
    let (mut proxy, direct) = replicas.database_through_proxy().await;
    let lease = [("MCP_BRIDGE_LEASE_SECS", "30")];
    let a = replicas.start_with("a", &lease).await;

    proxy.cut().await;
    let config = json!({"server_id": "guarded", "transport": "http", "url": peer.url,
        "connect_timeout": 5});
    let (status, body) = a
        .app
        .post("/v1/servers", &a.app.alice, json!({ "config": config }))
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["code"], "mcp_server_unavailable", "{body}");
    assert_eq!(body["retryable"], true, "{body}");
    proxy.restore().await;
    replicas.database = direct;
    a.wait_ready().await;
    let (status, body) = a
        .app
        .post("/v1/servers", &a.app.alice, json!({ "config": config }))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

#[tokio::test]
async fn an_mcp_call_whose_server_connection_is_lost_says_it_is_retryable() {
    let app = spawn_app().await;
    let marker = unique("lost");
    app.register_server(py_stdio("lost", &marker)).await;
    app.wait_status("lost", "ready", WAIT).await;
    let dir = tempfile::tempdir().unwrap();
    let started = dir.path().join("started");
    let call = {
        let (base, token) = (app.base.clone(), app.bob.clone());
        let started = started.to_string_lossy().into_owned();
        let app = TestApp::at(&base, app.data_dir.clone());
        tokio::spawn(async move {
            let arguments = json!({"seconds": 60, "started": started});
            let resp = app
                .stateless_mcp_call(&token, "lost__slow", arguments, json!({}))
                .await;
            resp.text().await.unwrap()
        })
    };
    wait_until(
        "the call reaching the server",
        WAIT,
        async || match started.exists() {
            true => Ok(()),
            false => Err("not started".to_owned()),
        },
    )
    .await;
    for pid in pids_with_marker(&marker) {
        std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap();
    }
    let text = tokio::time::timeout(WAIT, call).await.unwrap().unwrap();
    let json_text = text
        .lines()
        .find_map(|l| l.strip_prefix("data: ").filter(|d| !d.is_empty()))
        .unwrap_or(&text);
    let body: Value = serde_json::from_str(json_text).unwrap_or_else(|_| panic!("{text}"));
    let result = &body["result"];
    assert_eq!(result["isError"], true, "{body}");
    let error = &result["_meta"]["mcp-bridge/error"];
    assert_eq!(error["code"], "mcp_server_unavailable", "{body}");
    assert_eq!(error["retryable"], true, "{body}");
}

/// The peer's grant behind `replica`'s call of `whoami` as `token`, once such a call works.
async fn grant_of(replica: &Replica, server_id: &str, token: &str) -> Value {
    let name = format!("{server_id}__whoami");
    wait_until("a whoami call working", WAIT, async || {
        match replica.app.call_as(token, &name, json!({})).await {
            (StatusCode::OK, body) if body["is_error"] == false => {
                let text = body["content"][0]["text"].as_str().unwrap_or_default();
                let who: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
                Ok(who["grant"].clone())
            }
            (status, body) => Err(format!("{status} {body}")),
        }
    })
    .await
}

#[tokio::test]
async fn a_per_agent_grant_authorized_again_elsewhere_replaces_the_holders_session() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let peer = oauth_peer(&[]).await;
    let id = unique("pa");
    let config = json!({"server_id": id, "transport": "http", "url": peer.url,
        "connect_timeout": 5, "auth": {"type": "oauth2", "per_agent": true}});
    let (status, body) = a
        .app
        .post("/v1/servers", &a.app.alice, json!({ "config": config }))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    a.app.wait_status(&id, "auth_required", WAIT).await;

    // Alice's grant is the one the server's own connection (on a) uses.
    let owner = a.app.authorization_url(&id, &a.app.alice).await;
    assert_eq!(approve(&owner).await.status, StatusCode::OK);
    grant_of(&a, &id, &a.app.alice).await;

    // Bob authorizes through b, which does not hold the server; his own session opens on a.
    let first = b.app.authorization_url(&id, &b.app.bob).await;
    assert_eq!(approve(&first).await.status, StatusCode::OK);
    let old = grant_of(&b, &id, &b.app.bob).await;
    assert_eq!(grant_of(&a, &id, &a.app.bob).await, old);

    // Again through b: the session on a must go over the new grant.
    let again = b.app.authorization_url(&id, &b.app.bob).await;
    assert_eq!(approve(&again).await.status, StatusCode::OK);
    for replica in [&a, &b] {
        let new = grant_of(replica, &id, &replica.app.bob).await;
        assert_ne!(new, old, "{}: still the old grant", replica.id);
    }
}
