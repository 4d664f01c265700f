//! Who sees what (issue 19): access policies on REST and `/mcp`, claims, the access default,
//! toolsets served to the Python SDK client, the deferred meta-tools, tool search, and all of
//! it kept across a restart.

use std::sync::Arc;

use reqwest::StatusCode;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

use crate::helpers::*;

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
    let (status, body) = app.get(&format!("/v1/tools{query}"), token).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["tools"]
        .as_array()
        .unwrap()
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

/// An rmcp client of `/mcp` in a 2025-11-25 session (where `resources/subscribe` exists), as
/// `token`.
async fn legacy_mcp_as(
    app: &TestApp,
    token: &str,
) -> rmcp::service::RunningService<rmcp::RoleClient, rmcp::model::ClientConfig> {
    let config = StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", app.base))
        .auth_header(token.to_owned());
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    let info = rmcp::model::ClientConfig::new(
        Default::default(),
        rmcp::model::Implementation::new("access-test", "1"),
    )
    .with_protocol_version(rmcp::model::ProtocolVersion::V_2025_11_25);
    info.serve(transport).await.unwrap()
}

/// Issue 34, item 1: a resource, template or prompt is judged by the policies as the item it
/// stands for, whatever form names it (plain, `server_id` beside it, a URI qualified as
/// `mcp-bridge://{server}/{uri}`, a prompt as `{server}__{prompt}`), on every route of REST,
/// `/v1/a2e` and `/mcp`; each refusal is audited.
#[tokio::test]
async fn every_form_of_a_name_meets_the_same_policy() {
    use rmcp::model::{
        ArgumentInfo, CompleteRequestParams, GetPromptRequestParams, ReadResourceRequestParams,
        Reference, SubscribeRequestParams,
    };
    let app = spawn_app().await;
    let mut py = py_stdio("py", &unique("forms"));
    py["env"]["FIXTURE_TEMPLATES"] = json!("1"); // adds fixture://extra0/{name}
    app.register_server(py).await;
    let policy = json!({
        "match": {"subs": ["bob"]},
        "allow": {"resources": ["fixture://note/*"], "prompts": ["py__code_review"]}
    });
    let (status, body) = app.put("/v1/policies/bob", &app.admin, policy).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    // Every way to name what bob may not see, as (route, A2E type, body fields).
    let doc = "fixture://doc/1";
    let wrapped_doc = "mcp-bridge://py/fixture://doc/1";
    let extra = "fixture://extra0/{name}";
    let wrapped_extra = "mcp-bridge://py/fixture://extra0/{name}";
    let mut denied: Vec<(&str, &str, Value)> = Vec::new();
    for (route, kind) in [
        ("/v1/resources/read", "mcp/resource/read/req"),
        ("/v1/resources/subscribe", "mcp/resource/subscribe/req"),
    ] {
        for uri in [doc, wrapped_doc] {
            denied.push((route, kind, json!({"uri": uri})));
            denied.push((route, kind, json!({"uri": uri, "server_id": "py"})));
        }
    }
    for name in ["greet", "py__greet"] {
        denied.push((
            "/v1/prompts/get",
            "mcp/prompt/get/req",
            json!({"name": name, "arguments": {"name": "x"}}),
        ));
        denied.push((
            "/v1/prompts/get",
            "mcp/prompt/get/req",
            json!({"name": name, "server_id": "py", "arguments": {"name": "x"}}),
        ));
        let reference = json!({"type": "ref/prompt", "name": name});
        for server_id in [None, Some("py")] {
            let mut body = json!({"ref": reference, "argument": {"name": "name", "value": "a"}});
            if let Some(id) = server_id {
                body["server_id"] = json!(id);
            }
            denied.push(("/v1/completions", "mcp/completion/req", body));
        }
    }
    for uri in [extra, wrapped_extra] {
        let reference = json!({"type": "ref/resource", "uri": uri});
        for server_id in [None, Some("py")] {
            let mut body = json!({"ref": reference, "argument": {"name": "name", "value": "a"}});
            if let Some(id) = server_id {
                body["server_id"] = json!(id);
            }
            denied.push(("/v1/completions", "mcp/completion/req", body));
        }
    }
    for (route, kind, body) in &denied {
        let (status, answer) = app.post(route, &app.bob, body.clone()).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{route} {body}: {answer}");
        let mut message = body.clone();
        message["type"] = json!(kind);
        message["id"] = json!("a2e-1");
        let (status, answer) = app.post("/v1/a2e", &app.bob, message).await;
        assert_eq!(
            status,
            StatusCode::NOT_FOUND,
            "/v1/a2e {kind} {body}: {answer}"
        );
    }
    // The owner (here the admin) sees all of it, in every form.
    let (status, body) = app
        .post(
            "/v1/resources/read",
            &app.admin,
            json!({"uri": wrapped_doc}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // What the policy allows is reached in every form too.
    for (route, body) in [
        ("/v1/resources/read", json!({"uri": "fixture://note/a"})),
        (
            "/v1/resources/read",
            json!({"uri": "mcp-bridge://py/fixture://note/a"}),
        ),
        (
            "/v1/prompts/get",
            json!({"name": "py__code_review", "arguments": {"language": "rust", "code": "x"}}),
        ),
        (
            "/v1/prompts/get",
            json!({"name": "code_review", "server_id": "py", "arguments": {"language": "rust", "code": "x"}}),
        ),
        (
            "/v1/completions",
            json!({"ref": {"type": "ref/resource", "uri": "mcp-bridge://py/fixture://note/{name}"},
                   "argument": {"name": "name", "value": "o"}}),
        ),
    ] {
        let (status, answer) = app.post(route, &app.bob, body.clone()).await;
        assert_eq!(status, StatusCode::OK, "{route} {body}: {answer}");
    }
    let (_, answer) = app
        .post(
            "/v1/completions",
            &app.bob,
            json!({"ref": {"type": "ref/resource", "uri": "mcp-bridge://py/fixture://note/{name}"},
                   "argument": {"name": "name", "value": "o"}}),
        )
        .await;
    assert_eq!(answer["values"], json!(["one"]), "{answer}");

    // /mcp, in a 2025-11-25 session (subscriptions exist there).
    let client = legacy_mcp_as(&app, &app.bob).await;
    for uri in [doc, wrapped_doc] {
        let read = client
            .peer()
            .read_resource(ReadResourceRequestParams::new(uri))
            .await;
        assert!(read.is_err(), "/mcp resources/read {uri}: {read:?}");
        #[allow(deprecated)] // resources/subscribe is the 2025-11-25 way to follow a resource.
        let subscribed = client
            .peer()
            .subscribe(SubscribeRequestParams::new(uri))
            .await;
        assert!(
            subscribed.is_err(),
            "/mcp resources/subscribe {uri}: {subscribed:?}"
        );
    }
    let prompt = client
        .peer()
        .get_prompt(
            GetPromptRequestParams::new("py__greet").with_arguments(args(json!({"name": "x"}))),
        )
        .await;
    assert!(prompt.is_err(), "/mcp prompts/get py__greet: {prompt:?}");
    for reference in [
        Reference::for_prompt("py__greet"),
        Reference::for_resource(extra),
        Reference::for_resource(wrapped_extra),
    ] {
        let completed = client
            .peer()
            .complete(CompleteRequestParams::new(
                reference.clone(),
                ArgumentInfo::new("name", "a"),
            ))
            .await;
        assert!(
            completed.is_err(),
            "/mcp completion/complete {reference:?}: {completed:?}"
        );
    }
    let allowed = client
        .peer()
        .read_resource(ReadResourceRequestParams::new(
            "mcp-bridge://py/fixture://note/a",
        ))
        .await;
    assert!(allowed.is_ok(), "{allowed:?}");
    client.cancel().await.unwrap();

    // Every refusal is in the audit log, under the item it stands for.
    let audit = audit_actions(&app).await;
    let refused = |action: &str, target: &str| {
        audit
            .iter()
            .any(|(actor, a, t)| actor == "bob" && a == action && t.ends_with(target))
    };
    assert!(refused("resource.read.denied", doc), "{audit:?}");
    assert!(refused("resource.read.denied", extra), "{audit:?}");
    assert!(refused("prompt.get.denied", "py__greet"), "{audit:?}");
    assert!(
        !audit.iter().any(|(_, _, t)| t.contains("mcp-bridge://")),
        "audited as canonical items: {audit:?}"
    );
    app.stop().await;
}
