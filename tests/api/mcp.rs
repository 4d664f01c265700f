//! mcp-bridge's own `/mcp` endpoint against the Python `mcp` 2.x client, in both eras.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use reqwest::StatusCode;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

use crate::helpers::*;

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
    let (status, body) = app
        .post(
            "/v1/servers",
            &app.alice,
            json!({"config": {"server_id": "evh", "transport": "http", "url": peer.url}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
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
    let (status, body) = app
        .post(
            "/v1/servers",
            &app.alice,
            json!({"config": {"server_id": "evh", "transport": "http", "url": peer.url}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
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

/// A stateless (2026-07-28) `tools/call` on `/mcp`, as raw HTTP: its status, content type and body.
async fn stateless_call(
    app: &TestApp,
    name: &str,
    arguments: Value,
    meta: Value,
) -> (StatusCode, String, String) {
    let resp = app
        .stateless_mcp_call(&app.bob, name, arguments, meta)
        .await;
    let status = resp.status();
    let content_type = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    (status, content_type, resp.text().await.unwrap())
}

#[tokio::test]
async fn a_call_with_nothing_to_stream_is_answered_in_json_and_progress_still_streams() {
    let peer = everything_http().await;
    let app = spawn_app().await;
    app.register_server(json!({"server_id": "evh", "transport": "http", "url": peer.url}))
        .await;

    let (status, content_type, body) =
        stateless_call(&app, "evh__echo", json!({"message": "plain"}), json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        content_type.starts_with("application/json"),
        "{content_type}: {body}"
    );
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["id"], 7, "{answer}");
    assert_eq!(
        answer["result"]["content"][0]["text"], "Echo: plain",
        "{answer}"
    );

    // With a progress token, the upstream's progress comes first, so the answer is a stream.
    let (status, content_type, body) = stateless_call(
        &app,
        "evh__trigger-long-running-operation",
        json!({"duration": 0.2, "steps": 2}),
        json!({"progressToken": "p1"}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        content_type.starts_with("text/event-stream"),
        "{content_type}: {body}"
    );
    let messages: Vec<Value> = body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect();
    let progress: Vec<&Value> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 2, "{body}");
    assert!(
        progress
            .iter()
            .all(|m| m["params"]["progressToken"] == "p1"),
        "{body}"
    );
    let last = messages.last().unwrap();
    assert_eq!(last["id"], 7, "{body}");
    assert!(
        last["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("completed"),
        "{body}"
    );
    app.stop().await;
}

/// A TCP relay to `target` (host:port) that counts the connections made through it; its URL.
async fn counting_relay(target: &str) -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let (counted, target) = (count.clone(), target.to_owned());
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            let target = target.clone();
            tokio::spawn(async move {
                let mut outbound = tokio::net::TcpStream::connect(target).await.unwrap();
                let _ = (inbound.set_nodelay(true), outbound.set_nodelay(true));
                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
            });
        }
    });
    (url, count)
}

#[tokio::test]
async fn an_mcp_session_makes_its_calls_on_kept_alive_connections() {
    // An rmcp client on a pooled HTTP client, through a relay that counts connections: however
    // many calls it makes, it needs no more connections than it has requests open at once (a
    // call, and the session's standalone GET stream). That each answer is not held up by the
    // client's delayed ACK (Nagle's algorithm off) is measured in benches/bridge.rs.
    let app = spawn_app().await;
    app.register_server(py_stdio("fx", &unique("nodelay")))
        .await;
    let (relay, connections) = counting_relay(app.base.trim_start_matches("http://")).await;
    let config = StreamableHttpClientTransportConfig::with_uri(format!("{relay}/mcp"))
        .auth_header(app.bob.clone());
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    let client = ().serve(transport).await.unwrap();
    for i in 0..20 {
        let text = format!("call {i}");
        let params = CallToolRequestParams::new("fx__echo").with_arguments(
            json!({ "text": text })
                .as_object()
                .cloned()
                .unwrap_or_default(),
        );
        let result = client.call_tool(params).await.unwrap();
        assert_eq!(
            result.content[0].as_text().map(|t| t.text.as_str()),
            Some(text.as_str())
        );
    }
    let opened = connections.load(Ordering::SeqCst);
    assert!(opened <= 2, "20 calls opened {opened} connections");
    client.cancel().await.unwrap();
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

/// A 2026-07-28 server's input-required result reaches a 2026-07-28 `/mcp` client as the server
/// gave it: its own keys, all its requests at once (elicitation, sampling and roots, each asked of
/// the client, which declared it can answer), its `requestState`; the client's answers go back to
/// the server in one round and complete the call. Real Python `mcp` 2.3.0 on both sides.
#[tokio::test]
async fn a_servers_input_requests_reach_a_stateless_client_as_they_are() {
    let peer = conformance_2026().await;
    let app = spawn_app().await;
    app.register_server(
        json!({"server_id": "ev", "transport": "http", "url": peer.url,
        "protocol_version": "2026-07-28"}),
    )
    .await;
    let report = mcp_client(
        &app,
        &app.alice,
        "auto",
        "ev__test_input_required_result_multiple_inputs",
        json!({}),
        &[
            "--sample",
            "hello from the client",
            "--elicit",
            r#"{"name": "Ada"}"#,
            "--roots",
            "file:///the/clients/root",
            "--first-round",
        ],
    )
    .await;
    assert_eq!(report["protocol_version"], "2026-07-28", "{report}");
    let first = &report["first_round"];
    assert_eq!(first["resultType"], "input_required", "{report}");
    let mut keys: Vec<&str> = first["inputRequests"]
        .as_object()
        .map(|r| r.keys().map(String::as_str).collect())
        .unwrap_or_default();
    keys.sort_unstable();
    assert_eq!(keys, ["client_roots", "greeting", "user_name"], "{report}");
    // The server's own state, sealed by its SDK (`v1.`…), not one of the bridge's.
    let state = first["requestState"].as_str().unwrap_or_default();
    assert!(state.starts_with("v1."), "{report}");
    // The call itself: every request answered by the client, once, in one round.
    assert_eq!(
        report["elicited"].as_array().map(Vec::len),
        Some(1),
        "{report}"
    );
    assert_eq!(
        report["sampled"].as_array().map(Vec::len),
        Some(1),
        "{report}"
    );
    assert_eq!(report["roots_asked"], 1, "{report}");
    // The server saw every answer: the name elicited, the text sampled, the root listed.
    let result = report["result"].to_string();
    for answer in [
        "name Ada",
        "greeting hello from the client",
        "file:///the/clients/root",
    ] {
        assert!(result.contains(answer), "{answer}: {report}");
    }
    assert_ne!(report["result"]["isError"], true, "{report}");
    app.stop().await;
}

/// A stateless (2026-07-28) `tools/call` on `/mcp` by `token`, declaring sampling: its JSON-RPC
/// result (or error).
async fn stateless_sampling_call(app: &TestApp, token: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    });
    let name = params["name"].as_str().unwrap_or_default().to_owned();
    let resp = app
        .client
        .post(format!("{}/mcp", app.base))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", name)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}))
        .send()
        .await
        .unwrap();
    let text = resp.text().await.unwrap();
    // JSON, or SSE whose last data line is the answer.
    let last = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .rfind(|l| !l.trim().is_empty())
        .unwrap_or(&text);
    serde_json::from_str(last.trim()).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// The input-required round as raw protocol: the call pauses with the server's request, only the
/// agent it belongs to can resume it, and its answer completes the call.
#[tokio::test]
async fn a_paused_call_is_resumed_only_by_its_own_agent() {
    let app = spawn_app().await;
    app.register_server(everything_stdio("evs")).await;
    let call = json!({"name": "evs__trigger-sampling-request", "arguments": {"prompt": "raw"}});
    let paused = stateless_sampling_call(&app, &app.alice, call.clone()).await;
    let result = &paused["result"];
    assert_eq!(result["resultType"], "input_required", "{paused}");
    let state = result["requestState"].as_str().expect("a requestState");
    let (key, request) = result["inputRequests"]
        .as_object()
        .and_then(|r| r.iter().next())
        .expect("one input request");
    assert_eq!(request["method"], "sampling/createMessage", "{paused}");
    let answer = json!({"role": "assistant", "model": "m",
        "content": {"type": "text", "text": "alice's answer"}});
    let mut retry = call.clone();
    retry["requestState"] = json!(state);
    retry["inputResponses"] = json!({ key.clone(): answer });

    let stolen = stateless_sampling_call(&app, &app.bob, retry.clone()).await;
    assert!(
        stolen.to_string().contains("requestState is unknown"),
        "{stolen}"
    );
    let done = stateless_sampling_call(&app, &app.alice, retry).await;
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert!(done.to_string().contains("alice's answer"), "{done}");
    app.stop().await;
}

/// Opens a 2025-11-25 session on `/mcp` as `token`; its id.
async fn open_session(app: &TestApp, token: &str) -> String {
    open_session_with(app, token, json!({})).await
}

/// Opens a 2025-11-25 session on `/mcp` as `token`, its client declaring `capabilities`; its id.
async fn open_session_with(app: &TestApp, token: &str, capabilities: Value) -> String {
    let opened = session_request(
        app,
        token,
        None,
        reqwest::Method::POST,
        Some(json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": capabilities,
            "clientInfo": {"name": "raw", "version": "1"}}})),
    )
    .await;
    assert_eq!(opened.status(), StatusCode::OK);
    opened.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned()
}

