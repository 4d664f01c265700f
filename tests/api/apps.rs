//! MCP Apps through the bridge (issue 38, item 3): two servers built with the Python SDK's own
//! `Apps` extension both offer `ui://dashboard`, an app-only tool and a model tool linked to it.
//! Their URIs stay `ui://` and apart (`ui://{server_id}/dashboard`) on REST and `/mcp`, tools
//! point at them, each reads as its own HTML with its `_meta.ui`, app-only tools are kept from
//! models, calls from apps follow the extension's host rules, and a policy that hides `ui://`
//! resources takes the interface off the tools it shows.

use reqwest::StatusCode;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ReadResourceRequestParams};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

use std::time::Duration;

use crate::helpers::*;

const LABELS: [&str; 2] = ["red", "blue"];

fn apps_stdio(label: &str) -> Value {
    let script = peers_dir().join("apps_server.py");
    json!({
        "server_id": label,
        "transport": "stdio",
        "cmd": [python(), script.to_string_lossy(), label],
    })
}

async fn with_two_app_servers() -> TestApp {
    let app = spawn_app().await;
    for label in LABELS {
        app.register_server(apps_stdio(label)).await;
    }
    app
}

fn tool<'a>(tools: &'a Value, name: &str) -> Option<&'a Value> {
    tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
}

/// The `_meta.ui` each server's dashboard carries (apps_server.py).
fn ui_meta(label: &str) -> Value {
    json!({
        "csp": {"connectDomains": [format!("https://{label}.example")]},
        "permissions": {"clipboardWrite": {}},
        "prefersBorder": true
    })
}

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

async fn mcp_as(app: &TestApp, token: &str) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    let config = StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", app.base))
        .auth_header(token.to_owned());
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    ().serve(transport).await.unwrap()
}

#[tokio::test]
async fn two_servers_dashboards_stay_ui_apart_and_read_as_their_own_on_rest() {
    let app = with_two_app_servers().await;

    let listed = app.list_resources("").await;
    for label in LABELS {
        let uri = format!("ui://{label}/dashboard");
        let resource = listed
            .iter()
            .find(|r| r["uri"] == uri.as_str())
            .unwrap_or_else(|| panic!("{uri} is not listed: {listed:?}"));
        assert_eq!(resource["server_id"], label);
        assert_eq!(resource["mime_type"], "text/html;profile=mcp-app");
        assert_eq!(resource["_meta"]["ui"], ui_meta(label), "{resource}");
    }

    let (status, tools) = app.get("/v1/tools", &app.alice).await;
    assert_eq!(status, StatusCode::OK, "{tools}");
    for label in LABELS {
        let shown = tool(&tools, &format!("{label}__show_dashboard"))
            .unwrap_or_else(|| panic!("the model tool is listed: {tools}"));
        let uri = format!("ui://{label}/dashboard");
        assert_eq!(shown["_meta"]["ui"]["resourceUri"], uri.as_str(), "{shown}");
        assert_eq!(shown["_meta"]["ui/resourceUri"], uri.as_str(), "{shown}");
        assert!(
            tool(&tools, &format!("{label}__refresh_dashboard")).is_none(),
            "an app-only tool is kept from models: {tools}"
        );

        // What the tool points at reads as that server's own HTML and `_meta.ui`.
        let (status, read) = app
            .post("/v1/resources/read", &app.alice, json!({"uri": uri}))
            .await;
        assert_eq!(status, StatusCode::OK, "{read}");
        assert_eq!(read["server_id"], label);
        let content = &read["contents"][0];
        assert_eq!(content["uri"], uri.as_str());
        assert_eq!(content["mime_type"], "text/html;profile=mcp-app");
        assert_eq!(
            content["text"],
            format!("<!doctype html><title>{label} dashboard</title>")
        );
        assert_eq!(content["_meta"]["ui"], ui_meta(label), "{content}");
    }
    // The upstream URI alone is offered twice: which one is asked.
    let (status, body) = app
        .post(
            "/v1/resources/read",
            &app.alice,
            json!({"uri": "ui://dashboard"}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");

    // Asked for, app-only tools are listed with their visibility.
    let (status, all) = app.get("/v1/tools?include=app", &app.alice).await;
    assert_eq!(status, StatusCode::OK, "{all}");
    let refresh = tool(&all, "red__refresh_dashboard").expect("listed with include=app");
    assert_eq!(refresh["_meta"]["ui"]["visibility"], json!(["app"]));
    assert_eq!(refresh["_meta"]["ui"]["resourceUri"], "ui://red/dashboard");
    // Search is model-facing too.
    let found = app.tool_names("?q=refresh+dashboard").await;
    assert!(
        !found.iter().any(|n| n.ends_with("refresh_dashboard")),
        "{found:?}"
    );
    let found = app.tool_names("?q=refresh+dashboard&include=app").await;
    assert!(
        found.contains(&"blue__refresh_dashboard".to_owned()),
        "{found:?}"
    );
    let (status, body) = app.get("/v1/tools?include=everything", &app.alice).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["code"], "invalid_request");
}

#[tokio::test]
async fn app_only_tools_answer_only_their_own_servers_apps_on_rest() {
    let app = with_two_app_servers().await;
    let call = |body: Value| app.post("/v1/tools/call", &app.alice, body);

    let (status, body) = call(json!({"name": "red__refresh_dashboard", "arguments": {}})).await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "a model may not call it: {body}"
    );
    assert_eq!(body["code"], "forbidden");
    let (status, body) = call(json!({"name": "red__refresh_dashboard", "arguments": {},
        "app": "ui://blue/dashboard"}))
    .await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "another server's app: {body}"
    );
    let (status, body) = call(json!({"name": "red__refresh_dashboard", "arguments": {},
        "app": "ui://nowhere/dashboard"}))
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let (status, body) = call(json!({"name": "red__refresh_dashboard", "arguments": {},
        "app": "ui://red/dashboard"}))
    .await;
    assert_eq!(status, StatusCode::OK, "its own app: {body}");
    assert_eq!(body["content"][0]["text"], "red refreshed");
    // A tool for both is the model's and any app's.
    for app_uri in ["", "ui://blue/dashboard"] {
        let (status, body) = call(json!({"name": "red__show_dashboard", "arguments": {},
            "app": app_uri}))
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["content"][0]["text"], "red dashboard shown");
    }
    // As a task, the same rule, before anything starts.
    let (status, body) = call(json!({"name": "blue__refresh_dashboard", "arguments": {},
        "task": {"ttl": 60000}}))
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
}

