//! Per-agent limits (429 with Retry-After) and the audit log.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

async fn app_with(rate: u32, burst: u32, concurrency: usize) -> TestApp {
    TestApp::builder()
        .configure(move |c| {
            c.agent_rate = rate;
            c.agent_burst = burst;
            c.agent_concurrency = concurrency;
        })
        .spawn()
        .await
}

#[tokio::test]
async fn an_agent_over_its_rate_gets_429_with_retry_after() {
    let app = app_with(1, 2, 0).await;
    for _ in 0..2 {
        let (status, _) = app.get("/v1/tools", &app.alice).await;
        assert_eq!(status, StatusCode::OK);
    }
    let resp = app
        .client
        .get(format!("{}/v1/tools", app.base))
        .bearer_auth(&app.alice)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(resp.headers()["retry-after"], "1");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["code"], "rate_limited", "{body}");
    assert_eq!(body["retryable"], true);
    // Per agent: bob is not slowed down by alice.
    let (status, _) = app.get("/v1/tools", &app.bob).await;
    assert_eq!(status, StatusCode::OK);
    // And the rate refills: letting its 1 s pass is what is tested.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (status, _) = app.get("/v1/tools", &app.alice).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn an_agent_has_a_bounded_number_of_requests_in_flight() {
    let app = app_with(0, 0, 1).await;
    app.register_server(everything_stdio("ev")).await;
    // The event stream does not count: an agent listens while it calls.
    let mut events = EventStream::open(&app, &app.alice, None).await;
    let slow = {
        let (client, base, token) = (app.client.clone(), app.base.clone(), app.alice.clone());
        tokio::spawn(async move {
            let args = json!({ "duration": 2, "steps": 4 });
            client
                .post(format!("{base}/v1/tools/call"))
                .bearer_auth(token)
                .json(&json!({ "name": "ev__trigger-long-running-operation", "arguments": args }))
                .send()
                .await
                .unwrap()
                .status()
        })
    };
    // Its first progress says the call reached the server: it is in flight.
    events
        .wait_for("the slow call's first progress", WAIT, |m| {
            is_push(m, "notifications/progress")
        })
        .await;
    let (status, body) = app.get("/v1/tools", &app.alice).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert!(body.to_string().contains("in flight"), "{body}");
    let another = app
        .client
        .get(format!("{}/v1/events", app.base))
        .bearer_auth(&app.alice)
        .send()
        .await
        .unwrap();
    assert_eq!(another.status(), StatusCode::OK);
    assert!(!slow.is_finished(), "the slow call was still in flight");
    assert_eq!(slow.await.unwrap(), StatusCode::OK);
    let (status, _) = app.get("/v1/tools", &app.alice).await;
    assert_eq!(status, StatusCode::OK, "free again once the call ended");
}

/// A streamed answer keeps its request in flight until it ends: a call streamed over REST
/// (`Accept: text/event-stream`) and one on `/mcp` answered over SSE, whose headers go out at
/// once, were counted only until then.
#[tokio::test]
async fn a_streamed_answer_stays_in_flight_until_it_ends() {
    let app = app_with(0, 0, 1).await;
    app.register_server(everything_stdio("ev")).await;
    let long = json!({ "duration": 2, "steps": 4 });
    let streamed = app
        .client
        .post(format!("{}/v1/tools/call", app.base))
        .bearer_auth(&app.alice)
        .header("accept", "text/event-stream")
        .json(&json!({ "name": "ev__trigger-long-running-operation", "arguments": long }))
        .send()
        .await
        .unwrap();
    assert_eq!(streamed.status(), StatusCode::OK);
    let mut streamed = EventStream::from_response(streamed);
    streamed
        .wait_for("progress on the streamed call", WAIT, |m| {
            is_push(m, "notifications/progress")
        })
        .await;
    let (status, body) = app.get("/v1/tools", &app.alice).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    streamed
        .wait_for("the streamed call's answer", WAIT, |m| {
            m.event == "tool/call/resp"
        })
        .await;
    assert!(streamed.ends_within(WAIT).await, "the stream ends");
    let (status, _) = app.get("/v1/tools", &app.alice).await;
    assert_eq!(status, StatusCode::OK, "free again once the stream ended");

    // The same on /mcp: a stateless call with a progress token is answered over SSE.
    let meta = json!({"progressToken": "p1"});
    let streamed = app
        .stateless_mcp_call(&app.alice, "ev__trigger-long-running-operation", long, meta)
        .await;
    assert_eq!(streamed.status(), StatusCode::OK);
    assert_eq!(streamed.headers()["content-type"], "text/event-stream");
    let mut streamed = EventStream::from_response(streamed);
    streamed
        .wait_for("progress on the /mcp call", WAIT, |m| {
            m.data["method"] == "notifications/progress"
        })
        .await;
    let (status, body) = app.get("/v1/tools", &app.alice).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    streamed
        .wait_for("the /mcp call's result", WAIT, |m| {
            m.data["id"] == 7 && m.data.get("result").is_some()
        })
        .await;
    assert!(streamed.ends_within(WAIT).await, "the stream ends");
    let (status, _) = app.get("/v1/tools", &app.alice).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn the_audit_log_says_who_changed_what_without_secrets() {
    let app = spawn_app().await;
    let mut config = everything_stdio("audited");
    config["env"] = json!({ "API_KEY": "audit-s3cret" });
    app.register_server(config).await;
    let (status, _) = app
        .patch(
            "/v1/servers/audited",
            &app.admin,
            json!({ "tool_allow_list": ["echo"], "env": { "API_KEY": "another-s3cret" } }),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    app.unregister_server("audited").await;

    let (status, body) = app.get("/v1/audit", &app.alice).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "admins only: {body}");
    let (status, body) = app.get("/v1/audit?limit=2", &app.admin).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let entries = body["entries"].as_array().unwrap();
    let actions: Vec<&str> = entries
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["server.unregister", "server.update"]);
    assert_eq!(entries[1]["detail"], "changed: env, tool_allow_list");
    assert!(
        entries
            .iter()
            .all(|e| e["actor"] == "root" && e["target"] == "audited")
    );
    let before = body["next_cursor"].as_i64().expect("a next page");
    let (_, rest) = app
        .get(&format!("/v1/audit?before={before}"), &app.admin)
        .await;
    let register = &rest["entries"][0];
    assert_eq!(register["action"], "server.register");
    assert!(register["detail"].as_str().unwrap().starts_with("stdio "));
    assert!(rest.get("next_cursor").is_none(), "{rest}");
    let all = format!("{body}{rest}");
    assert!(
        !all.contains("s3cret"),
        "no secret value in the audit log: {all}"
    );
    let (status, _) = app.get("/v1/audit?limit=0", &app.admin).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
}
