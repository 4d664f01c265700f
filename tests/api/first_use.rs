//! What a new user meets first (issue 34, item 14): the `token` command signs with the
//! service's own secret or refuses, a server that cannot be reached says why in words, `/mcp`
//! names the setting behind a refused `Host`, and a stateless server registered in the older era
//! says how to get sampling and elicitation.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

/// `mcp-bridge token` run in `dir` with no configuration but what `env` sets: its exit status,
/// stdout and stderr.
async fn token_command(dir: &std::path::Path, env: &[(&str, &str)]) -> (bool, String, String) {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp-bridge"));
    for name in [
        "MCP_BRIDGE_CONFIG",
        "MCP_BRIDGE_DATA_DIR",
        "MCP_BRIDGE_JWT_SECRET",
        "MCP_BRIDGE_JWT_PUBLIC_KEY",
    ] {
        command.env_remove(name);
    }
    let output = command
        .args(["token", "--sub", "newcomer", "--admin"])
        .current_dir(dir)
        .envs(env.iter().copied())
        .output()
        .await
        .unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).trim().to_owned();
    (
        output.status.success(),
        text(&output.stdout),
        text(&output.stderr),
    )
}

/// Outside the service's data dir the command refuses (it used to sign with a secret it made
/// there and then, which the service never saw: every call got 401); beside it, it signs with
/// the secret the service wrote, says so, and the service takes the token.
#[tokio::test]
async fn the_token_command_signs_with_the_services_secret_or_refuses() {
    let elsewhere = tempfile::tempdir().unwrap();
    let (ok, token, said) = token_command(elsewhere.path(), &[]).await;
    assert!(!ok, "refused, not signed: {token}");
    assert!(token.is_empty(), "{token}");
    let expected = elsewhere.path().join("data").join("jwt_secret");
    assert!(
        said.contains("no signing secret in") && said.contains(&expected.display().to_string()),
        "{said}"
    );
    assert!(said.contains("MCP_BRIDGE_DATA_DIR"), "{said}");
    assert!(
        !elsewhere.path().join("data").exists(),
        "no secret is generated"
    );

    // The service, started with no secret configured, writes its own into ./data.
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("data");
    let bridge = start_bridge_with(&data, &[("MCP_BRIDGE_JWT_SECRET", "")]).await;
    let (ok, token, said) = token_command(home.path(), &[]).await;
    assert!(ok, "{said}");
    let file = std::path::absolute(data.join("jwt_secret")).unwrap();
    assert_eq!(
        said,
        format!("mcp-bridge: signed with the secret in {}", file.display())
    );
    let resp = reqwest::Client::new()
        .get(format!("{}/v1/servers", bridge.base))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK, "the service takes the token");

    // A configured secret is named as such.
    let (ok, _, said) = token_command(home.path(), &[("MCP_BRIDGE_JWT_SECRET", SECRET)]).await;
    assert!(ok, "{said}");
    assert_eq!(said, "mcp-bridge: signed with MCP_BRIDGE_JWT_SECRET");
}

/// The `error` a registration fails with, as the registering admin sees it.
async fn failed_registration(app: &TestApp, config: Value) -> String {
    let (status, body) = app
        .post("/v1/servers", &app.admin, json!({ "config": config }))
        .await;
    assert!(!status.is_success(), "{status} {body}");
    body["error"].as_str().unwrap_or_default().to_owned()
}

