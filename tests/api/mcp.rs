//! mcp-bridge's own `/mcp` endpoint against the Python `mcp` 2.x client, in both eras: the
//! catalogue, authentication and its discovery, catalogue changes, sampling and log messages.
//! Sessions of the 2025 era are in `sessions`, the stateless 2026 era in `stateless`, and
//! resources read through `/mcp` in `resources`; `run_peer` and `mcp_client` serve them all and
//! other files too.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

mod resources;
mod sessions;
mod stateless;

/// Runs a Python peer script of tests/peers (bounded); the JSON object on its last line.
pub async fn run_peer(script: &str, args: &[&str]) -> Value {
    let output = tokio::time::timeout(
        Duration::from_secs(60),
        tokio::process::Command::new(python())
            .arg(peers_dir().join(script))
            .args(args)
            .output(),
    )
    .await
    .unwrap_or_else(|_| panic!("{script} finishes within 60 s"))
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{script} failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap()
}

/// Runs the Python client against `/mcp`; its JSON report.
pub async fn mcp_client(
    app: &TestApp,
    token: &str,
    mode: &str,
    tool: &str,
    arguments: Value,
    flags: &[&str],
) -> Value {
    let url = format!("{}/mcp", app.base);
    let arguments = arguments.to_string();
    let mut args = vec![url.as_str(), token, mode, tool, &arguments];
    args.extend_from_slice(flags);
    run_peer("mcp_client.py", &args).await
}

#[tokio::test]
async fn the_python_client_uses_the_catalogue_in_both_eras() {
    let app = spawn_app().await;
    app.register_server(py_stdio("py", &unique("mcp"))).await;
    for (mode, version) in [("legacy", "2025-11-25"), ("auto", "2026-07-28")] {
        let report = mcp_client(
            &app,
            &app.alice,
            mode,
            "py__add",
            json!({"a": 20, "b": 22}),
            &[],
        )
        .await;
        assert_eq!(report["protocol_version"], version, "{report}");
        let tools = report["tools"].as_array().unwrap();
        assert!(tools.contains(&json!("py__echo")), "{report}");
        assert_eq!(
            report["result"]["structuredContent"],
            json!({"result": 42}),
            "{report}"
        );
    }
    app.stop().await;
}

#[tokio::test]
async fn mcp_needs_a_token_unless_turned_off_on_loopback() {
    let app = spawn_app().await;
    let resp = app
        .client
        .post(format!("{}/mcp", app.base))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    app.stop().await;

    let app = TestApp::builder()
        .configure(|c| {
            c.mcp_auth_off = true;
            c.mcp_unprefixed_server = Some("fixture".into());
        })
        .spawn()
        .await;
    app.register_server(py_stdio("fixture", &unique("anon")))
        .await;
    app.register_server(py_stdio("other", &unique("anon2")))
        .await;
    let report = mcp_client(
        &app,
        "-",
        "legacy",
        "echo",
        json!({"text": "no token"}),
        &[],
    )
    .await;
    assert_eq!(
        report["result"]["content"][0]["text"], "no token",
        "{report}"
    );
    let tools = report["tools"].as_array().unwrap();
    assert!(
        tools.contains(&json!("echo")) && tools.contains(&json!("other__echo")),
        "{report}"
    );
    // The REST side still needs its token.
    let (status, _) = app
        .send(reqwest::Method::GET, "/v1/servers", None, None)
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    app.stop().await;
}

/// What the Python SDK's OAuth discovery finds at `url` without a token (resource_metadata.py).
async fn discover(url: &str) -> Value {
    run_peer("resource_metadata.py", &[url]).await
}

