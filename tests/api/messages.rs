//! A server's message over `max_message_bytes` (MCP_BRIDGE_MAX_MESSAGE_BYTES), on every
//! transport: an answer fails its call at once, not retryable, naming the limit; a call in flight
//! beside it and the connection are not touched; a notification is dropped.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

use crate::helpers::*;

const LIMIT: usize = 1024 * 1024;
const NAMED: &str = "1 MiB limit (MCP_BRIDGE_MAX_MESSAGE_BYTES)";
/// How long the call beside the big one takes.
const SLOW: Duration = Duration::from_secs(8);

async fn app_with_limit() -> TestApp {
    TestApp::builder()
        .configure(|c| c.max_message_bytes = LIMIT)
        .spawn()
        .await
}

/// A call, given up after 30 s (the bridge's own timeout is 300 s).
async fn call(app: &TestApp, name: &str, arguments: Value) -> (StatusCode, Value) {
    tokio::time::timeout(Duration::from_secs(30), app.call(name, arguments))
        .await
        .unwrap_or_else(|_| panic!("{name} got no answer within 30 s"))
}

fn assert_too_large(status: StatusCode, body: &Value) {
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
    assert_eq!(body["code"], "mcp_protocol_error", "{body}");
    assert_eq!(body["retryable"], false, "{body}");
    assert!(
        body["error"].as_str().unwrap_or_default().contains(NAMED),
        "the error names the limit: {body}"
    );
}

/// With a slow call in flight, `big` answers 2 MiB: that call fails at once with the error
/// naming the limit; the slow call gets its answer (or, on WebSocket, the same error at once
/// and the server reconnects); the server stays ready; 100 KiB still come through.
async fn over_the_limit(config: Value, survives: bool) {
    let app = app_with_limit().await;
    let server = app.register_server(config).await;
    let id = server["server_id"].as_str().unwrap().to_owned();
    let connected_at = server["connected_at"].as_f64().unwrap();
    let started = StartMark::new();
    let slow = {
        let (client, base, token) = (app.client.clone(), app.base.clone(), app.alice.clone());
        let name = format!("{id}__slow");
        let arguments = json!({ "seconds": SLOW.as_secs(), "started": started.path });
        tokio::spawn(async move {
            let resp = client
                .post(format!("{base}/v1/tools/call"))
                .bearer_auth(token)
                .json(&json!({ "name": name, "arguments": arguments }))
                .send()
                .await
                .unwrap();
            (resp.status(), resp.json::<Value>().await.unwrap())
        })
    };
    started.wait().await;
    let started = Instant::now();
    let (status, body) = call(&app, &format!("{id}__big"), json!({ "size": 2 * LIMIT })).await;
    let took = started.elapsed();
    assert_too_large(status, &body);
    assert!(
        took < SLOW - Duration::from_secs(2),
        "the call failed at once, not after {took:?}"
    );
    if survives {
        assert!(!slow.is_finished(), "the slow call is still in flight");
    }
    let (status, body) = slow.await.unwrap();
    if survives {
        assert_eq!(
            status,
            StatusCode::OK,
            "the slow call is not touched: {body}"
        );
        assert_eq!(body["content"][0]["text"], "done", "{body}");
        let (_, got) = app.get(&format!("/v1/servers/{id}"), &app.admin).await;
        assert_eq!(got["server"]["status"], "ready", "{got}");
        assert_eq!(
            got["server"]["connected_at"].as_f64().unwrap(),
            connected_at,
            "the same connection: {got}"
        );
    } else {
        assert!(
            started.elapsed() < SLOW - Duration::from_secs(1),
            "the slow call failed at once too"
        );
        assert_too_large(status, &body);
        app.wait_reconnected(&id, connected_at, Duration::from_secs(20))
            .await;
    }
    let (status, body) = call(&app, &format!("{id}__big"), json!({ "size": 100 * 1024 })).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["content"][0]["text"].as_str().map(str::len),
        Some(100 * 1024)
    );
    app.stop().await;
}

#[tokio::test]
async fn an_answer_over_the_limit_fails_its_call_alone_over_stdio() {
    over_the_limit(py_stdio("big", &unique("big")), true).await;
}

#[tokio::test]
async fn an_answer_over_the_limit_fails_its_call_alone_over_streamable_http() {
    let peer = py_http().await;
    let config = json!({ "server_id": "big", "transport": "http", "url": peer.url });
    over_the_limit(config, true).await;
    peer.stop().await;
}

#[tokio::test]
async fn a_json_answer_over_the_limit_fails_its_call_alone_over_streamable_http() {
    let peer = py_http_on(0, &["--json"]).await;
    let config = json!({ "server_id": "big", "transport": "http", "url": peer.url });
    over_the_limit(config, true).await;
    peer.stop().await;
}

