//! Tool calls run as tasks: created at once, followed by events and `/v1/tasks`, kept in the
//! store until their `ttl`, cancelled on request, and never silently lost by a restart.

use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

/// Starts `name` with `arguments` as a task of `token`'s agent; the 202 body.
async fn start(app: &TestApp, token: &str, name: &str, arguments: Value, ttl: u64) -> Value {
    let body = json!({ "name": name, "arguments": arguments, "task": { "ttl": ttl } });
    let (status, created) = app.post("/v1/tools/call", token, body).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{created}");
    assert_eq!(created["type"], "task/create/resp", "{created}");
    assert_eq!(created["status"], "working", "{created}");
    created
}

/// Waits until the task's status is `status`; its last read.
async fn wait_status(app: &TestApp, token: &str, task_id: &str, status: &str) -> Value {
    let path = format!("/v1/tasks/{task_id}");
    wait_until(&format!("task {task_id} {status}"), WAIT, async || {
        let (code, body) = app.get(&path, token).await;
        match code == StatusCode::OK && body["status"] == status {
            true => Ok(body),
            false => Err(format!("{code} {body}")),
        }
    })
    .await
}

/// Runs `name` as a task of alice's to its end: the completed task and its result.
async fn completed(app: &TestApp, name: &str, arguments: Value) -> (Value, Value) {
    let created = start(app, &app.alice, name, arguments, 60_000).await;
    let task_id = created["task_id"].as_str().unwrap();
    let done = wait_status(app, &app.alice, task_id, "completed").await;
    let (_, result) = app
        .get(&format!("/v1/tasks/{task_id}/result"), &app.alice)
        .await;
    (done, result)
}

/// A `bridge/task_status` push of `task_id` with `status`.
fn task_event(message: &SseMessage, task_id: &str, status: &str) -> bool {
    is_push(message, "bridge/task_status")
        && message.data["params"]["task_id"] == task_id
        && message.data["params"]["status"] == status
}

#[tokio::test]
async fn a_plain_upstream_call_runs_as_a_task_of_the_bridge() {
    let app = spawn_app().await;
    app.register_server(py_stdio("py", &unique("task"))).await;
    let mut events = EventStream::open(&app, &app.alice, None).await;
    let created = start(
        &app,
        &app.alice,
        "py__slow",
        json!({"seconds": 0.5}),
        60_000,
    )
    .await;
    let task_id = created["task_id"].as_str().unwrap().to_owned();
    assert_eq!(created["task"]["server_id"], "py");
    assert_eq!(created["task"]["upstream"], false);
    assert_eq!(created["task"]["ttl"], 60_000);

    // While it runs, the result is a 202 with the status.
    let (status, pending) = app
        .get(&format!("/v1/tasks/{task_id}/result"), &app.alice)
        .await;
    if status == StatusCode::ACCEPTED {
        assert_eq!(pending["status"], "working", "{pending}");
    }
    let working = events
        .wait_for("the working event", WAIT, |m| {
            task_event(m, &task_id, "working")
        })
        .await;
    assert_eq!(working.data["req_id"], created["req_id"]);
    events
        .wait_for("the completed event", WAIT, |m| {
            task_event(m, &task_id, "completed")
        })
        .await;

    let (status, result) = app
        .get(&format!("/v1/tasks/{task_id}/result?id=r1"), &app.alice)
        .await;
    assert_eq!(status, StatusCode::OK, "{result}");
    assert_eq!(result["type"], "tool/call/resp");
    assert_eq!(result["req_id"], "r1");
    assert_eq!(result["content"][0]["text"], "done", "{result}");
    assert_eq!(result["is_error"], false);
    let (_, list) = app.get("/v1/tasks", &app.alice).await;
    assert_eq!(list["tasks"][0]["task_id"], task_id, "{list}");
    assert_eq!(list["tasks"][0]["status"], "completed");

    // Another agent sees nothing of it and cannot touch it.
    for (method, path) in [
        ("GET", format!("/v1/tasks/{task_id}")),
        ("GET", format!("/v1/tasks/{task_id}/result")),
        ("DELETE", format!("/v1/tasks/{task_id}")),
    ] {
        let (status, body) = match method {
            "GET" => app.get(&path, &app.bob).await,
            _ => app.delete(&path, &app.bob).await,
        };
        assert_eq!(status, StatusCode::NOT_FOUND, "{method} {path}: {body}");
        assert_eq!(body["code"], "not_found");
    }
    let (_, theirs) = app.get("/v1/tasks", &app.bob).await;
    assert_eq!(theirs["tasks"], json!([]), "{theirs}");
    let (status, _) = app.get("/v1/tasks/no-such-task", &app.alice).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Cancelling a finished task is a conflict, and it stays completed.
    let (status, body) = app
        .delete(&format!("/v1/tasks/{task_id}"), &app.alice)
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["code"], "conflict");
    assert_eq!(body["type"], "task/cancel/resp");
    wait_status(&app, &app.alice, &task_id, "completed").await;
    app.stop().await;
}

