//! Which agent each in-flight call belongs to, by its JSON-RPC request id (a server-initiated
//! request that arrives on that call's stream goes to its caller) and by its progress token
//! (progress goes to the caller, in order).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{InputRequest, ProgressToken, RequestId};
use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

/// Who made a call, and where its progress goes.
#[derive(Debug)]
pub struct CallOrigin {
    pub agent_id: String,
    /// The A2E `id` of the call, carried by its progress pushes as `req_id`.
    pub req_id: String,
    /// When the caller streams this call: progress goes here instead of to its channel.
    pub progress: Option<UnboundedSender<Value>>,
    /// When the call came through `/mcp`: the client its progress and (when it can take them)
    /// the server's sampling and elicitation requests go to.
    pub client: Option<DownstreamClient>,
}

/// An MCP client of `/mcp` making a call, and what it declared it can do.
#[derive(Debug, Clone)]
pub struct DownstreamClient {
    pub peer: rmcp::Peer<rmcp::RoleServer>,
    pub sampling: bool,
    pub elicitation: bool,
    /// The client's own progress token for the call, when it asked for progress.
    pub progress_token: Option<ProgressToken>,
    /// A stateless (2026-07-28) client cannot be sent a request: what the server asks during
    /// its call goes here, to come back to the client as the call's input-required result.
    pub inputs: Option<UnboundedSender<InputAsk>>,
}

/// A server's request for a stateless `/mcp` client, and where its answer goes (the client's
/// answer as JSON, or why there is none).
#[derive(Debug)]
pub struct InputAsk {
    pub request: InputRequest,
    pub answer: tokio::sync::oneshot::Sender<Result<Value, String>>,
}

#[derive(Default)]
pub struct Calls {
    by_request: Mutex<HashMap<RequestId, Arc<CallOrigin>>>,
    by_token: Mutex<HashMap<String, Arc<CallOrigin>>>,
}

/// The progress token as a map key: its JSON text, the same whichever side it comes from.
pub fn token_key(token: &Value) -> String {
    token.to_string()
}

impl Calls {
    /// Remembers a call until the returned guard is dropped.
    pub fn track(
        self: &Arc<Self>,
        id: RequestId,
        token: &ProgressToken,
        origin: Arc<CallOrigin>,
    ) -> Tracked {
        let token = token_key(&serde_json::to_value(token).unwrap_or_default());
        self.by_request
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.clone(), origin.clone());
        self.by_token
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(token.clone(), origin);
        Tracked {
            calls: self.clone(),
            id,
            token,
        }
    }

    pub fn by_request(&self, id: &RequestId) -> Option<Arc<CallOrigin>> {
        self.by_request
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .cloned()
    }

    /// The only call in flight, if there is exactly one.
    pub fn sole(&self) -> Option<Arc<CallOrigin>> {
        let calls = self.by_request.lock().unwrap_or_else(|e| e.into_inner());
        match calls.len() {
            1 => calls.values().next().cloned(),
            _ => None,
        }
    }

    pub fn in_flight(&self) -> usize {
        self.by_request
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .len()
    }

    pub fn by_token(&self, token: &Value) -> Option<Arc<CallOrigin>> {
        self.by_token
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&token_key(token))
            .cloned()
    }
}

pub struct Tracked {
    calls: Arc<Calls>,
    id: RequestId,
    token: String,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.calls
            .by_request
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.id);
        self.calls
            .by_token
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.token);
    }
}
