//! Bad input gets a clear error in the A2E shape with the right status, and loses nothing; secrets
//! never appear in a response.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

async fn raw(app: &TestApp, path: &str, content_type: &str, body: Vec<u8>) -> (StatusCode, Value) {
    let resp = app
        .client
        .post(format!("{}{path}", app.base))
        .bearer_auth(&app.admin)
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .unwrap();
    let status = resp.status();
    (status, resp.json().await.unwrap())
}

fn assert_error_shape(body: &Value, code: &str) {
    assert_eq!(body["code"], code, "{body}");
    assert!(!body["error"].as_str().unwrap().is_empty());
    assert!(body["retryable"].is_boolean());
    assert_eq!(body["version"], "1.0");
    assert!(body["id"].is_string() && body["ts"].is_number());
}

#[tokio::test]
async fn malformed_wrongly_typed_and_oversized_bodies() {
    let app = spawn_app().await;
    let (status, body) = raw(
        &app,
        "/v1/servers",
        "application/json",
        b"{not json".to_vec(),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_error_shape(&body, "invalid_request");
    assert_eq!(body["type"], "error");
    assert_eq!(body["req_id"], "");

    let (status, body) = raw(&app, "/v1/servers", "text/plain", b"{}".to_vec()).await;
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert_error_shape(&body, "invalid_request");

    let big = format!(
        "{{\"config\": {{\"name\": \"{}\"}}}}",
        "x".repeat(100 * 1024)
    );
    let (status, body) = raw(&app, "/v1/servers", "application/json", big.into_bytes()).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_error_shape(&body, "payload_too_large");

    let (status, body) = app
        .post(
            "/v1/servers",
            &app.admin,
            json!({"type": "mcp/prompt/get/req"}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("mcp/server/register/req"),
        "{body}"
    );

    let (status, body) = app.get("/v1/nowhere", &app.admin).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_error_shape(&body, "not_found");
    app.stop().await;
}

#[tokio::test]
async fn invalid_configs_are_refused_with_the_reason() {
    let app = spawn_app().await;
    let cases = [
        (json!({"server_id": "e", "cmd": []}), "cmd"),
        (json!({"server_id": "e", "cmd": [""]}), "cmd"),
        (
            json!({"server_id": "e", "transport": "pigeon", "cmd": ["x"]}),
            "pigeon",
        ),
        (json!({"server_id": "a__b", "cmd": ["x"]}), "server_id"),
        (json!({"server_id": "_a", "cmd": ["x"]}), "server_id"),
        (json!({"server_id": "has space", "cmd": ["x"]}), "server_id"),
        (
            json!({"server_id": "h", "transport": "http", "url": "file:///etc/passwd"}),
            "url",
        ),
        (
            json!({"server_id": "h", "transport": "http", "url": "http://169.254.169.254/"}),
            "link-local",
        ),
        (
            json!({"server_id": "h", "transport": "http", "url": "http://[fe80::1]:80/"}),
            "link-local",
        ),
        (
            json!({"server_id": "h", "transport": "http", "url": ""}),
            "url",
        ),
        // A host no resolver can find is invalid input, not a 502 "cannot resolve".
        (
            json!({"server_id": "h", "transport": "http", "url": "https://$"}),
            "not a valid host name",
        ),
        (
            json!({"server_id": "h", "transport": "ws", "url": "ws://a%7Bb:80/"}),
            "not a valid host name",
        ),
        (
            json!({"server_id": "t", "cmd": ["x"], "timeout": 0}),
            "timeout",
        ),
        (
            json!({"server_id": "t", "cmd": ["x"], "timeout": "soon"}),
            "timeout",
        ),
        (
            json!({"server_id": "p", "cmd": ["x"], "protocol_version": "2024-11-05"}),
            "protocol_version",
        ),
    ];
    for (config, hint) in cases {
        let (status, body) = app
            .post(
                "/v1/servers",
                &app.admin,
                json!({"id": "bad-1", "config": config}),
            )
            .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{config}: {body}");
        assert_error_shape(&body, "invalid_request");
        assert!(
            body["error"].as_str().unwrap().contains(hint),
            "{config}: {body}"
        );
    }
    let (_, list) = app.get("/v1/servers", &app.admin).await;
    assert_eq!(list["servers"], json!([]), "nothing was stored");
    app.stop().await;
}

#[tokio::test]
async fn a_duplicate_id_is_a_conflict_and_the_first_server_is_untouched() {
    let app = spawn_app().await;
    let marker = unique("dup");
    app.register_server(py_stdio("dup", &marker)).await;
    let (status, body) = app
        .post(
            "/v1/servers",
            &app.admin,
            json!({"config": py_stdio("dup", "other")}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_error_shape(&body, "conflict");
    assert!(
        pids_with_marker("other").is_empty(),
        "the duplicate never ran"
    );
    app.call_tool("dup__echo", json!({"text": "first"})).await;
    app.stop().await;
}

#[tokio::test]
async fn a_generated_server_id_is_eight_hex_characters() {
    let peer = py_http().await;
    let app = spawn_app().await;
    let server = app
        .register_server(json!({"transport": "http", "url": peer.url}))
        .await;
    let id = server["server_id"].as_str().unwrap();
    assert_eq!(id.len(), 8);
    assert!(id.chars().all(|c| c.is_ascii_hexdigit()), "{id}");
    app.stop().await;
}

#[tokio::test]
async fn secrets_never_appear_in_a_response() {
    let peer = py_http().await;
    let app = spawn_app().await;
    let env_secret = "env-s3cret-value";
    let header_secret = "header-s3cret-value";
    let mut stdio = py_stdio("sec", &unique("sec"));
    stdio["env"]["API_KEY"] = json!(env_secret);
    let mut responses = vec![
        app.post("/v1/servers", &app.admin, json!({"config": stdio}))
            .await
            .1,
    ];
    let http = json!({"server_id": "sech", "transport": "http", "url": peer.url, "headers": {"X-Token": header_secret}});
    responses.push(
        app.post("/v1/servers", &app.admin, json!({"config": http}))
            .await
            .1,
    );
    responses.push(app.get("/v1/servers", &app.admin).await.1);
    responses.push(app.get("/v1/servers/sec", &app.admin).await.1);
    responses.push(app.get("/v1/servers/sech", &app.admin).await.1);
    responses.push(
        app.patch("/v1/servers/sech", &app.admin, json!({"timeout": 9}))
            .await
            .1,
    );
    responses.push(
        app.post(
            "/v1/a2e",
            &app.admin,
            json!({"type": "mcp/server/get/req", "server_id": "sec"}),
        )
        .await
        .1,
    );
    responses.push(app.get("/v1/tools", &app.admin).await.1);
    for body in &responses {
        let text = body.to_string();
        assert!(
            !text.contains(env_secret) && !text.contains(header_secret),
            "a secret leaked: {text}"
        );
    }
    assert_eq!(responses[3]["config"]["env"]["API_KEY"], "***");
    assert_eq!(responses[4]["config"]["headers"]["X-Token"], "***");
    // The secrets still work upstream.
    let (_, body) = app.call("sec__getenv", json!({"name": "API_KEY"})).await;
    assert_eq!(body["content"][0]["text"], env_secret);
    app.stop().await;
}

/// A message is a JSON object: an array is not taken for one (serde would read it as the
/// struct's fields in order).
#[tokio::test]
async fn a_body_that_is_not_an_object_is_refused() {
    let app = spawn_app().await;
    for body in [json!([]), json!(["x"]), json!("text"), json!(3)] {
        for path in ["/v1/servers/import", "/v1/tools/call", "/v1/a2e"] {
            let (status, answer) = app.post(path, &app.admin, body.clone()).await;
            assert_eq!(
                status,
                StatusCode::UNPROCESSABLE_ENTITY,
                "{path} {body}: {answer}"
            );
            assert_error_shape(&answer, "invalid_request");
        }
    }
}

/// Nor inside a message: an array where an A2E object goes (a root, a server's `config` or
/// `auth`) is refused, and what was stored stays.
#[tokio::test]
async fn an_array_is_not_taken_for_an_object_inside_a_message() {
    let app = spawn_app().await;
    let roots = json!({"roots": [{"uri": "file:///kept"}]});
    let (status, _) = app.put("/v1/roots", &app.admin, roots).await;
    assert_eq!(status, StatusCode::OK);
    let wrong = json!({"roots": [["file:///wrong"]]});
    let (status, answer) = app.put("/v1/roots", &app.admin, wrong).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
    assert_error_shape(&answer, "invalid_request");
    assert!(
        answer["error"]
            .as_str()
            .unwrap()
            .contains("roots[0]: invalid type: sequence, expected an object"),
        "{answer}"
    );
    let envelope = json!({"type": "mcp/roots/set/req", "roots": [["file:///wrong"]]});
    let (status, answer) = app.post("/v1/a2e", &app.admin, envelope).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
    let (_, now) = app.get("/v1/roots", &app.admin).await;
    assert_eq!(now["roots"], json!([{"uri": "file:///kept", "name": ""}]));

    let config = json!({"transport": "http", "url": "http://127.0.0.1:1/mcp", "auth": []});
    let (status, answer) = app
        .post("/v1/servers", &app.admin, json!({"config": config}))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{answer}");
    assert!(
        answer["error"]
            .as_str()
            .unwrap()
            .contains("config.auth: invalid type: sequence, expected an object"),
        "{answer}"
    );
    let (_, servers) = app.get("/v1/servers", &app.admin).await;
    assert_eq!(servers["servers"], json!([]), "{servers}");
    app.stop().await;
}
