//! 2025-11-25 tasks on mcp-bridge's own `/mcp`: the capability, task-augmented `tools/call`
//! and `tasks/*`, with the Python `mcp` 1.x client (2.x dropped tasks) and raw JSON-RPC; the
//! tasks are the agent's REST tasks. Then the 2026-07-28 tasks extension (SEP-2663) with a
//! Python `mcp` 2.x client built on its extension API (mcp_tasks_ext_client.py).

use std::collections::HashMap;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

/// Runs mcp_tasks_client.py against `/mcp`; its JSON lines by `step`.
async fn tasks_client(
    app: &TestApp,
    token: &str,
    tool: &str,
    started: &str,
) -> HashMap<String, Value> {
    let python = peers_dir().join(".venv-ws/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/test.sh",
        python.display()
    );
    let url = format!("{}/mcp", app.base);
    let output = tokio::time::timeout(
        Duration::from_secs(90),
        tokio::process::Command::new(python)
            .arg(peers_dir().join("mcp_tasks_client.py"))
            .args([url.as_str(), token, tool, started])
            .output(),
    )
    .await
    .expect("mcp_tasks_client.py finishes within 90 s")
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "mcp_tasks_client.py failed: {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .map(|line| (line["step"].as_str().unwrap_or_default().to_owned(), line))
        .collect()
}

fn is_iso8601(value: &Value) -> bool {
    value.as_str().is_some_and(|s| {
        s.len() >= 20 && s.as_bytes()[4] == b'-' && s.as_bytes()[10] == b'T' && s.ends_with('Z')
    })
}

#[tokio::test]
async fn the_python_client_runs_a_tool_as_a_task_over_mcp() {
    let app = spawn_app().await;
    app.register_server(py_stdio("py", &unique("mcptask")))
        .await;
    let mark = StartMark::new();
    let steps = tasks_client(&app, &app.alice, "py__slow", &mark.path).await;
    assert!(steps.contains_key("end"), "{steps:?}");

    let init = &steps["initialize"];
    assert_eq!(init["protocol_version"], "2025-11-25");
    assert_eq!(
        init["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
        "{init}"
    );

    let created = &steps["created"]["task"];
    let task_id = created["taskId"].as_str().unwrap().to_owned();
    assert_eq!(created["status"], "working", "{created}");
    assert_eq!(created["ttl"], 60_000);
    assert_eq!(created["pollInterval"], 1_000);
    assert!(is_iso8601(&created["createdAt"]), "{created}");
    assert!(is_iso8601(&created["lastUpdatedAt"]), "{created}");

    let polled = &steps["polled"];
    assert_eq!(polled["task"]["status"], "completed", "{polled}");
    assert_eq!(polled["task"]["taskId"], task_id.as_str());
    let result = &steps["result"]["result"];
    assert_eq!(result["content"][0]["text"], "done", "{result}");
    assert_eq!(result["isError"], false);
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
        task_id.as_str(),
        "{result}"
    );

    // tasks/result on a running task answers once it has ended.
    let waited = &steps["waited"];
    assert_eq!(waited["result"]["content"][0]["text"], "done", "{waited}");
    assert!(waited["seconds"].as_f64().unwrap() >= 0.5, "{waited}");

    let cancelled = &steps["cancelled"]["task"];
    let running_id = cancelled["taskId"].as_str().unwrap().to_owned();
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    assert_eq!(
        steps["cancel_again"]["error"]["code"], -32602,
        "{:?}",
        steps["cancel_again"]
    );
    assert_eq!(steps["after_cancel"]["task"]["status"], "cancelled");
    for step in ["unknown", "unknown_result"] {
        assert_eq!(
            steps[step]["error"]["code"], -32602,
            "{step}: {:?}",
            steps[step]
        );
    }
    let listed: Vec<&str> = steps["list"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["taskId"].as_str().unwrap())
        .collect();
    assert!(
        listed.contains(&task_id.as_str()) && listed.contains(&running_id.as_str()),
        "{listed:?}"
    );
    assert_eq!(listed.len(), 3, "{listed:?}");
    assert_eq!(steps["plain"]["result"]["content"][0]["text"], "done");

    // The same tasks over REST, the agent's own.
    let (status, list) = app.get("/v1/tasks", &app.alice).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let rest: Vec<&str> = list["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["task_id"].as_str().unwrap())
        .collect();
    assert!(
        rest.contains(&task_id.as_str()) && rest.contains(&running_id.as_str()),
        "{list}"
    );
    let (_, one) = app.get(&format!("/v1/tasks/{task_id}"), &app.alice).await;
    assert_eq!(one["task"]["server_id"], "py", "{one}");
    assert_eq!(one["status"], "completed");
    let (_, theirs) = app.get("/v1/tasks", &app.bob).await;
    assert_eq!(theirs["tasks"], json!([]), "{theirs}");
    let (status, _) = app.get(&format!("/v1/tasks/{task_id}"), &app.bob).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    app.stop().await;
}

/// A 2025-11-25 session of `/mcp` spoken as raw JSON-RPC.
struct Session {
    url: String,
    token: String,
    id: String,
    client: reqwest::Client,
    next: u64,
}

impl Session {
    /// Initializes a session at `path` as `token`'s agent; the session and the initialize result.
    async fn open(app: &TestApp, path: &str, token: &str) -> (Self, Value) {
        let url = format!("{}{path}", app.base);
        let body = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}});
        let resp = post(&app.client, &url, token, None, &body).await;
        assert_eq!(resp.status(), StatusCode::OK);
        let id = resp.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let init = answer_of(resp).await;
        let session = Self {
            url,
            token: token.to_owned(),
            id,
            client: app.client.clone(),
            next: 1,
        };
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let resp = post(
            &session.client,
            &session.url,
            token,
            Some(&session.id),
            &initialized,
        )
        .await;
        assert_eq!(resp.status(), StatusCode::ACCEPTED);
        (session, init)
    }

    /// The answer (`result` or `error`) to `method` with `params`.
    async fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let body = json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params});
        let resp = post(&self.client, &self.url, &self.token, Some(&self.id), &body).await;
        assert_eq!(resp.status(), StatusCode::OK, "{method}");
        let answer = answer_of(resp).await;
        assert_eq!(answer["id"], self.next, "{answer}");
        answer
    }
}

