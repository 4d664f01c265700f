//! OAuth 2.0 protected resource metadata (RFC 9728), public: how MCP clients (the Inspector, IDEs,
//! the SDKs) learn that `/mcp` and the REST API take a bearer JWT, and from which issuer when one
//! is configured (`MCP_BRIDGE_JWT_ISSUER`). Without it they start an OAuth flow of their own, or
//! fail with a message that never mentions a token. Not part of the REST API's OpenAPI document.

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::get;
use serde_json::{Value, json};

use crate::http::auth::base_url;
use crate::http::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/.well-known/oauth-protected-resource", get(whole))
        .route("/.well-known/oauth-protected-resource/mcp", get(mcp))
}

/// The bridge as a whole (the REST API under `/v1` and `/mcp`).
async fn whole(State(state): State<AppState>, headers: HeaderMap) -> Json<Value> {
    Json(metadata(&state, &headers, ""))
}

/// `/mcp`, where RFC 9728 puts a resource with a path.
async fn mcp(State(state): State<AppState>, headers: HeaderMap) -> Json<Value> {
    Json(metadata(&state, &headers, "/mcp"))
}

fn metadata(state: &AppState, headers: &HeaderMap, path: &str) -> Value {
    let base = base_url(state.config.public_url.as_deref(), headers);
    let mut doc = json!({
        "resource": format!("{base}{path}"),
        "resource_name": "mcp-bridge",
        "bearer_methods_supported": ["header"],
        "resource_documentation": format!("{base}/docs"),
    });
    // Tokens come from the issuer the bridge checks `iss` against; without one they are minted
    // with the bridge's own key (`mcp-bridge token`), and there is no server to send a client to.
    if let Some(issuer) = &state.config.jwt_issuer {
        doc["authorization_servers"] = json!([issuer]);
    }
    doc
}
