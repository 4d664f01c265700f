//! Who sees what (issue 19): access policies on REST and `/mcp`, claims and the access default,
//! with the helpers every access test uses; toolsets, the deferred meta-tools, tool search and
//! all of it kept across a restart are in `toolsets`, and every form of a name meeting the same
//! policy in `name_forms`.

use reqwest::StatusCode;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

use crate::helpers::*;

mod name_forms;
mod toolsets;

/// A token for `sub` with these roles and extra claims.
fn token(sub: &str, roles: &[&str], claims: Value) -> String {
    let mut body = json!({
        "sub": sub,
        "exp": jsonwebtoken::get_current_timestamp() + 3600,
        "roles": roles,
    });
    for (k, v) in claims.as_object().cloned().unwrap_or_default() {
        body[k] = v;
    }
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &body,
        &jsonwebtoken::EncodingKey::from_secret(SECRET.as_bytes()).unwrap(),
    )
    .unwrap()
}

async fn names(app: &TestApp, query: &str, token: &str) -> Vec<String> {
    let tools = app.list_tools_as(token, query).await;
    tools
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

async fn call_as(app: &TestApp, token: &str, body: Value) -> (StatusCode, Value) {
    app.post("/v1/tools/call", token, body).await
}

/// An rmcp client on `path` of the bridge, as `token`.
async fn mcp_as(
    app: &TestApp,
    path: &str,
    token: &str,
) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    let config = StreamableHttpClientTransportConfig::with_uri(format!("{}{path}", app.base))
        .auth_header(token.to_owned());
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    ().serve(transport).await.unwrap()
}

fn args(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

async fn audit_actions(app: &TestApp) -> Vec<(String, String, String)> {
    let (status, body) = app.get("/v1/audit?limit=1000", &app.admin).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let field = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
            (field("actor"), field("action"), field("target"))
        })
        .collect()
}