async fn post(
    client: &reqwest::Client,
    url: &str,
    token: &str,
    session: Option<&str>,
    body: &Value,
) -> reqwest::Response {
    let mut req = client
        .post(url)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .json(body);
    if let Some(session) = session {
        req = req.header("mcp-session-id", session);
    }
    req.send().await.unwrap()
}

/// The JSON-RPC answer of a response, sent as JSON or as an SSE event.
async fn answer_of(resp: reqwest::Response) -> Value {
    let sse = resp.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream");
    let text = resp.text().await.unwrap();
    if !sse {
        return serde_json::from_str(&text).unwrap();
    }
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|message| message.get("id").is_some())
        .unwrap_or_else(|| panic!("no answer in {text}"))
}

/// Starts `name` as a task in `session`; its task id.
async fn start(session: &mut Session, name: &str, arguments: Value) -> String {
    let created = session
        .request(
            "tools/call",
            json!({"name": name, "arguments": arguments, "task": {"ttl": 30_000}}),
        )
        .await;
    assert_eq!(created["result"]["task"]["status"], "working", "{created}");
    created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn a_task_names_its_tool_as_a_plain_call_on_the_same_path() {
    let app = spawn_app().await;
    app.register_server(py_stdio("py", &unique("mcptask")))
        .await;
    let toolset = json!({"tools": ["py__slow"], "rename": {"py__slow": "nap"}});
    let resp = app
        .client
        .put(format!("{}/v1/toolsets/team", app.base))
        .bearer_auth(&app.admin)
        .json(&toolset)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::CREATED);

    // A toolset's name, and the meta-tool `call_tool` of the deferred catalogue.
    let (mut team, init) = Session::open(&app, "/mcp/toolsets/team", &app.alice).await;
    assert!(
        init["result"]["capabilities"]["tasks"]["requests"]["tools"]["call"].is_object(),
        "{init}"
    );
    let by_toolset = start(&mut team, "nap", json!({"seconds": 0})).await;
    let (mut deferred, _) = Session::open(&app, "/mcp?deferred=1", &app.alice).await;
    let meta = json!({"name": "py__slow", "arguments": {"seconds": 0}});
    let by_meta = start(&mut deferred, "call_tool", meta).await;
    for (session, task_id) in [(&mut team, &by_toolset), (&mut deferred, &by_meta)] {
        let result = session
            .request("tasks/result", json!({"taskId": task_id}))
            .await;
        assert_eq!(result["result"]["content"][0]["text"], "done", "{result}");
        assert_eq!(
            result["result"]["_meta"]["io.modelcontextprotocol/related-task"]["taskId"],
            task_id.as_str()
        );
        let got = session
            .request("tasks/get", json!({"taskId": task_id}))
            .await;
        assert_eq!(got["result"]["status"], "completed", "{got}");
        assert_eq!(got["result"]["taskId"], task_id.as_str());
    }
    let (_, rest) = app
        .get(&format!("/v1/tasks/{by_toolset}"), &app.alice)
        .await;
    assert_eq!(rest["task"]["name"], "nap", "{rest}");
    let (_, rest) = app.get(&format!("/v1/tasks/{by_meta}"), &app.alice).await;
    assert_eq!(rest["task"]["name"], "py__slow", "{rest}");
    let searched = deferred
        .request(
            "tools/call",
            json!({"name": "search_tools", "arguments": {"query": "x"}, "task": {}}),
        )
        .await;
    assert_eq!(searched["error"]["code"], -32602, "{searched}");

    // An unknown tool is refused at once; a plain call is rmcp's, as before.
    let (mut plain, _) = Session::open(&app, "/mcp", &app.alice).await;
    let unknown = plain
        .request(
            "tools/call",
            json!({"name": "py__nope", "arguments": {}, "task": {"ttl": 5_000}}),
        )
        .await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let called = plain
        .request(
            "tools/call",
            json!({"name": "py__slow", "arguments": {"seconds": 0}}),
        )
        .await;
    assert_eq!(called["result"]["content"][0]["text"], "done", "{called}");
    assert!(called["result"].get("task").is_none());

    // A name the path does not offer is refused at once, as a plain call refuses it.
    let task = json!({"name": "nope", "arguments": {}, "task": {}});
    let unknown = team.request("tools/call", task).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let plain_call = team
        .request("tools/call", json!({"name": "nope", "arguments": {}}))
        .await;
    assert_eq!(plain_call["error"]["code"], -32602, "{plain_call}");

    // A call that fails upstream (its server is removed under it): the task fails, and its
    // result is what a plain call answers, a tool error.
    let mark = StartMark::new();
    let args = json!({"seconds": 30, "started": mark.path});
    let doomed = start(&mut plain, "py__slow", args).await;
    mark.wait().await;
    let (status, body) = app.delete("/v1/servers/py", &app.admin).await;
    assert!(status.is_success(), "{body}");
    let result = plain
        .request("tasks/result", json!({"taskId": doomed}))
        .await;
    assert_eq!(result["result"]["isError"], true, "{result}");
    let got = plain.request("tasks/get", json!({"taskId": doomed})).await;
    assert_eq!(got["result"]["status"], "failed", "{got}");
    assert!(got["result"]["statusMessage"].is_string(), "{got}");

    // Another agent's session knows none of them, and cannot use this session.
    let (mut bobs, _) = Session::open(&app, "/mcp", &app.bob).await;
    let theirs = bobs
        .request("tasks/get", json!({"taskId": by_toolset}))
        .await;
    assert_eq!(theirs["error"]["code"], -32602, "{theirs}");
    let none = bobs.request("tasks/list", json!({})).await;
    assert_eq!(none["result"]["tasks"], json!([]), "{none}");
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tasks/list"});
    let resp = post(&app.client, &plain.url, &app.bob, Some(&plain.id), &body).await;
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    let resp = post(
        &app.client,
        &plain.url,
        &app.alice,
        Some("no-such-session"),
        &body,
    )
    .await;
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    app.stop().await;
}

