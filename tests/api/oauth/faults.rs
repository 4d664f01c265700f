//! OAuth against a faulty upstream: a token endpoint that cannot be reached, and a discovered URL
//! the address guard refuses.

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;

/// A protected resource whose metadata points wherever `authorization_server` says, and (when
/// that is itself) an authorization server that approves at once but whose token endpoint is a
/// closed port: the faults a bridge must survive without losing the server or leaking anything.
async fn faulty_upstream(authorization_server: Option<&str>) -> String {
    use axum::http::header;
    use axum::response::IntoResponse;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = authorization_server.map_or(base.clone(), str::to_owned);
    let refuse = {
        let challenge = format!(
            r#"Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp""#
        );
        move || async move {
            (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, challenge)],
            )
        }
    };
    let resource = json!({"resource": format!("{base}/mcp"), "authorization_servers": [server]});
    let metadata = json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        // Nothing listens on the discard port.
        "token_endpoint": "http://127.0.0.1:9/token",
        "registration_endpoint": format!("{base}/register"),
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
    });
    let app = axum::Router::new()
        .route("/mcp", axum::routing::any(refuse))
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            axum::routing::get(move || async move { axum::Json(resource) }),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            axum::routing::get(move || async move { axum::Json(metadata) }),
        )
        .route(
            "/register",
            axum::routing::post(|| async {
                (
                    StatusCode::CREATED,
                    axum::Json(json!({"client_id": "stub-client", "redirect_uris": []})),
                )
            }),
        )
        .route(
            "/authorize",
            axum::routing::get(
                |axum::extract::Query(q): axum::extract::Query<
                    std::collections::HashMap<String, String>,
                >| async move {
                    let back = format!("{}?code=stub-code&state={}", q["redirect_uri"], q["state"]);
                    (StatusCode::FOUND, [(header::LOCATION, back)]).into_response()
                },
            ),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("{base}/mcp")
}

/// A token endpoint that cannot be reached: the callback says so (502), and the server stays
/// registered, waiting for an authorization that can still be given.
#[tokio::test]
async fn an_unreachable_token_endpoint_fails_the_callback_and_keeps_the_server() {
    let app = spawn_app().await;
    let url = faulty_upstream(None).await;
    let config = json!({"server_id": "stub", "transport": "http", "url": url});
    let server = app.register_server_as(&app.alice, config).await;
    assert_eq!(server["status"], "auth_required", "{server}");
    let link = app.authorization_url("stub", &app.alice).await;
    let consent = approve(&link).await;
    assert_eq!(consent.status, StatusCode::BAD_GATEWAY, "{}", consent.body);
    assert!(consent.body.contains("token"), "{}", consent.body);
    let (status, info) = app.get("/v1/servers/stub", &app.alice).await;
    assert_eq!(status, StatusCode::OK, "{info}");
    assert_eq!(info["server"]["status"], "auth_required", "{info}");
    // The state was used up by that attempt: a new link is needed, and one is given.
    let (status, _) = open_callback(&consent.callback_url).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = app.authorize("stub", &app.alice).await;
    assert_eq!(status, StatusCode::OK);
}

/// Protected resource metadata naming an authorization server at a cloud metadata address: the
/// address guard refuses it (the SSRF guard applies to every discovered URL), no link is given,
/// and the server stays registered, in error with the reason.
#[tokio::test]
async fn a_discovered_url_the_guard_refuses_is_never_fetched() {
    let app = spawn_app().await;
    let url = faulty_upstream(Some("http://169.254.169.254/latest")).await;
    let config = json!({"server_id": "ssrf", "transport": "http", "url": url});
    app.register_server_as(&app.alice, config).await;
    let (status, info) = app.get("/v1/servers/ssrf", &app.alice).await;
    assert_eq!(status, StatusCode::OK, "{info}");
    assert_eq!(info["server"]["status"], "error", "{info}");
    let (status, body) = app.authorize("ssrf", &app.alice).await;
    assert!(
        status.is_client_error() || status.is_server_error(),
        "{body}"
    );
    assert!(body.get("authorization_url").is_none(), "{body}");
    assert!(
        !body["error"].as_str().unwrap_or_default().is_empty(),
        "{body}"
    );
}
