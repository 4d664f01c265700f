//! The per-agent event channel against server-everything: sampling, roots and elicitation round
//! trips, notifications routed to the right agent, progress, replay.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

#[tokio::test]
async fn sampling_goes_to_the_owner_and_the_answer_reaches_the_tool_result() {
    let app = spawn_app().await;
    app.register_server(everything_stdio("ev")).await;
    let mut root = EventStream::open(&app, &app.admin, None).await;
    let mut bob = EventStream::open(&app, &app.bob, None).await;

    let call = call_in_background(
        &app,
        &app.admin,
        "ev__trigger-sampling-request",
        json!({"prompt": "Say hi", "maxTokens": 50}),
    );
    let request = root
        .wait_for("mcp/sample/req", WAIT, |m| m.event == "mcp/sample/req")
        .await;
    let data = &request.data;
    assert_eq!(data["type"], "mcp/sample/req");
    assert_eq!(data["server_id"], "ev");
    assert!(!data["mcp_request_id"].as_str().unwrap().is_empty());
    assert_eq!(data["max_tokens"], 50);
    assert!(
        data["messages"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("Say hi"),
        "{data}"
    );
    for field in [
        "model_preferences",
        "system_prompt",
        "include_context",
        "temperature",
        "stop_sequences",
        "metadata",
    ] {
        assert!(data.get(field).is_some(), "{field} is carried: {data}");
    }
    let req_id = data["id"].as_str().unwrap().to_owned();

    // Another agent neither sees it nor may answer it.
    let answer = json!({"req_id": req_id, "server_id": "ev", "mcp_request_id": data["mcp_request_id"],
        "content": {"type": "text", "text": "hello from the agent"}, "model": "test-model", "stop_reason": "endTurn"});
    let (status, body) = app
        .post("/v1/sampling/responses", &app.bob, answer.clone())
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    // A malformed answer is refused and the request still waits.
    let (status, body) = app
        .post(
            "/v1/sampling/responses",
            &app.admin,
            json!({"req_id": req_id, "content": {"type": "nonsense"}}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");

    let (status, body) = app
        .post("/v1/sampling/responses", &app.admin, answer.clone())
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    assert_eq!(body["ok"], true);
    assert_eq!(body["req_id"], req_id);
    let (status, result) = call.await.unwrap();
    assert_eq!(status, StatusCode::OK, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("hello from the agent") && text.contains("test-model"),
        "{text}"
    );

    let (status, _) = app.post("/v1/sampling/responses", &app.admin, answer).await;
    assert_eq!(status, StatusCode::CONFLICT, "a second answer");
    assert!(
        bob.drain(Duration::from_millis(300))
            .await
            .iter()
            .all(|m| m.event != "mcp/sample/req")
    );
    app.stop().await;
}

#[tokio::test]
async fn a_refusal_and_a_missing_agent_refuse_the_server() {
    let app = spawn_app().await;
    app.register_server(everything_stdio("ev")).await;

    // Nobody is listening: refused at once, not after the server's timeout.
    let started = std::time::Instant::now();
    let (status, body) = app
        .call("ev__trigger-sampling-request", json!({"prompt": "x"}))
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "refused at once"
    );
    let text = body.to_string();
    assert!(text.contains("mcp_sampling_refused"), "{status}: {text}");

    let mut root = EventStream::open(&app, &app.admin, None).await;
    let call = call_in_background(
        &app,
        &app.admin,
        "ev__trigger-sampling-request",
        json!({"prompt": "x"}),
    );
    let request = root
        .wait_for("mcp/sample/req", WAIT, |m| m.event == "mcp/sample/req")
        .await;
    let (status, _) = app
        .post(
            "/v1/sampling/responses",
            &app.admin,
            json!({"req_id": request.data["id"], "error": "no budget left"}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let (_, body) = call.await.unwrap();
    let text = body.to_string();
    assert!(
        text.contains("mcp_sampling_refused") && text.contains("no budget left"),
        "{text}"
    );
    app.stop().await;
}

#[tokio::test]
async fn roots_come_from_the_store_or_from_the_owner() {
    let app = spawn_app().await;
    let (status, body) = app
        .send(
            reqwest::Method::PUT,
            "/v1/roots",
            Some(&app.admin),
            Some(json!({"roots": [{"uri": "file:///srv/one", "name": "One"}]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["type"], "mcp/roots/set/resp");
    let (_, body) = app.get("/v1/roots", &app.admin).await;
    assert_eq!(
        body["roots"],
        json!([{"uri": "file:///srv/one", "name": "One"}])
    );
    let (status, _) = app
        .send(
            reqwest::Method::PUT,
            "/v1/roots",
            Some(&app.admin),
            Some(json!({"roots": [{"uri": "http://x"}]})),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);

    // No stream open: the server gets the stored roots.
    app.register_server(everything_stdio("ev")).await;
    let roots_text = |body: &Value| {
        body["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let server_has = async |root: &str| {
        let (_, body) = app.call("ev__get-roots-list", json!({})).await;
        match roots_text(&body).contains(root) {
            true => Ok(()),
            false => Err(body.to_string()),
        }
    };
    wait_until("the stored roots reaching the server", WAIT, async || {
        server_has("file:///srv/one").await
    })
    .await;

    // With a stream open, a change asks the owner, whose answer the server gets.
    let mut root = EventStream::open(&app, &app.admin, None).await;
    let (status, _) = app
        .send(
            reqwest::Method::PUT,
            "/v1/roots",
            Some(&app.admin),
            Some(json!({"roots": [{"uri": "file:///srv/two"}]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let request = root
        .wait_for("mcp/root/list/req", WAIT, |m| {
            m.event == "mcp/root/list/req"
        })
        .await;
    assert_eq!(request.data["server_id"], "ev");
    let (status, body) = app
        .post("/v1/roots/responses", &app.admin, json!({
            "req_id": request.data["id"], "server_id": "ev", "mcp_request_id": request.data["mcp_request_id"],
            "roots": [{"uri": "file:///srv/answered", "name": "Answered"}]
        }))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    wait_until("the answered roots reaching the server", WAIT, async || {
        server_has("file:///srv/answered").await
    })
    .await;
    app.stop().await;
}

#[tokio::test]
async fn elicitation_is_answered_with_content_and_schema_defaults() {
    let app = spawn_app().await;
    app.register_server(everything_stdio("ev")).await;
    let mut root = EventStream::open(&app, &app.admin, None).await;
    let call = call_in_background(
        &app,
        &app.admin,
        "ev__trigger-elicitation-request",
        json!({}),
    );
    let request = root
        .wait_for("mcp/elicit/req", WAIT, |m| m.event == "mcp/elicit/req")
        .await;
    assert_eq!(request.data["mode"], "form");
    assert_eq!(request.data["server_id"], "ev");
    assert!(
        request.data["requested_schema"]["properties"]["name"].is_object(),
        "{}",
        request.data
    );
    let (status, body) = app
        .post(
            "/v1/elicitation/responses",
            &app.admin,
            json!({"req_id": request.data["id"], "action": "maybe"}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let (status, body) = app
        .post(
            "/v1/elicitation/responses",
            &app.admin,
            json!({"req_id": request.data["id"], "content": {"name": "Ada"}}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body["error"].as_str().unwrap().contains("action"), "{body}");
    let (status, body) = app
        .post("/v1/elicitation/responses", &app.admin, json!({
            "req_id": request.data["id"], "action": "accept", "content": {"name": "Ada Lovelace", "check": true}
        }))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let (status, result) = call.await.unwrap();
    assert_eq!(status, StatusCode::OK, "{result}");
    let text = result.to_string();
    assert!(text.contains("Ada Lovelace"), "{text}");
    assert!(
        text.contains("It was a dark and stormy night."),
        "the schema default filled in: {text}"
    );
    app.stop().await;
}

#[tokio::test]
async fn progress_reaches_the_caller_in_order_and_streams_with_the_call() {
    let app = spawn_app().await;
    app.register_server(everything_stdio("ev")).await;
    let mut root = EventStream::open(&app, &app.admin, None).await;
    let mut alice = EventStream::open(&app, &app.alice, None).await;
    let args = json!({"duration": 1, "steps": 4});
    let (status, body) = app
        .post("/v1/tools/call", &app.alice, json!({"id": "long-1", "name": "ev__trigger-long-running-operation", "arguments": args}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let mut pushes = Vec::new();
    for _ in 0..4 {
        pushes.push(
            alice
                .wait_for("a progress push", WAIT, |m| {
                    is_push(m, "notifications/progress")
                })
                .await,
        );
    }
    let progress: Vec<f64> = pushes
        .iter()
        .map(|m| m.data["params"]["progress"].as_f64().unwrap())
        .collect();
    assert_eq!(progress, [1.0, 2.0, 3.0, 4.0], "{pushes:?}");
    assert!(pushes.iter().all(|m| m.data["req_id"] == "long-1"));
    assert!(
        root.drain(Duration::from_millis(200))
            .await
            .iter()
            .all(|m| !is_push(m, "notifications/progress")),
        "only the caller"
    );

    // Streamed: the progress, then the result, on the call's own response.
    let resp = app
        .client
        .post(format!("{}/v1/tools/call", app.base))
        .bearer_auth(&app.alice)
        .header("Accept", "text/event-stream")
        .json(&json!({"id": "long-2", "name": "ev__trigger-long-running-operation", "arguments": args}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let events = EventStream::from_response(resp).drain(WAIT).await;
    let kinds: Vec<&str> = events.iter().map(|m| m.event.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "mcp/server/push",
            "mcp/server/push",
            "mcp/server/push",
            "mcp/server/push",
            "tool/call/resp"
        ],
        "{events:?}"
    );
    assert_eq!(events[4].data["req_id"], "long-2");
    assert!(
        events[4].data["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("completed")
    );
    // A streamed error has the error shape.
    let resp = app
        .client
        .post(format!("{}/v1/tools/call", app.base))
        .bearer_auth(&app.alice)
        .header("Accept", "text/event-stream")
        .json(&json!({"name": "ev__nope"}))
        .send()
        .await
        .unwrap();
    let events = EventStream::from_response(resp).drain(WAIT).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].data["code"], "mcp_tool_not_found");
    app.stop().await;
}

#[tokio::test]
async fn resource_updates_reach_the_subscriber_only_and_list_changes_everyone() {
    let app = spawn_app().await;
    app.register_server(everything_stdio("ev")).await;
    let mut alice = EventStream::open(&app, &app.alice, None).await;
    let mut bob = EventStream::open(&app, &app.bob, None).await;
    let uri = "demo://resource/static/document/architecture.md";
    app.subscribe(json!({"uri": uri})).await;
    app.call_tool("ev__toggle-subscriber-updates", json!({}))
        .await;
    let update = alice
        .wait_for("resources/updated", WAIT, |m| {
            is_push(m, "notifications/resources/updated")
        })
        .await;
    assert_eq!(update.data["server_id"], "ev");
    assert_eq!(update.data["params"]["uri"], uri);
    assert!(update.id.is_some());
    assert!(
        bob.drain(Duration::from_millis(200))
            .await
            .iter()
            .all(|m| !is_push(m, "notifications/resources/updated"))
    );

    // A new resource: everyone hears of it, once the catalogue has it.
    let data = "data:text/plain;base64,aGVsbG8=";
    app.call_tool(
        "ev__gzip-file-as-resource",
        json!({"name": "hello.txt.gz", "data": data, "outputType": "resourceLink"}),
    )
    .await;
    bob.wait_for("resources/list_changed", WAIT, |m| {
        is_push(m, "notifications/resources/list_changed")
    })
    .await;
    let (_, list) = app.get("/v1/resources?server_id=ev", &app.bob).await;
    assert!(list.to_string().contains("hello.txt.gz"), "{list}");
    app.stop().await;
}

#[tokio::test]
async fn last_event_id_replays_and_a_gap_past_the_buffer_is_announced() {
    let app = TestApp::builder()
        .configure(|c| c.replay_buffer = 3)
        .spawn()
        .await;
    app.register_server(py_stdio("py", &unique("replay"))).await;
    let mut alice = EventStream::open(&app, &app.alice, None).await;
    for i in 0..5 {
        app.call("py__grow", json!({"name": format!("t{i}")})).await;
        alice
            .wait_for("tools/list_changed", WAIT, |m| {
                is_push(m, "notifications/tools/list_changed")
            })
            .await;
    }
    drop(alice);
    // Ids of what the buffer holds now: the last three pushes.
    let mut probe = EventStream::open(&app, &app.alice, Some("0")).await;
    let replayed = probe.drain(Duration::from_millis(300)).await;
    assert!(is_push(&replayed[0], "bridge/events_lost"), "{replayed:?}");
    let ids: Vec<u64> = replayed[1..]
        .iter()
        .map(|m| m.id.as_ref().unwrap().parse().unwrap())
        .collect();
    assert_eq!(ids.len(), 3);
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "increasing: {ids:?}");

    let mut resumed = EventStream::open(&app, &app.alice, Some(&ids[0].to_string())).await;
    let again = resumed.drain(Duration::from_millis(300)).await;
    let again_ids: Vec<u64> = again
        .iter()
        .map(|m| m.id.as_ref().unwrap().parse().unwrap())
        .collect();
    assert_eq!(again_ids, ids[1..], "only what came after");
    app.stop().await;
}

#[tokio::test]
async fn with_streamable_http_a_callers_sampling_goes_to_the_caller() {
    let peer = everything_http().await;
    let app = spawn_app().await;
    app.register_server_as(
        &app.alice,
        json!({"server_id": "evh", "transport": "http", "url": peer.url}),
    )
    .await;
    let mut alice = EventStream::open(&app, &app.alice, None).await;
    let mut bob = EventStream::open(&app, &app.bob, None).await;
    let call = call_in_background(
        &app,
        &app.bob,
        "evh__trigger-sampling-request",
        json!({"prompt": "for bob"}),
    );
    let request = bob
        .wait_for("mcp/sample/req", WAIT, |m| m.event == "mcp/sample/req")
        .await;
    let (status, body) = app
        .post(
            "/v1/sampling/responses",
            &app.alice,
            json!({"req_id": request.data["id"], "content": {"type": "text", "text": "alice"}}),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "the owner cannot answer the caller's request: {body}"
    );
    let (status, _) = app
        .post("/v1/sampling/responses", &app.bob, json!({"req_id": request.data["id"], "content": {"type": "text", "text": "bob's answer"}, "model": "m"}))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let (status, result) = call.await.unwrap();
    assert_eq!(status, StatusCode::OK, "{result}");
    assert!(result.to_string().contains("bob's answer"));
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
async fn status_changes_are_pushed_and_streams_end_on_shutdown() {
    let app = spawn_app().await;
    let mut alice = EventStream::open(&app, &app.alice, None).await;
    app.register_server(py_stdio("st", &unique("status"))).await;
    let status = alice
        .wait_for("a status push", WAIT, |m| {
            is_push(m, "bridge/server_status") && m.data["params"]["status"] == "ready"
        })
        .await;
    assert_eq!(status.data["server_id"], "st");
    assert_eq!(status.data["params"]["server_id"], "st");
    let started = std::time::Instant::now();
    app.stop().await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "an open stream does not hold up the shutdown"
    );
    assert!(
        alice.ends_within(Duration::from_secs(2)).await,
        "the stream ends with the service"
    );
}

#[tokio::test]
async fn a_2026_input_required_result_reaches_the_caller_as_the_same_events() {
    let peer = py_http_stateless().await;
    let app = spawn_app().await;
    let config = json!({
        "server_id": "modern", "transport": "http", "url": peer.url, "protocol_version": "2026-07-28"
    });
    let server = app.register_server_as(&app.alice, config).await;
    assert_eq!(server["mcp_version"], "2026-07-28");
    let mut bob = EventStream::open(&app, &app.bob, None).await;

    // Sampling: the input request goes to the caller, and its answer completes the call.
    let call = call_in_background(
        &app,
        &app.bob,
        "modern__ask_llm",
        json!({"question": "2+2?"}),
    );
    let request = bob
        .wait_for("mcp/sample/req", WAIT, |m| m.event == "mcp/sample/req")
        .await;
    assert_eq!(request.data["server_id"], "modern");
    assert_eq!(request.data["messages"][0]["content"]["text"], "2+2?");
    assert_eq!(request.data["max_tokens"], 50);
    let (status, body) = app
        .post("/v1/sampling/responses", &app.bob, json!({
            "req_id": request.data["id"], "content": {"type": "text", "text": "four"}, "model": "m"
        }))
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let (status, result) = call.await.unwrap();
    assert_eq!(status, StatusCode::OK, "{result}");
    assert_eq!(result["content"][0]["text"], "llm: four");

    // Elicitation the same way.
    let call = call_in_background(&app, &app.bob, "modern__ask_name", json!({}));
    let request = bob
        .wait_for("mcp/elicit/req", WAIT, |m| m.event == "mcp/elicit/req")
        .await;
    assert_eq!(request.data["message"], "What is your name?");
    let (status, _) = app
        .post(
            "/v1/elicitation/responses",
            &app.bob,
            json!({"req_id": request.data["id"], "action": "accept", "content": {"name": "Grace"}}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let (status, result) = call.await.unwrap();
    assert_eq!(status, StatusCode::OK, "{result}");
    assert_eq!(result["content"][0]["text"], "name: Grace");
    app.stop().await;
}

/// Over the legacy handshake on stdio the server does not say which call its request belongs
/// to; with one call in flight it can only be that one, so the caller is asked, not the owner.
#[tokio::test]
async fn the_same_tools_over_the_legacy_handshake_ask_the_caller() {
    let app = spawn_app().await;
    app.register_server(py_stdio("legacy", &unique("legacy")))
        .await;
    let mut root = EventStream::open(&app, &app.admin, None).await;
    let mut alice = EventStream::open(&app, &app.alice, None).await;
    let call = call_in_background(&app, &app.alice, "legacy__ask_name", json!({}));
    let request = alice
        .wait_for("mcp/elicit/req", WAIT, |m| m.event == "mcp/elicit/req")
        .await;
    let (status, _) = app
        .post(
            "/v1/elicitation/responses",
            &app.alice,
            json!({"req_id": request.data["id"], "action": "decline"}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let (status, result) = call.await.unwrap();
    assert_eq!(status, StatusCode::OK, "{result}");
    assert_eq!(result["content"][0]["text"], "elicitation decline");
    assert!(
        root.drain(Duration::from_millis(200))
            .await
            .iter()
            .all(|m| m.event != "mcp/elicit/req"),
        "the owner was not asked"
    );
    app.stop().await;
}

#[tokio::test]
async fn each_kind_of_request_is_refused_in_its_own_words() {
    let app = spawn_app().await;
    app.register_server(everything_stdio("ev")).await;
    let (_, body) = app.call("ev__trigger-elicitation-request", json!({})).await;
    let text = body.to_string();
    assert!(
        text.contains("mcp_elicitation_refused") && !text.contains("mcp_sampling_refused"),
        "{text}"
    );
    assert!(
        text.contains("agent \\\"alice\\\" has no event stream open"),
        "the caller, whose call it is: {text}"
    );
    let (_, body) = app
        .call("ev__trigger-sampling-request", json!({"prompt": "x"}))
        .await;
    assert!(body.to_string().contains("mcp_sampling_refused"), "{body}");
    app.stop().await;
}

/// Over stdio nothing says which call a server's request belongs to: with two calls in flight the
/// bridge cannot tell, asks the owner, and says so when the owner cannot be asked.
#[tokio::test]
async fn a_request_that_cannot_be_tied_to_a_call_says_so() {
    let app = spawn_app().await;
    app.register_server(everything_stdio("ev")).await;
    let mut alice = EventStream::open(&app, &app.alice, None).await;
    let long = call_in_background(
        &app,
        &app.alice,
        "ev__trigger-long-running-operation",
        json!({"duration": 3, "steps": 6}),
    );
    alice
        .wait_for("the long call's first progress", WAIT, |m| {
            is_push(m, "notifications/progress")
        })
        .await;
    let (_, body) = app
        .call("ev__trigger-sampling-request", json!({"prompt": "x"}))
        .await;
    let text = body.to_string();
    assert!(
        text.contains("mcp_sampling_refused")
            && text.contains("cannot tell which of the 2 calls in flight")
            && text.contains("owner \\\"root\\\""),
        "{text}"
    );
    let (status, _) = long.await.unwrap();
    assert_eq!(status, StatusCode::OK);
    app.stop().await;
}
