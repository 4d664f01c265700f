//! Streaming A2A agents (a2a-sdk and @a2a-js/sdk, each with a long task that streams several
//! updates): updates on the caller's event stream before the tool's result, GetTask, CancelTask
//! by the tool and over REST (the agent sees it), SubscribeToTask after a dropped stream, and
//! the bad inputs around them.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

const UPDATE: &str = "bridge/a2a_update";

/// An agent-bridge tool called as alice: whether it is an error, and its text.
async fn tool(app: &TestApp, token: &str, name: &str, arguments: Value) -> (bool, String) {
    let (status, body) = app
        .post(
            "/v1/tools/call",
            token,
            json!({"name": name, "arguments": arguments}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    (
        body["is_error"].as_bool().unwrap(),
        body["content"][0]["text"].as_str().unwrap().to_owned(),
    )
}

/// The app with both agents registered by alice, as `py` and `js`.
async fn app_with_agents() -> (TestApp, Peer, Peer) {
    let py = a2a_agent_py().await;
    let js = a2a_agent_js().await;
    let app = spawn_app().await;
    for (id, peer) in [("py", &py), ("js", &js)] {
        let (status, body) = app
            .post(
                "/v1/a2a/agents",
                &app.alice,
                json!({"agent_id": id, "url": peer.url}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    (app, py, js)
}

/// The next A2A update of `agent_id` on `events`.
async fn update(events: &mut EventStream, agent_id: &str, within: Duration) -> Value {
    let what = format!("an update of agent {agent_id}");
    let message = events
        .wait_for(&what, within, |m| {
            is_push(m, UPDATE) && m.data["params"]["agent_id"] == agent_id
        })
        .await;
    message.data
}

/// The updates up to and with the final one.
async fn updates_to_final(events: &mut EventStream, agent_id: &str) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let push = update(events, agent_id, Duration::from_secs(20)).await;
        let last = push["params"]["final"] == true;
        seen.push(push["params"].clone());
        if last {
            return seen;
        }
    }
}

async fn cancelled_at(peer: &Peer) -> Vec<String> {
    let url = format!("http://127.0.0.1:{}/test/cancelled", peer.port());
    reqwest::get(url).await.unwrap().json().await.unwrap()
}

fn state(task: &Value) -> &str {
    task["status"]["state"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn a2a_updates_stream_to_the_caller_before_the_result() {
    let (app, _py, _js) = app_with_agents().await;
    let mut events = EventStream::open(&app, &app.alice, None).await;
    for id in ["py", "js"] {
        let call = tool(
            &app,
            &app.alice,
            "agent_send",
            json!({"agent_id": id, "message": "long 4 0.4"}),
        );
        tokio::pin!(call);
        // The first update comes while the call still waits.
        let first = tokio::select! {
            first = update(&mut events, id, Duration::from_secs(20)) => first,
            done = &mut call => panic!("{id}: the call ended before any update: {done:?}"),
        };
        assert_eq!(first["params"]["kind"], "task", "{first}");
        assert!(first["params"]["task_id"].is_string(), "{first}");
        assert!(first["req_id"].is_string(), "the call's id: {first}");
        let mut seen = vec![first["params"].clone()];
        seen.extend(updates_to_final(&mut events, id).await);
        let (is_error, text) = call.await;
        assert!(!is_error, "{id}: {text}");

        let steps: Vec<&str> = seen
            .iter()
            .filter(|u| u["kind"] == "status")
            .filter_map(|u| u["status"]["message"]["parts"][0]["text"].as_str())
            .collect();
        assert_eq!(
            steps,
            [
                "step 1/4",
                "step 2/4",
                "step 3/4",
                "step 4/4",
                "done: 4 steps"
            ],
            "{id}"
        );
        let chunks = seen.iter().filter(|u| u["kind"] == "artifact").count();
        assert_eq!(chunks, 4, "{id}: {seen:?}");
        let last = seen.last().unwrap();
        assert_eq!(last["final"], true);
        assert_eq!(last["status"]["state"], "TASK_STATE_COMPLETED", "{id}");

        // The result: the final task, its artifact chunks put together.
        let reply: Value = serde_json::from_str(&text).unwrap();
        let task = &reply["task"];
        assert_eq!(state(task), "TASK_STATE_COMPLETED", "{id}: {reply}");
        let parts: Vec<&str> = task["artifacts"][0]["parts"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect();
        assert_eq!(
            parts,
            ["chunk 1;", "chunk 2;", "chunk 3;", "chunk 4;"],
            "{id}"
        );

        // GetTask by action.
        let task_id = task["id"].as_str().unwrap();
        let (is_error, text) = tool(
            &app,
            &app.alice,
            "agent_query",
            json!({"agent_id": id, "action": "get", "task_id": task_id}),
        )
        .await;
        assert!(!is_error, "{text}");
        let got: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(got["id"], task_id, "{got}");
        assert_eq!(state(&got), "TASK_STATE_COMPLETED");

        // A plain echo still answers with its message (one update, final).
        let (is_error, text) = tool(
            &app,
            &app.alice,
            "agent_send",
            json!({"agent_id": id, "message": "hi"}),
        )
        .await;
        assert!(!is_error && text.contains("echo: hi"), "{text}");
        let push = update(&mut events, id, Duration::from_secs(5)).await;
        assert_eq!(push["params"]["kind"], "message", "{push}");
        assert_eq!(push["params"]["final"], true);
    }
    app.stop().await;
}

#[tokio::test]
async fn a2a_tasks_are_cancelled_by_their_caller_over_rest_and_by_the_tool() {
    let (app, py, js) = app_with_agents().await;
    let mut events = EventStream::open(&app, &app.alice, None).await;
    for (id, peer) in [("py", &py), ("js", &js)] {
        // Over REST, while agent_send streams the task.
        let call = tool(
            &app,
            &app.alice,
            "agent_send",
            json!({"agent_id": id, "message": "long 20 0.5"}),
        );
        tokio::pin!(call);
        let first = tokio::select! {
            first = update(&mut events, id, Duration::from_secs(20)) => first,
            done = &mut call => panic!("{id}: the call ended first: {done:?}"),
        };
        let task_id = first["params"]["task_id"].as_str().unwrap().to_owned();
        let cancel = format!("/v1/a2a/agents/{id}/tasks/{task_id}/cancel");
        let (status, body) = app.post(&cancel, &app.bob, json!(null)).await;
        assert_eq!(
            status,
            StatusCode::NOT_FOUND,
            "another agent's task: {body}"
        );
        assert_eq!(body["code"], "not_found");
        let unknown = format!("/v1/a2a/agents/{id}/tasks/no-such-task/cancel");
        let (status, bob_body) = app.post(&unknown, &app.bob, json!(null)).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(
            body["error"].as_str().unwrap().replace(&task_id, "X"),
            bob_body["error"]
                .as_str()
                .unwrap()
                .replace("no-such-task", "X"),
            "unknown and foreign tasks look the same"
        );
        let (status, body) = app
            .post(&format!("{cancel}?id=c-1"), &app.alice, json!(null))
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["type"], "a2a/task/cancel/resp");
        assert_eq!(body["req_id"], "c-1");
        assert_eq!(state(&body["task"]), "TASK_STATE_CANCELED", "{body}");
        let (is_error, text) = call.await;
        assert!(!is_error, "{text}");
        let reply: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            state(&reply["task"]),
            "TASK_STATE_CANCELED",
            "{id}: {reply}"
        );
        assert!(
            cancelled_at(peer).await.contains(&task_id),
            "{id}: the agent saw the cancel"
        );

        // A second cancel: the task is over.
        let (status, body) = app.post(&cancel, &app.alice, json!(null)).await;
        assert_eq!(status, StatusCode::CONFLICT, "{body}");
        assert!(
            body["error"]
                .as_str()
                .unwrap()
                .contains("cannot be cancelled"),
            "{body}"
        );
        let (is_error, text) = tool(
            &app,
            &app.alice,
            "agent_query",
            json!({"agent_id": id, "action": "cancel", "task_id": task_id}),
        )
        .await;
        assert!(is_error && text.contains("already"), "{text}");

        // By the tool: a task started without waiting.
        let (is_error, text) = tool(
            &app,
            &app.alice,
            "agent_send",
            json!({"agent_id": id, "message": "long 20 0.5", "blocking": false}),
        )
        .await;
        assert!(!is_error, "{text}");
        let started: Value = serde_json::from_str(&text).unwrap();
        let task_id = started["task"]["id"].as_str().unwrap().to_owned();
        let action = |token: &str, action: &str, task: &str| {
            let arguments = json!({"agent_id": id, "action": action, "task_id": task});
            let token = token.to_owned();
            let app = &app;
            async move { tool(app, &token, "agent_query", arguments).await }
        };
        let (is_error, theirs) = action(&app.bob, "cancel", &task_id).await;
        assert!(is_error, "{theirs}");
        let (is_error, unknown) = action(&app.alice, "cancel", "no-such-task").await;
        assert!(is_error && unknown.contains("has no task"), "{unknown}");
        assert_eq!(
            theirs.replace(&task_id, "X"),
            unknown.replace("no-such-task", "X")
        );
        let (is_error, text) = action(&app.bob, "get", &task_id).await;
        assert!(is_error && text.contains("has no task"), "{text}");
        let (is_error, text) = action(&app.alice, "cancel", &task_id).await;
        assert!(!is_error, "{text}");
        let task: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(state(&task), "TASK_STATE_CANCELED", "{task}");
        assert!(cancelled_at(peer).await.contains(&task_id));

        // A task that completed cannot be cancelled.
        let (_, text) = tool(
            &app,
            &app.alice,
            "agent_send",
            json!({"agent_id": id, "message": "long 1 0.1"}),
        )
        .await;
        let done: Value = serde_json::from_str(&text).unwrap();
        let done_id = done["task"]["id"].as_str().unwrap();
        let (status, body) = app
            .post(
                &format!("/v1/a2a/agents/{id}/tasks/{done_id}/cancel"),
                &app.alice,
                json!(null),
            )
            .await;
        assert_eq!(status, StatusCode::CONFLICT, "{body}");
        assert_eq!(body["code"], "conflict");
        assert!(
            body["error"].as_str().unwrap().contains("completed"),
            "{body}"
        );
    }
    // Bad input: an unknown agent, a missing task id, an unknown action.
    let (status, _) = app
        .post(
            "/v1/a2a/agents/nobody/tasks/t/cancel",
            &app.alice,
            json!(null),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    for (arguments, says) in [
        (
            json!({"agent_id": "py", "action": "cancel"}),
            "task_id is required",
        ),
        (
            json!({"agent_id": "py", "action": "stop", "task_id": "t"}),
            "action must be one of",
        ),
        (
            json!({"agent_id": "py", "action": "get", "method": "GetTask", "task_id": "t"}),
            "not both",
        ),
        (json!({"agent_id": "py"}), "method (or action) is required"),
    ] {
        let (is_error, text) = tool(&app, &app.alice, "agent_query", arguments).await;
        assert!(is_error && text.contains(says), "{text}");
    }
    app.stop().await;
}

#[tokio::test]
async fn a2a_subscribe_resumes_a_dropped_stream_to_its_end() {
    let (app, _py, _js) = app_with_agents().await;
    let mut events = EventStream::open(&app, &app.alice, None).await;
    for id in ["py", "js"] {
        // The call gives up after 3 s: the stream to the agent is dropped, the task (6 s) goes on.
        // With 1 s, a loaded CI machine once had the agent not answer at all in time.
        let (is_error, text) = tool(
            &app,
            &app.alice,
            "agent_send",
            json!({"agent_id": id, "message": "long 12 0.5", "timeout_seconds": 3}),
        )
        .await;
        assert!(is_error && text.contains("did not finish within"), "{text}");
        let first = update(&mut events, id, Duration::from_secs(5)).await;
        let task_id = first["params"]["task_id"].as_str().unwrap().to_owned();
        assert!(text.contains(&task_id), "the error names the task: {text}");

        // Bob cannot follow it.
        let (is_error, text) = tool(
            &app,
            &app.bob,
            "agent_query",
            json!({"agent_id": id, "action": "subscribe", "task_id": task_id}),
        )
        .await;
        assert!(is_error && text.contains("has no task"), "{text}");

        let (is_error, text) = tool(
            &app,
            &app.alice,
            "agent_query",
            json!({"agent_id": id, "action": "subscribe", "task_id": task_id}),
        )
        .await;
        assert!(!is_error, "{text}");
        let reply: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            state(&reply["task"]),
            "TASK_STATE_COMPLETED",
            "{id}: {reply}"
        );
        let seen = updates_to_final(&mut events, id).await;
        let last = seen.last().unwrap();
        assert_eq!(last["task_id"], task_id.as_str());
        assert_eq!(
            last["status"]["message"]["parts"][0]["text"], "done: 12 steps",
            "{id}: {seen:?}"
        );

        // Once over, subscribe answers with the final task at once.
        let (is_error, text) = tool(
            &app,
            &app.alice,
            "agent_query",
            json!({"agent_id": id, "action": "subscribe", "task_id": task_id}),
        )
        .await;
        assert!(!is_error && text.contains("TASK_STATE_COMPLETED"), "{text}");
    }
    app.stop().await;
}
