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
    app.call_tool("py__echo", json!({"text": "imported"})).await;

    // The same file again changes nothing; a changed entry is replaced.
    let (_, body) = app
        .post("/v1/servers/import", &app.admin, document.clone())
        .await;
    assert_eq!(action(&body["results"], "py"), "unchanged", "{body}");
    let mut changed = document.clone();
    changed["mcpServers"]["remote"]["headers"]["X-Key"] = json!("k2");
    changed["replace"] = json!(true);
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
    let from_file = || {
        let declared = declared.clone();
        TestApp::builder()
            .data_dir(&data_dir)
            .configure(move |c| c.servers = vec![declared])
            .spawn()
    };
    let app = from_file().await;
    app.wait_status("declared", "ready", Duration::from_secs(30))
        .await;
    app.call_tool("declared__echo", json!({"text": "from the file"}))
        .await;
    app.stop().await;

    let app = from_file().await;
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

    // The same id with another config: refused without `--replace`, replaced with it.
    std::fs::write(
        &file,
        json!({"mcpServers": {"cli": {"url": peer.url, "headers": {"X-Key": "2"}}}}).to_string(),
    )
    .unwrap();
    for (flag, expected) in [(None, "cli\tfailed"), (Some("--replace"), "cli\treplaced")] {
        let mut args = vec!["import", file.to_str().unwrap(), "--url", &bridge.base];
        args.extend(flag);
        let output = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp-bridge"))
            .args(&args)
            .env("MCP_BRIDGE_DATA_DIR", data_dir.path())
            .env("MCP_BRIDGE_JWT_SECRET", SECRET)
            .output()
            .await
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(stdout.contains(expected), "{flag:?}: {stdout}");
        assert_eq!(output.status.success(), flag.is_some(), "{stdout}");
    }
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
    let config = json!({
        "server_id": "guarded", "name": "guarded", "transport": "http", "url": peer.url,
        "headers": {"X-Key": "right-guess-42"}
    });
    app.register_server_as(&app.alice, config).await;
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

fn result<'a>(body: &'a Value, server_id: &str) -> &'a Value {
    body["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["server_id"] == server_id)
        .unwrap_or_else(|| panic!("{server_id} in {body}"))
}

/// An import never replaces a server silently: without `replace: true` an id already registered
/// with another config fails with `conflict` (a reason saying what to pass) and nothing stored
/// changes; with it the owner's import says `replaced`, and another agent's is still refused.
#[tokio::test]
async fn an_import_replaces_a_server_only_when_asked_to() {
    let peer = py_http().await;
    let app = spawn_app().await;
    let file =
        |key: &str| json!({"mcpServers": {"mine": {"url": peer.url, "headers": {"X-Key": key}}}});
    let (_, body) = app
        .post("/v1/servers/import", &app.alice, file("one"))
        .await;
    assert_eq!(action(&body["results"], "mine"), "created", "{body}");

    let (status, body) = app
        .post("/v1/servers/import", &app.alice, file("two"))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let refused = result(&body, "mine");
    assert_eq!(refused["action"], "failed", "{body}");
    assert_eq!(refused["ok"], false, "{body}");
    assert_eq!(refused["code"], "conflict", "{body}");
    assert!(
        refused["error"].as_str().unwrap().contains("replace: true"),
        "{refused}"
    );
    // Nothing changed: the first file still matches what is stored.
    let (_, body) = app
        .post("/v1/servers/import", &app.alice, file("one"))
        .await;
    assert_eq!(action(&body["results"], "mine"), "unchanged", "{body}");

    let mut other = file("three");
    other["replace"] = json!(true);
    let (_, body) = app
        .post("/v1/servers/import", &app.bob, other.clone())
        .await;
    assert_eq!(result(&body, "mine")["code"], "forbidden", "{body}");
    let (_, body) = app.post("/v1/servers/import", &app.alice, other).await;
    assert_eq!(action(&body["results"], "mine"), "replaced", "{body}");
    let (_, body) = app
        .post("/v1/servers/import", &app.alice, file("three"))
        .await;
    assert_eq!(action(&body["results"], "mine"), "unchanged", "{body}");
    app.stop().await;
}

