//! Stateless `/mcp` (the 2026-07-28 era): calls answered in JSON while progress still streams,
//! input and sampling requests reaching the client as they are, paused calls resumed only by
//! their agent, and the parameter headers a call must restate.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

use super::mcp_client;

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
