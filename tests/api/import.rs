//! Importing the server lists users already have, over REST, from the CLI and from the config file.

use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

fn action(results: &Value, server_id: &str) -> String {
    let result = results
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["server_id"] == server_id)
        .expect(server_id);
    result["action"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_claude_desktop_file_is_imported_entry_by_entry() {
    let peer = py_http().await;
    let app = spawn_app().await;
    let document = json!({
        "mcpServers": {
            "py": {"command": python(), "args": [py_server(), "stdio"], "env": {"FIXTURE_MARKER": unique("imp")}},
            "remote": {"url": peer.url, "headers": {"X-Key": "k"}},
            "broken": {"args": ["no command"]}
        }
    });
    let (status, body) = app
        .post("/v1/servers/import", &app.admin, document.clone())
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["type"], "mcp/server/import/resp");
    let results = &body["results"];
    assert_eq!(action(results, "py"), "created", "{body}");
    assert_eq!(action(results, "remote"), "created", "{body}");
    assert_eq!(action(results, "broken"), "failed");
    let broken = results
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["server_id"] == "broken")
        .unwrap();
    assert!(
        broken["error"].as_str().unwrap().contains("command"),
        "{broken}"
    );
    let (status, _) = app.call("py__echo", json!({"text": "imported"})).await;
    assert_eq!(status, StatusCode::OK);

    // The same file again changes nothing; a changed entry is replaced.
    let (_, body) = app
        .post("/v1/servers/import", &app.admin, document.clone())
        .await;
    assert_eq!(action(&body["results"], "py"), "unchanged", "{body}");
    let mut changed = document.clone();
    changed["mcpServers"]["remote"]["headers"]["X-Key"] = json!("k2");
    let (_, body) = app.post("/v1/servers/import", &app.admin, changed).await;
    assert_eq!(action(&body["results"], "remote"), "replaced", "{body}");

    // VS Code's `servers`, by an agent without the admin role: stdio is refused, the rest goes in.
    let vscode = json!({"servers": {
        "mine": {"type": "http", "url": peer.url},
        "cmd": {"command": "true"}
    }});
    let (_, body) = app.post("/v1/servers/import", &app.alice, vscode).await;
    assert_eq!(action(&body["results"], "mine"), "created", "{body}");
    let refused = body["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["server_id"] == "cmd")
        .unwrap();
    assert_eq!(refused["code"], "forbidden", "{refused}");
    app.stop().await;
}

#[tokio::test]
async fn the_config_file_servers_are_applied_at_every_start() {
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let declared: mcp_bridge::a2e::McpServerConfig =
        serde_json::from_value(py_stdio("declared", &unique("declared"))).unwrap();
    let mut config = config(data_dir.path());
    config.servers = vec![declared.clone()];
    let app = spawn_app_with(data_dir.clone(), config.clone()).await;
    app.wait_status("declared", "ready", Duration::from_secs(30))
        .await;
    let (status, _) = app
        .call("declared__echo", json!({"text": "from the file"}))
        .await;
    assert_eq!(status, StatusCode::OK);
    app.stop().await;

    let app = spawn_app_with(data_dir, config).await;
    app.wait_status("declared", "ready", Duration::from_secs(30))
        .await;
    let (_, list) = app.get("/v1/servers", &app.admin).await;
    assert_eq!(list["servers"].as_array().unwrap().len(), 1, "{list}");
    app.stop().await;
}

#[tokio::test]
async fn the_import_command_talks_to_the_running_bridge() {
    let peer = py_http().await;
    let data_dir = tempfile::tempdir().unwrap();
    let mut bridge = start_bridge(data_dir.path()).await;
    let file = data_dir.path().join("claude_desktop_config.json");
    std::fs::write(
        &file,
        json!({"mcpServers": {"cli": {"url": peer.url}, "bad": {}}}).to_string(),
    )
    .unwrap();
    let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp-bridge"))
        .args(["import", file.to_str().unwrap(), "--url", &bridge.base])
        .env("MCP_BRIDGE_DATA_DIR", data_dir.path())
        .env("MCP_BRIDGE_JWT_SECRET", SECRET)
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        !output.status.success(),
        "a failed entry fails the command: {stdout}"
    );
    assert!(stdout.contains("cli\tcreated"), "{stdout}");
    assert!(stdout.contains("bad\tfailed"), "{stdout}");
    bridge.signal("TERM");
    bridge
        .exited_within(Duration::from_secs(10))
        .await
        .expect("exits");
}

/// Importing over another agent's server is refused before anything is compared: a guessed
/// header value, right or wrong, gets the same 403-coded answer (it used to say `unchanged`
/// when the guess was right).
#[tokio::test]
async fn an_import_over_another_agents_server_is_no_secret_oracle() {
    let peer = py_http().await;
    let app = spawn_app().await;
    let (status, body) = app
        .post(
            "/v1/servers",
            &app.alice,
            json!({"config": {
                "server_id": "guarded", "name": "guarded", "transport": "http", "url": peer.url,
                "headers": {"X-Key": "right-guess-42"}
            }}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let mut answers = Vec::new();
    for guess in ["right-guess-42", "wrong-guess-42"] {
        let document = json!({"mcpServers": {
            "guarded": {"url": peer.url, "headers": {"X-Key": guess}}
        }});
        let (status, body) = app.post("/v1/servers/import", &app.bob, document).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let result = body["results"][0].clone();
        assert_eq!(result["action"], "failed", "{body}");
        assert_eq!(result["code"], "forbidden", "{body}");
        answers.push(result);
    }
    assert_eq!(answers[0], answers[1], "the same answer whatever the guess");
    // The owner's server is still there, untouched.
    let (_, shown) = app.get("/v1/servers/guarded", &app.alice).await;
    assert_eq!(shown["server"]["status"], "ready", "{shown}");
    app.stop().await;
}