#[tokio::test]
async fn a_running_task_is_cancelled_once() {
    let app = spawn_app().await;
    app.register_server(py_stdio("py", &unique("task"))).await;
    let mut events = EventStream::open(&app, &app.alice, None).await;
    let mark = StartMark::new();
    let args = json!({"seconds": 30, "started": mark.path});
    let created = start(&app, &app.alice, "py__slow", args, 60_000).await;
    let task_id = created["task_id"].as_str().unwrap().to_owned();
    mark.wait().await;
    let (status, body) = app
        .delete(&format!("/v1/tasks/{task_id}"), &app.alice)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["status"], "cancelled", "{body}");
    events
        .wait_for("the cancelled event", WAIT, |m| {
            task_event(m, &task_id, "cancelled")
        })
        .await;
    let (status, body) = app
        .delete(&format!("/v1/tasks/{task_id}"), &app.alice)
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "cancelling twice: {body}");
    let (status, body) = app
        .get(&format!("/v1/tasks/{task_id}/result"), &app.alice)
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["code"], "conflict");
    app.stop().await;
}

#[tokio::test]
async fn a_ttl_out_of_range_is_refused_and_starts_nothing() {
    let app = spawn_app().await;
    app.register_server(py_stdio("py", &unique("task"))).await;
    for ttl in [
        json!(0),
        json!(999),
        json!(86_400_001),
        json!("soon"),
        json!(-5),
    ] {
        let body =
            json!({ "name": "py__add", "arguments": {"a": 1, "b": 2}, "task": { "ttl": ttl } });
        let (status, answer) = app.post("/v1/tools/call", &app.alice, body).await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "ttl {ttl}: {answer}"
        );
        assert_eq!(answer["code"], "invalid_request", "{answer}");
    }
    let (_, list) = app.get("/v1/tasks", &app.alice).await;
    assert_eq!(list["tasks"], json!([]), "{list}");
    app.stop().await;
}

#[tokio::test]
async fn a_task_past_its_ttl_is_gone() {
    let app = spawn_app().await;
    app.register_server(py_stdio("py", &unique("task"))).await;
    let created = start(&app, &app.alice, "py__add", json!({"a": 1, "b": 2}), 1_000).await;
    let task_id = created["task_id"].as_str().unwrap().to_owned();
    wait_status(&app, &app.alice, &task_id, "completed").await;
    wait_until("the task expiring", WAIT, async || {
        let (status, body) = app
            .get(&format!("/v1/tasks/{task_id}/result"), &app.alice)
            .await;
        match status {
            StatusCode::NOT_FOUND => Ok(()),
            _ => Err(format!("{status} {body}")),
        }
    })
    .await;
    let (_, list) = app.get("/v1/tasks", &app.alice).await;
    assert_eq!(list["tasks"], json!([]), "{list}");
    app.stop().await;
}

#[tokio::test]
async fn tasks_work_through_the_a2e_endpoint() {
    let app = spawn_app().await;
    app.register_server(py_stdio("py", &unique("task"))).await;
    let call = json!({"type": "tool/call/req", "id": "c1", "name": "py__add",
        "arguments": {"a": 2, "b": 3}, "task": {"ttl": 60_000}});
    let (status, created) = app.post("/v1/a2e", &app.alice, call).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{created}");
    assert_eq!(created["type"], "task/create/resp");
    assert_eq!(created["req_id"], "c1");
    let task_id = created["task_id"].as_str().unwrap().to_owned();
    wait_status(&app, &app.alice, &task_id, "completed").await;
    let get = json!({"type": "task/result/req", "id": "g1", "task_id": task_id});
    let (status, result) = app.post("/v1/a2e", &app.alice, get).await;
    assert_eq!(status, StatusCode::OK, "{result}");
    assert_eq!(result["type"], "tool/call/resp");
    assert_eq!(result["content"][0]["text"], "5", "{result}");
    let list = json!({"type": "task/list/req"});
    let (_, listed) = app.post("/v1/a2e", &app.bob, list).await;
    assert_eq!(listed["tasks"], json!([]), "{listed}");
    app.stop().await;
}