/// An MCP client without a token is told a bearer JWT is expected, and finds the RFC 9728
/// metadata that says so (and names the issuer when there is one) where the SDK looks for it.
#[tokio::test]
async fn an_mcp_client_is_told_how_to_authenticate() {
    let app = spawn_app().await;
    let found = discover(&format!("{}/mcp", app.base)).await;
    assert_eq!(found["status"], 401, "{found}");
    let metadata_url = format!("{}/.well-known/oauth-protected-resource/mcp", app.base);
    assert_eq!(found["header_url"], metadata_url.as_str(), "{found}");
    assert_eq!(found["metadata_url"], metadata_url.as_str(), "{found}");
    assert_eq!(found["metadata"]["resource"], format!("{}/mcp", app.base));
    assert_eq!(
        found["metadata"]["bearer_methods_supported"],
        json!(["header"])
    );
    // Without an issuer there is no authorization server to name (tokens are minted with the
    // bridge's key): an SDK that requires one stops here, having been told a JWT is expected.
    assert!(
        found["metadata"].get("authorization_servers").is_none(),
        "{found}"
    );
    let error = found["body"]["error"].as_str().unwrap_or_default();
    assert!(error.contains("Authorization: Bearer <JWT>"), "{found}");
    assert_eq!(found["body"]["code"], "unauthorized");

    // A refused token is `invalid_token`; the REST API points at the root metadata.
    let resp = app
        .client
        .get(format!("{}/v1/servers", app.base))
        .bearer_auth("not-a-jwt")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    let challenge = resp.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        challenge,
        format!(
            r#"Bearer error="invalid_token", resource_metadata="{}/.well-known/oauth-protected-resource""#,
            app.base
        )
    );
    let (status, root) = app
        .send(
            reqwest::Method::GET,
            "/.well-known/oauth-protected-resource",
            None,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(root["resource"], app.base.as_str());
    app.stop().await;

    // With an issuer, the SDK takes the metadata as it is; a public URL is what it names.
    let app = TestApp::builder()
        .configure(|c| c.jwt_issuer = Some("https://issuer.example".into()))
        .spawn()
        .await;
    let found = discover(&format!("{}/mcp", app.base)).await;
    assert_eq!(found["sdk_valid"], true, "{found}");
    assert_eq!(found["covers"], true, "{found}");
    assert_eq!(
        found["metadata"]["authorization_servers"],
        json!(["https://issuer.example"])
    );
    app.stop().await;
    let app = TestApp::builder()
        .configure(|c| {
            c.jwt_issuer = Some("https://issuer.example".into());
            c.public_url = Some("https://bridge.example".into());
        })
        .spawn()
        .await;
    let resp = app
        .client
        .post(format!("{}/mcp", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        resp.headers()["www-authenticate"],
        r#"Bearer resource_metadata="https://bridge.example/.well-known/oauth-protected-resource/mcp""#
    );
    let (status, doc) = app
        .send(
            reqwest::Method::GET,
            "/.well-known/oauth-protected-resource/mcp",
            None,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(doc["resource"], "https://bridge.example/mcp");
    assert_eq!(
        doc["authorization_servers"],
        json!(["https://issuer.example"])
    );
    app.stop().await;
}

#[tokio::test]
async fn an_mcp_client_hears_when_the_catalogue_changes() {
    let app = spawn_app().await;
    app.register_server(py_stdio("py", &unique("grow"))).await;
    let report = mcp_client(
        &app,
        &app.alice,
        "legacy",
        "py__grow",
        json!({"name": "fresh"}),
        &["--wait-list-changed"],
    )
    .await;
    assert_eq!(report["list_changed"], true, "{report}");
    app.stop().await;
}

#[tokio::test]
async fn sampling_during_an_mcp_call_goes_to_the_client_that_can_sample() {
    let peer = everything_http().await;
    let app = spawn_app().await;
    app.register_server_as(
        &app.alice,
        json!({"server_id": "evh", "transport": "http", "url": peer.url}),
    )
    .await;
    let mut alice = EventStream::open(&app, &app.alice, None).await;
    let report = mcp_client(
        &app,
        &app.alice,
        "legacy",
        "evh__trigger-sampling-request",
        json!({"prompt": "from the mcp client"}),
        &["--sample", "sampled by the client"],
    )
    .await;
    assert_eq!(report["sampled"].as_array().unwrap().len(), 1, "{report}");
    assert!(
        report["result"]
            .to_string()
            .contains("sampled by the client"),
        "{report}"
    );
    assert!(
        alice
            .drain(Duration::from_millis(200))
            .await
            .iter()
            .all(|m| m.event != "mcp/sample/req")
    );
    app.stop().await;
}

#[tokio::test]
async fn without_the_capability_the_request_follows_the_rest_routing() {
    let peer = everything_http().await;
    let app = spawn_app().await;
    app.register_server_as(
        &app.alice,
        json!({"server_id": "evh", "transport": "http", "url": peer.url}),
    )
    .await;
    let mut bob = EventStream::open(&app, &app.bob, None).await;
    // Bob's MCP client cannot sample: the request reaches Bob's event stream, and his REST answer
    // completes the call his client made.
    let client = tokio::process::Command::new(python())
        .arg(peers_dir().join("mcp_client.py"))
        .args([
            &format!("{}/mcp", app.base),
            &app.bob,
            "legacy",
            "evh__trigger-sampling-request",
            &json!({"prompt": "over rest"}).to_string(),
        ])
        .output();
    let client = tokio::spawn(client);
    let request = bob
        .wait_for("mcp/sample/req", Duration::from_secs(20), |m| {
            m.event == "mcp/sample/req"
        })
        .await;
    let (status, body) = app
        .post("/v1/sampling/responses", &app.bob, json!({
            "req_id": request.data["id"], "content": {"type": "text", "text": "answered over rest"}, "model": "m"
        }))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let output = client.await.unwrap().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("answered over rest"), "{stdout}");
    app.stop().await;
}

/// A server's sampling request reaches the `/mcp` client whose call caused it, whatever the
/// server's transport (Streamable HTTP says which call it belongs to; over stdio the call is the
/// only one in flight) and in both eras (a stateless client gets it as its call's input-required
/// result and calls again with the answer).
#[tokio::test]
async fn sampling_reaches_the_mcp_client_in_both_eras_over_any_transport() {
    let peer = everything_http().await;
    let app = spawn_app().await;
    app.register_server(everything_stdio("evs")).await;
    app.register_server(json!({"server_id": "evh", "transport": "http", "url": peer.url}))
        .await;
    for server in ["evs", "evh"] {
        for mode in ["legacy", "auto"] {
            let report = mcp_client(
                &app,
                &app.admin,
                mode,
                &format!("{server}__trigger-sampling-request"),
                json!({"prompt": "through the bridge"}),
                &["--sample", "sampled by the client"],
            )
            .await;
            assert_eq!(
                report["sampled"].as_array().map(Vec::len),
                Some(1),
                "{server} {mode}: {report}"
            );
            assert!(
                report["result"]
                    .to_string()
                    .contains("sampled by the client"),
                "{server} {mode}: {report}"
            );
        }
    }
    app.stop().await;
}

/// A `/mcp` session listening to log messages (mcp_logs.py), ready once it has set its level.
struct LogListener {
    child: tokio::process::Child,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
}

impl LogListener {
    async fn start(app: &TestApp, token: &str) -> Self {
        use tokio::io::AsyncBufReadExt;
        let mut child = tokio::process::Command::new(python())
            .arg(peers_dir().join("mcp_logs.py"))
            .args([&format!("{}/mcp", app.base), token])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        let first = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
            .await
            .expect("the listener is ready within 20 s")
            .unwrap();
        assert_eq!(first.as_deref(), Some("ready"));
        Self { child, lines }
    }

    /// The next log message it hears within `within`, if any.
    async fn next_log(&mut self, within: Duration) -> Option<Value> {
        let line = tokio::time::timeout(within, self.lines.next_line())
            .await
            .ok()?
            .unwrap()?;
        serde_json::from_str(line.strip_prefix("log ")?).ok()
    }

    /// Stops listening (closing its stdin ends it); every log message it heard.
    async fn heard(mut self) -> Vec<Value> {
        drop(self.child.stdin.take());
        let mut last = String::new();
        tokio::time::timeout(Duration::from_secs(20), async {
            while let Some(line) = self.lines.next_line().await.unwrap() {
                last = line;
            }
        })
        .await
        .expect("the listener reports within 20 s");
        let report: Value = serde_json::from_str(&last).unwrap();
        report["logs"].as_array().cloned().unwrap_or_default()
    }
}

/// A server's log messages reach the `/mcp` sessions of its owner and of the agent whose call
/// produced them, not every session that set a level.
#[tokio::test]
async fn log_messages_reach_the_owner_and_the_caller_only() {
    let app = spawn_app().await;
    app.register_server(py_stdio("py", &unique("logs"))).await;
    let mut owner = LogListener::start(&app, &app.admin).await;
    let mut caller = LogListener::start(&app, &app.alice).await;
    let mut other = LogListener::start(&app, &app.bob).await;
    app.call_tool("py__shout", json!({"size": 10})).await;
    for (who, listener) in [("the owner", &mut owner), ("the caller", &mut caller)] {
        let heard = listener.next_log(WAIT).await;
        assert!(
            heard.is_some(),
            "{who} heard no log message within {WAIT:?}"
        );
    }
    // Proving that a third session hears nothing: give a stray copy a moment more to arrive.
    let stray = other.next_log(Duration::from_millis(200)).await;
    assert_eq!(stray, None, "another agent's session heard it");
    let (owner, caller, other) = (
        owner.heard().await,
        caller.heard().await,
        other.heard().await,
    );
    assert_eq!(owner.len(), 1, "{owner:?}");
    assert_eq!(caller.len(), 1, "{caller:?}");
    assert_eq!(
        other,
        Vec::<Value>::new(),
        "another agent's session heard it"
    );
}
