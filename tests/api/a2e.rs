//! `POST /v1/a2e` answers every implemented request message exactly as its REST route does.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::*;

/// The body without what differs between two answers to the same question.
fn stable(mut value: Value) -> Value {
    match &mut value {
        Value::Object(map) => {
            for key in ["id", "ts", "connected_at"] {
                map.remove(key);
            }
            for v in map.values_mut() {
                *v = stable(v.take());
            }
        }
        Value::Array(items) => {
            for v in items.iter_mut() {
                *v = stable(v.take());
            }
        }
        _ => {}
    }
    value
}

#[tokio::test]
async fn every_message_answers_the_same_both_ways() {
    let peer = py_http().await;
    let app = spawn_app().await;
    let config = json!({"server_id": "both", "transport": "http", "url": peer.url, "tool_allow_list": ["echo", "add"]});

    // (REST method, path, body) and the wire message, in an order where each pair sees the same state.
    let cases: Vec<(Method, String, Option<Value>, Value)> = vec![
        (
            Method::POST,
            "/v1/servers".into(),
            Some(json!({"id": "r1", "config": config})),
            json!({"type": "mcp/server/register/req", "id": "r1", "config": config}),
        ),
        (
            Method::GET,
            "/v1/servers?id=r2&status_filter=ready".into(),
            None,
            json!({"type": "mcp/server/list/req", "id": "r2", "status_filter": "ready"}),
        ),
        (
            Method::GET,
            "/v1/servers/both?id=r3".into(),
            None,
            json!({"type": "mcp/server/get/req", "id": "r3", "server_id": "both"}),
        ),
        (
            Method::PATCH,
            "/v1/servers/both".into(),
            Some(json!({"id": "r4", "timeout": 42})),
            json!({"type": "mcp/server/update/req", "id": "r4", "server_id": "both", "timeout": 42}),
        ),
        (
            Method::POST,
            "/v1/servers/both/reconnect?id=r5".into(),
            None,
            json!({"type": "mcp/server/reconnect/req", "id": "r5", "server_id": "both"}),
        ),
        (
            Method::GET,
            "/v1/tools?id=r6&server_id=both".into(),
            None,
            json!({"type": "tool/list/req", "id": "r6", "server_id": "both"}),
        ),
        (
            Method::POST,
            "/v1/tools/call".into(),
            Some(json!({"id": "r7", "name": "both__add", "arguments": {"a": 1, "b": 2}})),
            json!({"type": "tool/call/req", "id": "r7", "name": "both__add", "arguments": {"a": 1, "b": 2}}),
        ),
        (
            Method::POST,
            "/v1/tools/call".into(),
            Some(json!({"id": "r8", "name": "both__cwd", "arguments": {}})),
            json!({"type": "tool/call/req", "id": "r8", "name": "both__cwd", "arguments": {}}),
        ),
        (
            Method::PUT,
            "/v1/roots".into(),
            Some(json!({"id": "r20", "roots": [{"uri": "file:///srv", "name": "srv"}]})),
            json!({"type": "mcp/roots/set/req", "id": "r20", "roots": [{"uri": "file:///srv", "name": "srv"}]}),
        ),
        (
            Method::GET,
            "/v1/roots?id=r21".into(),
            None,
            json!({"type": "mcp/roots/get/req", "id": "r21"}),
        ),
        (
            Method::POST,
            "/v1/sampling/responses".into(),
            Some(json!({"req_id": "nobody-asked", "content": {"type": "text", "text": "x"}})),
            json!({"type": "mcp/sample/resp", "req_id": "nobody-asked", "content": {"type": "text", "text": "x"}}),
        ),
        (
            Method::POST,
            "/v1/roots/responses".into(),
            Some(json!({"req_id": "nobody-asked", "roots": []})),
            json!({"type": "mcp/root/list/resp", "req_id": "nobody-asked", "roots": []}),
        ),
        (
            Method::POST,
            "/v1/elicitation/responses".into(),
            Some(json!({"req_id": "nobody-asked", "action": "cancel"})),
            json!({"type": "mcp/elicit/resp", "req_id": "nobody-asked", "action": "cancel"}),
        ),
        (
            Method::GET,
            "/v1/servers/ghost?id=r9".into(),
            None,
            json!({"type": "mcp/server/get/req", "id": "r9", "server_id": "ghost"}),
        ),
        (
            Method::DELETE,
            "/v1/servers/both?id=r10".into(),
            None,
            json!({"type": "mcp/server/unregister/req", "id": "r10", "server_id": "both"}),
        ),
    ];
    // Register and unregister change state: run the REST half of all cases, then the A2E half of
    // all cases, so each half starts from nothing registered.
    let mut rest = Vec::new();
    for (method, path, body, _) in &cases {
        rest.push(
            app.send(method.clone(), path, Some(&app.alice), body.clone())
                .await,
        );
    }
    let mut wire = Vec::new();
    for (_, _, _, message) in &cases {
        wire.push(app.post("/v1/a2e", &app.alice, message.clone()).await);
    }
    for (((method, path, _, message), (rs, rb)), (ws, wb)) in cases.iter().zip(rest).zip(wire) {
        assert_eq!(
            rs, ws,
            "{method} {path} vs {}: {rb} / {wb}",
            message["type"]
        );
        assert_eq!(
            stable(rb.clone()),
            stable(wb.clone()),
            "{method} {path} vs {}",
            message["type"]
        );
        let asked = message.get("id").unwrap_or(&message["req_id"]);
        assert_eq!(&rb["req_id"], asked, "{rb}");
    }
    app.stop().await;
}

#[tokio::test]
async fn unknown_and_malformed_messages() {
    let app = spawn_app().await;
    let (status, body) = app
        .post("/v1/a2e", &app.alice, json!({"type": "mcp/teleport/req"}))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        body["error"].as_str().unwrap().contains("mcp/teleport/req"),
        "{body}"
    );
    let (status, _) = app.post("/v1/a2e", &app.alice, json!({"id": "x"})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let (status, body) = app
        .post(
            "/v1/a2e",
            &app.alice,
            json!({"type": "tool/call/req", "arguments": 7}),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    app.stop().await;
}
