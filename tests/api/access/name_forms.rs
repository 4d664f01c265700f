//! Every form of a name (qualified or not, with a server id or in a URI, on REST, `/mcp` and the
//! legacy transport) meets the same policy.

use reqwest::StatusCode;
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

use crate::helpers::*;

use super::{args, audit_actions};

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
