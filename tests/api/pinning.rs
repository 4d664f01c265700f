//! Tool pinning against a real server that rewrites a tool's description or title, or adds a
//! tool (tests/peers/rug_pull.py): `warn` tells the owner and audits, `quarantine` also hides the
//! tool until approved, and the pins survive a restart and an upgrade.

use std::path::Path;
use std::sync::Arc;

use mcp_bridge::config::ToolPinning;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;
use crate::mcp::mcp_client;

const HONEST: &str = "Tell the weather in a city.";

/// The stdio config of the rug-pull fixture, its version kept in `state`.
pub fn rug_stdio(server_id: &str, state: &Path) -> Value {
    json!({
        "server_id": server_id,
        "transport": "stdio",
        "cmd": [python(), peers_dir().join("rug_pull.py")],
        "env": { "RUG_STATE": state },
    })
}

async fn spawn_pinning(data_dir: &Arc<tempfile::TempDir>, pinning: ToolPinning) -> TestApp {
    TestApp::builder()
        .data_dir(data_dir)
        .configure(move |c| c.tool_pinning = pinning)
        .spawn()
        .await
}

/// The catalogue entry of `name` as alice lists it, if listed.
async fn listed(app: &TestApp, name: &str) -> Option<Value> {
    let tools = app.list_tools("?server_id=rug").await;
    tools.into_iter().find(|t| t["name"] == name)
}

/// The audit entries of `action`, newest first.
async fn audited(app: &TestApp, action: &str) -> Vec<Value> {
    let (status, body) = app.get("/v1/audit?limit=1000", &app.admin).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == action)
        .cloned()
        .collect()
}

/// Asks the fixture to change weather's description (it then says its list changed).
async fn swap(app: &TestApp) {
    app.call_tool("rug__swap", json!({})).await;
}

async fn wait_tool_changed(events: &mut EventStream) -> Value {
    let push = events
        .wait_for("bridge/tool_changed", WAIT, |m| {
            is_push(m, "bridge/tool_changed")
        })
        .await;
    push.data["params"].clone()
}