/// A raw request to `/mcp` as `token`, in `session` when given.
async fn session_request(
    app: &TestApp,
    token: &str,
    session: Option<&str>,
    method: reqwest::Method,
    body: Option<Value>,
) -> reqwest::Response {
    let mut req = app
        .client
        .request(method, format!("{}/mcp", app.base))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream");
    if let Some(session) = session {
        req = req
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25");
    }
    if let Some(body) = body {
        req = req.json(&body);
    }
    req.send().await.unwrap()
}

/// Opens a session with `capabilities` and says it is initialized; its id.
async fn initialized_session(app: &TestApp, token: &str, capabilities: Value) -> String {
    let session = open_session_with(app, token, capabilities).await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let said = session_request(
        app,
        token,
        Some(&session),
        reqwest::Method::POST,
        Some(initialized),
    )
    .await;
    assert_eq!(said.status(), StatusCode::ACCEPTED);
    session
}

/// A session's `tools/call`: its content type and the JSON-RPC answer in it.
async fn session_call(app: &TestApp, session: &str, id: Value, params: Value) -> (String, Value) {
    let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    let resp = session_request(
        app,
        &app.alice,
        Some(session),
        reqwest::Method::POST,
        Some(call),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::OK);
    let content_type = resp.headers()["content-type"].to_str().unwrap().to_owned();
    let text = resp.text().await.unwrap();
    let answer = match content_type.starts_with("text/event-stream") {
        true => text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|m| m.get("id").is_some())
            .unwrap_or_else(|| panic!("no answer in {text}")),
        false => serde_json::from_str(&text).unwrap(),
    };
    (content_type, answer)
}