/// A server that cannot be reached says why in words, on every transport: no Rust type names
/// (`Transport [mcp_bridge::upstream::watched::Watched<rmcp::…>]`) any more.
#[tokio::test]
async fn connection_failures_are_said_in_words() {
    let app = spawn_app().await;
    let port = free_port();
    let closed = |server_id: &str, transport: &str, url: String| {
        json!({"server_id": server_id, "transport": transport, "url": url,
               "connect_timeout": 5, "auto_reconnect": false})
    };
    let cases = [
        closed(
            "h",
            "http",
            format!("http://127.0.0.1:{port}/mcp?api_key=k1234"),
        ),
        closed("s", "sse", format!("http://127.0.0.1:{port}/sse")),
        closed("w", "ws", format!("ws://127.0.0.1:{port}/ws")),
    ];
    for config in cases {
        let error = failed_registration(&app, config.clone()).await;
        assert!(
            error.ends_with(&format!("connection refused by 127.0.0.1:{port}")),
            "{config}: {error}"
        );
    }
    let missing = format!("{}/no-such-path", app.base);
    let error = failed_registration(&app, closed("nf", "http", missing)).await;
    assert!(error.contains("answered HTTP 404 Not Found"), "{error}");
    let exits = json!({"server_id": "gone", "transport": "stdio", "auto_reconnect": false,
                       "cmd": ["sh", "-c", "echo bye >&2; exit 3"]});
    let error = failed_registration(&app, exits).await;
    assert!(
        error.contains("the process exited (or closed its stdin or stdout) before it answered"),
        "{error}"
    );
    assert!(error.contains("bye"), "the stderr lines stay: {error}");
    let (_, list) = app.get("/v1/servers", &app.admin).await;
    for shown in [list.to_string(), error] {
        assert!(!shown.contains("::"), "no type names: {shown}");
    }
    app.stop().await;
}

/// A `Host` that `/mcp` does not serve is refused naming the host and the setting to change.
#[tokio::test]
async fn a_refused_host_names_the_setting() {
    let app = spawn_app().await;
    let resp = reqwest::Client::new()
        .post(format!("{}/mcp", app.base))
        .header("host", "bridge.example:8080")
        .header("accept", "application/json, text/event-stream")
        .bearer_auth(&app.alice)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["code"], "forbidden", "{body}");
    let error = body["error"].as_str().unwrap();
    assert!(error.contains("MCP_BRIDGE_MCP_ALLOWED_HOSTS"), "{error}");
    assert!(error.contains("bridge.example:8080"), "{error}");
    app.stop().await;

    // Configured names are served, and not told to a request under another.
    let app = TestApp::builder()
        .configure(|c| c.mcp_allowed_hosts = vec!["gw.internal:8443".to_owned()])
        .spawn()
        .await;
    for (host, served) in [("gw.internal:8443", true), ("localhost", false)] {
        let resp = reqwest::Client::new()
            .post(format!("{}/mcp", app.base))
            .header("host", host)
            .header("accept", "application/json, text/event-stream")
            .bearer_auth(&app.alice)
            .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status() != StatusCode::FORBIDDEN, served, "{host}");
        let text = resp.text().await.unwrap();
        assert!(!text.contains("gw.internal"), "{host}: {text}");
    }
    app.stop().await;
}

/// A stateless (2026-07-28) server registered with the default `protocol_version` cannot ask
/// for sampling or elicitation: its status says so and how to fix it; registered in its era,
/// or a server that keeps sessions, has nothing to say.
#[tokio::test]
async fn a_stateless_server_in_the_older_era_says_how_to_get_sampling() {
    let app = spawn_app().await;
    let stateless = py_http_stateless().await;
    let server = app
        .register_server(json!({"server_id": "older", "transport": "http", "url": stateless.url}))
        .await;
    assert_eq!(server["status"], "ready", "{server}");
    let error = server["error"].as_str().unwrap();
    assert!(
        error.contains("keeps no session") && error.contains("\"2026-07-28\""),
        "{error}"
    );
    assert!(error.contains("protocol_version"), "{error}");
    let (_, got) = app.get("/v1/servers/older", &app.bob).await;
    assert_eq!(got["server"]["error"], error, "{got}");

    let server = app
        .register_server(
            json!({"server_id": "modern", "transport": "http", "url": stateless.url,
                         "protocol_version": "2026-07-28"}),
        )
        .await;
    assert_eq!(server["error"], "", "{server}");
    let stateful = py_http().await;
    let server = app
        .register_server(json!({"server_id": "sessions", "transport": "http", "url": stateful.url}))
        .await;
    assert_eq!(server["error"], "", "{server}");
    app.stop().await;
}
