//! `null` for an optional request field is an absent field (what clients generated from the
//! OpenAPI document and pydantic models dumped as they are send), on every route that reads a
//! body and on `/v1/a2e`; a wrong type is still 422.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::*;

/// The envelope fields a generated client sends as `null` when they are left unset.
fn with_null_envelope(mut body: Value) -> Value {
    for key in ["type", "id", "version", "ts"] {
        body[key] = Value::Null;
    }
    body
}

/// Sends `body` (nulls and all) and the same body with its null fields left out; both must get
/// the same status, and the one with nulls must not be refused for them.
async fn same_as_absent(
    app: &TestApp,
    method: Method,
    path: &str,
    nulls: Value,
    absent: Value,
) -> (StatusCode, Value) {
    let (status, body) = app
        .send(method.clone(), path, Some(&app.admin), Some(nulls))
        .await;
    if path.ends_with("/unsubscribe") {
        // Unsubscribing is not idempotent: subscribe again for the second one.
        let again = json!({"uri": "fixture://doc/1"});
        app.post("/v1/resources/subscribe", &app.admin, again).await;
    }
    let (expected, reference) = app.send(method, path, Some(&app.admin), Some(absent)).await;
    assert_ne!(status, StatusCode::UNPROCESSABLE_ENTITY, "{path}: {body}");
    assert_eq!(status, expected, "{path}: {body} vs {reference}");
    assert_eq!(body["type"], reference["type"], "{path}");
    assert_eq!(body["code"], reference["code"], "{path}: {body}");
    (status, body)
}

