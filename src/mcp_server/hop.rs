//! `/mcp` refuses a request that an mcp-bridge sent (it carries [`HOP_HEADER`]): the bridge
//! registered as its own upstream, or two bridges registered as each other's, would re-enter
//! the merged listings without end. The answer is HTTP 508 Loop Detected with a JSON-RPC error
//! for the request's id, which MCP clients (rmcp, the SDKs) report as the call's error and the
//! bridge's upstream client recognises by [`LOOP_REFUSED`].

use axum::http::{HeaderValue, StatusCode, header::CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::guard::{HOP_HEADER, LOOP_REFUSED, instance_id};

/// The refusal of `req`, answering its JSON-RPC id when the body has one.
pub async fn refuse(req: axum::extract::Request, max_body: usize) -> Response {
    let from = req
        .headers()
        .get(HOP_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .chars()
        .take(64)
        .collect::<String>();
    let itself = from == instance_id();
    let body = axum::body::to_bytes(req.into_body(), max_body)
        .await
        .unwrap_or_default();
    let id = serde_json::from_slice::<Value>(&body)
        .ok()
        .and_then(|v| v.get("id").cloned())
        .unwrap_or(Value::Null);
    let whom = match itself {
        true => "itself",
        false => "another mcp-bridge",
    };
    tracing::warn!(from = %from, "/mcp refused a request from {whom} (a bridge registered as an upstream of a bridge)");
    let message = format!(
        "{LOOP_REFUSED} ({whom}; header {HOP_HEADER}): a bridge's /mcp cannot be the upstream of a \
         bridge, the merged listings would call themselves"
    );
    let body = json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": -32600, "message": message },
    });
    let mut resp = (StatusCode::LOOP_DETECTED, body.to_string()).into_response();
    resp.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp
}
