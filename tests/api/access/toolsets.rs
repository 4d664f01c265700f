//! Toolsets: renamed and redescribed tools for the Python client, deferred meta tools, ranked
//! search over what the caller may see, and policies and toolsets kept across a restart.

use std::sync::Arc;

use reqwest::StatusCode;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

use crate::helpers::*;

use super::{args, call_as, mcp_as, names};

#[tokio::test]
async fn a_toolset_renames_and_redescribes_for_the_python_client() {
    let app = spawn_app().await;
    app.register_server(everything_stdio("ev")).await;
    let toolset = json!({
        "tools": ["ev__echo", "ev__get-sum"],
        "rename": {"ev__echo": "say"},
        "descriptions": {"ev__echo": "Say the message back."}
    });
    let (status, body) = app
        .put("/v1/toolsets/team", &app.bob, toolset.clone())
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let (status, body) = app.put("/v1/toolsets/team", &app.admin, toolset).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = app
        .put(
            "/v1/toolsets/bad",
            &app.admin,
            json!({"tools": ["ev__*"], "rename": {"other__x": "x"}}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let (_, listed) = app.get("/v1/tools?toolset=team", &app.alice).await;
    let tools = listed["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 2, "{listed}");
    assert_eq!(tools[0]["name"], "say");
    assert_eq!(tools[0]["description"], "Say the message back.");
    assert_eq!(tools[1]["name"], "ev__get-sum");
    let (status, body) = call_as(
        &app,
        &app.alice,
        json!({"name": "say", "toolset": "team", "arguments": {"message": "hello"}}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        body["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("hello"),
        "{body}"
    );
    // Not a member: unknown in the toolset.
    let (status, _) = call_as(
        &app,
        &app.alice,
        json!({"name": "ev__get-tiny-image", "toolset": "team", "arguments": {}}),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, body) = app.get("/v1/tools?toolset=nope", &app.alice).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");

    let url = format!("{}/mcp/toolsets/team", app.base);
    let report = crate::mcp::run_peer(
        "mcp_client.py",
        &[
            &url,
            &app.alice,
            "legacy",
            "say",
            &json!({"message": "from python"}).to_string(),
        ],
    )
    .await;
    assert_eq!(report["tools"], json!(["say", "ev__get-sum"]), "{report}");
    assert_eq!(
        report["descriptions"]["say"], "Say the message back.",
        "{report}"
    );
    let text = report["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("from python"), "{report}");
    let resp = app
        .client
        .post(format!("{}/mcp/toolsets/nope", app.base))
        .bearer_auth(&app.alice)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    app.stop().await;
}

#[tokio::test]
async fn deferred_meta_tools_find_describe_and_call() {
    let app = spawn_app().await;
    app.register_server(everything_stdio("ev")).await;
    let (status, body) = app
        .put(
            "/v1/toolsets/lazy",
            &app.admin,
            json!({"tools": ["ev__*"], "deferred": true, "rename": {"ev__get-sum": "add"}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(
        names(&app, "?toolset=lazy", &app.alice).await,
        ["search_tools", "describe_tool", "call_tool"]
    );
    let meta = |name: &str, arguments: Value| json!({"name": name, "toolset": "lazy", "arguments": arguments});
    let (status, body) = call_as(
        &app,
        &app.alice,
        meta(
            "search_tools",
            json!({"query": "add two numbers", "limit": 3}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let found = &body["structured_content"]["tools"];
    assert!(
        found.as_array().unwrap().iter().any(|t| t["name"] == "add"),
        "{body}"
    );
    let (status, body) = call_as(
        &app,
        &app.alice,
        meta("describe_tool", json!({"name": "add"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        body["structured_content"]["inputSchema"]["properties"]["a"].is_object(),
        "{body}"
    );
    let (status, body) = call_as(
        &app,
        &app.alice,
        meta(
            "call_tool",
            json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(
        body["content"][0]["text"].as_str().unwrap().contains('5'),
        "{body}"
    );
    let (status, body) = call_as(&app, &app.alice, meta("search_tools", json!({}))).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let (status, _) = call_as(&app, &app.alice, meta("call_tool", json!({"name": "nope"}))).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // The whole catalogue behind the meta-tools on /mcp?deferred=1.
    let client = mcp_as(&app, "/mcp?deferred=1", &app.alice).await;
    let listed: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(listed, ["search_tools", "describe_tool", "call_tool"]);
    let found = client
        .call_tool(
            CallToolRequestParams::new("search_tools")
                .with_arguments(args(json!({"query": "echo a message back"}))),
        )
        .await
        .unwrap();
    let first = &found.structured_content.unwrap()["tools"][0]["name"];
    assert_eq!(first, "ev__echo");
    let echoed = client
        .call_tool(CallToolRequestParams::new("call_tool").with_arguments(args(
            json!({"name": "ev__echo", "arguments": {"message": "deferred"}}),
        )))
        .await
        .unwrap();
    assert!(format!("{:?}", echoed.content).contains("deferred"));
    client.cancel().await.unwrap();
    app.stop().await;
}

#[tokio::test]
async fn search_ranks_what_the_caller_may_see() {
    let app = spawn_app().await;
    app.register_server(everything_stdio("ev")).await;
    let found = names(&app, "?q=echo%20back%20a%20message&limit=3", &app.alice).await;
    assert_eq!(
        found.first().map(String::as_str),
        Some("ev__echo"),
        "{found:?}"
    );
    assert!(found.len() <= 3);
    for bad in [
        "?q=x&limit=0",
        "?q=x&limit=101",
        "?q=x&cursor=abc",
        "?limit=5",
    ] {
        let (status, body) = app.get(&format!("/v1/tools{bad}"), &app.alice).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}: {body}");
    }
    let (status, _) = app
        .put(
            "/v1/policies/no-echo",
            &app.admin,
            json!({"match": {"subs": ["alice"]}, "deny": {"tools": ["ev__echo"]}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let found = names(&app, "?q=echo%20back%20a%20message", &app.alice).await;
    assert!(!found.contains(&"ev__echo".to_owned()), "{found:?}");
    app.stop().await;
}

#[tokio::test]
async fn policies_and_toolsets_survive_a_restart() {
    let data = Arc::new(tempfile::tempdir().unwrap());
    let app = spawn_app_in(data.clone()).await;
    app.register_server(everything_stdio("ev")).await;
    let (status, _) = app
        .put(
            "/v1/policies/no-echo",
            &app.admin,
            json!({"match": {"subs": ["alice"]}, "deny": {"tools": ["ev__echo"]}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, _) = app
        .put(
            "/v1/toolsets/team",
            &app.admin,
            json!({"tools": ["ev__get-sum"], "rename": {"ev__get-sum": "add"}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    app.stop().await;

    let app = spawn_app_in(data).await;
    app.wait_status("ev", "ready", WAIT).await;
    let (_, listed) = app.get("/v1/policies", &app.admin).await;
    assert_eq!(listed["policies"][0]["name"], "no-echo", "{listed}");
    assert!(
        !names(&app, "", &app.alice)
            .await
            .contains(&"ev__echo".to_owned())
    );
    assert_eq!(names(&app, "?toolset=team", &app.alice).await, ["add"]);
    let (status, body) = call_as(
        &app,
        &app.alice,
        json!({"name": "add", "toolset": "team", "arguments": {"a": 1, "b": 2}}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    app.stop().await;
}