/// What VS Code, Claude Code and Cline files say beyond a command or a URL is honoured or
/// refused per entry, never stored literally or dropped: editor variables fail their entry,
/// `disabled` entries are skipped, `timeout` is read in its writer's unit, an `envFile` is read
/// for an admin (and never for anyone else).
#[tokio::test]
async fn editor_files_are_honoured_or_refused_entry_by_entry() {
    let peer = py_http().await;
    let app = spawn_app().await;
    let dir = tempfile::tempdir().unwrap();
    let env_file = dir.path().join("server.env");
    std::fs::write(
        &env_file,
        "# from the file\nFROM_FILE=\"read from envFile\"\nSHARED=file\n",
    )
    .unwrap();
    let marker = unique("envf");
    let document = json!({
        "inputs": [{"type": "promptString", "id": "api-key", "password": true}],
        "servers": {
            "keyed": {"type": "http", "url": peer.url,
                "headers": {"Authorization": "Bearer ${input:api-key}"}},
            "folder": {"type": "stdio", "command": python(),
                "args": [py_server(), "stdio", "${workspaceFolder}/data"]},
            "envf": {"type": "stdio", "command": python(), "args": [py_server(), "stdio"],
                "env": {"FIXTURE_MARKER": marker, "SHARED": "entry"},
                "envFile": env_file.to_str().unwrap()}
        },
        "mcpServers": {
            "off": {"command": python(), "args": [py_server(), "stdio"], "disabled": true},
            "claude": {"type": "http", "url": peer.url, "timeout": 120000},
            "cline": {"url": peer.url, "type": "streamableHttp", "timeout": 90,
                "disabled": false, "autoApprove": []}
        }
    });
    let (status, body) = app.post("/v1/servers/import", &app.admin, document).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    let keyed = result(&body, "keyed");
    assert_eq!(keyed["action"], "failed", "{body}");
    let reason = keyed["error"].as_str().unwrap();
    assert!(
        reason.contains("${input:api-key}") && reason.contains("`api-key`"),
        "{reason}"
    );
    let folder = result(&body, "folder");
    assert_eq!(folder["action"], "failed", "{body}");
    assert!(
        folder["error"]
            .as_str()
            .unwrap()
            .contains("${workspaceFolder}"),
        "{folder}"
    );
    let off = result(&body, "off");
    assert_eq!(off["action"], "skipped", "{body}");
    assert_eq!(off["ok"], true, "{body}");
    assert!(off["error"].as_str().unwrap().contains("disabled"), "{off}");
    for id in ["keyed", "folder", "off"] {
        let (status, _) = app.get(&format!("/v1/servers/{id}"), &app.admin).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{id} is not registered");
    }

    // Milliseconds from Claude Code, seconds from Cline.
    assert_eq!(action(&body["results"], "claude"), "created", "{body}");
    assert_eq!(action(&body["results"], "cline"), "created", "{body}");
    let (_, claude) = app.get("/v1/servers/claude", &app.admin).await;
    assert_eq!(claude["config"]["timeout"], 120, "{claude}");
    let (_, cline) = app.get("/v1/servers/cline", &app.admin).await;
    assert_eq!(cline["config"]["timeout"], 90, "{cline}");

    // The env file's variables reach the server; `env` wins over the file.
    assert_eq!(action(&body["results"], "envf"), "created", "{body}");
    for (name, expected) in [("FROM_FILE", "read from envFile"), ("SHARED", "entry")] {
        let (status, answer) = app.call("envf__getenv", json!({"name": name})).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        assert_eq!(answer["content"][0]["text"], expected, "{answer}");
    }

    // A non-admin never makes the bridge read a file, whatever the path.
    let probe = json!({"servers": {"probe": {"type": "stdio", "command": "true",
        "envFile": "/etc/passwd"}}});
    let (_, body) = app.post("/v1/servers/import", &app.alice, probe).await;
    let probe = result(&body, "probe");
    assert_eq!(probe["action"], "failed", "{body}");
    assert!(
        probe["error"].as_str().unwrap().contains("admin"),
        "{probe}"
    );
    assert!(!body.to_string().contains("root:"), "{body}");
    app.stop().await;
}

/// `mcp-bridge health`, the image's health check: 0 while the bridge answers `/healthz` at the
/// address given (or the one MCP_BRIDGE_BIND says), 1 with the reason once it does not.
#[tokio::test]
async fn the_health_command_says_whether_the_bridge_answers() {
    let app = spawn_app().await;
    let data_dir = tempfile::tempdir().unwrap();
    let health = |bind: String, url: Option<String>| {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp-bridge"));
        command
            .arg("health")
            .args(
                url.map(|url| vec!["--url".to_owned(), url])
                    .unwrap_or_default(),
            )
            .env("MCP_BRIDGE_BIND", bind)
            .env("MCP_BRIDGE_DATA_DIR", data_dir.path())
            .env("MCP_BRIDGE_JWT_SECRET", SECRET);
        async move { command.output().await.unwrap() }
    };
    let bind = app.base.trim_start_matches("http://").to_owned();
    let up = health(bind.clone(), None).await;
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    let up = health("127.0.0.1:1".into(), Some(app.base.clone())).await;
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    // A port nobody listens on, found by binding one and letting it go.
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", free.local_addr().unwrap());
    drop(free);
    let down = health(bind, Some(url.clone())).await;
    assert_eq!(down.status.code(), Some(1));
    let said = String::from_utf8_lossy(&down.stderr);
    assert!(
        said.contains(&format!("cannot reach {url}/healthz")),
        "{said}"
    );
}
