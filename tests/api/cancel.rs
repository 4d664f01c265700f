//! Cancelling tool calls: `DELETE /v1/calls/{id}`, a closed request and a `/mcp` client's
//! `notifications/cancelled` each reach the upstream as `notifications/cancelled`, on stdio,
//! Streamable HTTP, legacy SSE and WebSocket upstreams. The Python fixtures' `slow` tool writes
//! a file when the SDK cancels it, which proves the server saw the cancel.

use std::path::Path;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest};
use rmcp::service::PeerRequestOptions;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

use crate::helpers::*;

/// How long the slow calls would run if nobody cancelled them.
const LONG: u64 = 60;
/// How soon a cancelled call must answer.
const PROMPTLY: Duration = Duration::from_secs(5);

/// Where a `slow` call reports that it started and that it was cancelled.
pub struct Marks {
    pub started: StartMark,
    pub cancelled: String,
}

impl Default for Marks {
    fn default() -> Self {
        Self::new()
    }
}

impl Marks {
    pub fn new() -> Self {
        let started = StartMark::new();
        let cancelled = format!("{}.cancelled", started.path);
        Self { started, cancelled }
    }

    pub fn arguments(&self) -> Value {
        json!({"seconds": LONG, "started": self.started.path, "cancelled": self.cancelled})
    }

    /// Waits until the server has recorded the cancel.
    pub async fn wait_cancelled(&self) {
        wait_until(
            "the upstream observing the cancel",
            WAIT,
            async || match Path::new(&self.cancelled).exists() {
                true => Ok(()),
                false => Err(format!("no file {}", self.cancelled)),
            },
        )
        .await
    }
}

/// A call of `name` as `token` with A2E id `id`, in flight in a task of its own.
pub fn spawn_call(
    app: &TestApp,
    token: &str,
    id: &str,
    name: &str,
    arguments: Value,
) -> JoinHandle<(StatusCode, Value)> {
    post_in_background(
        app,
        token,
        json!({"id": id, "name": name, "arguments": arguments}),
    )
}

/// Cancels the call `id` as `token`.
pub async fn cancel(app: &TestApp, token: &str, id: &str) -> (StatusCode, Value) {
    app.delete(&format!("/v1/calls/{id}?id=del-{id}"), token)
        .await
}

/// The call's request answers promptly, 409 `cancelled`.
pub async fn assert_cancelled(call: JoinHandle<(StatusCode, Value)>, id: &str) {
    let (status, body) = tokio::time::timeout(PROMPTLY, call)
        .await
        .expect("the cancelled call answers at once")
        .unwrap();
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["type"], "tool/call/resp", "{body}");
    assert_eq!(body["req_id"], id, "{body}");
    assert_eq!(body["code"], "cancelled", "{body}");
    assert_eq!(body["retryable"], false, "{body}");
}

/// Registers `config`, cancels a slow call on it by `DELETE /v1/calls/{id}`, and checks the call
/// answers at once, the server saw the cancel, and the server still works.
async fn delete_cancels(config: Value) {
    let app = spawn_app().await;
    let id = app.register_server(config).await["server_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let marks = Marks::new();
    let call_id = unique("call");
    let call = spawn_call(
        &app,
        &app.alice,
        &call_id,
        &format!("{id}__slow"),
        marks.arguments(),
    );
    marks.started.wait().await;
    let asked = Instant::now();
    let (status, body) = cancel(&app, &app.alice, &call_id).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["type"], "tool/call/cancel/resp", "{body}");
    assert_eq!(body["req_id"], format!("del-{call_id}"), "{body}");
    assert_eq!(body["ok"], true, "{body}");
    assert_eq!(body["call_id"], call_id.as_str(), "{body}");
    assert_cancelled(call, &call_id).await;
    marks.wait_cancelled().await;
    assert!(asked.elapsed() < PROMPTLY, "took {:?}", asked.elapsed());
    // Not retried, and the server goes on serving.
    app.call_tool(&format!("{id}__echo"), json!({"text": "still here"}))
        .await;
    let (_, got) = app.server(&id).await;
    assert_eq!(got["server"]["status"], "ready", "{got}");
    app.stop().await;
}

#[tokio::test]
async fn delete_cancels_a_call_on_a_stdio_server() {
    delete_cancels(py_stdio("cs", &unique("cancel"))).await;
}

#[tokio::test]
async fn delete_cancels_a_call_on_a_streamable_http_server() {
    let peer = py_http().await;
    delete_cancels(json!({"server_id": "ch", "transport": "http", "url": peer.url})).await;
    peer.stop().await;
}

#[tokio::test]
async fn delete_cancels_a_call_on_a_legacy_sse_server() {
    let peer = py_sse().await;
    delete_cancels(json!({"server_id": "cl", "transport": "sse", "url": peer.url})).await;
    peer.stop().await;
}

#[tokio::test]
async fn delete_cancels_a_call_on_a_websocket_server() {
    let peer = ws_server(None).await;
    delete_cancels(json!({"server_id": "cw", "transport": "ws", "url": peer.url})).await;
    peer.stop().await;
}

