//! Prompts and completions against real peers.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

#[tokio::test]
async fn server_everything_prompts_render_with_their_arguments() {
    let app = spawn_app().await;
    app.register_server(everything_stdio("ev")).await;
    let (status, body) = app.get("/v1/prompts", &app.alice).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["type"], "mcp/prompt/list/resp");
    let prompts = body["prompts"].as_array().unwrap();
    assert_eq!(prompts.len(), 4, "{body}");
    let args = prompts
        .iter()
        .find(|p| p["name"] == "args-prompt")
        .expect("args-prompt");
    assert_eq!(args["server_id"], "ev");
    let city = args["arguments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "city")
        .unwrap();
    assert_eq!(city["required"], true);

    let body = app.get_prompt(json!({"id": "p-1", "name": "args-prompt", "arguments": {"city": "Oslo", "state": "Viken"}})).await;
    assert_eq!(body["type"], "mcp/prompt/get/resp");
    assert_eq!(body["req_id"], "p-1");
    assert_eq!(body["server_id"], "ev");
    assert_eq!(body["messages"][0]["role"], "user");
    assert_eq!(
        body["messages"][0]["content"],
        json!({"type": "text", "text": "What's weather in Oslo, Viken?"})
    );

    let (status, body) = app
        .post(
            "/v1/prompts/get",
            &app.alice,
            json!({"name": "args-prompt", "arguments": {"state": "Viken"}}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body["error"].as_str().unwrap().contains("city"), "{body}");
    let (status, body) = app
        .post(
            "/v1/prompts/get",
            &app.alice,
            json!({"name": "no-such-prompt"}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(body["code"], "mcp_prompt_not_found");
    let (status, body) = app
        .post(
            "/v1/prompts/get",
            &app.alice,
            json!({"name": "simple-prompt", "server_id": "ghost"}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["code"], "mcp_server_not_found");
    app.stop().await;
}

#[tokio::test]
async fn a_prompt_several_servers_offer_needs_a_server_id() {
    let app = spawn_app().await;
    app.register_server(py_stdio("one", &unique("p1"))).await;
    app.register_server(py_stdio("two", &unique("p2"))).await;
    let (status, body) = app
        .post(
            "/v1/prompts/get",
            &app.alice,
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let error = body["error"].as_str().unwrap();
    assert!(error.contains("one") && error.contains("two"), "{error}");
    let body = app
        .get_prompt(json!({"name": "greet", "arguments": {"name": "Ada"}, "server_id": "one"}))
        .await;
    assert_eq!(body["messages"][0]["content"]["text"], "Hello, Ada!");
    let (status, body) = app
        .post(
            "/v1/prompts/get",
            &app.alice,
            json!({"name": "code_review", "arguments": {"language": "rust"}, "server_id": "two"}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert!(body["error"].as_str().unwrap().contains("code"), "{body}");
    app.stop().await;
}

/// A prompt may also be named as tools are (`{server_id}__{prompt}`, as `/mcp` shows prompts), so
/// an agent that copies a name from either side is understood.
#[tokio::test]
async fn a_prompt_can_be_named_with_its_server_prefix() {
    let app = spawn_app().await;
    app.register_server(py_stdio("one", &unique("p1"))).await;
    app.register_server(py_stdio("two", &unique("p2"))).await;
    let get = |body: Value| app.post("/v1/prompts/get", &app.alice, body);
    let (status, body) = get(json!({"name": "two__greet", "arguments": {"name": "Ada"}})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["server_id"], "two", "{body}");
    assert_eq!(body["messages"][0]["content"]["text"], "Hello, Ada!");
    // With the same server_id beside it too; a different one is not this prompt.
    let (status, body) =
        get(json!({"name": "one__greet", "server_id": "one", "arguments": {"name": "Ada"}})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) =
        get(json!({"name": "one__greet", "server_id": "two", "arguments": {"name": "Ada"}})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (status, body) = get(json!({"name": "ghost__greet", "arguments": {"name": "Ada"}})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    // Completions take the prefixed name as well.
    let (status, body) = app
        .post("/v1/completions", &app.alice, json!({
            "ref": {"type": "ref/prompt", "name": "one__greet"}, "argument": {"name": "name", "value": "al"}
        }))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["server_id"], "one", "{body}");
    app.stop().await;
}

#[tokio::test]
async fn completions_for_prompt_and_template_arguments() {
    let app = spawn_app().await;
    app.register_server(everything_stdio("ev")).await;
    app.register_server(py_stdio("py", &unique("cmpl"))).await;
    app.register_server(npm_stdio("mem", "mcp-server-memory", &[]))
        .await;

    let (status, body) = app
        .post(
            "/v1/completions",
            &app.alice,
            json!({
                "id": "c-1",
                "ref": {"type": "ref/prompt", "name": "completable-prompt"},
                "argument": {"name": "name", "value": "A"},
                "context": {"arguments": {"department": "Engineering"}}
            }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["type"], "mcp/completion/resp");
    assert_eq!(body["req_id"], "c-1");
    assert_eq!(body["server_id"], "ev");
    assert_eq!(body["values"], json!(["Alice"]));

    let (status, body) = app
        .post("/v1/completions", &app.alice, json!({
            "ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "al"}
        }))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["server_id"], "py");
    assert_eq!(body["values"], json!(["alice", "alfred"]));
    let (status, body) = app
        .post("/v1/completions", &app.alice, json!({
            "ref": {"type": "ref/resource", "uri": "fixture://note/{name}"}, "argument": {"name": "name", "value": "t"}
        }))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["values"], json!(["two", "three"]));

    for (req, status, code) in [
        (
            json!({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "x", "value": ""}}),
            StatusCode::NOT_FOUND,
            "mcp_prompt_not_found",
        ),
        (
            json!({"ref": {"type": "ref/resource", "uri": "x://{y}"}, "argument": {"name": "y", "value": ""}}),
            StatusCode::NOT_FOUND,
            "mcp_resource_not_found",
        ),
        (
            json!({"ref": {"type": "ref/elsewhere"}, "argument": {"name": "x", "value": ""}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
        (
            json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "", "value": ""}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_request",
        ),
        (
            json!({"server_id": "mem", "ref": {"type": "ref/prompt", "name": "x"}, "argument": {"name": "x", "value": ""}}),
            StatusCode::NOT_IMPLEMENTED,
            "mcp_capability_missing",
        ),
    ] {
        let (got, body) = app.post("/v1/completions", &app.alice, req.clone()).await;
        assert_eq!(got, status, "{req}: {body}");
        assert_eq!(body["code"], code, "{req}: {body}");
    }
    app.stop().await;
}

#[tokio::test]
async fn completions_with_a_server_id_keep_to_the_resource_allow_list() {
    let app = spawn_app().await;
    let mut config = py_stdio("al", &unique("cmpl-al"));
    config["resource_allow_list"] = json!(["fixture://item/*"]);
    app.register_server(config).await;
    let complete = |server_id: Option<&str>, uri: &str| {
        let mut req = json!({"ref": {"type": "ref/resource", "uri": uri}, "argument": {"name": "name", "value": "t"}});
        if let Some(id) = server_id {
            req["server_id"] = json!(id);
        }
        app.post("/v1/completions", &app.alice, req)
    };
    // The note template is left out: with or without server_id, the same answer as a template
    // nobody offers (before, naming the server completed it: ["two", "three"]).
    let (status, missing) = complete(Some("al"), "fixture://none/{name}").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{missing}");
    for server_id in [None, Some("al")] {
        let (status, body) = complete(server_id, "fixture://note/{name}").await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{server_id:?}: {body}");
        assert_eq!(body["code"], "mcp_resource_not_found", "{body}");
        assert_eq!(
            body["error"].as_str().unwrap().replace("note", "none"),
            missing["error"].as_str().unwrap(),
            "{body}"
        );
    }
    app.stop().await;
}