/// A plain call of a session is answered in front of rmcp, as rmcp would answer it: its result,
/// the client's own id (a number or a string), a tool error as a result, an unknown tool as
/// invalid params, progress streamed under the client's token before the answer. A client that
/// can sample still goes through rmcp (as a stream), and the session goes on working for both.
#[tokio::test]
async fn a_sessions_plain_call_is_answered_in_json_as_rmcp_would() {
    let peer = everything_http().await;
    let app = spawn_app().await;
    app.register_server(json!({"server_id": "evh", "transport": "http", "url": peer.url}))
        .await;
    let plain = initialized_session(&app, &app.alice, json!({})).await;
    let echo = json!({"name": "evh__echo", "arguments": {"message": "direct"}});
    for id in [json!(5), json!("call-5")] {
        let (content_type, answer) = session_call(&app, &plain, id.clone(), echo.clone()).await;
        assert!(
            content_type.starts_with("application/json"),
            "{content_type}"
        );
        assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(
            answer["result"]["content"][0]["text"], "Echo: direct",
            "{answer}"
        );
    }
    // rmcp's refusal of a host not allowed (DNS rebinding) holds for such a call too.
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": echo});
    let rebound = app
        .client
        .post(format!("{}/mcp", app.base))
        .bearer_auth(&app.alice)
        .header("accept", "application/json, text/event-stream")
        .header("host", "evil.example")
        .header("mcp-session-id", &plain)
        .json(&call)
        .send()
        .await
        .unwrap();
    assert_eq!(rebound.status(), StatusCode::FORBIDDEN);
    let unknown = json!({"name": "evh__nothing", "arguments": {}});
    let (_, answer) = session_call(&app, &plain, json!(6), unknown).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("evh__nothing"),
        "{answer}"
    );
    let wrong = json!({"name": "evh__echo", "arguments": {"message": 3}});
    let (_, answer) = session_call(&app, &plain, json!(7), wrong).await;
    assert!(
        answer.get("error").is_some() || answer["result"]["isError"] == true,
        "{answer}"
    );

    // With a progress token: JSON when nothing comes before the answer, else the progress
    // under that token and then the answer, streamed.
    let mut progress = echo.clone();
    progress["_meta"] = json!({"progressToken": "p"});
    let (content_type, answer) = session_call(&app, &plain, json!(8), progress).await;
    assert!(
        content_type.starts_with("application/json"),
        "{content_type}"
    );
    assert_eq!(
        answer["result"]["content"][0]["text"], "Echo: direct",
        "{answer}"
    );
    let long = json!({"name": "evh__trigger-long-running-operation",
        "arguments": {"duration": 0.2, "steps": 2}, "_meta": {"progressToken": 81}});
    let call = json!({"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": long});
    let resp = session_request(
        &app,
        &app.alice,
        Some(&plain),
        reqwest::Method::POST,
        Some(call),
    )
    .await;
    let content_type = resp.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(
        content_type.starts_with("text/event-stream"),
        "{content_type}"
    );
    let body = resp.text().await.unwrap();
    let messages: Vec<Value> = body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect();
    let (last, progress) = messages.split_last().unwrap();
    assert_eq!(progress.len(), 2, "{body}");
    assert!(
        progress
            .iter()
            .all(|m| m["method"] == "notifications/progress" && m["params"]["progressToken"] == 81),
        "{body}"
    );
    assert_eq!(last["id"], 12, "{body}");
    assert!(
        last["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("completed"),
        "{body}"
    );

    let sampler = initialized_session(&app, &app.alice, json!({"sampling": {}})).await;
    let (content_type, answer) = session_call(&app, &sampler, json!(9), echo.clone()).await;
    assert!(
        content_type.starts_with("text/event-stream"),
        "{content_type}"
    );
    assert_eq!(
        answer["result"]["content"][0]["text"], "Echo: direct",
        "{answer}"
    );

    // After both kinds of call, and once it is ended, the session is rmcp's as ever.
    let (_, answer) = session_call(&app, &plain, json!(10), echo.clone()).await;
    assert_eq!(
        answer["result"]["content"][0]["text"], "Echo: direct",
        "{answer}"
    );
    let call = json!({"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": echo});
    end_session(&app, &plain, call).await;
    app.stop().await;
}