/// Runs mcp_tasks_ext_client.py (the 2026-07-28 tasks extension, Python `mcp` 2.x) against
/// `/mcp`; its JSON report.
pub async fn tasks_ext_client(app: &TestApp, token: &str, args: &[&str]) -> Value {
    let url = format!("{}/mcp", app.base);
    let mut all = vec![url.as_str(), token];
    all.extend_from_slice(args);
    crate::mcp::run_peer("mcp_tasks_ext_client.py", &all).await
}

/// A 2026 client that declares the tasks extension gets a handle for its `tools/call` and
/// polls it with `tasks/get` to the tool's result; the task is the agent's REST task; and the
/// tools it lists say they can run as tasks.
#[tokio::test]
async fn a_2026_client_polls_a_task_call_to_its_result() {
    let app = spawn_app().await;
    app.register_server(py_stdio("py", &unique("exttask")))
        .await;
    let args = json!({"seconds": 0.5}).to_string();
    let report = tasks_ext_client(&app, &app.alice, &["run", "py__slow", &args]).await;
    assert_eq!(report["protocol_version"], "2026-07-28", "{report}");
    let handle = &report["handle"];
    assert_eq!(handle["resultType"], "task", "{report}");
    assert_eq!(handle["status"], "working", "{report}");
    assert!(is_iso8601(&handle["createdAt"]), "{report}");
    assert!(handle["pollIntervalMs"].as_u64().is_some(), "{report}");
    let task = &report["task"];
    assert_eq!(task["status"], "completed", "{report}");
    assert_eq!(task["taskId"], handle["taskId"], "{report}");
    assert_eq!(task["result"]["content"][0]["text"], "done", "{report}");
    assert_eq!(task["result"]["isError"], false, "{report}");
    assert_eq!(
        report["statuses"].as_array().unwrap().last(),
        Some(&json!("completed"))
    );
    assert_eq!(
        report["tools"]["py__slow"]["execution"]["taskSupport"], "optional",
        "{report}"
    );
    // The same task over REST.
    let task_id = handle["taskId"].as_str().unwrap();
    let (status, body) = app.get(&format!("/v1/tasks/{task_id}"), &app.alice).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["task"]["status"], "completed", "{body}");
    assert_eq!(body["task"]["name"], "py__slow", "{body}");
    // Another agent's task is not there for it.
    let (status, body) = app.get(&format!("/v1/tasks/{task_id}"), &app.bob).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    app.stop().await;
}

