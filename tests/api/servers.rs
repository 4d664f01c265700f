//! Server lifecycle against real peers: register over stdio and Streamable HTTP, list, get,
//! change, reconnect, unregister, restart.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;

#[tokio::test]
async fn server_everything_over_stdio_registers_with_its_catalogue() {
    let app = spawn_app().await;
    let server = app.register_server(everything_stdio("ev")).await;
    assert_eq!(server["status"], "ready");
    assert_eq!(server["transport"], "stdio");
    assert_eq!(server["mcp_version"], "2025-11-25");
    assert_eq!(server["server_name"], "mcp-servers/everything");
    assert_eq!(server["tools_count"], 17);
    assert_eq!(server["resources_count"], 7);
    assert_eq!(server["prompts_count"], 4);
    assert!(server["connected_at"].as_f64().unwrap() > 1.7e9);

    let (status, list) = app.get("/v1/servers", &app.alice).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list["type"], "mcp/server/list/resp");
    assert_eq!(list["servers"][0]["server_id"], "ev");
    let (_, ready) = app.get("/v1/servers?status_filter=ready", &app.alice).await;
    assert_eq!(ready["servers"].as_array().unwrap().len(), 1);
    let (_, errored) = app.get("/v1/servers?status_filter=error", &app.alice).await;
    assert_eq!(errored["servers"].as_array().unwrap().len(), 0);
    let (_, all) = app.get("/v1/servers?status_filter=", &app.alice).await;
    assert_eq!(all["servers"].as_array().unwrap().len(), 1, "empty is all");
    let (status, bad) = app
        .get("/v1/servers?status_filter=sleepy", &app.alice)
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}");
    app.stop().await;
}

#[tokio::test]
async fn server_everything_over_streamable_http() {
    let peer = everything_http().await;
    let app = spawn_app().await;
    let server = app
        .register_server(json!({ "server_id": "evh", "transport": "http", "url": peer.url, "headers": {"X-Api-Key": "k-123"} }))
        .await;
    assert_eq!(server["status"], "ready");
    assert_eq!(server["tools_count"], 17);
    let body = app
        .call_tool("evh__echo", json!({"message": "over http"}))
        .await;
    assert_eq!(body["content"][0]["text"], "Echo: over http");
    app.stop().await;
}

#[tokio::test]
async fn python_server_over_stdio_and_http() {
    let peer = py_http().await;
    let app = spawn_app().await;
    let stdio = app.register_server(py_stdio("pys", &unique("pys"))).await;
    assert_eq!(stdio["server_name"], "py-fixture");
    assert_eq!(stdio["server_version"], "1.2.3");
    assert_eq!(stdio["tools_count"], 17);
    let http = app
        .register_server(json!({ "server_id": "pyh", "transport": "http", "url": peer.url }))
        .await;
    assert_eq!(http["status"], "ready");
    assert_eq!(http["tools_count"], 17);
    for name in ["pys__add", "pyh__add"] {
        let body = app.call_tool(name, json!({"a": 2, "b": 3})).await;
        assert_eq!(body["structured_content"], json!({"result": 5}));
    }
    app.stop().await;
}

#[tokio::test]
async fn stdio_env_and_cwd_are_honoured() {
    let app = spawn_app().await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = py_stdio("envs", &unique("envs"));
    config["cwd"] = json!(dir.path());
    config["env"]["FIXTURE_GREETING"] = json!("hello from env");
    app.register_server(config).await;
    let (_, body) = app
        .call("envs__getenv", json!({"name": "FIXTURE_GREETING"}))
        .await;
    assert_eq!(body["content"][0]["text"], "hello from env");
    let (_, body) = app.call("envs__cwd", json!({})).await;
    assert_eq!(
        body["content"][0]["text"],
        dir.path().canonicalize().unwrap().to_str().unwrap()
    );
    app.stop().await;
}