/// Ends alice's `session` (204), then sends `request` in it: 404, the session is gone.
async fn end_session(app: &TestApp, session: &str, request: Value) {
    let ended = session_request(
        app,
        &app.alice,
        Some(session),
        reqwest::Method::DELETE,
        None,
    )
    .await;
    assert_eq!(ended.status(), StatusCode::NO_CONTENT);
    let after = session_request(
        app,
        &app.alice,
        Some(session),
        reqwest::Method::POST,
        Some(request),
    )
    .await;
    assert_eq!(after.status(), StatusCode::NOT_FOUND);
}

/// Ending a 2025-11-25 session answers 204 (clients expect 200 or 204; the Python SDK logged
/// "Session termination failed: 202"), and the session is gone.
#[tokio::test]
async fn ending_a_session_answers_no_content() {
    let app = spawn_app().await;
    let session = open_session(&app, &app.alice).await;
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    end_session(&app, &session, ping).await;
    app.stop().await;
}

/// A session is its agent's: another agent's token with its id can neither call through it,
/// listen to it, nor end it; it is answered as if the session did not exist.
#[tokio::test]
async fn a_session_is_only_its_own_agents() {
    let app = spawn_app().await;
    let session = open_session(&app, &app.alice).await;
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    let (post, get, delete) = (
        reqwest::Method::POST,
        reqwest::Method::GET,
        reqwest::Method::DELETE,
    );
    for (method, body) in [
        (post.clone(), Some(ping.clone())),
        (get, None),
        (delete, None),
    ] {
        let resp = session_request(&app, &app.bob, Some(&session), method.clone(), body).await;
        assert_eq!(resp.status(), StatusCode::NOT_FOUND, "bob's {method}");
    }
    let alice = session_request(&app, &app.alice, Some(&session), post, Some(ping)).await;
    assert_eq!(
        alice.status(),
        StatusCode::OK,
        "alice's session is untouched"
    );
    app.stop().await;
}

