//! Interceptors (`[[hooks]]`): a hook of our own (tests/peers/hook_server.py) denies arguments
//! holding `DROP TABLE` and redacts e-mail addresses in results, for tool calls, resource reads
//! and prompt gets, on REST, `/v1/a2e` and `/mcp` (a 2025 session and a stateless 2026 client,
//! the catalogue and the meta-tools), and for tasks; a hook that is down or late fails closed
//! (or open when told); every decision but an allow is audited, without the values.

use std::time::{Duration, Instant};

use mcp_bridge::config::{HookConfig, HookKind, HookPhase, OnError};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;
use crate::mcp::run_peer;

const SQL: &str = "SQL statements are not allowed in arguments";

/// The hook fixture, listening.
async fn hook_server() -> Peer {
    let mut command = tokio::process::Command::new(python());
    command.arg(peers_dir().join("hook_server.py"));
    reporting_peer(command, "", "http").await
}

/// A hook named `name` at `url`, for every phase and kind.
fn hook(name: &str, url: String) -> HookConfig {
    HookConfig {
        name: name.into(),
        url,
        phases: vec![HookPhase::Before, HookPhase::After],
        kinds: vec![HookKind::Tool, HookKind::Resource, HookKind::Prompt],
        servers: Vec::new(),
        names: Vec::new(),
        timeout_ms: 2000,
        on_error: OnError::Deny,
        bearer: None,
        audit_allow: false,
    }
}

/// The service with `hooks`, the Python fixture registered as `py`.
async fn app_with(hooks: Vec<HookConfig>) -> TestApp {
    let app = TestApp::builder()
        .configure(move |config| config.hooks = hooks)
        .spawn()
        .await;
    app.register_server(py_stdio("py", &unique("hooks"))).await;
    app
}

/// The questions the hook fixture was asked.
async fn seen(peer: &Peer) -> Vec<Value> {
    let answer = reqwest::get(format!("{}/seen", peer.url)).await.unwrap();
    answer.json().await.unwrap()
}

/// The audit log's (action, target, detail), oldest first.
async fn audit(app: &TestApp) -> Vec<(String, String, String)> {
    let (status, body) = app.get("/v1/audit?limit=1000", &app.admin).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let mut entries: Vec<_> = body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let field = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
            (field("action"), field("target"), field("detail"))
        })
        .collect();
    entries.reverse();
    entries
}

/// Asserts `answer` is the 403 `denied_by_hook` of the guard hook.
fn assert_denied(what: &str, status: StatusCode, answer: &Value) {
    assert_eq!(status, StatusCode::FORBIDDEN, "{what}: {answer}");
    assert_eq!(answer["code"], "denied_by_hook", "{what}: {answer}");
    assert_eq!(answer["retryable"], false, "{what}: {answer}");
    let said = answer["error"].as_str().unwrap_or_default();
    assert!(
        said.contains("\"guard\"") && said.contains(SQL),
        "{what}: {answer}"
    );
}

