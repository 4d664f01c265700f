//! The A2A agent bridge against real A2A 1.0 agents (a2a-sdk and @a2a-js/sdk echo agents): the
//! registry, and the four agent-bridge tools over REST and over `/mcp`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

async fn bridge_tool(app: &TestApp, name: &str, arguments: Value) -> (bool, String) {
    let body = app.call_tool(name, arguments).await;
    assert_eq!(body["content"][0]["type"], "text", "{body}");
    (
        body["is_error"].as_bool().unwrap(),
        body["content"][0]["text"].as_str().unwrap().to_owned(),
    )
}

#[tokio::test]
async fn agents_are_registered_by_their_card_and_survive_a_restart() {
    let py = a2a_agent_py().await;
    let js = a2a_agent_js().await;
    let app = spawn_app().await;
    let data_dir = app.data_dir.clone();
    let (status, body) = app
        .post(
            "/v1/a2a/agents",
            &app.alice,
            json!({"agent_id": "echo-py", "url": py.url}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["type"], "a2a/agent/register/resp");
    assert_eq!(body["agent"]["name"], "Echo Agent (python)");
    assert_eq!(body["agent"]["protocol_version"], "1.0");
    assert_eq!(body["agent"]["binding"], "JSONRPC");
    assert_eq!(body["agent"]["skill_tags"], json!(["echo", "test"]));
    let (status, _) = app
        .post(
            "/v1/a2a/agents",
            &app.alice,
            json!({"agent_id": "echo-js", "url": js.url, "headers": {"X-Key": "s3cret"}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);

    let (_, body) = app.get("/v1/a2a/agents?skill_tags=js", &app.bob).await;
    let ids: Vec<&str> = body["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["agent_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["echo-js"]);
    let (_, body) = app.get("/v1/a2a/agents/echo-js", &app.bob).await;
    assert_eq!(body["agent"]["headers"]["X-Key"], "***");
    assert!(!body.to_string().contains("s3cret"));

    // Nothing is kept when the card cannot be had.
    let dead = format!("http://127.0.0.1:{}/", free_port());
    let (status, body) = app
        .post(
            "/v1/a2a/agents",
            &app.alice,
            json!({"agent_id": "ghost", "url": dead}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
    let (status, _) = app
        .post(
            "/v1/a2a/agents",
            &app.alice,
            json!({"url": "http://169.254.169.254/"}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let (status, body) = app
        .post("/v1/a2a/agents", &app.alice, json!({"url": "https://$"}))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(
        body["error"].to_string().contains("not a valid host name"),
        "{body}"
    );
    let (status, _) = app
        .post(
            "/v1/a2a/agents",
            &app.alice,
            json!({"agent_id": "echo-py", "url": py.url}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    let (status, _) = app.delete("/v1/a2a/agents/echo-py", &app.bob).await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "only its registrant or an admin"
    );
    let (status, body) = app
        .post("/v1/a2a/agents/echo-py/refresh", &app.alice, json!(null))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    app.stop().await;

    let app = spawn_app_in(data_dir).await;
    let (_, body) = app.get("/v1/a2a/agents", &app.alice).await;
    assert_eq!(body["agents"].as_array().unwrap().len(), 2, "{body}");
    let (is_error, text) = bridge_tool(
        &app,
        "agent_send",
        json!({"agent_id": "echo-js", "message": "after restart"}),
    )
    .await;
    assert!(!is_error && text.contains("echo: after restart"), "{text}");
    let (status, _) = app.delete("/v1/a2a/agents/echo-py", &app.alice).await;
    assert_eq!(status, StatusCode::OK);
    app.stop().await;
}

#[tokio::test]
async fn the_four_agent_bridge_tools() {
    let py = a2a_agent_py().await;
    let js = a2a_agent_js().await;
    let app = spawn_app().await;
    for (id, peer) in [("echo-py", &py), ("echo-js", &js)] {
        let (status, body) = app
            .post(
                "/v1/a2a/agents",
                &app.alice,
                json!({"agent_id": id, "url": peer.url}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let (_, body) = app.get("/v1/tools?source=a2a", &app.alice).await;
    let names: Vec<&str> = body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["agent_list", "agent_info", "agent_send", "agent_query"]
    );
    assert!(
        body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["source"] == "a2a")
    );

    let (is_error, text) = bridge_tool(&app, "agent_list", json!({"skill_tags": ["test"]})).await;
    assert!(!is_error);
    let listed: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(listed[0]["agent_id"], "echo-py", "{listed}");
    assert_eq!(listed.as_array().unwrap().len(), 1);

    let (_, text) = bridge_tool(&app, "agent_info", json!({"agent_id": "echo-js"})).await;
    let card: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(card["name"], "Echo Agent (js)");
    assert_eq!(card["agent_id"], "echo-js");

    for id in ["echo-py", "echo-js"] {
        let (is_error, text) = bridge_tool(
            &app,
            "agent_send",
            json!({"agent_id": id, "message": "hello", "context_id": "ctx-7"}),
        )
        .await;
        assert!(!is_error, "{text}");
        let reply: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            reply["message"]["parts"][0]["text"], "echo: hello",
            "{reply}"
        );
        assert_eq!(reply["message"]["contextId"], "ctx-7");

        // Not blocking: the task at once, then its state by agent_query (0.3 and 1.0 names alike).
        let (_, text) = bridge_tool(
            &app,
            "agent_send",
            json!({"agent_id": id, "message": "later", "blocking": false}),
        )
        .await;
        let task: Value = serde_json::from_str(&text).unwrap();
        let task_id = task["task"]["id"].as_str().expect("a task id").to_owned();
        let query = json!({"agent_id": id, "method": "tasks/get", "params": {"id": task_id}});
        let text = wait_until(
            "the task's completion",
            Duration::from_secs(10),
            async || {
                let (is_error, text) = bridge_tool(&app, "agent_query", query.clone()).await;
                assert!(!is_error, "{text}");
                let state: Value = serde_json::from_str(&text).unwrap();
                match state["status"]["state"] == "TASK_STATE_COMPLETED" {
                    true => Ok(text),
                    false => Err(text),
                }
            },
        )
        .await;
        assert!(text.contains("echo: later"), "{text}");
        let (is_error, text) = bridge_tool(
            &app,
            "agent_query",
            json!({"agent_id": id, "method": "GetTask", "params": {"id": "nope"}}),
        )
        .await;
        assert!(is_error && text.contains("-32001"), "{text}");
    }

    for (name, arguments) in [
        ("agent_info", json!({"agent_id": "missing"})),
        ("agent_send", json!({"agent_id": "missing", "message": "x"})),
        (
            "agent_query",
            json!({"agent_id": "missing", "method": "GetTask"}),
        ),
    ] {
        let (is_error, text) = bridge_tool(&app, name, arguments).await;
        assert!(is_error);
        assert_eq!(text, "Agent 'missing' not found");
    }
    let (is_error, text) = bridge_tool(
        &app,
        "agent_send",
        json!({"agent_id": "echo-py", "message": "x", "timeout_seconds": 301}),
    )
    .await;
    assert!(is_error && text.contains("300"), "{text}");
    app.stop().await;
}

#[tokio::test]
async fn the_tools_reach_agents_from_an_mcp_client_and_can_be_turned_off() {
    let py = a2a_agent_py().await;
    let app = spawn_app().await;
    app.post(
        "/v1/a2a/agents",
        &app.alice,
        json!({"agent_id": "echo", "url": py.url}),
    )
    .await;
    let output = tokio::process::Command::new(python())
        .arg(peers_dir().join("mcp_client.py"))
        .args([
            &format!("{}/mcp", app.base),
            &app.alice,
            "legacy",
            "agent_send",
            &json!({"agent_id": "echo", "message": "via mcp"}).to_string(),
        ])
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert!(
        report["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("agent_query"))
    );
    assert!(
        report["result"].to_string().contains("echo: via mcp"),
        "{report}"
    );
    app.stop().await;

    let app = TestApp::builder()
        .configure(|c| c.a2a_enabled = false)
        .spawn()
        .await;
    let (_, body) = app.get("/v1/tools?source=a2a", &app.alice).await;
    assert_eq!(body["tools"], json!([]));
    let (status, body) = app
        .post("/v1/a2a/agents", &app.alice, json!({"url": py.url}))
        .await;
    assert_eq!(status, StatusCode::NOT_IMPLEMENTED, "{body}");
    let (status, _) = app.call("agent_list", json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    app.stop().await;
}

/// A fake agent on loopback whose card (`huge_card`) or JSON-RPC reply is 256 MiB of padding,
/// streamed in 64 KiB chunks and never allocated whole; counts the bytes it got to send.
async fn oversized_agent(huge_card: bool) -> (String, Arc<AtomicUsize>) {
    use axum::body::{Body, Bytes};
    static PAD: [u8; 64 * 1024] = [b'a'; 64 * 1024];
    const TOTAL: usize = 256 << 20;
    fn padded(head: String, tail: &'static str, sent: Arc<AtomicUsize>) -> Body {
        let head = Bytes::from(head);
        let chunks = futures::stream::iter(0..TOTAL / PAD.len() + 2).map(move |i| {
            let chunk = match i {
                0 => head.clone(),
                i if i == TOTAL / PAD.len() + 1 => Bytes::from_static(tail.as_bytes()),
                _ => Bytes::from_static(&PAD),
            };
            sent.fetch_add(chunk.len(), Ordering::Relaxed);
            Ok::<_, std::io::Error>(chunk)
        });
        Body::from_stream(chunks)
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let sent = Arc::new(AtomicUsize::new(0));
    let card = json!({"name": "big", "url": format!("{url}rpc"), "protocolVersion": "0.3",
        "version": "1", "capabilities": {}, "skills": []});
    let (card_sent, reply_sent) = (sent.clone(), sent.clone());
    let app = axum::Router::new()
        .route(
            "/.well-known/agent-card.json",
            axum::routing::get(move || {
                let (card, sent) = (card.clone(), card_sent.clone());
                async move {
                    let text = card.to_string();
                    match huge_card {
                        // A valid card with a 256 MiB `pad` field.
                        true => padded(
                            format!(r#"{}, "pad": ""#, &text[..text.len() - 1]),
                            r#""}"#,
                            sent,
                        ),
                        false => Body::from(text),
                    }
                }
            }),
        )
        .route(
            "/rpc",
            axum::routing::post(move || {
                let sent = reply_sent.clone();
                async move {
                    let head = r#"{"jsonrpc": "2.0", "id": "1", "result": {"pad": ""#;
                    padded(head.into(), r#""}}"#, sent)
                }
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, sent)
}

#[tokio::test]
async fn oversized_cards_and_replies_are_refused_without_being_held() {
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let bounded = || {
        TestApp::builder()
            .data_dir(&data_dir)
            .configure(|c| c.max_message_bytes = 64 * 1024)
            .spawn()
    };
    let app = bounded().await;

    // A 256 MiB card (before: read whole, stored, and returned by every listing).
    let (url, sent) = oversized_agent(true).await;
    let (status, body) = app
        .post(
            "/v1/a2a/agents",
            &app.alice,
            json!({"agent_id": "big", "url": url}),
        )
        .await;
    // (Before the bound, 201 with the 256 MiB card in the answer: print only its start.)
    let short: String = body.to_string().chars().take(400).collect();
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{short}");
    assert_eq!(body["code"], "mcp_protocol_error", "{body}");
    assert_eq!(body["retryable"], false, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("512 KiB"),
        "{body}"
    );
    let sent = sent.load(Ordering::Relaxed);
    assert!(sent < 32 << 20, "the card was read on: {sent} bytes sent");
    let (_, body) = app.get("/v1/a2a/agents", &app.alice).await;
    assert_eq!(body["agents"], json!([]), "nothing is stored");

    // A small card, and a 256 MiB JSON-RPC reply: over MCP_BRIDGE_MAX_MESSAGE_BYTES.
    let (url, sent) = oversized_agent(false).await;
    let (status, body) = app
        .post(
            "/v1/a2a/agents",
            &app.alice,
            json!({"agent_id": "chatty", "url": url}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (is_error, text) = bridge_tool(
        &app,
        "agent_send",
        json!({"agent_id": "chatty", "message": "hi"}),
    )
    .await;
    assert!(
        is_error && text.contains("larger than the 64 KiB limit"),
        "{text}"
    );
    let sent = sent.load(Ordering::Relaxed);
    assert!(sent < 32 << 20, "the reply was read on: {sent} bytes sent");
    app.stop().await;

    // A card over the bound stored before there was one: shown empty, the agent still there.
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(&config(data_dir.path()).database_url())
        .await
        .unwrap();
    let mut card: Value =
        json!({"name": "big", "url": format!("{url}rpc"), "protocolVersion": "0.3"});
    card["pad"] = json!("a".repeat(600 * 1024));
    sqlx::query("UPDATE a2a_agents SET card = $1 WHERE agent_id = 'chatty'")
        .bind(card.to_string())
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    let app = bounded().await;
    let (status, body) = app.get("/v1/a2a/agents", &app.alice).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body["agents"][0]["agent_id"],
        "chatty",
        "{}",
        body.to_string().len()
    );
    assert_eq!(body["agents"][0]["card"], json!({}));
    let (status, _) = app.delete("/v1/a2a/agents/chatty", &app.alice).await;
    assert_eq!(status, StatusCode::OK);
    app.stop().await;
}

/// An agent-bridge tool called by the holder of `token`.
async fn bridge_tool_as(
    app: &TestApp,
    token: &str,
    name: &str,
    arguments: Value,
) -> (bool, String) {
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

#[tokio::test]
async fn a2a_tasks_and_contexts_belong_to_the_caller_that_made_them() {
    let py = a2a_agent_py().await;
    let app = spawn_app().await;
    let (status, body) = app
        .post(
            "/v1/a2a/agents",
            &app.alice,
            json!({"agent_id": "echo", "url": py.url}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let query = |token: &str, method: &str, params: Value| {
        let args = json!({"agent_id": "echo", "method": method, "params": params});
        let token = token.to_owned();
        let app = &app;
        async move { bridge_tool_as(app, &token, "agent_query", args).await }
    };

    // Alice starts a task in her context.
    let (is_error, text) = bridge_tool_as(&app, &app.alice, "agent_send", json!({
        "agent_id": "echo", "message": "alice's secret", "blocking": false, "context_id": "ctx-alice"
    }))
    .await;
    assert!(!is_error, "{text}");
    let task: Value = serde_json::from_str(&text).unwrap();
    let task_id = task["task"]["id"].as_str().expect("a task id").to_owned();

    // What the agent itself answers for a task it does not have.
    let (is_error, missing) = query(&app.bob, "GetTask", json!({"id": "no-such-task"})).await;
    assert!(is_error, "{missing}");

    // Bob: before, GetTask and CancelTask worked on alice's task, ListTasks showed it with its
    // history, and agent_send continued her context. Now all as if it did not exist.
    for method in ["GetTask", "tasks/get", "CancelTask"] {
        let (is_error, text) = query(&app.bob, method, json!({"id": task_id})).await;
        assert!(is_error, "{method}: {text}");
        assert_eq!(text, missing, "{method}");
    }
    let (is_error, text) = bridge_tool_as(
        &app,
        &app.bob,
        "agent_send",
        json!({
            "agent_id": "echo", "message": "hi", "context_id": "ctx-alice"
        }),
    )
    .await;
    assert!(is_error, "{text}");
    assert_eq!(text, missing);
    let (is_error, text) = query(&app.bob, "SendMessage", json!({"message": {
        "role": "ROLE_USER", "parts": [{"text": "more"}], "messageId": "m-bob", "taskId": task_id
    }}))
    .await;
    assert!(is_error, "{text}");
    assert_eq!(text, missing);
    let (is_error, text) = query(&app.bob, "ListTasks", json!({})).await;
    assert!(!is_error, "{text}");
    assert!(
        !text.contains(&task_id) && !text.contains("secret"),
        "{text}"
    );

    // Bob's own task is his to see; alice still sees hers, and her task in her list.
    let (is_error, text) = bridge_tool_as(
        &app,
        &app.bob,
        "agent_send",
        json!({
            "agent_id": "echo", "message": "bob's", "blocking": false
        }),
    )
    .await;
    assert!(!is_error, "{text}");
    let bobs: Value = serde_json::from_str(&text).unwrap();
    let bobs = bobs["task"]["id"].as_str().unwrap().to_owned();
    let (is_error, text) = query(&app.bob, "GetTask", json!({"id": bobs})).await;
    assert!(!is_error, "{text}");
    let (is_error, text) = query(&app.alice, "GetTask", json!({"id": task_id})).await;
    assert!(!is_error && text.contains("alice's secret"), "{text}");
    let (_, text) = query(&app.alice, "ListTasks", json!({})).await;
    assert!(text.contains(&task_id) && !text.contains(&bobs), "{text}");
    let (_, text) = query(&app.bob, "ListTasks", json!({})).await;
    assert!(text.contains(&bobs) && !text.contains(&task_id), "{text}");
    let (is_error, text) = bridge_tool_as(
        &app,
        &app.alice,
        "agent_send",
        json!({
            "agent_id": "echo", "message": "again", "context_id": "ctx-alice"
        }),
    )
    .await;
    assert!(!is_error, "{text}");
    app.stop().await;
}

/// An A2A agent's URL credentials (`user:pw@`, `?token=`) are for its registrant and admins:
/// every other agent sees them as `***`.
#[tokio::test]
async fn agent_url_credentials_are_hidden_from_other_agents() {
    let py = a2a_agent_py().await;
    let app = spawn_app().await;
    let mut url = reqwest::Url::parse(&py.url).unwrap();
    url.set_username("agentuser").unwrap();
    url.set_password(Some("PWSECRET1")).unwrap();
    url.set_query(Some("token=TOKSECRET1"));
    let (status, body) = app
        .post(
            "/v1/a2a/agents",
            &app.alice,
            json!({"agent_id": "creds", "url": url.as_str()}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert!(
        body.to_string().contains("PWSECRET1"),
        "the registrant sees it: {body}"
    );
    let (_, list) = app.get("/v1/a2a/agents", &app.bob).await;
    let (_, one) = app.get("/v1/a2a/agents/creds", &app.bob).await;
    for shown in [&list, &one] {
        let text = shown.to_string();
        assert!(
            !text.contains("PWSECRET1") && !text.contains("TOKSECRET1"),
            "{text}"
        );
    }
    assert!(
        one["agent"]["url"]
            .as_str()
            .unwrap()
            .contains("agentuser:***@"),
        "{one}"
    );
    let (_, admin) = app.get("/v1/a2a/agents/creds", &app.admin).await;
    assert_eq!(admin["agent"]["url"], url.as_str(), "{admin}");
    app.stop().await;
}