/// Runs mcp_resources.py against `/mcp`; its JSON report.
async fn read_everything(app: &TestApp, mode: &str, flags: &[&str]) -> Value {
    let url = format!("{}/mcp", app.base);
    let mut args = vec![url.as_str(), &app.admin, mode];
    args.extend_from_slice(flags);
    run_peer("mcp_resources.py", &args).await
}

fn unreadable(report: &Value) -> Vec<(String, String)> {
    report["reads"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, text)| text.as_str().unwrap_or_default().starts_with("ERROR"))
        .map(|(uri, text)| (uri.clone(), text.to_string()))
        .collect()
}

/// A URI or template several servers offer is shown on `/mcp` qualified with its server
/// (`mcp-bridge://{server_id}/{uri}`), so a client can read (and subscribe to) each; what only
/// one server offers keeps its URI.
#[tokio::test]
async fn every_resource_an_mcp_client_is_shown_can_be_read() {
    let app = spawn_app().await;
    app.register_server(py_stdio("one", &unique("r1"))).await;
    app.register_server(py_stdio("two", &unique("r2"))).await;
    app.register_server(everything_stdio("ev")).await;
    for mode in ["legacy", "auto"] {
        let flags: &[&str] = match mode {
            "legacy" => &[
                "--subscribe",
                "mcp-bridge://two/fixture://doc/1",
                "--touch",
                "two__touch",
            ],
            _ => &[],
        };
        let report = read_everything(&app, mode, flags).await;
        let resources = report["resources"].as_array().unwrap();
        for expected in [
            "mcp-bridge://one/fixture://doc/1",
            "mcp-bridge://two/fixture://doc/1",
            "demo://resource/static/document/architecture.md",
        ] {
            assert!(resources.contains(&json!(expected)), "{expected}: {report}");
        }
        assert!(!resources.contains(&json!("fixture://doc/1")), "{report}");
        let templates = report["templates"].as_array().unwrap();
        assert!(
            templates.contains(&json!("mcp-bridge://two/fixture://note/{name}")),
            "{report}"
        );
        assert_eq!(unreadable(&report), vec![], "{mode}: {report}");
        if mode == "legacy" {
            // The update comes in the form the session subscribed with.
            assert_eq!(report["subscribed"], "ok", "{report}");
            assert_eq!(
                report["updated"], "mcp-bridge://two/fixture://doc/1",
                "{report}"
            );
        }
        assert_eq!(
            report["reads"]["mcp-bridge://one/fixture://doc/1"],
            "hello resource @ mcp-bridge://one/fixture://doc/1",
            "{report}"
        );
    }
    // The subscription went to the server named in the URI, and only there.
    let (_, two) = app.call("two__subscriptions", json!({})).await;
    assert_eq!(two["content"][0]["text"], "fixture://doc/1", "{two}");
    let (_, one) = app.call("one__subscriptions", json!({})).await;
    assert_eq!(one["content"][0]["text"], "", "{one}");
    app.stop().await;
}

