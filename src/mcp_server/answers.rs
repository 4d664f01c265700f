//! Across replicas: a shared session's client answers the server's requests on whichever
//! replica its POST reaches, but only the replica that sent a request (the one holding the
//! session's GET stream, or the one whose call's stream carried it) waits for its answer. The
//! request's id names that replica (ids.rs); an answer that reaches another replica is relayed
//! there over the bus, and that replica gives it to its session as if the client had posted it
//! there. It also asks its session's client what a call on another
//! replica needs asked.

use std::sync::Arc;

use axum::body::Bytes;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use futures::future::BoxFuture;
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::Value;

use super::Sessions;
use super::shared::SharedSessions;
use crate::hub::relayed::SessionPeers;
use crate::hub::{Hub, ServerRequest};

/// This replica's sessions as the bus reaches them.
pub struct SessionRelay {
    pub manager: Arc<LocalSessionManager>,
    pub sessions: Arc<Sessions>,
}

impl SessionPeers for SessionRelay {
    fn answer(&self, session: String, message: Value) -> BoxFuture<'_, Result<(), String>> {
        Box::pin(async move {
            let message: ClientJsonRpcMessage =
                serde_json::from_value(message).map_err(|e| format!("a relayed answer: {e}"))?;
            self.manager
                .accept_message(&session.as_str().into(), message)
                .await
                .map_err(|e| e.to_string())
        })
    }

    fn ask(&self, session: String, request: ServerRequest) -> BoxFuture<'_, Result<Value, String>> {
        Box::pin(async move {
            let peer = self
                .sessions
                .peer_of(&session)
                .ok_or("the session is not open on this replica")?;
            super::recipient::ask_peer(&peer, &request, None).await
        })
    }

    fn end(&self, session: String) -> BoxFuture<'_, Result<(), String>> {
        Box::pin(async move {
            let id = session.as_str().into();
            if !self.manager.sessions.read().await.contains_key(&id) {
                return Ok(());
            }
            self.manager
                .close_session(&id)
                .await
                .map_err(|e| e.to_string())
        })
    }
}

/// The answer to `body`, a POST of shared session `session`, when it is the client's answer to
/// a request another replica sent (its id names that replica, ids.rs): relayed there, 202 as
/// rmcp answers a response; when that replica is gone, dropped with a log line, 202 too (no
/// request waits for it any more). `None` leaves it to this replica.
pub async fn relay(
    hub: &Arc<Hub>,
    _shared: &SharedSessions,
    session: &str,
    body: &Bytes,
) -> Option<Response> {
    let finder = |needle: &str| memchr::memmem::find(body, needle.as_bytes()).is_some();
    // Most posts are requests or notifications: they are not parsed here.
    if !finder("\"result\"") && !finder("\"error\"") {
        return None;
    }
    let message: Value = serde_json::from_slice(body).ok()?;
    let answer = message.get("method").is_none()
        && (message.get("result").is_some() || message.get("error").is_some());
    if !answer {
        return None;
    }
    let replica = super::ids::replica_of(message.get("id")?)?.to_owned();
    if replica == hub.replica()? {
        return None;
    }
    if let Err(error) = hub.answer_session(&replica, session, message).await {
        tracing::warn!(%error, %replica, "an /mcp client's answer to a replica that is gone: dropped");
    }
    Some(StatusCode::ACCEPTED.into_response())
}
