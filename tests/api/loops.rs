//! A bridge as its own upstream (issue 15, item 1): the bridge's `/mcp` refuses requests that
//! carry the hop marker every bridge sets on its upstream requests, so registering it (or
//! another bridge) is refused with a clear 422, a chain of two bridges cannot form, and a stored
//! server that turns out to be the bridge itself does not connect but stays stored. Through a
//! stdio proxy (the real mcp-remote from npm), which drops the hop header, the bridge recognises
//! itself and other bridges by what its initialize result advertises (issue 34, item 11).

use std::path::Path;
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
    first.register_server_as(&first.alice, config).await;
    first.stop().await;
    peer.stop().await;
    let app = TestApp::builder()
        .data_dir(&data_dir)
        .configure(move |c| c.bind = format!("127.0.0.1:{port}"))
        .spawn()
        .await;
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

/// A stdio proxy of the `/mcp` at `base` holding `token`: the real mcp-remote from npm, as a
/// Claude Desktop import brings it in (the token in its environment, which mcp-remote expands
/// in `--header`, so the API shows it as `***`). `marker` finds its process; its state stays in
/// `dir`.
fn mcp_remote(server_id: &str, base: &str, token: &str, marker: &str, dir: &Path) -> Value {
    let url = format!("{base}/mcp");
    let args = [
        url.as_str(),
        "--header",
        "Authorization: Bearer ${AUTH_TOKEN}",
        "--transport",
        "http-only",
    ];
    let mut config = npm_stdio(server_id, "mcp-remote", &args);
    config["env"] = json!({
        "AUTH_TOKEN": token,
        "FIXTURE_MARKER": marker,
        "MCP_REMOTE_CONFIG_DIR": dir,
    });
    config
}

/// The requests `/mcp` at `base` has answered, as its `/metrics` counts them.
async fn mcp_requests(base: &str) -> u64 {
    let text = reqwest::get(format!("{base}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .filter(|line| line.starts_with("mcp_bridge_http_requests_total{"))
        .filter(|line| line.contains("route=\"/mcp\""))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64
}

#[tokio::test]
async fn the_bridge_through_a_stdio_proxy_of_its_own_mcp_is_refused() {
    let app = spawn_app().await;
    let dir = tempfile::tempdir().unwrap();
    let marker = unique("mcp-remote");
    let config = mcp_remote("me", &app.base, &app.admin, &marker, dir.path());
    let (status, body) = app
        .post("/v1/servers", &app.admin, json!({ "config": config }))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["code"], "invalid_request", "{body}");
    let error = body["error"].as_str().unwrap();
    assert!(
        error.contains("the server is this mcp-bridge itself"),
        "{error}"
    );
    assert!(error.contains("mcp-remote"), "{error}");
    // Nothing stored, the proxy is gone, and nothing reaches /mcp through it any more while the
    // merged listings are asked for.
    let (status, _) = app.get("/v1/servers/me", &app.admin).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    wait_until(
        "the proxy stopped",
        WAIT,
        async || match pids_with_marker(&marker).as_slice() {
            [] => Ok(()),
            pids => Err(format!("{pids:?}")),
        },
    )
    .await;
    let before = mcp_requests(&app.base).await;
    for _ in 0..3 {
        for path in ["/v1/resources", "/v1/prompts", "/v1/resources/templates"] {
            let (status, body) = app.get(path, &app.alice).await;
            assert_eq!(status, StatusCode::OK, "{path}: {body}");
        }
        // A negative over time: no /mcp request comes in the meantime either.
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    assert_eq!(mcp_requests(&app.base).await, before, "/mcp was called");
}

#[tokio::test]
async fn bridges_chained_through_stdio_proxies_cannot_close_a_loop() {
    let app = spawn_app().await;
    let dir = tempfile::tempdir().unwrap();
    let other = start_bridge(dir.path()).await;
    // This bridge over the other one, through mcp-remote: a chain of two, allowed.
    let marker = unique("mcp-remote");
    let config = mcp_remote("b", &other.base, &app.admin, &marker, dir.path());
    app.register_server(config).await;
    app.wait_status("b", "ready", WAIT).await;
    // This bridge now says it reaches the other one, at depth 2.
    let report = mcp_initialize(&app.base, &app.alice).await;
    let chain = &report["result"]["capabilities"]["experimental"]["mcp-bridge"];
    assert_eq!(chain["depth"], 2, "{report}");
    assert_eq!(chain["below"].as_array().map(Vec::len), Some(1), "{report}");

    // The other bridge registering this one, through mcp-remote too, would close the loop.
    let marker = unique("mcp-remote");
    let config = mcp_remote("a", &app.base, &app.admin, &marker, dir.path());
    let resp = reqwest::Client::new()
        .post(format!("{}/v1/servers", other.base))
        .bearer_auth(&app.admin)
        .json(&json!({ "config": config }))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body: Value = resp.json().await.unwrap();
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("would close a loop of bridges"),
        "{body}"
    );
    let listed = tokio::time::timeout(Duration::from_secs(5), app.get("/v1/resources", &app.alice))
        .await
        .expect("resources listed within 5 s");
    assert_eq!(listed.0, StatusCode::OK);
}

/// The result of a plain 2025-11-25 `initialize` on the `/mcp` at `base`.
async fn mcp_initialize(base: &str, token: &str) -> Value {
    let resp = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let text = resp.text().await.unwrap();
    // JSON, or one SSE event carrying it.
    let json = text
        .lines()
        .find_map(|line| line.strip_prefix("data:").filter(|d| !d.trim().is_empty()))
        .unwrap_or(&text)
        .trim();
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[tokio::test]
async fn a_stored_proxy_that_turns_out_to_be_the_bridge_itself_never_becomes_ready() {
    // mcp-remote registered while another server held the port; the bridge restarts on it.
    let port = free_port();
    let peer = py_http_on(port, &[]).await;
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let remote_dir = tempfile::tempdir().unwrap();
    let first = spawn_app_in(data_dir.clone()).await;
    let base = format!("http://127.0.0.1:{port}");
    let marker = unique("mcp-remote");
    let config = mcp_remote("proxy", &base, &first.admin, &marker, remote_dir.path());
    first.register_server(config).await;
    first.wait_status("proxy", "ready", WAIT).await;
    first.stop().await;
    peer.stop().await;
    let app = TestApp::builder()
        .data_dir(&data_dir)
        .configure(move |c| c.bind = format!("127.0.0.1:{port}"))
        .spawn()
        .await;
    wait_until("an error naming the bridge itself", WAIT, async || {
        let (status, body) = app.get("/v1/servers/proxy", &app.admin).await;
        assert_eq!(status, StatusCode::OK, "the stored server is kept: {body}");
        let server = &body["server"];
        assert_ne!(server["status"], "ready", "{body}");
        let error = server["error"].as_str().unwrap_or_default();
        match error.contains("the server is this mcp-bridge itself") {
            true => Ok(()),
            false => Err(body.to_string()),
        }
    })
    .await;
    // Never ready, and nothing of it in the merged listings.
    for _ in 0..3 {
        let (_, body) = app.get("/v1/servers/proxy", &app.admin).await;
        assert_ne!(body["server"]["status"], "ready", "{body}");
        let listed = tokio::time::timeout(Duration::from_secs(5), app.get("/v1/tools", &app.alice))
            .await
            .expect("tools listed within 5 s");
        assert_eq!(listed.0, StatusCode::OK);
        assert!(!listed.1.to_string().contains("proxy__"), "{}", listed.1);
        // "Never" can only be checked over time.
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}
