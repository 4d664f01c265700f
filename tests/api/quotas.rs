//! Bounds on what one agent or one server can take from the others: merged listings under one
//! time bound, tasks within the agent's concurrency and quotas, servers per agent.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

/// The Python fixture (stdio) that answers its listings at connect and hangs on every later one,
/// with the longest `timeout` a registrant may set.
fn hanging_lists(server_id: &str) -> Value {
    let mut config = py_stdio(server_id, &unique(server_id));
    config["env"]["FIXTURE_LISTS_THEN_HANG"] = json!("1");
    config["timeout"] = json!(86_400);
    config
}

/// A raw `/mcp` request of a 2025-11-25 session (opened when `session` is None): the session and
/// the JSON-RPC answer.
async fn mcp_request(app: &TestApp, session: Option<&str>, body: Value) -> (String, Value) {
    let mut req = app
        .client
        .post(format!("{}/mcp", app.base))
        .bearer_auth(&app.alice)
        .header("accept", "application/json, text/event-stream")
        .json(&body);
    if let Some(session) = session {
        req = req
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25");
    }
    let resp = req.send().await.unwrap();
    assert!(resp.status().is_success(), "{}", resp.status());
    let session = match resp.headers().get("mcp-session-id") {
        Some(id) => id.to_str().unwrap().to_owned(),
        None => session.unwrap_or_default().to_owned(),
    };
    let text = resp.text().await.unwrap();
    let answer = text
        .lines()
        .map(|l| l.strip_prefix("data:").unwrap_or(l))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|m| m.get("id").is_some())
        .unwrap_or(Value::Null);
    (session, answer)
}

/// A server that answers its listings at connect and then hangs (with a `timeout` of a day)
/// neither holds up a merged listing past MCP_BRIDGE_LIST_TIMEOUT nor hides the others' entries:
/// it is named in `skipped_servers` (in `_meta` on `/mcp`), on REST and `/mcp`, and paging
/// through the rest still gives every entry once.
#[tokio::test]
async fn a_hanging_server_is_left_out_of_merged_listings_within_the_bound() {
    let app = TestApp::builder()
        .configure(|c| {
            c.list_timeout = 2;
            c.page_size = 1;
        })
        .spawn()
        .await;
    // Walked in id order, the hanging server comes first.
    app.register_server(hanging_lists("a-hang")).await;
    app.register_server(py_stdio("py", &unique("py"))).await;
    app.register_server(py_stdio("zz", &unique("zz"))).await;
    let bound = Duration::from_secs(2 + 3);

    for (path, field) in [
        ("/v1/resources", "resources"),
        ("/v1/resources/templates", "resource_templates"),
        ("/v1/prompts", "prompts"),
    ] {
        let started = Instant::now();
        let (status, first) = app.get(path, &app.alice).await;
        let took = started.elapsed();
        assert_eq!(status, StatusCode::OK, "{path}: {first}");
        assert!(took < bound, "{path} took {took:?}");
        let skipped = first["skipped_servers"].as_array().unwrap();
        assert_eq!(skipped.len(), 1, "{path}: {first}");
        assert_eq!(skipped[0]["server_id"], "a-hang");
        let reason = skipped[0]["reason"].as_str().unwrap();
        assert!(reason.contains("MCP_BRIDGE_LIST_TIMEOUT"), "{reason}");
        // The rest, page by page (one entry a page): every entry of py and zz once.
        let mut servers = vec![];
        let mut page = first;
        loop {
            for item in page[field].as_array().unwrap() {
                servers.push(item["server_id"].as_str().unwrap().to_owned());
            }
            let next = page["next_cursor"].as_str().unwrap().to_owned();
            if next.is_empty() {
                break;
            }
            let (status, body) = app.get(&format!("{path}?cursor={next}"), &app.alice).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            assert_eq!(body["skipped_servers"], json!([]), "{path}: {body}");
            page = body;
        }
        let per_server = servers.len() / 2;
        assert!(per_server >= 1, "{path}: {servers:?}");
        assert_eq!(
            servers,
            [
                vec!["py".to_owned(); per_server],
                vec!["zz".to_owned(); per_server]
            ]
            .concat(),
            "{path}"
        );
    }

    // The one server asked for by name answers 504 within the bound, not in a day.
    let started = Instant::now();
    let (status, body) = app.get("/v1/resources?server_id=a-hang", &app.alice).await;
    assert_eq!(status, StatusCode::GATEWAY_TIMEOUT, "{body}");
    assert!(started.elapsed() < bound);

    // /mcp: the same, in the result's _meta.
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}});
    let (session, _) = mcp_request(&app, None, init).await;
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    mcp_request(&app, Some(&session), initialized).await;
    for method in ["resources/list", "resources/templates/list", "prompts/list"] {
        let started = Instant::now();
        let list = json!({"jsonrpc": "2.0", "id": 2, "method": method});
        let (_, answer) = mcp_request(&app, Some(&session), list).await;
        assert!(started.elapsed() < bound, "{method}");
        let skipped = &answer["result"]["_meta"]["mcp-bridge/skipped_servers"];
        assert_eq!(skipped[0]["server_id"], "a-hang", "{method}: {answer}");
        assert!(answer["result"]["nextCursor"].is_string(), "{answer}");
    }
}

