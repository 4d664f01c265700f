//! Every transport, and servers kept alive without a person: legacy HTTP+SSE, WebSocket, deaths
//! by real signals, a restarted upstream, health pings, and the bridge process itself.

use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

fn kill(signal: &str, pid: u32) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success(), "kill -{signal} {pid}");
}

fn admin_token() -> String {
    let config = mcp_bridge::config::Config {
        jwt_secret: Some(SECRET.to_owned().into()),
        ..Default::default()
    };
    let auth = mcp_bridge::http::auth::Auth::from_config(&config).unwrap();
    auth.mint("root", true, Duration::from_secs(600)).unwrap()
}

#[tokio::test]
async fn server_everything_over_legacy_http_sse() {
    let peer = everything_sse().await;
    let app = spawn_app().await;
    let server = app
        .register_server(json!({"server_id": "evs", "transport": "sse", "url": peer.url, "headers": {"X-Trace": "t1"}}))
        .await;
    assert_eq!(server["status"], "ready");
    assert_eq!(server["transport"], "sse");
    assert_eq!(server["server_name"], "mcp-servers/everything");
    let body = app
        .call_tool("evs__echo", json!({"message": "over sse"}))
        .await;
    assert_eq!(body["content"][0]["text"], "Echo: over sse");
    app.get_prompt(json!({"name": "simple-prompt", "server_id": "evs"}))
        .await;
    // The server going away is noticed on the stream.
    peer.stop().await;
    app.wait_status("evs", "disconnected", Duration::from_secs(10))
        .await;
    app.stop().await;
}