/// Waits until the task runs on its server (its first poll is past).
async fn wait_upstream(app: &TestApp, token: &str, task_id: &str) {
    let path = format!("/v1/tasks/{task_id}");
    wait_until(&format!("task {task_id} upstream"), WAIT, async || {
        let (code, body) = app.get(&path, token).await;
        match body["task"]["upstream"] == true {
            true => Ok(()),
            false => Err(format!("{code} {body}")),
        }
    })
    .await
}

/// A call on a server that runs MCP tasks (the Python SDK's) runs as a task there, on every
/// transport: polled, its status message an event, its result fetched when it ends. A tool the
/// server runs only in the call is answered at once.
#[tokio::test]
async fn a_server_that_runs_tasks_runs_the_call_as_its_task_on_every_transport() {
    let app = spawn_app().await;
    let marks = tempfile::NamedTempFile::new().unwrap();
    let mut peers = Vec::new();
    let mut configs = vec![tasks_stdio("tstdio", marks.path())];
    for transport in ["http", "sse", "ws"] {
        let peer = tasks_server(transport, marks.path()).await;
        let server_id = format!("t{transport}");
        configs.push(json!({"server_id": server_id, "transport": transport, "url": peer.url}));
        peers.push(peer);
    }
    let mut events = EventStream::open(&app, &app.alice, None).await;
    for config in configs {
        let server_id = config["server_id"].as_str().unwrap().to_owned();
        app.register_server(config).await;
        let name = format!("{server_id}__slow_task");
        let created = start(&app, &app.alice, &name, json!({"seconds": 1}), 60_000).await;
        let task_id = created["task_id"].as_str().unwrap().to_owned();
        events
            .wait_for(
                &format!("{server_id}: the server's status message"),
                WAIT,
                |m| {
                    task_event(m, &task_id, "working")
                        && m.data["params"]["status_message"] == "sleeping 1.0 s"
                },
            )
            .await;
        let done = wait_status(&app, &app.alice, &task_id, "completed").await;
        assert_eq!(done["task"]["upstream"], true, "{server_id}: {done}");
        assert_eq!(done["task"]["server_id"], server_id.as_str());
        let (status, result) = app
            .get(&format!("/v1/tasks/{task_id}/result"), &app.alice)
            .await;
        assert_eq!(status, StatusCode::OK, "{server_id}: {result}");
        assert_eq!(result["content"][0]["text"], "done", "{result}");
        events
            .wait_for(&format!("{server_id}: the completed event"), WAIT, |m| {
                task_event(m, &task_id, "completed")
            })
            .await;
    }
    let (done, result) = completed(&app, "thttp__add", json!({"a": 1, "b": 2})).await;
    assert_eq!(done["task"]["upstream"], false, "{done}");
    assert_eq!(result["content"][0]["text"], "3", "{result}");
    let cancelled = std::fs::read_to_string(marks.path()).unwrap();
    assert_eq!(cancelled, "", "nothing was cancelled upstream");
    app.stop().await;
}

/// server-everything runs tasks, but not `get-sum` (its `execution.taskSupport` is
/// "forbidden"): a task-augmented call of it would run the tool and then fail with -32602
/// ("Invalid task creation result"), so the bridge never augments it and runs the call itself
/// as a task. Its `simulate-research-query` ("required") runs as the server's task.
#[tokio::test]
async fn a_tool_its_server_will_not_run_as_a_task_runs_as_the_bridges() {
    let app = spawn_app().await;
    app.register_server(everything_stdio("ev")).await;
    let (done, result) = completed(&app, "ev__get-sum", json!({"a": 2, "b": 5})).await;
    assert_eq!(done["task"]["upstream"], false, "{done}");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains('7'), "{result}");
    let research = json!({"topic": "tides"});
    let (done, result) = completed(&app, "ev__simulate-research-query", research).await;
    assert_eq!(done["task"]["upstream"], true, "{done}");
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("tides"), "{result}");
    app.stop().await;
}

