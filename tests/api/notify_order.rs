//! What a server sends during a call reaches the caller, its progress and log messages before the
//! call's result, every time: the fixture (notify_order.py) sends its progress and a log message right before
//! it answers, with no pause. The bridge runs on several threads, as it does in service, where
//! the pump of a server's notifications and the call's answer race (the old pump lost the last
//! progress of about one call in thirty here).

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;
use crate::mcp::run_peer;

/// Calls made in a row.
const TIMES: usize = 30;
/// Progress notifications per call.
const STEPS: usize = 5;

/// The stdio config of the fixture server.
fn notify_stdio(server_id: &str) -> Value {
    let script = peers_dir().join("notify_order.py");
    let script = script.to_string_lossy();
    json!({ "server_id": server_id, "transport": "stdio", "cmd": [python(), script, "server"] })
}

/// The progress a call's caller should have had before its result.
fn expected() -> Vec<String> {
    (1..=STEPS).map(|i| format!("p{i}")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_mcp_client_gets_all_progress_before_the_result_and_every_log() {
    every_note_before_the_result("2025").await;
}

/// A stateless client asks for log messages in each request's `_meta`; they come on the call's
/// own stream as a 2025 session's do.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stateless_client_gets_all_progress_and_its_logs_before_the_result() {
    every_note_before_the_result("2026").await;
}

/// Calls the fixture's countdown [`TIMES`] times through `/mcp` as a client of `era`, and checks
/// each call's progress and log message came in order before its result, and none late.
async fn every_note_before_the_result(era: &str) {
    let app = spawn_app().await;
    app.register_server(notify_stdio("notify")).await;
    let url = format!("{}/mcp", app.base);
    let (times, steps) = (TIMES.to_string(), STEPS.to_string());
    let report = run_peer(
        "notify_order.py",
        &[
            "client",
            &url,
            &app.alice,
            "notify__countdown",
            &times,
            &steps,
            era,
        ],
    )
    .await;
    let calls = report["calls"].as_array().unwrap();
    assert_eq!(calls.len(), TIMES, "{report}");
    for (i, call) in calls.iter().enumerate() {
        let notes: Vec<&str> = call
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        // The progress and the log message come on the call's own stream: all of it, in the
        // order the server sent it, before the result.
        let mut sent = expected();
        sent.push(format!("log log {STEPS}"));
        assert_eq!(notes, sent, "{era} call {i}: {report}");
    }
    // None comes late (on the session's GET stream), and none twice.
    assert_eq!(report["late"], json!([]), "{report}");
    assert!(
        report["results"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r == "done"),
        "{report}"
    );
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_streamed_rest_call_gets_every_progress_before_the_result() {
    let app = spawn_app().await;
    app.register_server(notify_stdio("notify")).await;
    for i in 0..TIMES {
        let resp = app
            .client
            .post(format!("{}/v1/tools/call", app.base))
            .bearer_auth(&app.alice)
            .header("Accept", "text/event-stream")
            .json(&json!({"id": format!("c{i}"), "name": "notify__countdown", "arguments": {"n": STEPS}}))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        let events = EventStream::from_response(resp)
            .drain(Duration::from_secs(10))
            .await;
        let progress: Vec<Value> = events
            .iter()
            .filter(|m| m.event == "mcp/server/push")
            .map(|m| m.data["params"]["progress"].clone())
            .collect();
        let steps: Vec<Value> = (1..=STEPS).map(|s| json!(s as f64)).collect();
        assert_eq!(progress, steps, "call {i}: {events:?}");
        let last = events.last().expect("the stream has the result");
        assert_eq!(last.event, "tool/call/resp", "call {i}: {events:?}");
        assert_eq!(last.data["content"][0]["text"], "done", "{events:?}");
    }
    app.stop().await;
}