/// With an unprefixed server, its URIs stay plain (and reading them goes to it) even when
/// another server offers the same; the other's are qualified.
#[tokio::test]
async fn the_unprefixed_server_keeps_its_uris() {
    let app = TestApp::builder()
        .configure(|c| c.mcp_unprefixed_server = Some("one".into()))
        .spawn()
        .await;
    app.register_server(py_stdio("one", &unique("u1"))).await;
    app.register_server(py_stdio("two", &unique("u2"))).await;
    let report = read_everything(&app, "legacy", &[]).await;
    let resources = report["resources"].as_array().unwrap();
    assert!(resources.contains(&json!("fixture://doc/1")), "{report}");
    assert!(
        resources.contains(&json!("mcp-bridge://two/fixture://doc/1")),
        "{report}"
    );
    assert_eq!(unreadable(&report), vec![], "{report}");
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
    let (status, body) = app.call("py__shout", json!({"size": 10})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
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

/// A stateless `tools/call` of `name` with `region` on `path` (`/mcp`, …) by `token`, with
/// `header` as its `Mcp-Param-Region` (none when None): its HTTP status and JSON-RPC answer.
async fn region_call(
    app: &TestApp,
    path: &str,
    token: &str,
    name: &str,
    region: &str,
    header: Option<&str>,
) -> (StatusCode, Value) {
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    });
    let body = json!({
        "jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": name, "arguments": {"region": region}, "_meta": meta},
    });
    let mut req = app
        .client
        .post(format!("{}{path}", app.base))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", name)
        .json(&body);
    if let Some(value) = header {
        req = req.header("mcp-param-region", value);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status();
    (status, resp.json().await.unwrap())
}

/// SEP-2243 on `/mcp`: a 2026 call's `Mcp-Param-*` header must restate the argument of the
/// tool's `x-mcp-header` parameter (plain or `=?base64?…?=`); a missing, different or badly
/// encoded one is HTTP 400 with -32020 and the call is not made. A tool the caller does not see
/// is unknown whatever its headers, as the call itself would be.
#[tokio::test]
async fn a_2026_calls_param_headers_must_restate_its_arguments() {
    let peer = conformance_2026().await;
    let app = spawn_app().await;
    app.register_server(json!({
        "server_id": "cf", "transport": "http", "url": peer.url,
        "protocol_version": "2026-07-28"
    }))
    .await;
    let tool = "cf__test_x_mcp_header";
    let (status, answer) =
        region_call(&app, "/mcp", &app.alice, tool, "eu-west", Some("eu-west")).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer["result"]["content"][0]["text"], "region=eu-west",
        "{answer}"
    );
    let encoded = "=?base64?ZXUtd2VzdA==?=";
    let (status, answer) =
        region_call(&app, "/mcp", &app.alice, tool, "eu-west", Some(encoded)).await;
    assert_eq!(status, StatusCode::OK, "Base64: {answer}");
    for (what, header) in [
        ("missing", None),
        ("different", Some("us-east")),
        ("bad Base64", Some("=?base64?ZXUtd2VzdA?=")),
    ] {
        let (status, answer) = region_call(&app, "/mcp", &app.alice, tool, "eu-west", header).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{what}: {answer}");
        assert_eq!(answer["error"]["code"], -32020, "{what}: {answer}");
    }
    // Hidden from bob: unknown to him, not a header mismatch.
    let (status, body) = app
        .put(
            "/v1/policies/no-cf",
            &app.admin,
            json!({"match": {"subs": ["bo*"]}, "deny": {"tools": ["cf__*"]}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (_, answer) = region_call(&app, "/mcp", &app.bob, tool, "eu-west", None).await;
    assert_ne!(answer["error"]["code"], -32020, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("Unknown tool"), "{answer}");
    app.stop().await;
}

/// A tool renamed by a toolset reaches its 2026 server under its own name: the server (the
/// Python SDK, which refuses an `Mcp-Name` or `Mcp-Param-*` header that differs from the body)
/// answers the call made as `region` on the toolset's path.
#[tokio::test]
async fn an_aliased_tool_reaches_a_2026_server_under_its_own_name() {
    let peer = conformance_2026().await;
    let app = spawn_app().await;
    app.register_server(json!({
        "server_id": "cf", "transport": "http", "url": peer.url,
        "protocol_version": "2026-07-28"
    }))
    .await;
    let toolset = json!({
        "tools": ["cf__test_x_mcp_header"],
        "rename": {"cf__test_x_mcp_header": "region"}
    });
    let (status, body) = app.put("/v1/toolsets/short", &app.admin, toolset).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let path = "/mcp/toolsets/short";
    let (status, answer) = region_call(&app, path, &app.alice, "region", "eu", Some("eu")).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer["result"]["content"][0]["text"], "region=eu",
        "{answer}"
    );
    // Its parameters' headers are checked under the alias too.
    let (status, answer) = region_call(&app, path, &app.alice, "region", "eu", None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
    app.stop().await;
}