/// Cancelling a task its server runs cancels it there (the server notes `tasks/cancel`), once.
#[tokio::test]
async fn cancelling_a_task_a_server_runs_cancels_it_there() {
    let app = spawn_app().await;
    let marks = tempfile::NamedTempFile::new().unwrap();
    let peer = tasks_server("http", marks.path()).await;
    app.register_server(json!({"server_id": "tc", "transport": "http", "url": peer.url}))
        .await;
    let args = json!({"seconds": 60});
    let created = start(&app, &app.alice, "tc__slow_task", args, 60_000).await;
    let task_id = created["task_id"].as_str().unwrap().to_owned();
    wait_upstream(&app, &app.alice, &task_id).await;
    let (status, body) = app
        .delete(&format!("/v1/tasks/{task_id}"), &app.alice)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["status"], "cancelled", "{body}");
    wait_until("the server told of the cancel", WAIT, async || {
        let noted = std::fs::read_to_string(marks.path()).unwrap();
        match noted.lines().count() {
            1 => Ok(()),
            n => Err(format!("{n} cancels noted: {noted:?}")),
        }
    })
    .await;
    let (status, body) = app
        .delete(&format!("/v1/tasks/{task_id}"), &app.alice)
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "cancelling twice: {body}");
    // A negative: no second cancel reaches the upstream in the meantime.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let noted = std::fs::read_to_string(marks.path()).unwrap();
    assert_eq!(
        noted.lines().count(),
        1,
        "cancelled upstream once: {noted:?}"
    );
    wait_status(&app, &app.alice, &task_id, "cancelled").await;
    app.stop().await;
}

/// A bridge killed during two tasks: the one its server runs is polled again after the restart
/// and completes; the call the bridge ran itself ends `failed` ("interrupted by restart").
#[tokio::test]
async fn after_a_kill_a_servers_task_completes_and_the_bridges_own_call_fails() {
    let peer = py_http().await;
    let marks = tempfile::NamedTempFile::new().unwrap();
    let tasks_peer = tasks_server("http", marks.path()).await;
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let mut bridge = start_bridge(data_dir.path()).await;
    let app = TestApp::at(&bridge.base, data_dir.clone());
    app.register_server(json!({"server_id": "plain", "transport": "http", "url": peer.url}))
        .await;
    app.register_server(json!({"server_id": "tk", "transport": "http", "url": tasks_peer.url}))
        .await;
    let args = json!({"seconds": 4});
    let upstream = start(&app, &app.alice, "tk__slow_task", args, 600_000).await;
    let upstream_id = upstream["task_id"].as_str().unwrap().to_owned();
    wait_upstream(&app, &app.alice, &upstream_id).await;
    let mark = StartMark::new();
    let args = json!({"seconds": 60, "started": mark.path});
    let created = start(&app, &app.alice, "plain__slow", args, 600_000).await;
    let task_id = created["task_id"].as_str().unwrap().to_owned();
    mark.wait().await;
    bridge.signal("KILL");
    bridge.exited_within(Duration::from_secs(10)).await.unwrap();

    let bridge = start_bridge(data_dir.path()).await;
    let app = TestApp::at(&bridge.base, data_dir.clone());
    let mut events = EventStream::open(&app, &app.alice, Some("0")).await;
    let done = wait_status(&app, &app.alice, &upstream_id, "completed").await;
    assert_eq!(done["task"]["upstream"], true, "{done}");
    let (status, result) = app
        .get(&format!("/v1/tasks/{upstream_id}/result"), &app.alice)
        .await;
    assert_eq!(status, StatusCode::OK, "{result}");
    assert_eq!(result["content"][0]["text"], "done", "{result}");
    let task = wait_status(&app, &app.alice, &task_id, "failed").await;
    assert_eq!(
        task["task"]["status_message"], "interrupted by restart",
        "{task}"
    );
    events
        .wait_for("the failed event, replayed", WAIT, |m| {
            task_event(m, &task_id, "failed")
        })
        .await;
    let (status, result) = app
        .get(&format!("/v1/tasks/{task_id}/result"), &app.alice)
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{result}");
    assert_eq!(result["error"], "interrupted by restart");
    assert_eq!(result["retryable"], true);
    drop(bridge);
}

/// The text of a plain call of `name`.
async fn answer(app: &TestApp, name: &str) -> String {
    let body = app.call_tool(name, json!({})).await;
    body["content"][0]["text"].as_str().unwrap().to_owned()
}

