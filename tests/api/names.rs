//! Long tool names under `MCP_BRIDGE_MAX_TOOL_NAME=64`: short aliases, listed and accepted on
//! REST, `/v1/a2e` and `/mcp`, the same after a restart.

use std::collections::BTreeSet;
use std::sync::Arc;

use mcp_bridge::registry::naming;
use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;
use crate::mcp::mcp_client;

const MAX: usize = 64;

async fn spawn_short_names(data_dir: &Arc<tempfile::TempDir>) -> TestApp {
    TestApp::builder()
        .data_dir(data_dir)
        .configure(|c| c.max_tool_name = MAX)
        .spawn()
        .await
}

/// Every tool name alice is shown on REST.
async fn names(app: &TestApp) -> BTreeSet<String> {
    app.tool_names("").await.into_iter().collect()
}

#[tokio::test]
async fn long_names_get_short_aliases_that_calls_take_and_restarts_keep() {
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let app = spawn_short_names(&data_dir).await;
    // One id leaves room for the start of a tool name after `{server_id}__`; the other is too
    // long for that, so its aliases are a prefix of the id and a hash.
    let roomy = format!("roomy-{}", "r".repeat(43));
    let roomy = roomy.as_str();
    let cramped = format!("ev-{}", "x".repeat(57));
    for id in [roomy, cramped.as_str()] {
        app.register_server(everything_stdio(id)).await;
    }
    let listed = names(&app).await;
    assert!(listed.len() >= 26, "{listed:?}");
    for name in &listed {
        assert!(name.len() <= MAX, "{name} is {} long", name.len());
        assert!(
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')),
            "{name}"
        );
    }
    // Short enough: unchanged. Too long: an alias keeping the prefix, or a bare one.
    assert!(listed.contains(&format!("{roomy}__echo")), "{listed:?}");
    let roomy_alias = naming::qualify(roomy, "get-tiny-image", MAX).unwrap();
    assert!(
        roomy_alias.starts_with(&format!("{roomy}__ge")),
        "{roomy_alias}"
    );
    let cramped_alias = naming::qualify(&cramped, "echo", MAX).unwrap();
    assert!(!cramped_alias.contains("__"), "{cramped_alias}");
    assert_eq!((roomy_alias.len(), cramped_alias.len()), (MAX, MAX));
    for alias in [&roomy_alias, &cramped_alias] {
        assert!(listed.contains(alias), "{alias} not in {listed:?}");
    }

    // REST, by alias and by full name.
    let body = app
        .call_tool(&cramped_alias, json!({"message": "hi"}))
        .await;
    assert_eq!(body["content"][0]["text"], "Echo: hi", "{body}");
    assert_eq!(body["server_id"], cramped, "{body}");
    app.call_tool(&format!("{cramped}__echo"), json!({"message": "full"}))
        .await;
    app.call_tool(&roomy_alias, json!({})).await;
    // /v1/a2e.
    let (status, body) = app
        .post(
            "/v1/a2e",
            &app.alice,
            json!({"type": "tool/call/req", "id": "c1", "name": cramped_alias, "arguments": {"message": "a2e"}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["content"][0]["text"], "Echo: a2e", "{body}");
    // /mcp, with the Python SDK client.
    let report = mcp_client(
        &app,
        &app.alice,
        "legacy",
        &cramped_alias,
        json!({"message": "mcp"}),
        &[],
    )
    .await;
    let tools: BTreeSet<String> = report["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_owned())
        .collect();
    assert!(tools.iter().all(|t| t.len() <= MAX), "{report}");
    assert!(tools.is_superset(&listed), "{report}");
    assert_eq!(
        report["result"]["content"][0]["text"], "Echo: mcp",
        "{report}"
    );
    // Calls by alias are counted under their server.
    let (_, metrics) = app.send(reqwest::Method::GET, "/metrics", None, None).await;
    let metrics = metrics.as_str().unwrap_or_default().to_owned();
    assert!(
        metrics.contains(&format!("server_id=\"{cramped}\"")),
        "{metrics}"
    );
    app.stop().await;

    // The same aliases after a restart on the same data.
    let app = spawn_short_names(&data_dir).await;
    for id in [roomy, cramped.as_str()] {
        app.wait_status(id, "ready", WAIT).await;
    }
    wait_until("the same names after a restart", WAIT, async || {
        let now = names(&app).await;
        match now == listed {
            true => Ok(()),
            false => Err(format!("{now:?}")),
        }
    })
    .await;
    app.call_tool(&cramped_alias, json!({"message": "again"}))
        .await;
    app.stop().await;
}
