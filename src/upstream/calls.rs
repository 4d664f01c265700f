//! Who made each call in flight (its recipient), by its JSON-RPC request id (a server-initiated
//! request that arrives on that call's stream goes to its caller) and by its progress token
//! (progress goes to the caller, in order).

use foldhash::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{NumberOrString, ProgressToken, RequestId};
use serde_json::Value;

use crate::hub::Recipient;

/// Who made a call: where its progress and the server's requests during it go.
pub type CallOrigin = Arc<dyn Recipient>;

#[derive(Default)]
pub struct Calls {
    by_request: Mutex<HashMap<RequestId, CallOrigin>>,
    by_token: Mutex<HashMap<NumberOrString, CallOrigin>>,
}

/// A progress token as a server sends it back: an integer or a string, as the specification
/// allows (anything else names no call).
fn token_of(token: &Value) -> Option<NumberOrString> {
    match token {
        Value::Number(number) => number.as_i64().map(NumberOrString::Number),
        Value::String(text) => Some(NumberOrString::String(text.as_str().into())),
        _ => None,
    }
}

impl Calls {
    /// Remembers a call until the returned guard is dropped.
    pub fn track(
        self: &Arc<Self>,
        id: RequestId,
        token: &ProgressToken,
        origin: CallOrigin,
    ) -> Tracked {
        let token = token.0.clone();
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

    pub fn by_request(&self, id: &RequestId) -> Option<CallOrigin> {
        self.by_request
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .cloned()
    }

    /// The only call in flight, if there is exactly one.
    pub fn sole(&self) -> Option<CallOrigin> {
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

    pub fn by_token(&self, token: &Value) -> Option<CallOrigin> {
        let token = token_of(token)?;
        self.by_token
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&token)
            .cloned()
    }
}

pub struct Tracked {
    calls: Arc<Calls>,
    id: RequestId,
    token: NumberOrString,
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