/// Answers the next form elicitation on `events` (asking for a name) with `name`.
async fn give_name(app: &TestApp, events: &mut EventStream, name: &str) {
    let request = events
        .wait_for("the server's question", WAIT, |m| {
            m.event == "mcp/elicit/req"
        })
        .await;
    assert_eq!(request.data["server_id"], "t26", "{request:?}");
    assert_eq!(request.data["message"], "What is your name?", "{request:?}");
    let answer =
        json!({"req_id": request.data["id"], "action": "accept", "content": {"name": name}});
    let (status, body) = app
        .post("/v1/elicitation/responses", &app.alice, answer)
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
}

/// A 2026-07-28 server that offers the tasks extension (`tasks_server_2026.py`) runs a task call
/// as its own task: the call declares the extension and gets a handle, which is polled with
/// `tasks/get` to its result; the input the task waits for reaches the agent's event stream and
/// goes back with `tasks/update`; a cancel reaches the server as `tasks/cancel`. A plain call of
/// the same tool is answered in the call (its input-required round included), as no task.
#[tokio::test]
async fn a_2026_server_with_the_tasks_extension_runs_the_call_as_its_task() {
    let app = spawn_app().await;
    let marks = tempfile::NamedTempFile::new().unwrap();
    let peer = tasks_server_2026(marks.path()).await;
    let server = app
        .register_server(json!({
            "server_id": "t26", "transport": "http", "url": peer.url,
            "protocol_version": "2026-07-28"
        }))
        .await;
    assert_eq!(server["mcp_version"], "2026-07-28", "{server}");
    let mut events = EventStream::open(&app, &app.alice, None).await;

    let created = start(
        &app,
        &app.alice,
        "t26__slow_task",
        json!({"seconds": 1}),
        60_000,
    )
    .await;
    let task_id = created["task_id"].as_str().unwrap().to_owned();
    events
        .wait_for("the server's status message", WAIT, |m| {
            task_event(m, &task_id, "working")
                && m.data["params"]["status_message"] == "sleeping 1.0 s"
        })
        .await;
    let done = wait_status(&app, &app.alice, &task_id, "completed").await;
    assert_eq!(done["task"]["upstream"], true, "{done}");
    let (status, result) = app
        .get(&format!("/v1/tasks/{task_id}/result"), &app.alice)
        .await;
    assert_eq!(status, StatusCode::OK, "{result}");
    assert_eq!(result["content"][0]["text"], "done", "{result}");

    // The server's question, asked while its task waits.
    let created = start(
        &app,
        &app.alice,
        "t26__ask_sum",
        json!({"a": 1, "b": 2}),
        60_000,
    )
    .await;
    let task_id = created["task_id"].as_str().unwrap().to_owned();
    events
        .wait_for("the wait for the agent's answer", WAIT, |m| {
            task_event(m, &task_id, "input_required")
        })
        .await;
    give_name(&app, &mut events, "Ada").await;
    let done = wait_status(&app, &app.alice, &task_id, "completed").await;
    assert_eq!(done["task"]["upstream"], true, "{done}");
    let (_, result) = app
        .get(&format!("/v1/tasks/{task_id}/result"), &app.alice)
        .await;
    assert_eq!(result["content"][0]["text"], "Ada: a+b=3", "{result}");

    // Cancelled here, cancelled there, once.
    let created = start(
        &app,
        &app.alice,
        "t26__slow_task",
        json!({"seconds": 60}),
        60_000,
    )
    .await;
    let task_id = created["task_id"].as_str().unwrap().to_owned();
    wait_upstream(&app, &app.alice, &task_id).await;
    let (status, body) = app
        .delete(&format!("/v1/tasks/{task_id}"), &app.alice)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    wait_until("the server told of the cancel", WAIT, async || {
        let noted = std::fs::read_to_string(marks.path()).unwrap();
        match noted.lines().collect::<Vec<_>>() {
            lines if lines.len() == 1 => Ok(()),
            lines => Err(format!("{lines:?}")),
        }
    })
    .await;

    // A plain call: answered in the call, its question asked on the event stream.
    let call = call_in_background(&app, &app.alice, "t26__ask_sum", json!({"a": 2, "b": 3}));
    give_name(&app, &mut events, "Bea").await;
    let (status, result) = call.await.unwrap();
    assert_eq!(status, StatusCode::OK, "{result}");
    assert_eq!(result["content"][0]["text"], "Bea: a+b=5", "{result}");
    assert_eq!(answer(&app, "t26__tasks_made").await, "3");
    app.stop().await;
}
