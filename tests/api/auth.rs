//! Authentication and rights: every /v1 route needs a valid bearer; stdio needs admin; a server
//! is changed or removed only by its owner or an admin.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::*;

fn token_with(claims: Value, secret: &str) -> String {
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(secret.as_bytes()).unwrap(),
    )
    .unwrap()
}

/// The same claims under `alg: none` and without a signature.
fn unsigned(token: &str) -> String {
    let payload = token.split('.').nth(1).unwrap();
    // base64url of {"alg":"none","typ":"JWT"}
    format!("eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.{payload}.")
}

fn now() -> u64 {
    jsonwebtoken::get_current_timestamp()
}

#[tokio::test]
async fn every_v1_route_needs_a_valid_token() {
    let app = spawn_app().await;
    let bad_tokens = [
        None,
        Some("not-a-jwt".to_owned()),
        Some(token_with(
            json!({"sub": "alice", "exp": now() + 600}),
            "wrong-secret",
        )),
        Some(token_with(
            json!({"sub": "alice", "exp": now() - 600}),
            SECRET,
        )),
        Some(token_with(json!({"sub": "alice"}), SECRET)),
        Some(token_with(json!({"exp": now() + 600}), SECRET)),
        Some(token_with(
            json!({"sub": "alice", "exp": now() + 600, "nbf": now() + 600}),
            SECRET,
        )),
        Some(unsigned(&token_with(
            json!({"sub": "alice", "exp": now() + 600}),
            SECRET,
        ))),
    ];
    let routes = [
        (Method::GET, "/v1/servers"),
        (Method::POST, "/v1/servers"),
        (Method::GET, "/v1/servers/x"),
        (Method::DELETE, "/v1/servers/x"),
        (Method::GET, "/v1/tools"),
        (Method::POST, "/v1/tools/call"),
        (Method::POST, "/v1/a2e"),
    ];
    for token in &bad_tokens {
        for (method, path) in &routes {
            let (status, body) = app
                .send(method.clone(), path, token.as_deref(), Some(json!({})))
                .await;
            assert_eq!(
                status,
                StatusCode::UNAUTHORIZED,
                "{method} {path} with {token:?}: {body}"
            );
            assert_eq!(body["code"], "unauthorized");
            let error = body["error"].as_str().unwrap_or_default();
            assert!(error.contains("Authorization: Bearer <JWT>"), "{error}");
        }
    }
    // A valid token, and the public routes without one.
    let good = token_with(json!({"sub": "alice", "exp": now() + 600}), SECRET);
    for scheme in ["Basic", "Token", "Bearer:"] {
        let response = app
            .client
            .get(format!("{}/v1/servers", app.base))
            .header("authorization", format!("{scheme} {good}"))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{scheme}");
        let body: Value = response.json().await.unwrap();
        assert!(
            body["error"]
                .as_str()
                .unwrap_or_default()
                .contains("Authorization: Bearer <JWT>"),
            "{body}"
        );
    }
    let (status, _) = app.get("/v1/servers", &good).await;
    assert_eq!(status, StatusCode::OK);
    let response = app
        .client
        .get(format!("{}/v1/servers", app.base))
        .header("authorization", format!("BEARER {good}"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        response.status(),
        StatusCode::OK,
        "the scheme is case-insensitive"
    );
    for path in ["/healthz", "/readyz", "/openapi.json", "/docs/"] {
        let (status, _) = app.send(Method::GET, path, None, None).await;
        assert_eq!(status, StatusCode::OK, "{path}");
    }
    app.stop().await;
}

#[tokio::test]
async fn stdio_needs_the_admin_role() {
    let app = spawn_app().await;
    let (status, body) = app
        .post(
            "/v1/servers",
            &app.alice,
            json!({"config": everything_stdio("ev")}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["code"], "forbidden");
    assert_eq!(body["ok"], false);
    let (_, list) = app.get("/v1/servers", &app.alice).await;
    assert_eq!(list["servers"], json!([]));
    app.stop().await;
}

#[tokio::test]
async fn only_the_owner_or_an_admin_manages_a_server() {
    let peer = py_http().await;
    let app = spawn_app().await;
    let (status, body) = app
        .post(
            "/v1/servers",
            &app.alice,
            json!({"config": {"server_id": "alices", "transport": "http", "url": peer.url}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    // Everyone may use it.
    let (status, _) = app
        .post(
            "/v1/tools/call",
            &app.bob,
            json!({"name": "alices__echo", "arguments": {"text": "hi"}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    // Bob may not change or remove it.
    for (method, path, body) in [
        (Method::DELETE, "/v1/servers/alices", None),
        (
            Method::PATCH,
            "/v1/servers/alices",
            Some(json!({"timeout": 5})),
        ),
        (Method::POST, "/v1/servers/alices/reconnect", None),
    ] {
        let (status, resp) = app.send(method.clone(), path, Some(&app.bob), body).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{method} {path}: {resp}");
        assert_eq!(resp["code"], "forbidden");
    }
    let (status, _) = app
        .patch("/v1/servers/alices", &app.alice, json!({"timeout": 5}))
        .await;
    assert_eq!(status, StatusCode::OK);
    app.unregister_server("alices").await;
    app.stop().await;
}