#[tokio::test]
async fn a_failing_server_is_refused_with_its_stderr_and_nothing_is_stored() {
    let app = spawn_app().await;
    let (status, body) = app
        .post(
            "/v1/servers",
            &app.admin,
            json!({"config": {
                "server_id": "crashy", "cmd": [python(), py_server(), "crash"]
            }}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
    assert_eq!(body["type"], "mcp/server/register/resp");
    assert_eq!(body["ok"], false);
    assert_eq!(body["code"], "mcp_transport_error");
    assert_eq!(body["retryable"], true);
    let error = body["error"].as_str().unwrap();
    assert!(error.contains("fixture: fatal: config missing"), "{error}");

    let (status, body) = app
        .post(
            "/v1/servers",
            &app.admin,
            json!({"config": {
                "server_id": "silent", "cmd": [python(), py_server(), "hang"], "connect_timeout": 2
            }}),
        )
        .await;
    assert_eq!(status, StatusCode::GATEWAY_TIMEOUT, "{body}");
    assert_eq!(body["code"], "timeout");

    let (status, body) = app
        .post(
            "/v1/servers",
            &app.admin,
            json!({"config": {"server_id": "nocmd", "cmd": ["/nonexistent/mcp-server"]}}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("/nonexistent/mcp-server"),
        "{body}"
    );

    let (_, list) = app.get("/v1/servers", &app.admin).await;
    assert_eq!(list["servers"], json!([]));
    app.stop().await;
}

#[tokio::test]
async fn unregister_stops_the_child_and_forgets_the_server() {
    let app = spawn_app().await;
    let marker = unique("unreg");
    app.register_server(py_stdio("gone", &marker)).await;
    assert_eq!(pids_with_marker(&marker).len(), 1, "the child runs");

    let (status, body) = app.delete("/v1/servers/gone?id=req-9", &app.admin).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({
            "type": "mcp/server/unregister/resp", "id": body["id"], "version": "1.0", "ts": body["ts"],
            "req_id": "req-9", "ok": true, "server_id": "gone"
        })
    );
    assert!(
        pids_with_marker(&marker).is_empty(),
        "no child is left once unregister answers"
    );
    let (status, body) = app.get("/v1/servers/gone", &app.admin).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["code"], "mcp_server_not_found");
    let (status, _) = app.delete("/v1/servers/gone", &app.admin).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    app.stop().await;
}

#[tokio::test]
async fn a_restart_brings_every_server_back_with_its_allow_list() {
    let app = spawn_app().await;
    let data_dir = app.data_dir.clone();
    let marker = unique("restart");
    let mut config = py_stdio("keep", &marker);
    config["tool_allow_list"] = json!(["add", "echo"]);
    app.register_server(config).await;
    app.register_server(everything_stdio("ev")).await;
    app.stop().await;
    wait_no_process(&marker, Duration::from_secs(10)).await;

    let app = spawn_app_in(data_dir).await;
    app.wait_status("keep", "ready", Duration::from_secs(30))
        .await;
    app.wait_status("ev", "ready", Duration::from_secs(30))
        .await;
    assert_eq!(
        app.tool_names("?server_id=keep").await,
        ["keep__add", "keep__echo"]
    );
    app.call_tool("keep__add", json!({"a": 1, "b": 1})).await;
    let (status, _) = app.call("keep__cwd", json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(pids_with_marker(&marker).len(), 1);
    app.stop().await;
    wait_no_process(&marker, Duration::from_secs(10)).await;
}

#[tokio::test]
async fn a_server_that_is_down_at_boot_does_not_hold_up_the_others() {
    let peer = py_http().await;
    let app = spawn_app().await;
    let data_dir = app.data_dir.clone();
    app.register_server(
        json!({"server_id": "flaky", "transport": "http", "url": peer.url, "connect_timeout": 2}),
    )
    .await;
    app.register_server(everything_stdio("ev")).await;
    app.stop().await;
    drop(peer);

    let started = std::time::Instant::now();
    let app = spawn_app_in(data_dir).await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the listener is not held up"
    );
    app.wait_status("ev", "ready", Duration::from_secs(30))
        .await;
    let flaky = app
        .wait_status("flaky", "error", Duration::from_secs(30))
        .await;
    assert!(!flaky["error"].as_str().unwrap().is_empty(), "{flaky}");
    let (status, body) = app.call("flaky__add", json!({"a": 1, "b": 2})).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["code"], "mcp_server_unavailable");
    assert_eq!(body["retryable"], true);
    app.stop().await;
}