/// An agent may own MCP_BRIDGE_AGENT_SERVERS servers (registered or imported); past it a
/// registration is 403 `forbidden` naming the setting, and an import's entry fails the same way.
/// Admins are exempt, other agents have their own count, and unregistering frees a place.
#[tokio::test]
async fn an_agent_owns_a_bounded_number_of_servers() {
    let peer = py_http().await;
    let app = TestApp::builder()
        .configure(|c| c.agent_servers = 2)
        .spawn()
        .await;
    let http =
        |id: &str| json!({"config": {"server_id": id, "transport": "http", "url": peer.url}});

    for id in ["a1", "a2"] {
        let (status, body) = app.post("/v1/servers", &app.alice, http(id)).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let (status, body) = app.post("/v1/servers", &app.alice, http("a3")).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["code"], "forbidden", "{body}");
    assert_eq!(body["retryable"], false, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("MCP_BRIDGE_AGENT_SERVERS=2"),
        "{body}"
    );
    let (status, _) = app.server("a3").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "nothing was registered");

    // An import counts the same.
    let document = json!({"mcpServers": {"a4": {"url": peer.url}}});
    let (status, body) = app.post("/v1/servers/import", &app.alice, document).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["results"][0]["action"], "failed", "{body}");
    assert_eq!(body["results"][0]["code"], "forbidden", "{body}");

    // Bob has his own count; an admin has none.
    let (status, body) = app.post("/v1/servers", &app.bob, http("b1")).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    for id in ["r1", "r2", "r3"] {
        let (status, body) = app.post("/v1/servers", &app.admin, http(id)).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }

    // Unregistering one of hers frees a place.
    let (status, _) = app.delete("/v1/servers/a1", &app.alice).await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = app.post("/v1/servers", &app.alice, http("a3")).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

/// Starts a task of `token`'s agent calling `name`; the answer.
async fn start_task(
    app: &TestApp,
    token: &str,
    name: &str,
    arguments: Value,
) -> (StatusCode, Value) {
    let body = json!({ "name": name, "arguments": arguments, "task": { "ttl": 600_000 } });
    app.post("/v1/tools/call", token, body).await
}

/// Waits until every task of `ids` has `status`.
async fn wait_tasks(app: &TestApp, ids: &[String], status: &str) {
    for id in ids {
        let path = format!("/v1/tasks/{id}");
        wait_until(&format!("task {id} {status}"), WAIT, async || {
            let (_, body) = app.get(&path, &app.alice).await;
            match body["status"] == status {
                true => Ok(()),
                false => Err(body.to_string()),
            }
        })
        .await;
    }
}