/// A task whose server asks the client something (a form elicitation) is `input_required`
/// with the request in `inputRequests`; the client's `tasks/update` answers it and the task
/// completes with the answer.
#[tokio::test]
async fn a_2026_client_answers_a_tasks_elicitation_with_tasks_update() {
    let app = spawn_app().await;
    app.register_server(py_stdio("py", &unique("exttask")))
        .await;
    let report = tasks_ext_client(
        &app,
        &app.alice,
        &["run", "py__ask_name", "{}", "--answer", "Grace"],
    )
    .await;
    assert_eq!(report["task"]["status"], "completed", "{report}");
    assert_eq!(
        report["task"]["result"]["content"][0]["text"], "name: Grace",
        "{report}"
    );
    let statuses = report["statuses"].as_array().unwrap();
    assert!(statuses.contains(&json!("input_required")), "{report}");
    let asked = &report["input_requests"][0];
    assert_eq!(asked["method"], "elicitation/create", "{report}");
    assert_eq!(asked["params"]["message"], "What is your name?", "{report}");
    assert_eq!(
        report["answered"][0]["ack"]["resultType"], "complete",
        "{report}"
    );
    app.stop().await;
}

/// `tasks/cancel` stops the task's call; the task ends `cancelled`.
#[tokio::test]
async fn a_2026_client_cancels_a_task() {
    let app = spawn_app().await;
    app.register_server(py_stdio("py", &unique("exttask")))
        .await;
    let args = json!({"seconds": 60}).to_string();
    let report = tasks_ext_client(&app, &app.alice, &["cancel", "py__slow", &args]).await;
    assert_eq!(report["cancel_ack"]["resultType"], "complete", "{report}");
    assert_eq!(report["task"]["status"], "cancelled", "{report}");
    app.stop().await;
}