#[tokio::test]
async fn every_body_route_reads_a_null_optional_field_as_absent() {
    let app = spawn_app().await;
    // Registration: every optional field of the request and of its config null. The config
    // takes the defaults an absent field takes (timeout 300, connect_timeout 30,
    // auto_reconnect true), not the zero of its type.
    let mut config = py_stdio("nul", &unique("nul"));
    for key in [
        "name",
        "cwd",
        "url",
        "headers",
        "timeout",
        "connect_timeout",
        "auto_reconnect",
        "protocol_version",
        "tool_allow_list",
        "resource_allow_list",
        "auth",
    ] {
        config[key] = Value::Null;
    }
    let (status, body) = app
        .post(
            "/v1/servers",
            &app.admin,
            with_null_envelope(json!({ "config": config })),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert!(!body["req_id"].as_str().unwrap().is_empty(), "{body}");
    let (_, shown) = app.get("/v1/servers/nul", &app.admin).await;
    assert_eq!(shown["config"]["timeout"], 300, "{shown}");
    assert_eq!(shown["config"]["connect_timeout"], 30, "{shown}");
    assert_eq!(shown["config"]["auto_reconnect"], true, "{shown}");

    // PATCH: the null fields stay as they are.
    let (status, body) = app
        .patch(
            "/v1/servers/nul",
            &app.admin,
            with_null_envelope(json!({
                "server_id": null, "name": "renamed", "cmd": null, "cwd": null, "env": null,
                "url": null, "headers": null, "timeout": null, "connect_timeout": null,
                "auto_reconnect": null, "protocol_version": null, "tool_allow_list": null,
                "resource_allow_list": null
            })),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["config"]["name"], "renamed", "{body}");
    assert_eq!(body["config"]["timeout"], 300, "{body}");

    let cases = [
        (
            "/v1/tools/call",
            json!({"name": "nul__echo", "arguments": {"text": "hi"}, "toolset": null,
                "timeout": null, "task": null}),
        ),
        (
            "/v1/resources/read",
            json!({"uri": "fixture://doc/1", "server_id": null}),
        ),
        (
            "/v1/resources/subscribe",
            json!({"uri": "fixture://doc/1", "server_id": null}),
        ),
        (
            "/v1/resources/unsubscribe",
            json!({"uri": "fixture://doc/1", "server_id": null}),
        ),
        (
            "/v1/prompts/get",
            json!({"name": "greet", "arguments": {"name": "ann"}, "server_id": null}),
        ),
        (
            "/v1/completions",
            json!({"server_id": null, "ref": {"type": "ref/prompt", "name": "greet"},
                "argument": {"name": "name", "value": "al"}, "context": null}),
        ),
        (
            "/v1/sampling/responses",
            json!({"req_id": "nobody", "server_id": null, "mcp_request_id": null,
                "role": null, "content": {"type": "text", "text": "x"}, "model": null, "stop_reason": null, "error": null}),
        ),
        (
            "/v1/roots/responses",
            json!({"req_id": "nobody", "server_id": null, "mcp_request_id": null, "roots": null}),
        ),
        (
            "/v1/elicitation/responses",
            json!({"req_id": "nobody", "action": "decline", "content": null}),
        ),
        (
            "/v1/a2a/agents",
            json!({"agent_id": null, "url": "http://127.0.0.1:9/", "headers": null}),
        ),
        (
            "/v1/servers/import",
            json!({"servers": {}, "replace": null}),
        ),
        (
            "/v1/a2e",
            json!({"type": "tool/call/req", "id": null, "version": null, "ts": null,
                "name": "nul__echo", "arguments": {"text": "hi"}, "timeout": null, "task": null}),
        ),
    ];
    for (path, fields) in cases {
        let nulls = if path == "/v1/a2e" {
            fields.clone()
        } else {
            let mut nulls = with_null_envelope(fields.clone());
            if let Value::Object(map) = &mut nulls {
                map.extend(fields.as_object().unwrap().clone());
            }
            nulls
        };
        let absent = strip_nulls(&fields);
        let (status, body) = same_as_absent(&app, Method::POST, path, nulls, absent).await;
        match path {
            "/v1/tools/call" | "/v1/a2e" => {
                assert_eq!(status, StatusCode::OK, "{body}");
                assert_eq!(body["content"][0]["text"], "hi", "{body}");
            }
            "/v1/resources/read" | "/v1/prompts/get" | "/v1/completions" => {
                assert_eq!(status, StatusCode::OK, "{path}: {body}");
            }
            _ => {}
        }
    }

    // The agent's roots (PUT), a root's `name` null; a policy and a toolset (PUT).
    let (status, body) = app
        .send(
            Method::PUT,
            "/v1/roots",
            Some(&app.admin),
            Some(with_null_envelope(
                json!({"roots": [{"uri": "file:///tmp", "name": null}]}),
            )),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["roots"][0]["name"], "", "{body}");
    let (status, body) = app
        .send(
            Method::PUT,
            "/v1/policies/nulls",
            Some(&app.admin),
            Some(
                json!({"match": {"subs": ["nobody"], "roles": null, "claims": null},
                "allow": {"tools": ["nul__echo"], "resources": null, "prompts": null},
                "deny": null}),
            ),
        )
        .await;
    assert!(status.is_success(), "{body}");
    let (status, body) = app
        .send(
            Method::PUT,
            "/v1/toolsets/nulls",
            Some(&app.admin),
            Some(
                json!({"tools": ["nul__echo"], "rename": null, "descriptions": null,
                "deferred": null}),
            ),
        )
        .await;
    assert!(status.is_success(), "{body}");
    app.stop().await;
}

#[tokio::test]
async fn a_wrong_type_is_still_refused() {
    let app = spawn_app().await;
    for (path, body) in [
        (
            "/v1/tools/call",
            json!({"name": "x__y", "arguments": {}, "timeout": "soon"}),
        ),
        ("/v1/resources/read", json!({"uri": 5, "server_id": null})),
        (
            "/v1/servers",
            json!({"config": {"server_id": "w", "transport": "http",
                "url": "http://127.0.0.1:9/mcp", "timeout": "long", "name": null}}),
        ),
        (
            "/v1/a2e",
            json!({"type": "mcp/resource/read/req", "uri": ["a"], "server_id": null}),
        ),
    ] {
        let (status, answer) = app.post(path, &app.admin, body).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{path}: {answer}");
        assert_eq!(answer["code"], "invalid_request", "{path}: {answer}");
    }
    app.stop().await;
}

/// `value` with the null fields of its top level and of the objects directly in it left out
/// (`arguments` kept as sent).
fn strip_nulls(value: &Value) -> Value {
    let mut out = value.clone();
    if let Value::Object(map) = &mut out {
        map.retain(|_, v| !v.is_null());
        for (key, v) in map.iter_mut() {
            if let (false, Value::Object(inner)) = (key == "arguments", v) {
                inner.retain(|_, v| !v.is_null());
            }
        }
    }
    out
}
