//! A bridge as its own upstream (issue 15, item 1): the bridge's `/mcp` refuses requests that
//! carry the hop marker every bridge sets on its upstream requests, so registering it (or
//! another bridge) is refused with a clear 422, a chain of two bridges cannot form, and a stored
//! server that turns out to be the bridge itself does not connect but stays stored.

use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

fn bridge_as_upstream(server_id: &str, base: &str, token: &str) -> Value {
    json!({
        "server_id": server_id,
        "transport": "http",
        "url": format!("{base}/mcp"),
        "headers": { "Authorization": format!("Bearer {token}") },
    })
}

#[tokio::test]
async fn registering_the_bridges_own_mcp_is_refused() {
    let app = spawn_app().await;
    let config = bridge_as_upstream("me", &app.base, &app.alice);
    let (status, body) = app
        .post("/v1/servers", &app.alice, json!({ "config": config }))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["code"], "invalid_request", "{body}");
    assert_eq!(body["retryable"], false, "{body}");
    let error = body["error"].as_str().unwrap();
    assert!(error.contains("mcp-bridge"), "{error}");
    assert!(error.contains("loop"), "{error}");
    // Nothing stored, and the merged listings answer at once.
    let (status, _) = app.get("/v1/servers/me", &app.admin).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let listed = tokio::time::timeout(Duration::from_secs(2), app.get("/v1/resources", &app.alice))
        .await
        .expect("resources listed within 2 s");
    assert_eq!(listed.0, StatusCode::OK);
}

#[tokio::test]
async fn mcp_refuses_a_request_that_a_bridge_sent() {
    let app = spawn_app().await;
    let resp = app
        .client
        .post(format!("{}/mcp", app.base))
        .bearer_auth(&app.alice)
        .header("mcp-bridge-hop", "some-other-bridge")
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::LOOP_DETECTED);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["id"], 7, "{body}");
    assert_eq!(body["error"]["code"], -32600, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("another mcp-bridge"),
        "{body}"
    );
}

#[tokio::test]
async fn two_bridges_cannot_be_chained_into_a_loop() {
    let app = spawn_app().await;
    let dir = tempfile::tempdir().unwrap();
    let other = start_bridge(dir.path()).await;
    // The other bridge (a separate process: another instance id) registering this one, and
    // this one registering the other: both refused, so no chain A -> B -> A can form.
    let client = reqwest::Client::new();
    let resp = client
        .post(format!("{}/v1/servers", other.base))
        .bearer_auth(&app.alice)
        .json(&json!({ "config": bridge_as_upstream("a", &app.base, &app.alice) }))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body: Value = resp.json().await.unwrap();
    assert!(
        body["error"].as_str().unwrap().contains("mcp-bridge"),
        "{body}"
    );
    let config = bridge_as_upstream("b", &other.base, &app.alice);
    let (status, body) = app
        .post("/v1/servers", &app.alice, json!({ "config": config }))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    // Both still answer their listings at once.
    for base in [&app.base, &other.base] {
        let resp = tokio::time::timeout(
            Duration::from_secs(2),
            client
                .get(format!("{base}/v1/resources"))
                .bearer_auth(&app.alice)
                .send(),
        )
        .await
        .expect("listed within 2 s")
        .unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
    }
}

#[tokio::test]
async fn a_stored_server_that_is_the_bridge_itself_does_not_connect_and_is_kept() {
    // Registered while another server held the port; the bridge restarts on that port.
    let port = free_port();
    let peer = py_http_on(port, &[]).await;
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let first = spawn_app_in(data_dir.clone()).await;
    let config = bridge_as_upstream("self", &format!("http://127.0.0.1:{port}"), &first.alice);
    let (status, body) = first
        .post("/v1/servers", &first.alice, json!({ "config": config }))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    first.stop().await;
    peer.stop().await;
    let mut config = crate::helpers::config(data_dir.path());
    config.bind = format!("127.0.0.1:{port}");
    let app = spawn_app_with(data_dir, config).await;
    let listed = tokio::time::timeout(Duration::from_secs(5), app.get("/v1/resources", &app.alice))
        .await
        .expect("resources listed within 5 s after the restart");
    assert_eq!(listed.0, StatusCode::OK);
    let what = "an error naming the loop";
    wait_until(what, Duration::from_secs(10), async || {
        let (status, body) = app.get("/v1/servers/self", &app.admin).await;
        assert_eq!(status, StatusCode::OK, "the stored server is kept: {body}");
        let server = &body["server"];
        assert_ne!(server["status"], "ready", "{body}");
        let error = server["error"].as_str().unwrap_or_default();
        match error.contains("mcp-bridge") {
            true => Ok(()),
            false => Err(body.to_string()),
        }
    })
    .await;
}