/// Tasks run within their agent's concurrency (3 of its 4 slots here): the rest wait
/// `working` and queued, then run; an agent has at most MCP_BRIDGE_AGENT_TASKS unfinished tasks
/// (429 with Retry-After past it), keeps a slot for its own requests, and lists its tasks in pages.
#[tokio::test]
async fn tasks_queue_within_the_agents_concurrency_and_are_capped_and_paged() {
    let app = TestApp::builder()
        .configure(|c| {
            c.agent_concurrency = 4;
            c.agent_tasks = 6;
        })
        .spawn()
        .await;
    app.register_server(py_stdio("py", &unique("py"))).await;
    let marks = tempfile::tempdir().unwrap();
    let started = |i: usize| marks.path().join(format!("started-{i}"));

    let mut ids = Vec::new();
    for i in 0..6 {
        let args = json!({"seconds": 2, "started": started(i).to_str().unwrap()});
        let (status, created) = start_task(&app, &app.alice, "py__slow", args).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{created}");
        ids.push(created["task_id"].as_str().unwrap().to_owned());
    }
    // A seventh is refused while six have not finished.
    let resp = app
        .client
        .post(format!("{}/v1/tools/call", app.base))
        .bearer_auth(&app.alice)
        .json(&json!({"name": "py__echo", "arguments": {"text": "x"}, "task": {"ttl": 60_000}}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(resp.headers().contains_key("retry-after"));
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["code"], "rate_limited", "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("MCP_BRIDGE_AGENT_TASKS=6"),
        "{body}"
    );

    // Three calls reach the server, the other three wait, queued.
    wait_until("three calls running", WAIT, async || {
        let running = (0..6).filter(|&i| started(i).exists()).count();
        match running == 3 {
            true => Ok(()),
            false => Err(format!("{running} running")),
        }
    })
    .await;
    // A task is marked queued once it finds no slot, a moment after it is made.
    wait_until("three tasks marked queued", WAIT, async || {
        let (_, listed) = app.get("/v1/tasks", &app.alice).await;
        let queued = listed["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| {
                t["status"] == "working"
                    && t["status_message"].as_str().unwrap().starts_with("queued")
            })
            .count();
        match queued == 3 {
            true => Ok(()),
            false => Err(format!("{queued} queued: {listed}")),
        }
    })
    .await;
    // The agent's own requests still get its last slot.
    app.call_tool("py__echo", json!({"text": "meanwhile"}))
        .await;
    // A negative: no fourth queued call starts in the meantime.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!((0..6).filter(|&i| started(i).exists()).count(), 3);

    // Then the queued ones run, and all finish.
    wait_tasks(&app, &ids, "completed").await;
    assert_eq!((0..6).filter(|&i| started(i).exists()).count(), 6);

    // The list pages.
    let (status, first) = app.get("/v1/tasks?limit=4", &app.alice).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    let cursor = first["next_cursor"].as_str().unwrap();
    assert!(!cursor.is_empty(), "{first}");
    let (_, rest) = app
        .get(&format!("/v1/tasks?limit=4&cursor={cursor}"), &app.alice)
        .await;
    assert_eq!(rest["next_cursor"], "", "{rest}");
    let listed: Vec<String> = [&first, &rest]
        .iter()
        .flat_map(|page| page["tasks"].as_array().unwrap().clone())
        .map(|t| t["task_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(listed, ids, "every task once, oldest first");
    let (status, body) = app.get("/v1/tasks?limit=0", &app.alice).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
}

/// An agent's stored task results are bounded: a new result drops the oldest ones it does not
/// fit beside (their tasks say so and their result is 404), and a result larger than the whole
/// room fails its task 413.
#[tokio::test]
async fn stored_task_results_are_bounded_per_agent_oldest_dropped_first() {
    let app = TestApp::builder()
        .configure(|c| c.agent_task_result_bytes = 3_000)
        .spawn()
        .await;
    app.register_server(py_stdio("py", &unique("py"))).await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        let (status, created) =
            start_task(&app, &app.alice, "py__big", json!({"size": 1000})).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{created}");
        let id = created["task_id"].as_str().unwrap().to_owned();
        wait_tasks(&app, std::slice::from_ref(&id), "completed").await;
        ids.push(id);
    }
    let (status, gone) = app
        .get(&format!("/v1/tasks/{}/result", ids[0]), &app.alice)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{gone}");
    assert!(
        gone["error"]
            .as_str()
            .unwrap()
            .contains("MCP_BRIDGE_AGENT_TASK_RESULT_BYTES"),
        "{gone}"
    );
    for id in &ids[1..] {
        let (status, kept) = app.get(&format!("/v1/tasks/{id}/result"), &app.alice).await;
        assert_eq!(status, StatusCode::OK, "{kept}");
        assert_eq!(kept["content"][0]["text"].as_str().unwrap().len(), 1000);
    }
    let (_, created) = start_task(&app, &app.alice, "py__big", json!({"size": 5000})).await;
    let id = created["task_id"].as_str().unwrap().to_owned();
    wait_tasks(&app, std::slice::from_ref(&id), "failed").await;
    let (status, body) = app.get(&format!("/v1/tasks/{id}/result"), &app.alice).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
}
