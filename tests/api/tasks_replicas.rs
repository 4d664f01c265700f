//! Tasks across replicas when the replica running one is killed: a survivor takes the task over
//! once the dead replica's row in `replicas` has lapsed (the lease, 3 s here). A task its server
//! runs is polled from the survivor and completes; a call the dead replica made itself ends
//! `failed`, retryably, and is not made again (its start mark is not made again). A task moved
//! off the replica polling it is not cancelled there. Skipped unless `MCP_BRIDGE_TEST_POSTGRES`
//! and `MCP_BRIDGE_TEST_NATS` are set.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::cancel::Marks;
use crate::cluster::*;
use crate::helpers::*;

/// The task `task_id` as `app` shows it, once it has finished.
async fn finished(app: &TestApp, task_id: &str) -> Value {
    let path = format!("/v1/tasks/{task_id}");
    wait_until(
        &format!("task {task_id} finished"),
        WAIT + WAIT,
        async || {
            let (status, body) = app.get(&path, &app.alice).await;
            let done = ["completed", "failed", "cancelled"]
                .contains(&body["status"].as_str().unwrap_or(""));
            match status == StatusCode::OK && done {
                true => Ok(body),
                false => Err(format!("{status} {body}")),
            }
        },
    )
    .await
}

#[tokio::test]
async fn the_tasks_of_a_killed_replica_finish_on_a_survivor() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let mut a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let id = unique("kt");
    a.app.register_server(py_stdio(&id, &unique("ktask"))).await;
    let noted = tempfile::NamedTempFile::new().unwrap();
    let peer = tasks_server("http", noted.path()).await;
    let tasks_id = unique("ktk");
    a.app
        .register_server(json!({"server_id": tasks_id, "transport": "http", "url": peer.url}))
        .await;
    b.wait_held(&id, "a", WAIT).await;
    b.wait_held(&tasks_id, "a", WAIT).await;
    let start = async |name: String, arguments: Value| {
        let body = json!({"name": name, "arguments": arguments, "task": {"ttl": 120_000}});
        let (status, created) = a.app.post("/v1/tools/call", &a.app.alice, body).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{created}");
        created["task_id"].as_str().unwrap().to_owned()
    };
    // Run by a: a call a makes itself (in flight when a dies), and a task the server runs.
    let marks = Marks::new();
    let bridge_run = start(format!("{id}__slow"), marks.arguments()).await;
    let upstream = start(format!("{tasks_id}__slow_task"), json!({"seconds": 3})).await;
    marks.started.wait().await;
    // The fixture creates the mark at each start of the call: gone now, it comes back only if
    // the call is made again.
    std::fs::remove_file(&marks.started.path).unwrap();
    wait_until("the server's task polled", WAIT, async || {
        let (_, body) = b
            .app
            .get(&format!("/v1/tasks/{upstream}"), &b.app.alice)
            .await;
        match body["task"]["upstream"] == true {
            true => Ok(()),
            false => Err(body.to_string()),
        }
    })
    .await;

    a.bridge.signal("KILL");
    assert!(a.bridge.exited_within(WAIT).await.is_some());

    // The server's task completes, polled from b.
    let done = finished(&b.app, &upstream).await;
    assert_eq!(done["status"], "completed", "{done}");
    let (status, result) = b
        .app
        .get(&format!("/v1/tasks/{upstream}/result"), &b.app.alice)
        .await;
    assert_eq!(status, StatusCode::OK, "{result}");
    // The call a made ends failed, retryably, saying it may have run.
    let failed = finished(&b.app, &bridge_run).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    let (status, result) = b
        .app
        .get(&format!("/v1/tasks/{bridge_run}/result"), &b.app.alice)
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{result}");
    assert_eq!(result["retryable"], true, "{result}");
    let error = result["error"].as_str().unwrap_or_default();
    assert!(error.contains("may have run"), "{result}");
    // Started once: the survivor did not make the call again on taking it over, nor since.
    assert!(
        !std::path::Path::new(&marks.started.path).exists(),
        "the slow call was started again after the takeover"
    );
}

/// A task its server runs, moved off the replica polling it (as a takeover after a store outage
/// does): that replica stops polling it without cancelling it on the server, and the task
/// completes, polled from wherever its row names.
#[tokio::test]
async fn a_replica_stops_polling_a_task_moved_away_without_cancelling_it() {
    use sqlx::Connection;
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let noted = tempfile::NamedTempFile::new().unwrap();
    let peer = tasks_server("http", noted.path()).await;
    let tasks_id = unique("mtk");
    a.app
        .register_server(json!({"server_id": tasks_id, "transport": "http", "url": peer.url}))
        .await;
    b.wait_held(&tasks_id, "a", WAIT).await;
    let body = json!({"name": format!("{tasks_id}__slow_task"), "arguments": {"seconds": 6},
        "task": {"ttl": 120_000}});
    let (status, created) = a.app.post("/v1/tools/call", &a.app.alice, body).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{created}");
    let upstream = created["task_id"].as_str().unwrap().to_owned();
    wait_until("the server's task polled", WAIT, async || {
        let (_, body) = a
            .app
            .get(&format!("/v1/tasks/{upstream}"), &a.app.alice)
            .await;
        match body["task"]["upstream"] == true {
            true => Ok(()),
            false => Err(body.to_string()),
        }
    })
    .await;

    let mut db = sqlx::PgConnection::connect(&replicas.database)
        .await
        .unwrap();
    let moved = sqlx::query("UPDATE tasks SET replica = 'b' WHERE task_id = $1 AND replica = 'a'")
        .bind(&upstream)
        .execute(&mut db)
        .await
        .unwrap();
    assert_eq!(moved.rows_affected(), 1);

    let done = finished(&a.app, &upstream).await;
    assert_eq!(done["status"], "completed", "{done}");
    let cancels = std::fs::read_to_string(noted.path()).unwrap();
    assert_eq!(cancels, "", "the task was cancelled on its server");
}

/// A 2026 `/mcp` client's task, started on one replica and polled and answered on another (no
/// stickiness): the server's question, asked on the replica running the call, shows in
/// `tasks/get` on the other, and the answer given there reaches the call.
#[tokio::test]
async fn a_2026_clients_task_is_polled_and_answered_on_another_replica() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let id = unique("pi");
    a.app
        .register_server(py_stdio(&id, &unique("pinput")))
        .await;
    b.wait_held(&id, "a", WAIT).await;
    let name = format!("{id}__ask_name");
    let report =
        crate::mcp_tasks::tasks_ext_client(&a.app, &a.app.alice, &["start", &name, "{}"]).await;
    let task_id = report["handle"]["taskId"].as_str().unwrap().to_owned();
    let report = crate::mcp_tasks::tasks_ext_client(
        &b.app,
        &b.app.alice,
        &["poll", &task_id, "--answer", "Grace"],
    )
    .await;
    assert_eq!(report["task"]["status"], "completed", "{report}");
    assert_eq!(
        report["task"]["result"]["content"][0]["text"], "name: Grace",
        "{report}"
    );
    let asked = &report["input_requests"][0];
    assert_eq!(asked["method"], "elicitation/create", "{report}");
    assert_eq!(asked["params"]["message"], "What is your name?", "{report}");
}
