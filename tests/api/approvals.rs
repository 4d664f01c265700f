//! Calls held for a person (issue 40, item 6): a policy's `approve` rule makes an intern's call
//! a task in `input_required`; a lead is told and approves it, and the upstream (the Python
//! fixture, counting its `echo` calls in a file) runs it exactly once with the arguments held;
//! a second decision, other arguments or a decision after the time ran out are 409 and run
//! nothing; a denial and the time running out fail the task `forbidden`; the held call waits
//! through a restart; a 2026 `/mcp` client with the tasks extension sees `input_required`, then
//! the result.

use std::path::Path;
use std::sync::Arc;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

/// A token for `sub` with these roles.
fn token(sub: &str, roles: &[&str]) -> String {
    let body = json!({
        "sub": sub,
        "exp": jsonwebtoken::get_current_timestamp() + 3600,
        "roles": roles,
    });
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &body,
        &jsonwebtoken::EncodingKey::from_secret(SECRET.as_bytes()).unwrap(),
    )
    .unwrap()
}

/// The calls of `echo` the fixture ran, from its ledger.
fn runs(ledger: &Path) -> usize {
    std::fs::read_to_string(ledger)
        .unwrap_or_default()
        .lines()
        .count()
}

/// The fixture as `py`, counting its `echo` calls in `ledger`; the policy `hold` holding the
/// interns' calls of `py__echo` for a lead, `expires` long.
async fn setup(app: &TestApp, ledger: &Path, expires: &str) {
    let mut config = py_stdio("py", &unique("approve"));
    config["env"]["FIXTURE_CALL_LOG"] = json!(ledger.to_str().unwrap());
    app.register_server(config).await;
    let policy = json!({
        "match": {"roles": ["intern"]},
        "approve": {"tools": ["py__echo"], "approvers": {"roles": ["lead"]}, "expires": expires},
    });
    let (status, body) = app.put("/v1/policies/hold", &app.admin, policy).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

/// The intern's plain call of `py__echo`: answered 202 at once with its task, held.
async fn held_call(app: &TestApp, intern: &str, text: &str) -> String {
    let (status, body) = app.call_as(intern, "py__echo", json!({"text": text})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    assert_eq!(body["type"], "task/create/resp", "{body}");
    assert_eq!(body["status"], "input_required", "{body}");
    body["task_id"].as_str().unwrap().to_owned()
}

/// The approver's decision on `task_id`.
async fn decide(
    app: &TestApp,
    approver: &str,
    task_id: &str,
    decision: &str,
    sha: &str,
) -> (StatusCode, Value) {
    let body = json!({"decision": decision, "args_sha256": sha, "reason": "not today"});
    app.post(&format!("/v1/approvals/{task_id}"), approver, body)
        .await
}

/// Waits until the task's status is `status`; its last read.
async fn wait_task(app: &TestApp, token: &str, task_id: &str, status: &str) -> Value {
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

/// The held calls `approver` may decide on.
async fn pending(app: &TestApp, approver: &str) -> Vec<Value> {
    let (status, body) = app.get("/v1/approvals", approver).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["approvals"].as_array().unwrap().clone()
}

async fn audit(app: &TestApp) -> Vec<(String, String)> {
    let (status, body) = app.get("/v1/audit?limit=1000", &app.admin).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let field = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
            (field("actor"), field("action"))
        })
        .collect()
}

#[tokio::test]
async fn an_approved_call_runs_once_with_the_arguments_held() {
    let app = spawn_app().await;
    let ledger = tempfile::NamedTempFile::new().unwrap();
    setup(&app, ledger.path(), "10m").await;
    let (intern, lead) = (token("ivy", &["intern"]), token("lee", &["lead"]));
    let mut lead_events = EventStream::open(&app, &lead, None).await;
    let mut intern_events = EventStream::open(&app, &intern, None).await;

    let task_id = held_call(&app, &intern, "ship it").await;
    let told = lead_events
        .wait_for("bridge/approval_required", WAIT, |m| {
            is_push(m, "bridge/approval_required")
        })
        .await;
    let params = &told.data["params"];
    assert_eq!(params["task_id"], task_id.as_str(), "{params}");
    assert_eq!(params["caller"], "ivy", "{params}");
    assert_eq!(params["tool"], "py__echo", "{params}");
    assert_eq!(params["arguments"], json!({"text": "ship it"}), "{params}");
    assert_eq!(params["policy"], "hold", "{params}");
    assert_eq!(params["policy_version"].as_str().unwrap().len(), 16);
    assert!(params["expires_at"].as_f64().unwrap() > 0.0, "{params}");
    let sha = params["args_sha256"].as_str().unwrap().to_owned();
    assert_eq!(sha.len(), 64);
    // Held, nothing ran: the task waits, listed for the lead only.
    let task = wait_task(&app, &intern, &task_id, "input_required").await;
    assert!(
        task["task"]["status_message"]
            .as_str()
            .unwrap()
            .contains("approval"),
        "{task}"
    );
    assert_eq!(runs(ledger.path()), 0);
    let listed = pending(&app, &lead).await;
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["args_sha256"], sha.as_str());
    assert!(pending(&app, &intern).await.is_empty());
    assert!(pending(&app, &app.alice).await.is_empty());

    // Not an approver, and other arguments: refused, nothing runs.
    let (status, body) = decide(&app, &intern, &task_id, "approve", &sha).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["code"], "forbidden", "{body}");
    let other = "0".repeat(64);
    let (status, body) = decide(&app, &lead, &task_id, "approve", &other).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["code"], "conflict", "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("args_sha256"),
        "{body}"
    );
    assert_eq!(runs(ledger.path()), 0);

    // Approved: the call runs once, and its result is the intern's task's.
    let (status, body) = decide(&app, &lead, &task_id, "approve", &sha).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["task"]["status"], "working", "{body}");
    wait_task(&app, &intern, &task_id, "completed").await;
    let (status, result) = app
        .get(&format!("/v1/tasks/{task_id}/result"), &intern)
        .await;
    assert_eq!(status, StatusCode::OK, "{result}");
    assert_eq!(result["content"][0]["text"], "ship it", "{result}");
    intern_events
        .wait_for("the intern's completed event", WAIT, |m| {
            is_push(m, "bridge/task_status")
                && m.data["params"]["task_id"] == task_id.as_str()
                && m.data["params"]["status"] == "completed"
        })
        .await;
    assert_eq!(runs(ledger.path()), 1);

    // A second decision, either way, is 409 and runs nothing.
    for decision in ["approve", "deny"] {
        let (status, body) = decide(&app, &lead, &task_id, decision, &sha).await;
        assert_eq!(status, StatusCode::CONFLICT, "{body}");
        assert!(
            body["error"].as_str().unwrap().contains("already approved"),
            "{body}"
        );
    }
    assert!(pending(&app, &lead).await.is_empty());
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(runs(ledger.path()), 1);
    let audit = audit(&app).await;
    for (actor, action) in [("ivy", "tool.call.held"), ("lee", "tool.call.approved")] {
        assert!(
            audit.contains(&(actor.to_owned(), action.to_owned())),
            "{actor} {action}: {audit:?}"
        );
    }
    app.stop().await;
}