#[tokio::test]
async fn warn_tells_the_owner_with_a_diff_and_keeps_the_tool() {
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let app = spawn_pinning(&data_dir, ToolPinning::Warn).await;
    let state = data_dir.path().join("rug-state");
    app.register_server(rug_stdio("rug", &state)).await;
    // The owner (the admin registered it) listens; alice does not own it.
    let mut owner = EventStream::open(&app, &app.admin, None).await;
    let mut other = EventStream::open(&app, &app.alice, None).await;
    swap(&app).await;

    let params = wait_tool_changed(&mut owner).await;
    assert_eq!(params["server_id"], "rug", "{params}");
    assert_eq!(params["tool"], "weather", "{params}");
    assert_eq!(params["name"], "rug__weather", "{params}");
    assert_eq!(params["changed"], json!(["description"]), "{params}");
    assert_eq!(params["old"]["description"], HONEST, "{params}");
    let new = params["new"]["description"].as_str().unwrap();
    assert!(new.contains("id_rsa"), "{params}");
    assert_eq!(params["pinning"], "warn", "{params}");
    assert_eq!(params["quarantined"], false, "{params}");
    let others: Vec<_> = other.drain(std::time::Duration::from_millis(500)).await;
    assert!(
        !others.iter().any(|m| is_push(m, "bridge/tool_changed")),
        "only the owner is told: {others:?}"
    );

    let entries = audited(&app, "tool.changed").await;
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["target"], "rug");
    assert!(
        entries[0]["detail"]
            .as_str()
            .unwrap()
            .contains("\"weather\": description changed"),
        "{entries:?}"
    );
    // Still listed, as it is now, and callable.
    wait_until("the new description listed", WAIT, async || {
        match listed(&app, "rug__weather").await {
            Some(tool) if tool["description"] == new => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    let body = app.call_tool("rug__weather", json!({"city": "Oslo"})).await;
    assert_eq!(body["content"][0]["text"], "sunny in Oslo");
    // The change is pinned: a re-listing of the same definition says nothing more.
    let (status, body) = app
        .post("/v1/servers/rug/reconnect", &app.admin, json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let again = owner.drain(std::time::Duration::from_millis(500)).await;
    assert!(
        !again.iter().any(|m| is_push(m, "bridge/tool_changed")),
        "{again:?}"
    );
    assert_eq!(audited(&app, "tool.changed").await.len(), 1);
    app.stop().await;
}

#[tokio::test]
async fn quarantine_hides_a_changed_tool_until_its_owner_approves() {
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let app = spawn_pinning(&data_dir, ToolPinning::Quarantine).await;
    let state = data_dir.path().join("rug-state");
    app.register_server(rug_stdio("rug", &state)).await;
    assert!(listed(&app, "rug__weather").await.is_some());
    let mut owner = EventStream::open(&app, &app.admin, None).await;
    swap(&app).await;
    let params = wait_tool_changed(&mut owner).await;
    assert_eq!(params["quarantined"], true, "{params}");
    assert_eq!(params["pinning"], "quarantine", "{params}");

    // Hidden from REST and /mcp, and refused as if it did not exist.
    wait_until("the changed tool hidden", WAIT, async || {
        match listed(&app, "rug__weather").await {
            None => Ok(()),
            Some(tool) => Err(tool.to_string()),
        }
    })
    .await;
    assert!(listed(&app, "rug__ping").await.is_some());
    let (status, body) = app.call("rug__weather", json!({"city": "Oslo"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(body["code"], "mcp_tool_not_found", "{body}");
    let report = mcp_client(&app, &app.alice, "legacy", "rug__ping", json!({}), &[]).await;
    let tools = report["tools"].as_array().unwrap();
    assert!(tools.contains(&json!("rug__ping")), "{report}");
    assert!(!tools.contains(&json!("rug__weather")), "{report}");
    let resp = app
        .stateless_mcp_call(&app.alice, "rug__weather", json!({"city": "x"}), json!({}))
        .await;
    let answer: Value = resp.json().await.unwrap();
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("Unknown tool")),
        "{answer}"
    );
    assert_eq!(audited(&app, "tool.changed").await.len(), 1);

    // Another agent may not approve; an unknown server or tool is 404.
    let approve = "/v1/servers/rug/tools/weather/approve";
    let (status, body) = app.post(approve, &app.bob, json!({})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["code"], "forbidden", "{body}");
    let (status, body) = app
        .post("/v1/servers/rug/tools/nope/approve", &app.admin, json!({}))
        .await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("mcp_tool_not_found")),
        "{body}"
    );
    let (status, body) = app
        .post(
            "/v1/servers/gone/tools/weather/approve",
            &app.admin,
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(listed(&app, "rug__weather").await.is_none());

    // The owner approves: listed and callable again, with the new definition.
    let (status, body) = app.post(approve, &app.admin, json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["type"], "mcp/tool/approve/resp", "{body}");
    assert_eq!(body["approved"], true, "{body}");
    assert_eq!(body["tool"]["name"], "rug__weather", "{body}");
    assert!(
        body["tool"]["description"]
            .as_str()
            .unwrap()
            .contains("(v1)"),
        "{body}"
    );
    owner
        .wait_for("tools list_changed after approval", WAIT, |m| {
            is_push(m, "notifications/tools/list_changed")
        })
        .await;
    assert!(listed(&app, "rug__weather").await.is_some());
    app.call_tool("rug__weather", json!({"city": "Oslo"})).await;
    let report = mcp_client(
        &app,
        &app.alice,
        "legacy",
        "rug__weather",
        json!({"city": "Rome"}),
        &[],
    )
    .await;
    assert_eq!(
        report["result"]["content"][0]["text"], "sunny in Rome",
        "{report}"
    );
    let approvals = audited(&app, "tool.approve").await;
    assert_eq!(approvals.len(), 1, "{approvals:?}");
    assert_eq!(approvals[0]["actor"], "root");
    // Nothing pending now: the same answer, nothing approved, nothing audited.
    let (status, body) = app.post(approve, &app.admin, json!({})).await;
    assert_eq!(
        (status, &body["approved"]),
        (StatusCode::OK, &json!(false)),
        "{body}"
    );
    assert_eq!(audited(&app, "tool.approve").await.len(), 1);
    // Also as an A2E message.
    let (status, body) = app
        .post(
            "/v1/a2e",
            &app.admin,
            json!({"type": "mcp/tool/approve/req", "id": "a1", "server_id": "rug", "tool": "weather"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["req_id"], "a1", "{body}");
    app.stop().await;
}

#[tokio::test]
async fn pins_survive_a_restart() {
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let state = data_dir.path().join("rug-state");
    let app = spawn_pinning(&data_dir, ToolPinning::Quarantine).await;
    app.register_server(rug_stdio("rug", &state)).await;
    assert!(listed(&app, "rug__weather").await.is_some());
    app.stop().await;

    // Changed while the bridge was down: found against the stored pin.
    std::fs::write(&state, "1").unwrap();
    let app = spawn_pinning(&data_dir, ToolPinning::Quarantine).await;
    app.wait_status("rug", "ready", WAIT).await;
    wait_until("the changed tool held back", WAIT, async || {
        match listed(&app, "rug__ping").await.is_some()
            && listed(&app, "rug__weather").await.is_none()
        {
            true => Ok(()),
            false => Err("rug__weather still listed".into()),
        }
    })
    .await;
    let changed = wait_until("the change audited", WAIT, async || {
        let entries = audited(&app, "tool.changed").await;
        match entries.len() {
            1 => Ok(entries),
            n => Err(format!("{n} entries")),
        }
    })
    .await;
    assert!(changed[0]["detail"].as_str().unwrap().contains("held back"));
    let (status, body) = app
        .post(
            "/v1/servers/rug/tools/weather/approve",
            &app.admin,
            json!({}),
        )
        .await;
    assert_eq!(
        (status, &body["approved"]),
        (StatusCode::OK, &json!(true)),
        "{body}"
    );
    app.stop().await;

    // The approved definition is the pin now: listed after a restart, and not reported again.
    let app = spawn_pinning(&data_dir, ToolPinning::Quarantine).await;
    app.wait_status("rug", "ready", WAIT).await;
    let tool = listed(&app, "rug__weather").await.expect("listed");
    assert!(tool["description"].as_str().unwrap().contains("(v1)"));
    assert_eq!(audited(&app, "tool.changed").await.len(), 1);
    // And a change after the restart is still caught.
    let mut owner = EventStream::open(&app, &app.admin, None).await;
    swap(&app).await;
    let params = wait_tool_changed(&mut owner).await;
    assert!(
        params["old"]["description"]
            .as_str()
            .unwrap()
            .contains("(v1)"),
        "{params}"
    );
    assert!(
        params["new"]["description"]
            .as_str()
            .unwrap()
            .contains("(v2)")
    );
    wait_until("the changed tool hidden", WAIT, async || {
        match listed(&app, "rug__weather").await {
            None => Ok(()),
            Some(tool) => Err(tool.to_string()),
        }
    })
    .await;
    app.stop().await;
}

#[tokio::test]
async fn off_pins_nothing() {
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let app = spawn_pinning(&data_dir, ToolPinning::Off).await;
    app.register_server(rug_stdio("rug", &data_dir.path().join("rug-state")))
        .await;
    let mut owner = EventStream::open(&app, &app.admin, None).await;
    swap(&app).await;
    wait_until("the new description listed", WAIT, async || {
        match listed(&app, "rug__weather").await {
            Some(tool) if tool["description"] != HONEST => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    let seen = owner.drain(std::time::Duration::from_millis(300)).await;
    assert!(
        !seen.iter().any(|m| is_push(m, "bridge/tool_changed")),
        "{seen:?}"
    );
    assert!(audited(&app, "tool.changed").await.is_empty());
    app.stop().await;
}

/// Asks the fixture to change weather's title (`"title"`) or its annotations' title
/// (`"annotation"`).
async fn retitle(app: &TestApp, field: &str) {
    app.call_tool("rug__retitle", json!({"field": field})).await;
}

/// Waits until `name` is hidden from alice's listing.
async fn wait_hidden(app: &TestApp, name: &str) {
    wait_until(&format!("{name} hidden"), WAIT, async || {
        match listed(app, name).await {
            None => Ok(()),
            Some(tool) => Err(tool.to_string()),
        }
    })
    .await;
}

async fn approve(app: &TestApp, tool: &str) -> Value {
    let path = format!("/v1/servers/rug/tools/{tool}/approve");
    let (status, body) = app.post(&path, &app.admin, json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

#[tokio::test]
async fn quarantine_holds_a_tool_whose_title_changed() {
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let app = spawn_pinning(&data_dir, ToolPinning::Quarantine).await;
    app.register_server(rug_stdio("rug", &data_dir.path().join("rug-state")))
        .await;
    let tool = listed(&app, "rug__weather").await.expect("listed");
    assert_eq!(tool["title"], "Weather", "{tool}");
    let mut owner = EventStream::open(&app, &app.admin, None).await;

    // The tool's own title.
    retitle(&app, "title").await;
    let params = wait_tool_changed(&mut owner).await;
    assert_eq!(params["changed"], json!(["title"]), "{params}");
    assert_eq!(params["added"], false, "{params}");
    assert_eq!(params["old"]["title"], "Weather", "{params}");
    assert!(
        params["new"]["title"].as_str().unwrap().contains("id_rsa"),
        "{params}"
    );
    assert_eq!(params["quarantined"], true, "{params}");
    wait_hidden(&app, "rug__weather").await;
    let (status, body) = app.call("rug__weather", json!({"city": "Oslo"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let entries = audited(&app, "tool.changed").await;
    assert!(
        entries[0]["detail"]
            .as_str()
            .unwrap()
            .contains("\"weather\": title changed; held back"),
        "{entries:?}"
    );
    let body = approve(&app, "weather").await;
    assert_eq!(body["approved"], true, "{body}");
    let tool = listed(&app, "rug__weather").await.expect("listed again");
    assert!(tool["title"].as_str().unwrap().contains("id_rsa"), "{tool}");

    // The title in its annotations.
    retitle(&app, "annotation").await;
    let params = wait_tool_changed(&mut owner).await;
    assert_eq!(params["changed"], json!(["annotations"]), "{params}");
    assert_eq!(params["old"]["annotations"]["title"], "Weather", "{params}");
    wait_hidden(&app, "rug__weather").await;
    assert_eq!(approve(&app, "weather").await["approved"], true);
    assert!(listed(&app, "rug__weather").await.is_some());
    app.stop().await;
}

/// Asks the fixture to add the tool `forecast` (it then says its list changed).
async fn grow(app: &TestApp) {
    app.call_tool("rug__grow", json!({})).await;
}

#[tokio::test]
async fn quarantine_holds_a_tool_added_after_the_first_listing() {
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let state = data_dir.path().join("rug-state");
    let app = spawn_pinning(&data_dir, ToolPinning::Quarantine).await;
    app.register_server(rug_stdio("rug", &state)).await;
    let mut owner = EventStream::open(&app, &app.admin, None).await;
    grow(&app).await;

    let params = wait_tool_changed(&mut owner).await;
    assert_eq!(params["tool"], "forecast", "{params}");
    assert_eq!(params["name"], "rug__forecast", "{params}");
    assert_eq!(params["added"], true, "{params}");
    assert_eq!(params["old"], Value::Null, "{params}");
    assert_eq!(
        params["changed"],
        json!(["description", "inputSchema"]),
        "{params}"
    );
    assert!(
        params["new"]["description"]
            .as_str()
            .unwrap()
            .contains("credentials"),
        "{params}"
    );
    assert_eq!(params["quarantined"], true, "{params}");
    // The server said its list changed: the re-listing is in by the time weather is listed
    // next to a held forecast; the new tool is neither listed nor callable, on REST or /mcp.
    wait_until("the re-listing reviewed", WAIT, async || {
        let entries = audited(&app, "tool.added").await;
        match entries.len() {
            1 => Ok(entries),
            n => Err(format!("{n} entries")),
        }
    })
    .await;
    assert!(listed(&app, "rug__weather").await.is_some());
    assert!(listed(&app, "rug__forecast").await.is_none());
    let (status, body) = app.call("rug__forecast", json!({"city": "Oslo"})).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("mcp_tool_not_found")),
        "{body}"
    );
    let report = mcp_client(&app, &app.alice, "legacy", "rug__ping", json!({}), &[]).await;
    let tools = report["tools"].as_array().unwrap();
    assert!(!tools.contains(&json!("rug__forecast")), "{report}");
    let added = audited(&app, "tool.added").await;
    assert!(
        added[0]["detail"]
            .as_str()
            .unwrap()
            .contains("\"forecast\": added after the server's first listing; held back"),
        "{added:?}"
    );
    // Still held after a restart (the first listing is stored, not this process's memory).
    app.stop().await;
    let app = spawn_pinning(&data_dir, ToolPinning::Quarantine).await;
    app.wait_status("rug", "ready", WAIT).await;
    assert!(listed(&app, "rug__weather").await.is_some());
    assert!(listed(&app, "rug__forecast").await.is_none());

    // Approved by its owner: listed and callable.
    let body = approve(&app, "forecast").await;
    assert_eq!(body["approved"], true, "{body}");
    assert_eq!(body["tool"]["name"], "rug__forecast", "{body}");
    assert!(listed(&app, "rug__forecast").await.is_some());
    let body = app
        .call_tool("rug__forecast", json!({"city": "Oslo"}))
        .await;
    assert_eq!(body["content"][0]["text"], "rain in Oslo");
    app.stop().await;
}

#[tokio::test]
async fn warn_announces_a_tool_added_after_the_first_listing() {
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let app = spawn_pinning(&data_dir, ToolPinning::Warn).await;
    app.register_server(rug_stdio("rug", &data_dir.path().join("rug-state")))
        .await;
    let mut owner = EventStream::open(&app, &app.admin, None).await;
    grow(&app).await;
    let params = wait_tool_changed(&mut owner).await;
    assert_eq!(
        (&params["tool"], &params["added"], &params["quarantined"]),
        (&json!("forecast"), &json!(true), &json!(false)),
        "{params}"
    );
    wait_until("the added tool listed", WAIT, async || {
        match listed(&app, "rug__forecast").await {
            Some(_) => Ok(()),
            None => Err("not listed".to_owned()),
        }
    })
    .await;
    let added = audited(&app, "tool.added").await;
    assert_eq!(added.len(), 1, "{added:?}");
    assert!(
        added[0]["detail"]
            .as_str()
            .unwrap()
            .contains("the new definition is pinned"),
        "{added:?}"
    );
    // Pinned: a re-listing says nothing more.
    let (status, body) = app
        .post("/v1/servers/rug/reconnect", &app.admin, json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let again = owner.drain(std::time::Duration::from_millis(500)).await;
    assert!(
        !again.iter().any(|m| is_push(m, "bridge/tool_changed")),
        "{again:?}"
    );
    assert_eq!(audited(&app, "tool.added").await.len(), 1);
    app.stop().await;
}

/// Rewrites the stored pins as the bridge stored them before it pinned titles: the same
/// canonical JSON without `title`, and its digest.
async fn store_untitled_pins(database_url: &str) {
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(database_url).await.unwrap();
    let rows: Vec<(String, String, String)> =
        sqlx::query_as("SELECT server_id, tool, definition FROM tool_pins")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert!(!rows.is_empty());
    for (server, tool, definition) in rows {
        let mut view: Value = serde_json::from_str(&definition).unwrap();
        assert!(view.as_object_mut().unwrap().remove("title").is_some());
        let definition = view.to_string();
        let digest = hex::encode(ring::digest::digest(
            &ring::digest::SHA256,
            definition.as_bytes(),
        ));
        sqlx::query(
            "UPDATE tool_pins SET digest = $1, definition = $2 WHERE server_id = $3 AND tool = $4",
        )
        .bind(digest)
        .bind(definition)
        .bind(server)
        .bind(tool)
        .execute(&pool)
        .await
        .unwrap();
    }
    pool.close().await;
}

#[tokio::test]
async fn pins_stored_before_titles_were_pinned_do_not_all_change_at_upgrade() {
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let state = data_dir.path().join("rug-state");
    let config = config(data_dir.path());
    let app = spawn_pinning(&data_dir, ToolPinning::Quarantine).await;
    app.register_server(rug_stdio("rug", &state)).await;
    app.stop().await;
    store_untitled_pins(&config.database_url()).await;

    // Upgraded: every tool (all titled) still listed, nothing reported.
    let app = spawn_pinning(&data_dir, ToolPinning::Quarantine).await;
    app.wait_status("rug", "ready", WAIT).await;
    for name in ["rug__weather", "rug__ping", "rug__swap"] {
        assert!(listed(&app, name).await.is_some(), "{name}");
    }
    assert!(audited(&app, "tool.changed").await.is_empty());
    assert!(audited(&app, "tool.added").await.is_empty());
    // The title it had then is pinned now: a change of it is caught.
    let mut owner = EventStream::open(&app, &app.admin, None).await;
    retitle(&app, "title").await;
    let params = wait_tool_changed(&mut owner).await;
    assert_eq!(params["changed"], json!(["title"]), "{params}");
    assert_eq!(params["old"]["title"], "Weather", "{params}");
    wait_hidden(&app, "rug__weather").await;
    app.stop().await;

    // A change of another field made while upgrading is still a change (not a new title).
    store_untitled_pins(&config.database_url()).await;
    std::fs::write(&state, "1").unwrap();
    let app = spawn_pinning(&data_dir, ToolPinning::Quarantine).await;
    app.wait_status("rug", "ready", WAIT).await;
    wait_until("the changed tool held back", WAIT, async || {
        let entries = audited(&app, "tool.changed").await;
        match entries.iter().any(|e| {
            e["detail"]
                .as_str()
                .is_some_and(|d| d.contains("\"weather\": description changed"))
        }) {
            true => Ok(()),
            false => Err(format!("{entries:?}")),
        }
    })
    .await;
    assert!(listed(&app, "rug__weather").await.is_none());
    assert!(listed(&app, "rug__ping").await.is_some());
    app.stop().await;
}
