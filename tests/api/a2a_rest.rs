//! The A2A agent bridge against an a2a-sdk agent that offers only A2A 1.0's HTTP+JSON binding
//! (`tests/peers/a2a_rest_agent.py`): registered, its extended card fetched with the
//! registrant's headers, called by the agent-bridge tools and the REST task cancel, and its
//! `google.rpc.Status` errors shown.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

async fn tool(app: &TestApp, name: &str, arguments: Value) -> (bool, String) {
    let body = app.call_tool(name, arguments).await;
    (
        body["is_error"].as_bool().unwrap(),
        body["content"][0]["text"].as_str().unwrap().to_owned(),
    )
}

#[tokio::test]
async fn an_agent_that_speaks_only_http_json_is_called_over_it() {
    let agent = a2a_rest_agent_py().await;
    let app = spawn_app().await;
    let (status, body) = app
        .post(
            "/v1/a2a/agents",
            &app.alice,
            json!({"agent_id": "rest", "url": agent.url,
                "headers": {"Authorization": "Bearer rest-secret"}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["agent"]["name"], "Echo Agent (rest)");
    assert_eq!(body["agent"]["protocol_version"], "1.0");
    assert_eq!(body["agent"]["binding"], "HTTP+JSON", "{body}");

    // The extended card, fetched with the registrant's header, is shown with the card.
    let (_, body) = app.get("/v1/a2a/agents/rest", &app.bob).await;
    let extended = &body["agent"]["card"]["extendedCard"];
    assert_eq!(extended["name"], "Echo Agent (rest, extended)", "{body}");
    assert!(!body.to_string().contains("rest-secret"), "{body}");
    let (is_error, text) = tool(&app, "agent_info", json!({"agent_id": "rest"})).await;
    assert!(!is_error, "{text}");
    let card: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(card["name"], "Echo Agent (rest)");
    assert_eq!(
        card["extendedCard"]["skills"][1]["id"], "secret-echo",
        "{card}"
    );
    // Without the credentials the agent refuses it: the agent is registered without it.
    let (status, body) = app
        .post(
            "/v1/a2a/agents",
            &app.alice,
            json!({"agent_id": "rest-anon", "url": agent.url}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert!(
        body["agent"]["card"].get("extendedCard").is_none(),
        "{body}"
    );

    // A blocking message (streamed: the card says it streams), and a streamed long task.
    let (is_error, text) = tool(
        &app,
        "agent_send",
        json!({"agent_id": "rest", "message": "hello", "context_id": "ctx-r"}),
    )
    .await;
    assert!(!is_error, "{text}");
    let reply: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        reply["message"]["parts"][0]["text"], "echo: hello",
        "{reply}"
    );
    assert_eq!(reply["message"]["contextId"], "ctx-r");
    let (is_error, text) = tool(
        &app,
        "agent_send",
        json!({"agent_id": "rest", "message": "long 3 0.1"}),
    )
    .await;
    assert!(!is_error, "{text}");
    let reply: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        reply["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{reply}"
    );
    assert_eq!(
        reply["task"]["artifacts"][0]["parts"],
        json!([{"text": "chunk 1;"}, {"text": "chunk 2;"}, {"text": "chunk 3;"}]),
        "{reply}"
    );

    // Not blocking: the task at once (SendMessage), then GetTask by method and by action.
    let (_, text) = tool(
        &app,
        "agent_send",
        json!({"agent_id": "rest", "message": "later", "blocking": false}),
    )
    .await;
    let task: Value = serde_json::from_str(&text).unwrap();
    let task_id = task["task"]["id"].as_str().expect(&text).to_owned();
    let query = json!({"agent_id": "rest", "method": "GetTask", "params": {"id": task_id}});
    let text = wait_until(
        "the task's completion",
        Duration::from_secs(10),
        async || {
            let (is_error, text) = tool(&app, "agent_query", query.clone()).await;
            assert!(!is_error, "{text}");
            let task: Value = serde_json::from_str(&text).unwrap();
            match task["status"]["state"] == "TASK_STATE_COMPLETED" {
                true => Ok(text),
                false => Err(text),
            }
        },
    )
    .await;
    assert!(text.contains("echo: later"), "{text}");
    let (is_error, text) = tool(
        &app,
        "agent_query",
        json!({"agent_id": "rest", "action": "get", "task_id": task_id}),
    )
    .await;
    assert!(!is_error && text.contains("echo: later"), "{text}");

    // Followed again after it was started (GET /tasks/{id}:subscribe): its chunks reach the
    // caller's event stream and the result is the final task.
    let (_, text) = tool(
        &app,
        "agent_send",
        json!({"agent_id": "rest", "message": "long 4 0.3", "blocking": false}),
    )
    .await;
    let task: Value = serde_json::from_str(&text).unwrap();
    let followed = task["task"]["id"].as_str().expect(&text).to_owned();
    let mut events = EventStream::open(&app, &app.alice, None).await;
    let (is_error, text) = tool(
        &app,
        "agent_query",
        json!({"agent_id": "rest", "action": "subscribe", "task_id": followed}),
    )
    .await;
    assert!(!is_error, "{text}");
    let reply: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        reply["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{reply}"
    );
    assert_eq!(reply["task"]["id"], followed.as_str(), "{reply}");
    let last = events
        .wait_for(
            "the followed task's last update",
            Duration::from_secs(5),
            |m| {
                m.data["params"]["task_id"] == followed.as_str()
                    && m.data["params"]["final"] == true
            },
        )
        .await;
    assert_eq!(last.data["method"], "bridge/a2a_update", "{:?}", last.data);
    assert_eq!(
        last.data["params"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{:?}",
        last.data
    );

    // Listed (GET /tasks): the tasks above are the agent's.
    let (is_error, text) = tool(
        &app,
        "agent_query",
        json!({"agent_id": "rest", "method": "ListTasks", "params": {}}),
    )
    .await;
    assert!(!is_error, "{text}");
    let listed: Value = serde_json::from_str(&text).unwrap();
    let ids: Vec<&str> = listed["tasks"]
        .as_array()
        .expect(&text)
        .iter()
        .filter_map(|t| t["id"].as_str())
        .collect();
    assert!(
        ids.contains(&task_id.as_str()) && ids.contains(&followed.as_str()),
        "{text}"
    );

    // Cancelled over REST (GetTask, then POST /tasks/{id}:cancel at the agent).
    let (_, text) = tool(
        &app,
        "agent_send",
        json!({"agent_id": "rest", "message": "long 40 0.5", "blocking": false}),
    )
    .await;
    let task: Value = serde_json::from_str(&text).unwrap();
    let long_id = task["task"]["id"].as_str().expect(&text).to_owned();
    let cancel = format!("/v1/a2a/agents/rest/tasks/{long_id}/cancel");
    let (status, body) = app.post(&cancel, &app.alice, json!(null)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["task"]["status"]["state"], "TASK_STATE_CANCELED",
        "{body}"
    );
    let (status, body) = app.post(&cancel, &app.alice, json!(null)).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");

    // The agent's google.rpc.Status error, shown with its status and message.
    let (is_error, text) = tool(
        &app,
        "agent_send",
        json!({"agent_id": "rest", "message": "refuse this"}),
    )
    .await;
    assert!(is_error, "{text}");
    assert!(text.contains("INVALID_ARGUMENT"), "{text}");
    assert!(text.contains("HTTP 400"), "{text}");
    assert!(text.contains("refused: refuse this"), "{text}");
    let (is_error, text) = tool(
        &app,
        "agent_query",
        json!({"agent_id": "rest", "method": "SendMessage", "params": {"message":
            {"role": "ROLE_USER", "parts": [{"text": "refuse again"}], "messageId": "m-r"}}}),
    )
    .await;
    assert!(is_error && text.contains("refused: refuse again"), "{text}");
    // A JSON-RPC-only method has no HTTP+JSON form.
    let (is_error, text) = tool(
        &app,
        "agent_query",
        json!({"agent_id": "rest", "method": "custom/thing"}),
    )
    .await;
    assert!(is_error && text.contains("HTTP+JSON"), "{text}");
    app.stop().await;
}