#[tokio::test]
async fn two_agents_under_different_policies_see_and_call_different_tools() {
    let app = spawn_app().await;
    app.register_server(everything_stdio("ev")).await;
    let readers = json!({
        "match": {"roles": ["reader"]},
        "allow": {"tools": ["ev__echo", "ev__get-*"]},
        "deny": {"tools": ["ev__get-tiny-image"]}
    });
    let (status, body) = app
        .put("/v1/policies/readers", &app.alice, readers.clone())
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "only admins: {body}");
    let (status, body) = app
        .put("/v1/policies/readers", &app.admin, readers.clone())
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["name"], "readers");
    assert_eq!(body["defined_in"], "api");
    let (status, _) = app.put("/v1/policies/readers", &app.admin, readers).await;
    assert_eq!(status, StatusCode::OK, "replaced");
    let (status, body) = app
        .put(
            "/v1/policies/no-echo",
            &app.admin,
            json!({"match": {"subs": ["bo*"]}, "deny": {"tools": ["ev__echo"]}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    // Bad input: a clear error, and nothing stored changes.
    let (status, body) = app
        .put(
            "/v1/policies/broken",
            &app.admin,
            json!({"alow": {"tools": ["x"]}}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body["error"].as_str().unwrap().contains("alow"), "{body}");
    let (status, body) = app
        .put("/v1/policies/bad%20name", &app.admin, json!({}))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let (_, listed) = app.get("/v1/policies", &app.admin).await;
    let listed: Vec<&str> = listed["policies"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["no-echo", "readers"]);

    let carol = token("carol", &["reader"], json!({}));
    let seen = names(&app, "", &carol).await;
    assert!(
        seen.iter()
            .all(|n| n == "ev__echo" || n.starts_with("ev__get-")),
        "{seen:?}"
    );
    assert!(
        seen.contains(&"ev__echo".to_owned()) && seen.contains(&"ev__get-sum".to_owned()),
        "{seen:?}"
    );
    assert!(
        !seen
            .iter()
            .any(|n| n == "ev__get-tiny-image" || n == "agent_list"),
        "{seen:?}"
    );
    let bob_sees = names(&app, "", &app.bob).await;
    assert!(!bob_sees.contains(&"ev__echo".to_owned()), "{bob_sees:?}");
    assert!(
        bob_sees.contains(&"ev__get-tiny-image".to_owned()),
        "{bob_sees:?}"
    );
    // The admin, who owns the server, sees all of it.
    assert!(
        names(&app, "", &app.admin)
            .await
            .contains(&"ev__echo".to_owned())
    );

    let echo = json!({"name": "ev__echo", "arguments": {"message": "hi"}});
    let (status, body) = call_as(&app, &carol, echo.clone()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = call_as(&app, &app.bob, echo).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(body["code"], "mcp_tool_not_found", "{body}");
    let (status, body) = call_as(
        &app,
        &carol,
        json!({"name": "ev__get-tiny-image", "arguments": {}}),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    // Indistinguishable from a tool that does not exist.
    let (_, missing) = call_as(&app, &carol, json!({"name": "ev__nope", "arguments": {}})).await;
    assert_eq!(
        body["error"]
            .as_str()
            .unwrap()
            .replace("get-tiny-image", "nope"),
        missing["error"].as_str().unwrap()
    );
    // Through /v1/a2e as well.
    let (status, body) = app
        .post(
            "/v1/a2e",
            &app.bob,
            json!({"type": "tool/call/req", "name": "ev__echo", "arguments": {"message": "x"}}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");

    // And on /mcp.
    let client = mcp_as(&app, "/mcp", &carol).await;
    let listed: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(listed, seen);
    let refused = client
        .call_tool(CallToolRequestParams::new("ev__get-tiny-image"))
        .await;
    assert!(refused.is_err(), "{refused:?}");
    let result = client
        .call_tool(
            CallToolRequestParams::new("ev__echo").with_arguments(args(json!({"message": "m"}))),
        )
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    client.cancel().await.unwrap();

    let audit = audit_actions(&app).await;
    for (actor, target) in [("bob", "ev__echo"), ("carol", "ev__get-tiny-image")] {
        assert!(
            audit
                .iter()
                .any(|(a, action, t)| a == actor && action == "tool.call.denied" && t == target),
            "{actor} {target}: {audit:?}"
        );
    }
    let (status, _) = app.delete("/v1/policies/no-echo", &app.admin).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = app.delete("/v1/policies/no-echo", &app.admin).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(
        names(&app, "", &app.bob)
            .await
            .contains(&"ev__echo".to_owned())
    );
    app.stop().await;
}

#[tokio::test]
async fn claims_pick_policies_and_the_default_can_deny() {
    let app = TestApp::builder()
        .configure(|c| {
            c.access_default = mcp_bridge::config::AccessDefault::Deny;
            c.policies = vec![
        serde_json::from_value(json!({
            "name": "payments",
            "match": {"claims": {"team": "pay*", "groups": "ops"}},
            "allow": {"tools": ["ev__echo"], "resources": ["demo://resource/static/document/*"]}
        }))
        .unwrap(),
    ];
        })
        .spawn()
        .await;
    app.register_server(everything_stdio("ev")).await;
    let payments = token(
        "p1",
        &[],
        json!({"team": "payments", "groups": ["dev", "ops"]}),
    );
    let search = token("s1", &[], json!({"team": "search", "groups": ["ops"]}));
    assert_eq!(names(&app, "", &payments).await, ["ev__echo"]);
    assert!(names(&app, "", &search).await.is_empty());
    let (_, resources) = app.get("/v1/resources", &payments).await;
    let uris: Vec<&str> = resources["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert!(
        !uris.is_empty()
            && uris
                .iter()
                .all(|u| u.starts_with("demo://resource/static/document/")),
        "{uris:?}"
    );
    let (_, resources) = app.get("/v1/resources", &search).await;
    assert_eq!(resources["resources"], json!([]));
    let (status, body) = app
        .post("/v1/resources/read", &search, json!({"uri": uris[0]}))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, body) = app
        .post("/v1/resources/read", &payments, json!({"uri": uris[0]}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, prompts) = app.get("/v1/prompts", &payments).await;
    assert_eq!(
        prompts["prompts"],
        json!([]),
        "no prompt rule: the default, deny"
    );
    // The config file's policy cannot be changed through the API.
    let (status, body) = app
        .put("/v1/policies/payments", &app.admin, json!({}))
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let (_, listed) = app.get("/v1/policies", &app.admin).await;
    assert_eq!(listed["access_default"], "deny");
    assert_eq!(listed["policies"][0]["defined_in"], "config");
    // Its owner and admins still see everything.
    assert!(names(&app, "", &app.admin).await.len() > 5);
    app.stop().await;
}