/// A bridge killed while a 2026 client's task runs on a server that runs tasks: after the
/// restart the client's `tasks/get` finds the same task, which completes.
#[tokio::test]
async fn a_2026_clients_task_survives_a_restart_of_the_bridge() {
    let marks = tempfile::NamedTempFile::new().unwrap();
    let tasks_peer = tasks_server("http", marks.path()).await;
    let data_dir = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let mut bridge = start_bridge(data_dir.path()).await;
    let app = TestApp::at(&bridge.base, data_dir.clone());
    app.register_server(json!({"server_id": "tk", "transport": "http", "url": tasks_peer.url}))
        .await;
    let args = json!({"seconds": 4}).to_string();
    let report = tasks_ext_client(&app, &app.alice, &["start", "tk__slow_task", &args]).await;
    let task_id = report["handle"]["taskId"].as_str().unwrap().to_owned();
    wait_until("the server runs the task", WAIT, async || {
        let (_, body) = app.get(&format!("/v1/tasks/{task_id}"), &app.alice).await;
        match body["task"]["upstream"] == true {
            true => Ok(()),
            false => Err(body.to_string()),
        }
    })
    .await;
    bridge.signal("KILL");
    bridge.exited_within(Duration::from_secs(10)).await.unwrap();

    let bridge = start_bridge(data_dir.path()).await;
    let app = TestApp::at(&bridge.base, data_dir.clone());
    let report = tasks_ext_client(&app, &app.alice, &["poll", &task_id]).await;
    assert_eq!(report["task"]["status"], "completed", "{report}");
    assert_eq!(
        report["task"]["result"]["content"][0]["text"], "done",
        "{report}"
    );
    drop(bridge);
}

/// A 2026 client's task on a 2026 server that runs tasks itself (its own tasks extension): the
/// bridge's task follows the server's, and the server's question reaches the client in
/// `inputRequests`, its answer the server through both `tasks/update`s.
#[tokio::test]
async fn a_2026_clients_task_on_a_2026_task_server_runs_as_the_servers_task() {
    let app = spawn_app().await;
    let marks = tempfile::NamedTempFile::new().unwrap();
    let peer = tasks_server_2026(marks.path()).await;
    app.register_server(json!({
        "server_id": "t26", "transport": "http", "url": peer.url,
        "protocol_version": "2026-07-28"
    }))
    .await;
    let args = json!({"a": 2, "b": 3}).to_string();
    let report = tasks_ext_client(
        &app,
        &app.alice,
        &["run", "t26__ask_sum", &args, "--answer", "Grace"],
    )
    .await;
    assert_eq!(report["task"]["status"], "completed", "{report}");
    assert_eq!(
        report["task"]["result"]["content"][0]["text"], "Grace: a+b=5",
        "{report}"
    );
    let asked = &report["input_requests"][0];
    assert_eq!(asked["params"]["message"], "What is your name?", "{report}");
    let task_id = report["handle"]["taskId"].as_str().unwrap();
    let (status, body) = app.get(&format!("/v1/tasks/{task_id}"), &app.alice).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["task"]["upstream"], true, "{body}");
    let body = app.call_tool("t26__tasks_made", json!({})).await;
    assert_eq!(body["content"][0]["text"], "1", "{body}");
    app.stop().await;
}