#[tokio::test]
async fn mcp_clients_get_ui_uris_visibility_and_each_servers_html() {
    let app = with_two_app_servers().await;
    let client = mcp_as(&app, &app.alice).await;

    // Visibility is passed through for the host to apply; nothing is dropped.
    let tools = serde_json::to_value(client.list_all_tools().await.unwrap()).unwrap();
    let tools = json!({"tools": tools});
    for label in LABELS {
        let refresh = tool(&tools, &format!("{label}__refresh_dashboard"))
            .unwrap_or_else(|| panic!("app-only tools reach the host: {tools}"));
        assert_eq!(refresh["_meta"]["ui"]["visibility"], json!(["app"]));
        let uri = format!("ui://{label}/dashboard");
        assert_eq!(refresh["_meta"]["ui"]["resourceUri"], uri.as_str());
        let shown = tool(&tools, &format!("{label}__show_dashboard")).unwrap();
        assert_eq!(shown["_meta"]["ui/resourceUri"], uri.as_str());
    }
    let resources = serde_json::to_value(client.list_all_resources().await.unwrap()).unwrap();
    for label in LABELS {
        let uri = format!("ui://{label}/dashboard");
        let listed = resources
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["uri"] == uri.as_str())
            .unwrap_or_else(|| panic!("{uri}: {resources}"));
        assert_eq!(listed["_meta"]["ui"], ui_meta(label));
        let read = client
            .peer()
            .read_resource(ReadResourceRequestParams::new(uri.clone()))
            .await
            .unwrap();
        let read = serde_json::to_value(read).unwrap();
        let content = &read["contents"][0];
        assert_eq!(content["uri"], uri.as_str(), "{read}");
        assert_eq!(content["mimeType"], "text/html;profile=mcp-app");
        assert_eq!(
            content["text"],
            format!("<!doctype html><title>{label} dashboard</title>")
        );
        assert_eq!(content["_meta"]["ui"], ui_meta(label), "{read}");
    }

    // A call that names its app is held to the host rules; one that does not is the host's.
    let from = |app_uri: &str| {
        let mut meta = rmcp::model::MetaObject::default();
        meta.0.insert("mcp-bridge/app".into(), json!(app_uri));
        let mut params = CallToolRequestParams::new("red__refresh_dashboard");
        params.meta = Some(meta.into());
        params
    };
    let refused = client.call_tool(from("ui://blue/dashboard")).await;
    assert!(refused.is_err(), "another server's app: {refused:?}");
    let own = client.call_tool(from("ui://red/dashboard")).await.unwrap();
    assert_eq!(
        serde_json::to_value(&own.content).unwrap()[0]["text"],
        "red refreshed"
    );
    let host = client
        .call_tool(CallToolRequestParams::new("red__refresh_dashboard"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&host.content).unwrap()[0]["text"],
        "red refreshed"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_policy_hiding_ui_resources_takes_the_interface_off_tools() {
    let app = with_two_app_servers().await;
    let policy = json!({"match": {"roles": ["plain"]}, "deny": {"resources": ["ui://*"]}});
    let resp = app
        .client
        .put(format!("{}/v1/policies/no-apps", app.base))
        .bearer_auth(&app.admin)
        .json(&policy)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::CREATED);
    let plain = token("carol", &["plain"]);

    let (status, tools) = app.get("/v1/tools?include=app", &plain).await;
    assert_eq!(status, StatusCode::OK, "{tools}");
    for name in ["red__show_dashboard", "red__refresh_dashboard"] {
        let meta = &tool(&tools, name).unwrap_or_else(|| panic!("{name}: {tools}"))["_meta"];
        assert!(meta["ui"].get("resourceUri").is_none(), "{meta}");
        assert!(meta.get("ui/resourceUri").is_none(), "{meta}");
    }
    assert_eq!(
        tool(&tools, "red__refresh_dashboard").unwrap()["_meta"]["ui"]["visibility"],
        json!(["app"]),
        "the rest of `_meta` stays"
    );
    let (status, body) = app
        .post(
            "/v1/resources/read",
            &plain,
            json!({"uri": "ui://red/dashboard"}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    // Others still see the interface.
    let (_, tools) = app.get("/v1/tools", &app.alice).await;
    assert_eq!(
        tool(&tools, "red__show_dashboard").unwrap()["_meta"]["ui"]["resourceUri"],
        "ui://red/dashboard"
    );

    let client = mcp_as(&app, &plain).await;
    let tools = serde_json::to_value(client.list_all_tools().await.unwrap()).unwrap();
    let tools = json!({"tools": tools});
    for label in LABELS {
        let shown = tool(&tools, &format!("{label}__show_dashboard")).unwrap();
        assert!(shown["_meta"]["ui"].get("resourceUri").is_none(), "{shown}");
        assert!(shown["_meta"].get("ui/resourceUri").is_none(), "{shown}");
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn the_meta_tools_serve_a_model_and_keep_app_only_tools_from_it() {
    let app = with_two_app_servers().await;
    let config =
        StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp?deferred=1", app.base))
            .auth_header(app.alice.clone());
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    let client = ().serve(transport).await.unwrap();
    let meta_call = |name: &'static str, arguments: Value| {
        CallToolRequestParams::new(name).with_arguments(arguments.as_object().cloned().unwrap())
    };
    let found = client
        .call_tool(meta_call(
            "search_tools",
            json!({"query": "refresh dashboard", "limit": 50}),
        ))
        .await
        .unwrap();
    let found = found.structured_content.unwrap();
    let names: Vec<&str> = found["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"red__show_dashboard"), "{found}");
    assert!(
        !names.iter().any(|n| n.ends_with("refresh_dashboard")),
        "{found}"
    );
    for (tool, arguments) in [
        ("describe_tool", json!({"name": "red__refresh_dashboard"})),
        (
            "call_tool",
            json!({"name": "red__refresh_dashboard", "arguments": {}}),
        ),
    ] {
        let refused = client.call_tool(meta_call(tool, arguments)).await;
        let refused = format!("{refused:?}");
        assert!(
            refused.contains("is_error: Some(true)") || refused.contains("Err("),
            "{tool}: {refused}"
        );
        assert!(!refused.contains("red refreshed"), "{tool}: {refused}");
    }
    client.cancel().await.unwrap();
}

/// A REST agent subscribed to a server's `ui://` resource is told of its updates under the URI it
/// subscribed to (`ui://{server_id}/…`), not the server's own.
#[tokio::test]
async fn an_update_of_a_ui_resource_names_it_as_the_agent_subscribed() {
    let app = with_two_app_servers().await;
    let mut alice = EventStream::open(&app, &app.alice, None).await;
    app.subscribe(json!({"uri": "ui://red/dashboard"})).await;
    let body = app.call_tool("red__touch_dashboard", json!({})).await;
    assert_eq!(body["content"][0]["text"], "touched", "{body}");
    let update = alice
        .wait_for("the dashboard's update", WAIT, |m| {
            is_push(m, "notifications/resources/updated")
        })
        .await;
    assert_eq!(update.data["server_id"], "red", "{update:?}");
    assert_eq!(
        update.data["params"]["uri"], "ui://red/dashboard",
        "{update:?}"
    );
    // Unsubscribed by the same URI: no more updates.
    app.unsubscribe(json!({"uri": "ui://red/dashboard"})).await;
    app.call_tool("red__touch_dashboard", json!({})).await;
    let later = alice.drain(Duration::from_millis(1000)).await;
    assert!(
        !later
            .iter()
            .any(|m| is_push(m, "notifications/resources/updated")),
        "{later:?}"
    );
    app.stop().await;
}