#[tokio::test]
async fn the_long_running_operation_of_server_everything_is_cancelled_at_once() {
    let app = spawn_app().await;
    app.register_server(everything_stdio("ev")).await;
    let call_id = unique("long");
    let arguments = json!({"duration": LONG, "steps": LONG});
    let call = spawn_call(
        &app,
        &app.alice,
        &call_id,
        "ev__trigger-long-running-operation",
        arguments,
    );
    // In flight once it can be cancelled.
    wait_until("the call being in flight", WAIT, async || {
        match cancel(&app, &app.alice, &call_id).await {
            (StatusCode::OK, _) => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    assert_cancelled(call, &call_id).await;
    app.call_tool("ev__echo", json!({"message": "after"})).await;
    app.stop().await;
}

#[tokio::test]
async fn a_client_that_goes_away_mid_call_cancels_it_upstream() {
    let app = spawn_app().await;
    let peer = py_http().await;
    app.register_server(py_stdio("gs", &unique("gone"))).await;
    app.register_server(json!({"server_id": "gh", "transport": "http", "url": peer.url}))
        .await;
    // A JSON call whose request is dropped, on stdio.
    let marks = Marks::new();
    let call_id = unique("gone");
    let call = spawn_call(&app, &app.alice, &call_id, "gs__slow", marks.arguments());
    marks.started.wait().await;
    call.abort();
    marks.wait_cancelled().await;
    let (status, body) = cancel(&app, &app.alice, &call_id).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "no longer in flight: {body}");
    // A streamed call (text/event-stream) whose stream is closed, on Streamable HTTP.
    let marks = Marks::new();
    let resp = app
        .client
        .post(format!("{}/v1/tools/call", app.base))
        .bearer_auth(&app.alice)
        .header("accept", "text/event-stream")
        .json(&json!({"name": "gh__slow", "arguments": marks.arguments()}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    marks.started.wait().await;
    drop(resp);
    marks.wait_cancelled().await;
    app.stop().await;
    peer.stop().await;
}

#[tokio::test]
async fn a_call_through_a2e_is_cancelled_by_its_request_id() {
    let app = spawn_app().await;
    app.register_server(py_stdio("ca", &unique("a2e"))).await;
    let marks = Marks::new();
    let call_id = unique("a2e");
    let (client, token) = (app.client.clone(), app.alice.clone());
    let url = format!("{}/v1/a2e", app.base);
    let body = json!({"type": "tool/call/req", "id": call_id, "name": "ca__slow", "arguments": marks.arguments()});
    let call = tokio::spawn(async move {
        let resp = client
            .post(url)
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .unwrap();
        (resp.status(), resp.json::<Value>().await.unwrap())
    });
    marks.started.wait().await;
    // Cancelled through /v1/a2e too.
    let (status, body) = app
        .post(
            "/v1/a2e",
            &app.alice,
            json!({"type": "tool/call/cancel/req", "id": "c-1", "call_id": call_id}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["type"], "tool/call/cancel/resp", "{body}");
    assert_eq!(body["req_id"], "c-1", "{body}");
    assert_cancelled(call, &call_id).await;
    marks.wait_cancelled().await;
    app.stop().await;
}

#[tokio::test]
async fn only_the_caller_cancels_its_call_once_while_it_runs() {
    let app = spawn_app().await;
    app.register_server(py_stdio("cb", &unique("bad"))).await;
    // Unknown.
    let (status, body) = cancel(&app, &app.alice, "no-such-call").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(body["type"], "tool/call/cancel/resp", "{body}");
    assert_eq!(body["code"], "not_found", "{body}");
    assert_eq!(body["ok"], false, "{body}");
    assert_eq!(body["req_id"], "del-no-such-call", "{body}");
    // Finished.
    let (status, body) = app
        .post(
            "/v1/tools/call",
            &app.alice,
            json!({"id": "done-1", "name": "cb__echo", "arguments": {"text": "x"}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = cancel(&app, &app.alice, "done-1").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "a finished call: {body}");
    // Another agent's call: as unknown as none, and left running.
    let marks = Marks::new();
    let call_id = unique("mine");
    let call = spawn_call(&app, &app.alice, &call_id, "cb__slow", marks.arguments());
    marks.started.wait().await;
    let (status, body) = cancel(&app, &app.bob, &call_id).await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "bob's view of alice's call: {body}"
    );
    assert_eq!(body["code"], "not_found", "{body}");
    // A negative: nothing to wait on but time.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!call.is_finished(), "alice's call is still running");
    assert!(
        !Path::new(&marks.cancelled).exists(),
        "and was not cancelled"
    );
    // Twice: the second finds nothing.
    let (status, body) = cancel(&app, &app.alice, &call_id).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = cancel(&app, &app.alice, &call_id).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "cancelled twice: {body}");
    assert_cancelled(call, &call_id).await;
    marks.wait_cancelled().await;
    // The id is free again for a new call.
    let (status, body) = app
        .post(
            "/v1/tools/call",
            &app.alice,
            json!({"id": call_id, "name": "cb__echo", "arguments": {"text": "y"}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    app.stop().await;
}

#[tokio::test]
async fn an_mcp_clients_cancel_is_forwarded_upstream() {
    let app = spawn_app().await;
    app.register_server(py_stdio("cm", &unique("mcp"))).await;
    let config = StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", app.base))
        .auth_header(app.alice.clone());
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    let client = ().serve(transport).await.unwrap();
    let marks = Marks::new();
    let arguments = marks.arguments().as_object().cloned().unwrap();
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new("cm__slow").with_arguments(arguments),
    ));
    let handle = client
        .peer()
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    marks.started.wait().await;
    handle
        .cancel(Some("the test gave up".into()))
        .await
        .unwrap();
    marks.wait_cancelled().await;
    let _ = client.cancel().await;
    app.stop().await;
}