#[tokio::test]
async fn a_held_call_on_every_rest_path_and_one_approved_by_itself() {
    let app = spawn_app().await;
    let ledger = tempfile::NamedTempFile::new().unwrap();
    setup(&app, ledger.path(), "10m").await;
    // An intern who is also a lead may decide on others' calls, never approve its own.
    let both = token("ivy", &["intern", "lead"]);
    let task_id = held_call(&app, &both, "mine").await;
    let sha = pending(&app, &both).await[0]["args_sha256"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, body) = decide(&app, &both, &task_id, "approve", &sha).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("own call"),
        "{body}"
    );
    // A task asked for, and `/v1/a2e`: held the same way.
    let intern = token("ian", &["intern"]);
    let body = json!({"name": "py__echo", "arguments": {"text": "t"}, "task": {"ttl": 60000}});
    let (status, created) = app.post("/v1/tools/call", &intern, body).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{created}");
    assert_eq!(created["status"], "input_required", "{created}");
    let body = json!({"type": "tool/call/req", "name": "py__echo", "arguments": {"text": "a"}});
    let (status, created) = app.post("/v1/a2e", &intern, body).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{created}");
    assert_eq!(created["status"], "input_required", "{created}");
    assert_eq!(pending(&app, &token("lee", &["lead"])).await.len(), 3);
    // Others' calls of the tool, and the intern's calls of other tools, are not held.
    let (status, body) = app.call("py__echo", json!({"text": "free"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = app
        .call_as(&intern, "py__add", json!({"a": 1, "b": 2}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(runs(ledger.path()), 1);
    app.stop().await;
}

#[tokio::test]
async fn a_denied_call_and_one_past_its_time_fail_forbidden() {
    let app = spawn_app().await;
    let ledger = tempfile::NamedTempFile::new().unwrap();
    setup(&app, ledger.path(), "2s").await;
    let (intern, lead) = (token("ivy", &["intern"]), token("lee", &["lead"]));
    let denied = held_call(&app, &intern, "drop it").await;
    let late = held_call(&app, &intern, "later").await;
    let listed = pending(&app, &lead).await;
    let sha = |task_id: &str| {
        listed.iter().find(|a| a["task_id"] == task_id).unwrap()["args_sha256"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let (denied_sha, late_sha) = (sha(&denied), sha(&late));

    let (status, body) = decide(&app, &lead, &denied, "deny", &denied_sha).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["task"]["status"], "failed", "{body}");
    let (status, result) = app
        .get(&format!("/v1/tasks/{denied}/result"), &intern)
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{result}");
    assert_eq!(result["code"], "forbidden", "{result}");
    assert_eq!(result["error"], "denied by lee: not today", "{result}");
    let (status, body) = decide(&app, &lead, &denied, "approve", &denied_sha).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");

    // No one decided in time: failed `forbidden`, and approving it now runs nothing.
    let task = wait_task(&app, &intern, &late, "failed").await;
    assert!(
        task["task"]["status_message"]
            .as_str()
            .unwrap()
            .contains("in time"),
        "{task}"
    );
    let (status, result) = app.get(&format!("/v1/tasks/{late}/result"), &intern).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{result}");
    let (status, body) = decide(&app, &lead, &late, "approve", &late_sha).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("expired"),
        "{body}"
    );
    assert_eq!(runs(ledger.path()), 0);
    let audit = audit(&app).await;
    let denials = audit
        .iter()
        .filter(|(_, a)| a == "tool.call.denied")
        .count();
    assert_eq!(denials, 2, "{audit:?}");
    app.stop().await;
}

#[tokio::test]
async fn a_held_call_waits_through_a_restart() {
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let ledger = tempfile::NamedTempFile::new().unwrap();
    let app = spawn_app_in(data_dir.clone()).await;
    setup(&app, ledger.path(), "10m").await;
    let (intern, lead) = (token("ivy", &["intern"]), token("lee", &["lead"]));
    let task_id = held_call(&app, &intern, "after the restart").await;
    app.stop().await;

    let app = spawn_app_in(data_dir).await;
    app.wait_status("py", "ready", WAIT).await;
    // Past the sweeps that end what the bridge was running when it stopped.
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    let task = wait_task(&app, &intern, &task_id, "input_required").await;
    assert!(
        task["task"]["status_message"]
            .as_str()
            .unwrap()
            .contains("approval")
    );
    let listed = pending(&app, &lead).await;
    assert_eq!(listed.len(), 1, "{listed:?}");
    let sha = listed[0]["args_sha256"].as_str().unwrap();
    let (status, body) = decide(&app, &lead, &task_id, "approve", sha).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    wait_task(&app, &intern, &task_id, "completed").await;
    assert_eq!(runs(ledger.path()), 1);
    app.stop().await;
}

/// A 2026-07-28 client declaring the tasks extension gets the held call's task handle, polls
/// it `input_required` until the lead approves, then gets the result.
#[tokio::test]
async fn a_2026_client_with_the_tasks_extension_sees_input_required_then_the_result() {
    let app = Arc::new(spawn_app().await);
    let ledger = tempfile::NamedTempFile::new().unwrap();
    setup(&app, ledger.path(), "10m").await;
    let (intern, lead) = (token("ivy", &["intern"]), token("lee", &["lead"]));
    let client = {
        let (app, intern) = (app.clone(), intern.clone());
        tokio::spawn(async move {
            let args = json!({"text": "over mcp"}).to_string();
            crate::mcp_tasks::tasks_ext_client(&app, &intern, &["run", "py__echo", &args]).await
        })
    };
    let listed = wait_until("the held /mcp call", WAIT, async || {
        let listed = pending(&app, &lead).await;
        match listed.len() {
            1 => Ok(listed),
            n => Err(format!("{n} held")),
        }
    })
    .await;
    // Let the client poll it held a while.
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    assert_eq!(runs(ledger.path()), 0);
    let (task_id, sha) = (
        listed[0]["task_id"].as_str().unwrap(),
        listed[0]["args_sha256"].as_str().unwrap(),
    );
    let (status, body) = decide(&app, &lead, task_id, "approve", sha).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let report = client.await.unwrap();
    assert_eq!(report["handle"]["status"], "input_required", "{report}");
    assert_eq!(report["statuses"][0], "input_required", "{report}");
    let task = &report["task"];
    assert_eq!(task["status"], "completed", "{report}");
    assert_eq!(task["result"]["content"][0]["text"], "over mcp", "{report}");
    assert_eq!(runs(ledger.path()), 1);
}

/// Replicas (skipped unless `MCP_BRIDGE_TEST_POSTGRES` and `MCP_BRIDGE_TEST_NATS` are set): a
/// call held on one replica is told to an approver streaming from the other; two approvals at
/// once on two replicas run it once; and a call held on a replica that is then killed stays
/// pending, and approved on the survivor runs once there.
#[tokio::test]
async fn across_replicas_a_held_call_runs_once_and_outlives_its_replica() {
    use crate::cluster::Replicas;
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let mut a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let ledger = tempfile::NamedTempFile::new().unwrap();
    setup(&a.app, ledger.path(), "10m").await;
    b.wait_held("py", "a", WAIT).await;
    let (intern, lead) = (token("ivy", &["intern"]), token("lee", &["lead"]));
    let mut lead_events = EventStream::open(&b.app, &lead, None).await;

    let first = held_call(&a.app, &intern, "one").await;
    let told = lead_events
        .wait_for("bridge/approval_required on the other replica", WAIT, |m| {
            is_push(m, "bridge/approval_required") && m.data["params"]["task_id"] == first.as_str()
        })
        .await;
    let sha = told.data["params"]["args_sha256"]
        .as_str()
        .unwrap()
        .to_owned();
    let (on_a, on_b) = tokio::join!(
        decide(&a.app, &lead, &first, "approve", &sha),
        decide(&b.app, &lead, &first, "approve", &sha),
    );
    let mut statuses = [on_a.0, on_b.0];
    statuses.sort();
    assert_eq!(
        statuses,
        [StatusCode::OK, StatusCode::CONFLICT],
        "{on_a:?} {on_b:?}"
    );
    wait_task(&b.app, &intern, &first, "completed").await;
    assert_eq!(runs(ledger.path()), 1);

    // Held on a, which is killed: pending on b, and run there once approved.
    let second = held_call(&a.app, &intern, "two").await;
    a.bridge.signal("KILL");
    assert!(a.bridge.exited_within(WAIT).await.is_some());
    b.wait_held("py", "b", WAIT + WAIT).await;
    let listed = pending(&b.app, &lead).await;
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["task_id"], second.as_str());
    let task = wait_task(&b.app, &intern, &second, "input_required").await;
    assert!(
        task["task"]["status_message"]
            .as_str()
            .unwrap()
            .contains("approval")
    );
    let sha = listed[0]["args_sha256"].as_str().unwrap();
    let (status, body) = decide(&b.app, &lead, &second, "approve", sha).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    wait_task(&b.app, &intern, &second, "completed").await;
    assert_eq!(runs(ledger.path()), 2);
}

/// A plain `/mcp` call (no task asked for) of a held tool, in both eras: a tool error result
/// that names the held task (in its text and `_meta`), which the lead then approves.
#[tokio::test]
async fn a_plain_mcp_call_is_held_and_named_in_a_tool_error() {
    let app = spawn_app().await;
    let ledger = tempfile::NamedTempFile::new().unwrap();
    setup(&app, ledger.path(), "10m").await;
    let (intern, lead) = (token("ivy", &["intern"]), token("lee", &["lead"]));
    for (mode, version) in [("legacy", "2025-11-25"), ("auto", "2026-07-28")] {
        let args = json!({"text": mode});
        let report = crate::mcp::mcp_client(&app, &intern, mode, "py__echo", args, &[]).await;
        assert_eq!(report["protocol_version"], version, "{report}");
        let result = &report["result"];
        assert_eq!(result["isError"], true, "{report}");
        let held = &result["_meta"]["mcp-bridge/held"];
        assert_eq!(held["status"], "input_required", "{report}");
        let task_id = held["taskId"].as_str().unwrap();
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(
            text.contains(task_id) && text.contains("approval"),
            "{report}"
        );
        let listed = pending(&app, &lead).await;
        let sha = listed.iter().find(|a| a["task_id"] == task_id).unwrap()["args_sha256"]
            .as_str()
            .unwrap()
            .to_owned();
        let (status, body) = decide(&app, &lead, task_id, "approve", &sha).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        wait_task(&app, &intern, task_id, "completed").await;
    }
    assert_eq!(runs(ledger.path()), 2);
    app.stop().await;
}