#[tokio::test]
async fn an_answer_over_the_limit_fails_its_call_alone_over_stateless_http() {
    let peer = py_http_stateless().await;
    let config = json!({
        "server_id": "big", "transport": "http", "url": peer.url, "protocol_version": "2026-07-28"
    });
    over_the_limit(config, true).await;
    peer.stop().await;
}

#[tokio::test]
async fn an_answer_over_the_limit_fails_its_call_alone_over_legacy_sse() {
    let peer = py_sse().await;
    let config = json!({ "server_id": "big", "transport": "sse", "url": peer.url });
    over_the_limit(config, true).await;
    peer.stop().await;
}

#[tokio::test]
async fn an_answer_over_the_limit_fails_its_call_alone_over_websocket() {
    let peer = ws_server(None).await;
    let config = json!({ "server_id": "big", "transport": "ws", "url": peer.url });
    over_the_limit(config, true).await;
    peer.stop().await;
}

/// A log message over the limit sent during a call is dropped; the call and the connection go on.
async fn a_notification_over_the_limit_is_dropped(config: Value) {
    let app = app_with_limit().await;
    let server = app.register_server(config).await;
    let connected_at = server["connected_at"].as_f64().unwrap();
    let (status, body) = call(&app, "big__shout", json!({ "size": 2 * LIMIT })).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["content"][0]["text"], "said", "{body}");
    let (_, got) = app.get("/v1/servers/big", &app.admin).await;
    assert_eq!(got["server"]["status"], "ready", "{got}");
    assert_eq!(
        got["server"]["connected_at"].as_f64().unwrap(),
        connected_at,
        "the same connection: {got}"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_notification_over_the_limit_is_dropped_over_stdio() {
    a_notification_over_the_limit_is_dropped(py_stdio("big", &unique("big"))).await;
}

#[tokio::test]
async fn a_notification_over_the_limit_is_dropped_over_legacy_sse() {
    let peer = py_sse().await;
    let config = json!({ "server_id": "big", "transport": "sse", "url": peer.url });
    a_notification_over_the_limit_is_dropped(config).await;
    peer.stop().await;
}

/// Over Streamable HTTP, a notification over the limit on the standalone GET stream is dropped
/// and the stream goes on (through a proxy, it is opened again): the server's change notices
/// still arrive.
#[tokio::test]
async fn a_notification_over_the_limit_on_the_standalone_stream_is_dropped() {
    let peer = py_http().await;
    let app = app_with_limit().await;
    let config = json!({ "server_id": "big", "transport": "http", "url": peer.url });
    let connected_at = app.register_server(config).await["connected_at"]
        .as_f64()
        .unwrap();
    let arguments = json!({ "size": 2 * LIMIT, "related": false });
    let (status, body) = call(&app, "big__shout", arguments).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["content"][0]["text"], "said", "{body}");
    // grow announces its new tool on the standalone stream: once it is open again, it shows.
    // A notice sent before the stream is open again is lost: grow again until one shows.
    let deadline = Instant::now() + Duration::from_secs(20);
    for attempt in 0.. {
        let name = format!("big__sprout{attempt}");
        let arguments = json!({ "name": &name["big__".len()..] });
        let (status, body) = call(&app, "big__grow", arguments).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let shown = poll_until(Duration::from_millis(1500), async || {
            let names = app.tool_names("?server_id=big").await;
            match names.contains(&name) {
                true => Ok(()),
                false => Err(format!("{names:?}")),
            }
        })
        .await;
        if shown.is_ok() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no change notice came on the standalone stream within 20 s: {shown:?}"
        );
    }
    let (_, got) = app.get("/v1/servers/big", &app.admin).await;
    assert_eq!(got["server"]["status"], "ready", "{got}");
    assert_eq!(
        got["server"]["connected_at"].as_f64().unwrap(),
        connected_at
    );
    app.stop().await;
    peer.stop().await;
}

#[tokio::test]
async fn an_mcp_client_reads_the_limit_in_the_tool_error() {
    let app = app_with_limit().await;
    app.register_server(py_stdio("big", &unique("big"))).await;
    let config = StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", app.base))
        .auth_header(app.bob.clone());
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    let client = ().serve(transport).await.unwrap();
    let params = CallToolRequestParams::new("big__big")
        .with_arguments(json!({ "size": 2 * LIMIT }).as_object().unwrap().clone());
    let result = tokio::time::timeout(Duration::from_secs(30), client.call_tool(params))
        .await
        .expect("an answer within 30 s")
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    let text = result.content[0].as_text().unwrap().text.clone();
    assert!(text.contains(NAMED), "{text}");
    client.cancel().await.unwrap();
    app.stop().await;
}