#[tokio::test]
async fn patch_changes_allow_lists_and_keeps_secrets() {
    let peer = py_http().await;
    let app = spawn_app().await;
    app.register_server(json!({
        "server_id": "p", "transport": "http", "url": peer.url,
        "headers": {"Authorization": "Bearer upstream-s3cret"}
    }))
    .await;
    assert_eq!(app.tool_names("?server_id=p").await.len(), 17);

    let (status, body) = app
        .patch(
            "/v1/servers/p",
            &app.admin,
            json!({"tool_allow_list": ["echo"], "timeout": 60}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["type"], "mcp/server/update/resp");
    assert_eq!(body["server"]["tools_count"], 1);
    assert_eq!(body["config"]["timeout"], 60);
    assert_eq!(body["config"]["headers"]["Authorization"], "***");
    assert_eq!(app.tool_names("?server_id=p").await, ["p__echo"]);

    // The redacted config sent back as it was shown keeps the stored secret (and reconnects).
    let shown = body["config"]["headers"].clone();
    let (status, body) = app
        .patch(
            "/v1/servers/p",
            &app.admin,
            json!({"headers": shown, "tool_allow_list": []}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["server"]["status"], "ready");
    assert_eq!(body["server"]["tools_count"], 17);

    let (status, body) = app
        .patch("/v1/servers/p", &app.admin, json!({"timeout": 0}))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let (status, _) = app
        .patch("/v1/servers/p", &app.admin, json!({"server_id": "other"}))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let (status, _) = app
        .patch("/v1/servers/nope", &app.admin, json!({"timeout": 5}))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    app.stop().await;
}

#[tokio::test]
async fn reconnect_on_demand_and_a_lost_child_is_noticed() {
    let app = spawn_app().await;
    let marker = unique("lost");
    let mut config = py_stdio("phoenix", &marker);
    config["auto_reconnect"] = json!(false);
    let first = app.register_server(config).await;

    let (status, body) = app
        .post("/v1/servers/phoenix/reconnect", &app.admin, json!(null))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["ok"], true);
    assert_eq!(body["server"]["status"], "ready");
    assert!(body["server"]["connected_at"].as_f64() > first["connected_at"].as_f64());
    assert_eq!(
        pids_with_marker(&marker).len(),
        1,
        "the old child was stopped"
    );

    for pid in pids_with_marker(&marker) {
        std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap();
    }
    let down = app
        .wait_status("phoenix", "disconnected", Duration::from_secs(10))
        .await;
    assert!(down["error"].as_str().unwrap().contains("lost"), "{down}");
    let (status, body) = app.call("phoenix__echo", json!({"text": "x"})).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    // auto_reconnect is off: it stays down until asked (a negative: nothing to wait on but time).
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (_, body) = app.get("/v1/servers/phoenix", &app.admin).await;
    assert_eq!(body["server"]["status"], "disconnected");
    let (_, body) = app
        .post("/v1/servers/phoenix/reconnect", &app.admin, json!(null))
        .await;
    assert_eq!(body["server"]["status"], "ready", "{body}");
    app.call_tool("phoenix__echo", json!({"text": "x"})).await;
    app.stop().await;
    wait_no_process(&marker, Duration::from_secs(10)).await;
}

#[tokio::test]
async fn an_auto_reconnecting_server_comes_back_after_its_child_dies() {
    let app = spawn_app().await;
    let marker = unique("auto");
    let first = app.register_server(py_stdio("auto", &marker)).await;
    for pid in pids_with_marker(&marker) {
        std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap();
    }
    // It goes down, then comes back by itself.
    let after = first["connected_at"].as_f64().unwrap();
    app.wait_reconnected("auto", after, Duration::from_secs(20))
        .await;
    app.call_tool("auto__echo", json!({"text": "back"})).await;
    app.stop().await;
}

/// A TCP gate in front of `target`: while shut, it takes connections and holds them (counting
/// them) without forwarding a byte; opened, it forwards the held ones and every later one.
struct Gate {
    url_port: u16,
    held: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    open: tokio::sync::watch::Sender<bool>,
}

impl Gate {
    async fn shut(target: &str) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url_port = listener.local_addr().unwrap().port();
        let held = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (open, opened) = tokio::sync::watch::channel(false);
        let (target, count) = (target.to_owned(), held.clone());
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let (target, mut opened) = (target.clone(), opened.clone());
                tokio::spawn(async move {
                    // What the bridge sent meanwhile waits in the socket, and is forwarded.
                    if opened.wait_for(|open| *open).await.is_err() {
                        return;
                    }
                    if let Ok(mut outbound) = tokio::net::TcpStream::connect(&target).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
            }
        });
        Self {
            url_port,
            held,
            open,
        }
    }

    fn held(&self) -> usize {
        self.held.load(std::sync::atomic::Ordering::SeqCst)
    }
}

#[tokio::test]
async fn a_restart_connects_a_few_servers_at_a_time_and_brings_all_back() {
    const SERVERS: usize = 40;
    const AT_ONCE: usize = 3;
    let peer = py_http().await;
    let upstream = peer.url.clone();
    let target = reqwest::Url::parse(&upstream).unwrap();
    let target_addr = format!("{}:{}", target.host_str().unwrap(), target.port().unwrap());
    let gate = Gate::shut(&target_addr).await;
    gate.open.send_replace(true);
    let mut through_gate = target.clone();
    through_gate.set_port(Some(gate.url_port)).unwrap();
    let app = spawn_app().await;
    let data_dir = app.data_dir.clone();
    for i in 0..SERVERS {
        app.register_server(
            json!({"server_id": format!("b{i}"), "transport": "http", "url": through_gate.as_str()}),
        )
        .await;
    }
    app.stop().await;

    // Shut: every connection the restart opens is held, so each attempt keeps its turn.
    let before = gate.held();
    gate.open.send_replace(false);
    let app = TestApp::builder()
        .data_dir(&data_dir)
        .configure(|c| c.connect_concurrency = AT_ONCE)
        .spawn()
        .await;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while gate.held() - before < AT_ONCE {
        assert!(
            std::time::Instant::now() < deadline,
            "no server started connecting"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The others wait their turn, however long the first ones take.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(gate.held() - before, AT_ONCE, "connections opened at once");

    gate.open.send_replace(true);
    for i in 0..SERVERS {
        app.wait_status(&format!("b{i}"), "ready", Duration::from_secs(60))
            .await;
    }
    for i in 0..SERVERS {
        let names = app.tool_names(&format!("?server_id=b{i}")).await;
        assert!(names.contains(&format!("b{i}__add")), "b{i}: {names:?}");
    }
    app.stop().await;
    peer.stop().await;
}