#[tokio::test]
async fn the_python_sdk_websocket_server() {
    let peer = ws_server(Some("X-Api-Key=k-123")).await;
    let app = spawn_app().await;
    let server = app
        .register_server(json!({"server_id": "wss", "transport": "ws", "url": peer.url, "headers": {"X-Api-Key": "k-123"}}))
        .await;
    assert_eq!(server["status"], "ready");
    assert_eq!(server["server_name"], "ws-fixture");
    assert_eq!(server["mcp_version"], "2025-11-25");
    assert_eq!(server["tools_count"], 4);
    let body = app.call_tool("wss__add", json!({"a": 2, "b": 40})).await;
    assert_eq!(body["structured_content"], json!({"result": 42}));
    let (_, body) = app.call("wss__echo", json!({"text": "über ws"})).await;
    assert_eq!(body["content"][0]["text"], "über ws");

    // Without the header the upgrade is refused, and nothing is stored.
    let (status, body) = app
        .post(
            "/v1/servers",
            &app.alice,
            json!({"config": {"server_id": "nohdr", "transport": "ws", "url": peer.url}}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
    assert!(body["error"].as_str().unwrap().contains("403"), "{body}");
    let (status, _) = app
        .post("/v1/servers", &app.alice, json!({"config": {"server_id": "badscheme", "transport": "ws", "url": "http://127.0.0.1:1/ws"}}))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    app.stop().await;
}

#[tokio::test]
async fn a_child_killed_mid_call_fails_the_call_at_once_and_comes_back() {
    let app = TestApp::builder().watchful().spawn().await;
    let marker = unique("kill9");
    let first = app.register_server(py_stdio("k9", &marker)).await;
    let started = StartMark::new();
    let arguments = json!({"seconds": 30, "started": started.path});
    let client = app.client.clone();
    let (url, token) = (format!("{}/v1/tools/call", app.base), app.alice.clone());
    let call = tokio::spawn(async move {
        let resp = client
            .post(url)
            .bearer_auth(token)
            .json(&json!({"name": "k9__slow", "arguments": arguments}))
            .send()
            .await
            .unwrap();
        (resp.status(), resp.json::<Value>().await.unwrap())
    });
    started.wait().await;
    let killed_at = std::time::Instant::now();
    for pid in pids_with_marker(&marker) {
        kill("KILL", pid);
    }
    let (status, body) = call.await.unwrap();
    assert!(
        killed_at.elapsed() < Duration::from_secs(3),
        "the call failed at once"
    );
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["code"], "mcp_server_unavailable");
    assert_eq!(body["retryable"], true);

    let after = first["connected_at"].as_f64().unwrap();
    app.wait_reconnected("k9", after, Duration::from_secs(15))
        .await;
    app.call_tool("k9__echo", json!({"text": "again"})).await;
    app.stop().await;
    wait_no_process(&marker, Duration::from_secs(10)).await;
}

/// server-everything killed and back on its port before any ping notices: it answers the old
/// session with a 400 whose error has no id. The next call is made in a new session, not left
/// waiting for an answer that never comes (found by the soak, scripts/soak.sh).
#[tokio::test]
async fn a_call_after_a_quick_restart_of_a_streamable_http_server_gets_a_new_session() {
    let peer = everything_http().await;
    let port = peer.port();
    let app = spawn_app().await;
    app.register_server(json!({"server_id": "quick", "transport": "http", "url": peer.url}))
        .await;
    app.call_tool("quick__echo", json!({"message": "before"}))
        .await;
    peer.stop().await;
    let _again = everything_http_on(port).await;
    let call = app.call("quick__echo", json!({"message": "after"}));
    let (status, body) = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("the call is answered, not left waiting");
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        body["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("after"),
        "{body}"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_streamable_http_upstream_that_restarts_on_the_same_port() {
    let peer = py_http_on(0, &[]).await;
    let port = peer.port();
    let app = TestApp::builder().watchful().spawn().await;
    let mut alice = EventStream::open(&app, &app.alice, None).await;
    app.register_server(
        json!({"server_id": "phoenix", "transport": "http", "url": peer.url, "connect_timeout": 2}),
    )
    .await;
    peer.stop().await;
    let down = app
        .wait_status("phoenix", "disconnected", Duration::from_secs(10))
        .await;
    assert!(down["error"].as_str().unwrap().contains("ping"), "{down}");
    let (status, _) = app.call("phoenix__echo", json!({"text": "x"})).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);

    let _again = py_http_on(port, &[]).await;
    let back = app
        .wait_status("phoenix", "ready", Duration::from_secs(20))
        .await;
    assert!(back["last_ping_ms"].as_f64().is_some());
    let (status, body) = app.call("phoenix__echo", json!({"text": "back"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // Agents saw it go and come back.
    let mut seen = Vec::new();
    for message in alice.drain(Duration::from_millis(300)).await {
        if is_push(&message, "bridge/server_status") {
            seen.push(
                message.data["params"]["status"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            );
        }
    }
    for status in ["disconnected", "connecting", "ready"] {
        assert!(
            seen.iter().any(|s| s == status),
            "{status} pushed: {seen:?}"
        );
    }
    app.stop().await;
}

#[tokio::test]
async fn a_stopped_child_misses_its_pings_and_is_replaced() {
    let app = TestApp::builder().watchful().spawn().await;
    let marker = unique("sigstop");
    let first = app.register_server(py_stdio("frozen", &marker)).await;
    wait_until("a ping measured", WAIT, async || {
        let (_, body) = app.get("/v1/servers/frozen", &app.alice).await;
        match body["server"]["last_ping_ms"].as_f64() {
            Some(ms) if ms > 0.0 => Ok(()),
            _ => Err(body.to_string()),
        }
    })
    .await;
    let old = pids_with_marker(&marker);
    assert_eq!(old.len(), 1);
    kill("STOP", old[0]);
    let down = app
        .wait_status("frozen", "disconnected", Duration::from_secs(10))
        .await;
    assert!(down["error"].as_str().unwrap().contains("ping"), "{down}");
    let after = first["connected_at"].as_f64().unwrap();
    app.wait_reconnected("frozen", after, Duration::from_secs(30))
        .await;
    // The stopped child was killed, not left behind; only the new one runs.
    let what = format!("the end of the stopped child {}", old[0]);
    let proc = format!("/proc/{}", old[0]);
    wait_until(
        &what,
        Duration::from_secs(15),
        async || match std::path::Path::new(&proc).exists() {
            true => Err(format!("{proc} exists")),
            false => Ok(()),
        },
    )
    .await;
    assert_eq!(pids_with_marker(&marker).len(), 1);
    app.stop().await;
    wait_no_process(&marker, Duration::from_secs(10)).await;
}

#[tokio::test]
async fn a_babbling_command_fails_registration_in_time() {
    let app = spawn_app().await;
    let started = std::time::Instant::now();
    let (status, body) = app
        .post("/v1/servers", &app.admin, json!({"config": {
            "server_id": "babble", "connect_timeout": 2,
            "cmd": ["sh", "-c", "echo 'babbling to stderr' >&2; while :; do echo 'this is not json'; sleep 0.05; done"]
        }}))
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "within the connect timeout"
    );
    assert!(
        status == StatusCode::GATEWAY_TIMEOUT || status == StatusCode::BAD_GATEWAY,
        "{status}: {body}"
    );
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("babbling to stderr"),
        "the stderr tail: {body}"
    );
    let (_, list) = app.get("/v1/servers", &app.admin).await;
    assert_eq!(list["servers"], json!([]));
    app.stop().await;
}

#[tokio::test]
async fn sigterm_stops_the_bridge_and_every_child() {
    let data_dir = tempfile::tempdir().unwrap();
    let mut bridge = start_bridge(data_dir.path()).await;
    let marker = unique("term");
    let client = reqwest::Client::new();
    let resp = client
        .post(format!("{}/v1/servers", bridge.base))
        .bearer_auth(admin_token())
        .json(&json!({"config": py_stdio("t", &marker)}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::CREATED);
    let events = client
        .get(format!("{}/v1/events", bridge.base))
        .bearer_auth(admin_token())
        .send()
        .await
        .unwrap();
    let mut events = EventStream::from_response(events);
    assert_eq!(pids_with_marker(&marker).len(), 1);
    bridge.signal("TERM");
    let status = bridge
        .exited_within(Duration::from_secs(10))
        .await
        .expect("exits within seconds");
    assert!(status.success(), "{status:?}");
    assert!(
        events.ends_within(Duration::from_secs(1)).await,
        "the event stream ended"
    );
    assert!(pids_with_marker(&marker).is_empty(), "no child is left");
}

#[tokio::test]
async fn sigkill_of_the_bridge_takes_its_children_and_a_restart_brings_them_back() {
    let data_dir = tempfile::tempdir().unwrap();
    let mut bridge = start_bridge(data_dir.path()).await;
    let marker = unique("kill");
    let client = reqwest::Client::new();
    let resp = client
        .post(format!("{}/v1/servers", bridge.base))
        .bearer_auth(admin_token())
        .json(&json!({"config": py_stdio("survivor", &marker)}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::CREATED);
    bridge.signal("KILL");
    bridge
        .exited_within(Duration::from_secs(5))
        .await
        .expect("killed");
    wait_no_process(&marker, Duration::from_secs(5)).await;

    let mut bridge = start_bridge(data_dir.path()).await;
    let url = format!("{}/v1/tools/call", bridge.base);
    wait_until("the server's return", Duration::from_secs(30), async || {
        let body: Value = client
            .post(&url)
            .bearer_auth(admin_token())
            .json(&json!({"name": "survivor__echo", "arguments": {"text": "back"}}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        match body["content"][0]["text"] == "back" {
            true => Ok(()),
            false => Err(body.to_string()),
        }
    })
    .await;
    bridge.signal("TERM");
    bridge
        .exited_within(Duration::from_secs(10))
        .await
        .expect("exits");
    wait_no_process(&marker, Duration::from_secs(5)).await;
}

/// A stdio server sees a safe base of the bridge's environment and its own `env`: not the
/// bridge's settings, nor any other variable the bridge was started with (checked with
/// server-everything's `get-env`, which answers the whole environment it runs in).
#[tokio::test]
async fn stdio_servers_get_a_safe_environment_and_their_own_env_only() {
    let data_dir = tempfile::tempdir().unwrap();
    let bridge = start_bridge_with(
        data_dir.path(),
        &[
            ("AWS_SECRET_ACCESS_KEY", "do-not-leak"),
            ("LANG", "C.UTF-8"),
        ],
    )
    .await;
    let client = reqwest::Client::new();
    let mut config = everything_stdio("envcheck");
    config["env"] = json!({ "GREETING": "hello from the config" });
    let resp = client
        .post(format!("{}/v1/servers", bridge.base))
        .bearer_auth(admin_token())
        .json(&json!({ "config": config }))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::CREATED);
    let answer: Value = client
        .post(format!("{}/v1/tools/call", bridge.base))
        .bearer_auth(admin_token())
        .json(&json!({ "name": "envcheck__get-env", "arguments": {} }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let text = answer["content"][0]["text"].as_str().unwrap_or_default();
    let env: serde_json::Map<String, Value> =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {answer}"));
    assert_eq!(env["GREETING"], "hello from the config");
    assert_eq!(env["LANG"], "C.UTF-8", "the locale is part of the base");
    assert!(env.contains_key("PATH"), "{env:?}");
    let allowed = |name: &str| mcp_bridge::upstream::BASE_ENV.contains(&name) || name == "GREETING";
    let extra: Vec<&String> = env.keys().filter(|name| !allowed(name)).collect();
    assert!(
        extra.is_empty(),
        "the child saw more than its base and env: {extra:?}"
    );
    assert!(!text.contains("do-not-leak"));
    assert!(
        !text.contains(SECRET),
        "the bridge's JWT secret reached the child"
    );
}

/// `MCP_BRIDGE_STDIO_ALLOWED_COMMANDS`: a command not on the list is refused (403), and a stored
/// server whose command is no longer on it stays stored but does not run.
#[tokio::test]
async fn stdio_commands_must_be_on_the_allow_list_when_there_is_one() {
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let with_list = |list: Vec<String>| {
        TestApp::builder()
            .data_dir(&data_dir)
            .configure(move |c| c.stdio_allowed_commands = list)
            .spawn()
    };
    let app = with_list(vec![python()]).await;
    let (status, body) = app
        .post(
            "/v1/servers",
            &app.admin,
            json!({ "config": everything_stdio("ev") }),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("MCP_BRIDGE_STDIO_ALLOWED_COMMANDS")
    );
    let marker = unique("allowed");
    app.register_server(py_stdio("py", &marker)).await;
    app.stop().await;
    wait_no_process(&marker, Duration::from_secs(10)).await;

    // Narrowed: the stored server is not started.
    let app = with_list(vec![everything_bin()]).await;
    assert_not_started(&app, &marker).await;
    app.stop().await;

    // Widened again: it is back, nothing was lost.
    let app = with_list(Vec::new()).await;
    let server = app
        .wait_status("py", "ready", Duration::from_secs(20))
        .await;
    assert_eq!(server["status"], "ready");
}

#[tokio::test]
async fn a_stdio_env_can_neither_choose_the_program_nor_inject_into_it() {
    use std::os::unix::fs::PermissionsExt;
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let with = |commands: Vec<String>, env: Vec<String>| {
        TestApp::builder()
            .data_dir(&data_dir)
            .configure(move |c| {
                c.stdio_allowed_commands = commands;
                c.stdio_allowed_env = env;
            })
            .spawn()
    };
    // "mcp-fixture" exists only on a PATH the server's own env sets: a script that runs the
    // fixture (any program, in an attack) and leaves a file behind when it runs.
    let evil = tempfile::tempdir().unwrap();
    let ran = evil.path().join("ran");
    let script = evil.path().join("mcp-fixture");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ntouch '{}'\nexec '{}' '{}' stdio\n",
            ran.display(),
            python(),
            py_server()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let sneaky = json!({"server_id": "sneaky", "transport": "stdio", "cmd": ["mcp-fixture"],
        "env": {"PATH": evil.path(), "FIXTURE_MARKER": unique("sneaky")}});

    // Before: 201, the script ran although only "mcp-fixture" of the bridge's PATH was meant.
    let app = with(vec!["mcp-fixture".into()], Vec::new()).await;
    let (status, body) = app
        .post("/v1/servers", &app.admin, json!({"config": sneaky}))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["code"], "invalid_request", "{body}");
    let error = body["error"].as_str().unwrap();
    assert!(
        error.contains("PATH") && error.contains("MCP_BRIDGE_STDIO_ALLOWED_ENV"),
        "{error}"
    );
    app.stop().await;
    let app = with(Vec::new(), Vec::new()).await;
    for name in [
        "LD_PRELOAD",
        "LD_LIBRARY_PATH",
        "DYLD_INSERT_LIBRARIES",
        "NODE_OPTIONS",
        "PYTHONPATH",
        "BASH_ENV",
        "PERL5OPT",
    ] {
        let mut config = py_stdio("loader", &unique("loader"));
        config["env"][name] = json!("/tmp/x");
        let (status, body) = app
            .post("/v1/servers", &app.admin, json!({"config": config}))
            .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{name}: {body}");
        assert!(body["error"].as_str().unwrap().contains(name), "{body}");
    }
    app.stop().await;

    // Allowed by the setting, PATH reaches the child, but the command is still looked up on the
    // bridge's own PATH: the script is not found there and does not run.
    let app = with(vec!["mcp-fixture".into()], vec!["PATH".into()]).await;
    let (status, body) = app
        .post("/v1/servers", &app.admin, json!({"config": sneaky}))
        .await;
    assert_ne!(status, StatusCode::CREATED, "{body}");
    assert!(
        body.to_string().contains("not found on the bridge's PATH"),
        "{body}"
    );
    assert!(!ran.exists(), "the script on the env's PATH never ran");
    app.stop().await;
    let app = with(Vec::new(), vec!["path".into()]).await;
    let marker = unique("with-path");
    let mut config = py_stdio("withpath", &marker);
    config["env"]["PATH"] = json!(evil.path());
    app.register_server(config).await;
    app.stop().await;
    wait_no_process(&marker, Duration::from_secs(10)).await;

    // Stored, then the setting no longer allows it: it stays stored and does not run.
    let app = with(Vec::new(), Vec::new()).await;
    assert_not_started(&app, &marker).await;
    app.stop().await;
    let app = with(Vec::new(), vec!["PATH".into()]).await;
    let server = app
        .wait_status("withpath", "ready", Duration::from_secs(20))
        .await;
    assert_eq!(server["status"], "ready");
    app.stop().await;
}

/// The stored server is neither listed nor started: nothing runs its command (given the time a
/// start would take, as nothing happening can only be waited out).
async fn assert_not_started(app: &TestApp, marker: &str) {
    let (_, list) = app.get("/v1/servers", &app.admin).await;
    assert_eq!(list["servers"], json!([]), "{list}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        pids_with_marker(marker).is_empty(),
        "its command did not run"
    );
}
