//! What an agent sees of other agents' servers: errors with the configured secrets hidden, a
//! stdio server's stderr lines for its owner and admins only, URLs and `cmd` arguments without
//! their credentials (issue 15).

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

/// Waits until `server_id` as `token` sees it has a non-empty `error` and `status`.
async fn wait_error(app: &TestApp, token: &str, server_id: &str, status: &str) -> Value {
    let what = format!("server {server_id} becoming {status} with an error");
    wait_until(&what, Duration::from_secs(20), async || {
        let (_, body) = app.get(&format!("/v1/servers/{server_id}"), token).await;
        let server = &body["server"];
        match server["status"] == status && !server["error"].as_str().unwrap_or("").is_empty() {
            true => Ok(server.clone()),
            false => Err(body.to_string()),
        }
    })
    .await
}

/// An upstream's URL (query value) and header secrets never reach another agent when the
/// upstream drops: not in `GET /v1/servers`, `GET /v1/servers/{id}`, nor the status pushes.
#[tokio::test]
async fn a_dropped_upstream_does_not_tell_its_url_secrets() {
    let app = TestApp::builder().watchful().spawn().await;
    let peer = py_http().await;
    let url = format!("{}?api_key=QUERYSECRET42", peer.url);
    let (status, body) = app
        .post(
            "/v1/servers",
            &app.alice,
            json!({"config": {
                "server_id": "leaky", "transport": "http", "url": url, "connect_timeout": 2,
                "headers": {"Authorization": "Bearer HEADERSECRET42"}
            }}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let mut events = EventStream::open(&app, &app.bob, None).await;
    let port = peer.port();
    peer.stop().await;
    let seen = wait_error(&app, &app.bob, "leaky", "error").await;
    let error = seen["error"].as_str().unwrap();
    // Said in words (issue 34): the address, not the URL with its query.
    assert!(
        error.contains(&format!("connection refused by 127.0.0.1:{port}")),
        "the failure is named: {error}"
    );
    let (_, list) = app.get("/v1/servers", &app.bob).await;
    let (_, one) = app.get("/v1/servers/leaky", &app.bob).await;
    let pushes = events.drain(Duration::from_millis(500)).await;
    assert!(
        pushes
            .iter()
            .any(|m| m.data["method"] == "bridge/server_status"),
        "a status push arrived: {pushes:?}"
    );
    for shown in [list.to_string(), one.to_string(), format!("{pushes:?}")] {
        assert!(!shown.contains("QUERYSECRET42"), "{shown}");
        assert!(!shown.contains("HEADERSECRET42"), "{shown}");
    }
    app.stop().await;
}

/// A stdio server's stderr lines (it may print its key) reach its owner and admins only; a
/// configured secret in them is hidden from everyone.
#[tokio::test]
async fn a_stderr_tail_goes_to_the_owner_and_admins_only() {
    let app = TestApp::builder().watchful().spawn().await;
    let marker = unique("tail");
    let mut config = py_stdio("talker", &marker);
    let cmd = config["cmd"].as_array().unwrap().clone();
    let mut wrapped = vec![
        json!("sh"),
        json!("-c"),
        json!("echo \"using key $API_KEY for sk-live-TAILONLY\" >&2; exec \"$@\""),
        json!("sh"),
    ];
    wrapped.extend(cmd);
    config["cmd"] = json!(wrapped);
    config["env"]["API_KEY"] = json!("ENVSECRET4242");
    config["auto_reconnect"] = json!(false);
    app.register_server(config).await;
    let mut events = EventStream::open(&app, &app.bob, None).await;
    for pid in pids_with_marker(&marker) {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    let owner = wait_error(&app, &app.admin, "talker", "disconnected").await;
    let owner = owner["error"].as_str().unwrap();
    assert!(
        owner.contains("sk-live-TAILONLY"),
        "the owner sees the tail: {owner}"
    );
    assert!(owner.contains("using key ***"), "{owner}");
    let (_, other) = app.get("/v1/servers", &app.bob).await;
    let pushes = events.drain(Duration::from_millis(500)).await;
    assert!(
        other.to_string().contains("the connection was lost"),
        "bob sees the error: {other}"
    );
    for shown in [owner.to_owned(), other.to_string(), format!("{pushes:?}")] {
        assert!(!shown.contains("ENVSECRET4242"), "{shown}");
    }
    for shown in [other.to_string(), format!("{pushes:?}")] {
        assert!(!shown.contains("TAILONLY"), "not for bob: {shown}");
    }
    app.stop().await;
}

/// A stdio `cmd` argument holding a URL shows without its password or query values; the
/// stored argument is still the real one (the server runs with it, a PATCH sending it back
/// as shown keeps it).
#[tokio::test]
async fn cmd_arguments_are_shown_without_url_credentials() {
    let app = spawn_app().await;
    let marker = unique("cmd");
    let mut config = py_stdio("cmdargs", &marker);
    let mut cmd = config["cmd"].as_array().unwrap().clone();
    cmd.insert(0, json!("env"));
    cmd.insert(
        1,
        json!("DB=postgresql://app:S3cretPW@db/prod?sslpassword=QS3cret"),
    );
    config["cmd"] = json!(cmd);
    let registered = app.register_server(config).await;
    assert_eq!(registered["status"], "ready", "{registered}");
    let (_, shown) = app.get("/v1/servers/cmdargs", &app.bob).await;
    let text = shown.to_string();
    assert!(
        !text.contains("S3cretPW") && !text.contains("QS3cret"),
        "{text}"
    );
    let shown_cmd = shown["config"]["cmd"].clone();
    assert!(
        shown_cmd[1].as_str().unwrap().contains("app:***@db"),
        "{shown_cmd}"
    );
    // Sent back as shown, with another change: the real argument stays (the child still runs
    // with it).
    let (status, body) = app
        .patch(
            "/v1/servers/cmdargs",
            &app.admin,
            json!({"cmd": shown_cmd, "timeout": 60}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(!body.to_string().contains("S3cretPW"), "{body}");
    let pids = pids_with_marker(&marker);
    assert_eq!(pids.len(), 1);
    let environ = std::fs::read(format!("/proc/{}/environ", pids[0])).unwrap();
    assert!(
        String::from_utf8_lossy(&environ).contains("app:S3cretPW@db"),
        "the child got the real value"
    );
    app.stop().await;
}

/// Every line the service logs, at every level and the MCP SDK's own included, shows an
/// upstream's URL without its query values: rmcp prints the URL whole when a request fails
/// (`fail to delete session: … url (http://…/mcp?api_key=…)` when a gone server is
/// unregistered, `worker quit with fatal: …` when it cannot be reached).
#[tokio::test]
async fn the_log_never_holds_an_upstream_urls_secret() {
    let secret = "LOGQUERYSECRET42";
    let dir = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let log_everything = [("MCP_BRIDGE_LOG", "trace,rmcp=trace")];
    let bridge = start_bridge_with(dir.path(), &log_everything).await;
    let app = TestApp::at(&bridge.base, dir.clone());
    let peer = py_http().await;
    let url = format!("{}?api_key={secret}", peer.url);
    let config = json!({"server_id": "logged", "transport": "http", "url": url});
    app.register_server(config).await;
    app.call_tool("logged__echo", json!({"text": "hi"})).await;
    // Gone, then unregistered: deleting its session fails.
    peer.stop().await;
    let (status, body) = app.delete("/v1/servers/logged", &app.admin).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // Never reachable: its initialize fails.
    let closed = format!("http://127.0.0.1:{}/mcp?api_key={secret}", free_port());
    let config = json!({"server_id": "closed", "transport": "http", "url": closed});
    let (status, body) = app
        .post("/v1/servers", &app.admin, json!({ "config": config }))
        .await;
    assert!(status.is_server_error(), "{status} {body}");
    // The transport's own line, with the error of the DELETE that names the URL.
    let failed = "cannot delete the session";
    let log = wait_until(
        "the failed DELETE's line",
        Duration::from_secs(15),
        async || {
            let log = bridge.log();
            match log.iter().any(|line| line.contains(failed)) {
                true => Ok(log),
                false => Err(format!("{} lines, none with {failed:?}", log.len())),
            }
        },
    )
    .await;
    for level in ["TRACE", "DEBUG", "INFO", "WARN"] {
        let at = format!(" {level} ");
        assert!(log.iter().any(|line| line.contains(&at)), "no {level} line");
    }
    let leaks: Vec<&String> = log.iter().filter(|line| line.contains(secret)).collect();
    assert!(
        leaks.is_empty(),
        "{} lines hold the secret: {leaks:#?}",
        leaks.len()
    );
    assert!(
        log.iter().any(|line| line.contains("api_key=***")),
        "the URL is logged, redacted"
    );
}
