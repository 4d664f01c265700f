//! `/metrics` moves with what the service does.

use reqwest::Method;
use serde_json::json;

use crate::helpers::*;

async fn scrape(app: &TestApp) -> String {
    let (status, body) = app.send(Method::GET, "/metrics", None, None).await;
    assert_eq!(status, reqwest::StatusCode::OK);
    body.as_str().expect("text").to_owned()
}

/// The value of the sample with exactly these name and labels.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| {
            line.strip_prefix(series)
                .and_then(|rest| rest.strip_prefix(' '))
        })
        .and_then(|value| value.trim().parse().ok())
}

#[tokio::test]
async fn metrics_move_with_calls_requests_streams_and_servers() {
    let app = spawn_app().await;
    let marker = unique("metrics");
    app.register_server(py_stdio("pm", &marker)).await;
    let before = scrape(&app).await;
    assert_eq!(
        sample(
            &before,
            r#"mcp_bridge_upstream_status{server_id="pm",status="ready"}"#
        ),
        Some(1.0)
    );
    assert_eq!(
        sample(
            &before,
            r#"mcp_bridge_tool_calls_total{server_id="pm",outcome="ok"}"#
        ),
        None
    );

    for _ in 0..2 {
        app.call("pm__echo", json!({"text": "x"})).await;
    }
    app.call("pm__fail", json!({})).await;
    app.call("pm__nosuch", json!({})).await;
    app.call("madeup__tool", json!({})).await;
    let _alice = EventStream::open(&app, &app.alice, None).await;

    let after = scrape(&app).await;
    assert_eq!(
        sample(
            &after,
            r#"mcp_bridge_tool_calls_total{server_id="pm",outcome="ok"}"#
        ),
        Some(2.0),
        "{after}"
    );
    assert_eq!(
        sample(
            &after,
            r#"mcp_bridge_tool_calls_total{server_id="pm",outcome="is_error"}"#
        ),
        Some(1.0)
    );
    assert_eq!(
        sample(
            &after,
            r#"mcp_bridge_tool_calls_total{server_id="pm",outcome="mcp_tool_not_found"}"#
        ),
        Some(1.0)
    );
    assert!(!after.contains("madeup"), "a made-up name adds no series");
    assert_eq!(
        sample(
            &after,
            r#"mcp_bridge_tool_call_duration_seconds_count{server_id="pm",outcome="ok"}"#
        ),
        Some(2.0)
    );
    assert!(
        sample(
            &after,
            r#"mcp_bridge_http_requests_total{route="/v1/tools/call",status="200"}"#
        ) >= Some(3.0)
    );
    assert_eq!(sample(&after, "mcp_bridge_connected_agents"), Some(1.0));
    assert_eq!(sample(&after, "mcp_bridge_event_streams"), Some(1.0));
    assert_eq!(sample(&after, "mcp_bridge_pending_requests"), Some(0.0));
    // The listener, the server's connection and the event stream are tasks at least.
    assert!(sample(&after, "mcp_bridge_runtime_tasks") >= Some(3.0));

    // A reconnect is counted.
    let (_, body) = app
        .post("/v1/servers/pm/reconnect", &app.admin, json!(null))
        .await;
    assert_eq!(body["server"]["status"], "ready");
    let reconnects = r#"mcp_bridge_upstream_reconnects_total{server_id="pm"}"#;
    let again = wait_until("a reconnect in /metrics", WAIT, async || {
        let text = scrape(&app).await;
        match sample(&text, reconnects) {
            Some(n) if n > 0.0 => Ok(text),
            _ => Err(text),
        }
    })
    .await;
    assert_eq!(sample(&again, reconnects), Some(1.0), "{again}");
    app.stop().await;
}

#[tokio::test]
async fn every_answer_carries_a_request_id_and_a_given_one_comes_back() {
    let app = spawn_app().await;
    let get = |id: Option<&'static str>| {
        let mut request = app
            .client
            .get(format!("{}/v1/servers", app.base))
            .bearer_auth(&app.alice);
        if let Some(id) = id {
            request = request.header("x-request-id", id);
        }
        request.send()
    };
    let fresh = get(None).await.unwrap();
    assert_eq!(fresh.status(), reqwest::StatusCode::OK);
    let id = fresh.headers()["x-request-id"].to_str().unwrap().to_owned();
    assert_eq!(id.len(), 36, "a UUID: {id}");
    let other = get(None).await.unwrap();
    assert_ne!(other.headers()["x-request-id"], id.as_str());

    let given = get(Some("trace-me-42")).await.unwrap();
    assert_eq!(given.headers()["x-request-id"], "trace-me-42");
    // Refused requests carry it too (the layers wrap the token check).
    let refused = app
        .client
        .get(format!("{}/v1/servers", app.base))
        .header("x-request-id", "no-token-7")
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), reqwest::StatusCode::UNAUTHORIZED);
    assert_eq!(refused.headers()["x-request-id"], "no-token-7");
    app.stop().await;
}
