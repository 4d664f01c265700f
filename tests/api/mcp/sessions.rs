//! Sessions on `/mcp` (the 2025 era): opened, used for plain calls answered in JSON as rmcp
//! would, ended, and kept to their own agent; an upstream reached on kept-alive connections.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use reqwest::StatusCode;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

use crate::helpers::*;

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