#[tokio::test]
async fn a_hook_denies_and_redacts_on_rest_and_a2e() {
    let peer = hook_server().await;
    let mut guard = hook("guard", format!("{}/guard", peer.url));
    guard.bearer = Some("hook-secret-42".to_owned().into());
    let app = app_with(vec![guard]).await;
    let drop = json!({"text": "1; DROP TABLE users"});
    let email = json!({"text": "write to bob@example.com"});

    // A tool call: on REST and as the A2E message.
    let (status, answer) = app.call("py__echo", drop.clone()).await;
    assert_denied("REST call", status, &answer);
    let (status, answer) = app.call("py__echo", email.clone()).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer["content"][0]["text"], "write to [redacted]",
        "{answer}"
    );
    let message = |arguments: &Value| json!({"type": "tool/call/req", "id": "c1", "name": "py__echo", "arguments": arguments});
    let (status, answer) = app.post("/v1/a2e", &app.alice, message(&drop)).await;
    assert_denied("A2E call", status, &answer);
    assert_eq!(answer["type"], "tool/call/resp", "{answer}");
    let (status, answer) = app.post("/v1/a2e", &app.alice, message(&email)).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(
        answer["content"][0]["text"], "write to [redacted]",
        "{answer}"
    );

    // A resource read: the URI judged before, the contents after.
    let read = |uri: &str| json!({"type": "mcp/resource/read/req", "id": "r1", "uri": uri});
    let (status, answer) = app
        .post(
            "/v1/resources/read",
            &app.alice,
            read("fixture://note/DROP%20TABLE"),
        )
        .await;
    assert_denied("REST read", status, &answer);
    let (status, answer) = app
        .post("/v1/a2e", &app.alice, read("fixture://note/DROP%20TABLE"))
        .await;
    assert_denied("A2E read", status, &answer);
    for path in ["/v1/resources/read", "/v1/a2e"] {
        let (status, answer) = app
            .post(path, &app.alice, read("fixture://note/bob@example.com"))
            .await;
        assert_eq!(status, StatusCode::OK, "{path}: {answer}");
        assert_eq!(
            answer["contents"][0]["text"], "note [redacted]",
            "{path}: {answer}"
        );
    }

    // A prompt get.
    let prompt = |name: &str| json!({"type": "mcp/prompt/get/req", "id": "p1", "name": "greet", "arguments": {"name": name}});
    for path in ["/v1/prompts/get", "/v1/a2e"] {
        let (status, answer) = app.post(path, &app.alice, prompt("DROP TABLE x")).await;
        assert_denied(path, status, &answer);
        let (status, answer) = app.post(path, &app.alice, prompt("bob@example.com")).await;
        assert_eq!(status, StatusCode::OK, "{path}: {answer}");
        let text = answer["messages"][0]["content"]["text"].clone();
        assert_eq!(text, "Hello, [redacted]!", "{path}: {answer}");
    }

    // What the hook was asked: the caller, the canonical names, the server, its bearer.
    let asked = seen(&peer).await;
    let first = &asked[0];
    assert_eq!(first["authorization"], "Bearer hook-secret-42", "{first}");
    let body = &first["body"];
    assert_eq!(
        (
            &body["phase"],
            &body["kind"],
            &body["name"],
            &body["server_id"]
        ),
        (
            &json!("before"),
            &json!("tool"),
            &json!("py__echo"),
            &json!("py")
        ),
        "{body}"
    );
    assert_eq!(
        body["caller"],
        json!({"id": "alice", "roles": []}),
        "{body}"
    );
    assert_eq!(body["arguments"], drop, "{body}");
    let names: Vec<(&str, &str, &str)> = asked
        .iter()
        .map(|q| {
            let b = &q["body"];
            let field = |k: &str| b[k].as_str().unwrap_or_default();
            (field("phase"), field("kind"), field("name"))
        })
        .collect();
    for expected in [
        ("after", "tool", "py__echo"),
        ("before", "resource", "fixture://note/bob@example.com"),
        ("after", "resource", "fixture://note/bob@example.com"),
        ("before", "prompt", "py__greet"),
        ("after", "prompt", "py__greet"),
    ] {
        assert!(names.contains(&expected), "{expected:?} in {names:?}");
    }
    // A denied request never reached its server: no after phase for it.
    let denied_after = asked
        .iter()
        .filter(|q| q["body"]["phase"] == "after" && q["body"].to_string().contains("DROP"));
    assert_eq!(denied_after.count(), 0, "{asked:?}");

    // Denials and modifications are audited by hook and phase, never with the values.
    let audited = audit(&app).await;
    let hooks: Vec<_> = audited
        .iter()
        .filter(|(a, _, _)| a.starts_with("hook."))
        .collect();
    assert!(
        hooks.iter().any(|(a, t, d)| a == "hook.deny"
            && t == "py__echo"
            && d.contains("hook guard, before tool of server py: deny: ")
            && d.contains(SQL)),
        "{hooks:?}"
    );
    assert!(
        hooks.iter().any(|(a, t, d)| a == "hook.modify"
            && t == "py__greet"
            && d == "hook guard, after prompt of server py: modify (result)"),
        "{hooks:?}"
    );
    assert_eq!(
        hooks.iter().filter(|(a, _, _)| a == "hook.deny").count(),
        6,
        "{hooks:?}"
    );
    assert_eq!(
        hooks.iter().filter(|(a, _, _)| a == "hook.modify").count(),
        6,
        "{hooks:?}"
    );
    assert!(
        !hooks.iter().any(|(a, _, _)| a == "hook.allow"),
        "allows are not audited"
    );
    for (_, _, detail) in &hooks {
        assert!(
            !detail.contains("bob@") && !detail.contains("DROP") && !detail.contains("hook-secret"),
            "{detail}"
        );
    }

    // Counted by hook and decision.
    let metrics = app
        .client
        .get(format!("{}/metrics", app.base))
        .send()
        .await
        .unwrap();
    let text = metrics.text().await.unwrap();
    for line in [
        r#"mcp_bridge_hook_decisions_total{hook="guard",decision="deny"} 6"#,
        r#"mcp_bridge_hook_decisions_total{hook="guard",decision="modify"} 6"#,
    ] {
        assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
    }
    assert!(
        text.contains("mcp_bridge_hook_duration_seconds_bucket{hook=\"guard\""),
        "{text}"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_hook_holds_on_mcp_in_both_eras_and_through_the_meta_tools() {
    let peer = hook_server().await;
    let app = app_with(vec![hook("guard", format!("{}/guard", peer.url))]).await;
    let steps = json!([
        {"tool": "py__echo", "arguments": {"text": "DROP TABLE users"}},
        {"tool": "py__echo", "arguments": {"text": "mail bob@example.com"}},
        {"read": "fixture://note/DROP%20TABLE"},
        {"read": "fixture://note/bob@example.com"},
        {"prompt": "py__greet", "arguments": {"name": "DROP TABLE x"}},
        {"prompt": "py__greet", "arguments": {"name": "bob@example.com"}},
    ])
    .to_string();
    let url = format!("{}/mcp", app.base);
    for mode in ["legacy", "auto"] {
        let report = run_peer("mcp_steps.py", &[&url, &app.alice, mode, &steps]).await;
        let step = |i: usize| report["steps"][i].clone();
        // A tool's refusal is a tool error the model reads, with the code in `_meta`.
        let denied = step(0)["result"].clone();
        assert_eq!(denied["isError"], true, "{mode}: {report}");
        let said = denied["content"][0]["text"].as_str().unwrap_or_default();
        assert!(said.contains(SQL), "{mode}: {report}");
        assert_eq!(
            denied["_meta"]["mcp-bridge/error"]["code"], "denied_by_hook",
            "{mode}: {report}"
        );
        let text = &step(1)["result"]["content"][0]["text"];
        assert_eq!(text, "mail [redacted]", "{mode}: {report}");
        // A read's or a get's refusal is a JSON-RPC error carrying the code.
        for i in [2, 4] {
            let error = step(i)["error"].clone();
            assert_eq!(error["code"], -32600, "{mode} step {i}: {report}");
            assert!(
                error["message"].as_str().unwrap().contains(SQL),
                "{mode}: {report}"
            );
            assert_eq!(error["data"]["code"], "denied_by_hook", "{mode}: {report}");
        }
        let read = &step(3)["result"]["contents"][0]["text"];
        assert_eq!(read, "note [redacted]", "{mode}: {report}");
        let rendered = &step(5)["result"]["messages"][0]["content"]["text"];
        assert_eq!(rendered, "Hello, [redacted]!", "{mode}: {report}");
    }

    // The meta-tool calling a tool is the tool's call.
    let deferred = format!("{}/mcp?deferred=1", app.base);
    let steps = json!([
        {"tool": "call_tool", "arguments": {"name": "py__echo", "arguments": {"text": "drop table t"}}},
        {"tool": "call_tool", "arguments": {"name": "py__echo", "arguments": {"text": "ann@example.org"}}},
    ])
    .to_string();
    let report = run_peer("mcp_steps.py", &[&deferred, &app.alice, "legacy", &steps]).await;
    let denied = &report["steps"][0]["result"];
    assert_eq!(denied["isError"], true, "{report}");
    assert_eq!(
        denied["_meta"]["mcp-bridge/error"]["code"], "denied_by_hook",
        "{report}"
    );
    let text = &report["steps"][1]["result"]["content"][0]["text"];
    assert_eq!(text, "[redacted]", "{report}");

    // A stateless call made as raw HTTP, for the answer's shape on the wire.
    let answer = app
        .stateless_mcp_call(
            &app.alice,
            "py__echo",
            json!({"text": "DROP TABLE a"}),
            json!({}),
        )
        .await;
    assert_eq!(answer.status(), StatusCode::OK);
    let body: Value = answer.json().await.unwrap();
    assert_eq!(body["result"]["isError"], true, "{body}");
    app.stop().await;
}

#[tokio::test]
async fn a_task_is_judged_as_a_call_even_where_its_server_runs_tasks() {
    let peer = hook_server().await;
    let cancelled = tempfile::NamedTempFile::new().unwrap();
    let app = app_with(vec![hook("guard", format!("{}/guard", peer.url))]).await;
    app.register_server(tasks_stdio("tk", cancelled.path()))
        .await;
    let start = |name: &str, arguments: Value| json!({"name": name, "arguments": arguments, "task": {"ttl": 60_000}});
    let wait_ended = async |task_id: &str| {
        let path = format!("/v1/tasks/{task_id}");
        wait_until(&format!("task {task_id} ending"), WAIT, async || {
            let (_, body) = app.get(&path, &app.alice).await;
            match body["task"]["status"].as_str() {
                Some("completed" | "failed") => Ok(body),
                _ => Err(body.to_string()),
            }
        })
        .await
    };
    let mut ended = Vec::new();
    for (name, arguments) in [
        ("py__echo", json!({"text": "DROP TABLE users"})),
        ("py__echo", json!({"text": "to bob@example.com"})),
        (
            "tk__slow_task",
            json!({"seconds": 0.1, "note": "DROP TABLE t"}),
        ),
        ("tk__slow_task", json!({"seconds": 0.1})),
    ] {
        let (status, created) = app
            .post("/v1/tools/call", &app.alice, start(name, arguments))
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{created}");
        let task_id = created["task_id"].as_str().unwrap().to_owned();
        let task = wait_ended(&task_id).await;
        let (status, result) = app
            .get(&format!("/v1/tasks/{task_id}/result"), &app.alice)
            .await;
        ended.push((task, status, result));
    }
    for i in [0, 2] {
        let (task, status, result) = &ended[i];
        assert_eq!(task["task"]["status"], "failed", "{task}");
        assert_denied("a task", *status, result);
    }
    assert_eq!(
        ended[1].2["content"][0]["text"], "to [redacted]",
        "{:?}",
        ended[1]
    );
    let (task, status, result) = &ended[3];
    assert_eq!(*status, StatusCode::OK, "{result}");
    assert_eq!(result["content"][0]["text"], "done", "{result}");
    // Run by the bridge, so that its hooks saw the result as well.
    assert_eq!(task["task"]["upstream"], false, "{task}");
    let asked = seen(&peer).await;
    let after = asked
        .iter()
        .filter(|q| q["body"]["name"] == "tk__slow_task" && q["body"]["phase"] == "after");
    assert_eq!(after.count(), 1, "{asked:?}");
    app.stop().await;
}

#[tokio::test]
async fn a_hook_that_fails_fails_closed_unless_told_to_fail_open() {
    let peer = hook_server().await;
    let closed = format!("http://127.0.0.1:{}/hook", free_port());
    let only = |mut hook: HookConfig, name: &str| {
        hook.names = vec![name.to_owned()];
        hook
    };
    let down = only(hook("down", closed.clone()), "py__echo");
    let mut open = only(hook("open", closed), "py__add");
    open.on_error = OnError::Allow;
    let mut late = only(hook("late", format!("{}/slow", peer.url)), "py__cwd");
    late.timeout_ms = 300;
    let broken = only(hook("broken", format!("{}/broken", peer.url)), "py__getenv");
    let app = app_with(vec![down, open, late, broken]).await;

    let (status, answer) = app.call("py__echo", json!({"text": "hi"})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
    assert_eq!(answer["code"], "denied_by_hook", "{answer}");
    let said = answer["error"].as_str().unwrap();
    assert!(
        said.contains("\"down\"") && said.contains("cannot be reached"),
        "{said}"
    );
    assert!(
        !said.contains("127.0.0.1"),
        "the hook's address is not shown: {said}"
    );

    let (status, answer) = app.call("py__add", json!({"a": 1, "b": 2})).await;
    assert_eq!(status, StatusCode::OK, "fails open: {answer}");
    assert_eq!(answer["structured_content"]["result"], 3, "{answer}");

    let started = Instant::now();
    let (status, answer) = app.call("py__cwd", json!({})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
    assert!(
        answer["error"]
            .as_str()
            .unwrap()
            .contains("did not answer within 300 ms"),
        "{answer}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );

    let (status, answer) = app.call("py__getenv", json!({"name": "HOME"})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{answer}");
    assert!(
        answer["error"].as_str().unwrap().contains("not a decision"),
        "{answer}"
    );

    let failed: Vec<_> = audit(&app)
        .await
        .into_iter()
        .filter(|(action, _, _)| action == "hook.failed")
        .map(|(_, target, detail)| (target, detail))
        .collect();
    for (target, decided) in [
        (
            "py__echo",
            "hook down, before tool of server py: failed, so deny: it cannot be reached",
        ),
        (
            "py__add",
            "hook open, before tool of server py: failed, so allow: it cannot be reached",
        ),
        (
            "py__add",
            "hook open, after tool of server py: failed, so allow: it cannot be reached",
        ),
        (
            "py__cwd",
            "hook late, before tool of server py: failed, so deny: it did not answer within 300 ms",
        ),
    ] {
        assert!(
            failed.iter().any(|(t, d)| t == target && d == decided),
            "{target} {decided} in {failed:?}"
        );
    }
    app.stop().await;
}

#[tokio::test]
async fn a_bad_hook_refuses_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = config(dir.path());
    settings.hooks = vec![hook("guard", "ftp://127.0.0.1/hook".into())];
    let refused = mcp_bridge::startup::Application::build(settings).await;
    let said = refused
        .err()
        .expect("a bad hook refuses the start")
        .to_string();
    assert!(
        said.contains("hooks") && said.contains("guard") && said.contains("http(s)"),
        "{said}"
    );
}
