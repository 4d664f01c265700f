//! Who made each call in flight (its recipient), by its JSON-RPC request id (a server-initiated
//! request that arrives on that call's stream goes to its caller) and by its progress token
//! (progress goes to the caller, in order); and, when spans are exported, the span each was made
//! in, so that a server's request handled on rmcp's task waits in the call's trace.

use foldhash::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::{NumberOrString, ProgressToken, RequestId};
use serde_json::Value;

use crate::hub::Recipient;

/// Who made a call: where its progress and the server's requests during it go.
pub type CallOrigin = Arc<dyn Recipient>;

#[derive(Default)]
pub struct Calls {
    by_request: Mutex<HashMap<RequestId, Call>>,
    by_token: Mutex<HashMap<NumberOrString, Call>>,
}

/// A call in flight: who made it, and the span it was made in (only when spans are exported).
struct Call {
    origin: CallOrigin,
    span: Option<tracing::Span>,
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
        let span = crate::telemetry::exporting().then(tracing::Span::current);
        let call = Call {
            origin: origin.clone(),
            span: span.clone(),
        };
        self.by_request
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.clone(), call);
        self.by_token
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(token.clone(), Call { origin, span });
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
            .map(|call| call.origin.clone())
    }

    /// The only call in flight, if there is exactly one.
    pub fn sole(&self) -> Option<CallOrigin> {
        let calls = self.by_request.lock().unwrap_or_else(|e| e.into_inner());
        match calls.len() {
            1 => calls.values().next().map(|call| call.origin.clone()),
            _ => None,
        }
    }

    /// The span of the call `id` (else of the only call in flight) was made in, when spans
    /// are exported: the call a server's request belongs to, found as [`Calls::by_request`]
    /// and [`Calls::sole`] find it.
    pub fn span(&self, id: Option<&RequestId>) -> Option<tracing::Span> {
        let calls = self.by_request.lock().unwrap_or_else(|e| e.into_inner());
        let call = match id.and_then(|id| calls.get(id)) {
            Some(call) => call,
            None if calls.len() == 1 => calls.values().next()?,
            None => return None,
        };
        call.span.clone()
    }

    pub fn in_flight(&self) -> usize {
        self.by_request
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .len()
    }

    /// The call whose progress token `token` is, and the span it was made in when spans are
    /// exported.
    pub fn by_token(&self, token: &Value) -> Option<(CallOrigin, Option<tracing::Span>)> {
        let token = token_of(token)?;
        self.by_token
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&token)
            .map(|call| (call.origin.clone(), call.span.clone()))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hub::{Answer, ServerRequest};
    use futures::future::BoxFuture;

    #[derive(Debug)]
    struct Nobody;

    impl Recipient for Nobody {
        fn agent_id(&self) -> &str {
            "nobody"
        }
        fn progress(&self, _push: crate::a2e::ServerPush) -> BoxFuture<'_, ()> {
            Box::pin(std::future::ready(()))
        }
        fn ask(&self, _request: ServerRequest) -> BoxFuture<'_, Result<Answer, String>> {
            Box::pin(std::future::ready(Err("no".into())))
        }
    }

    /// Tracks call `id` made in `span`, as `track` does when spans are exported.
    fn tracked(calls: &Arc<Calls>, id: i64, span: &tracing::Span) -> Tracked {
        let tracked = calls.track(
            RequestId::Number(id),
            &ProgressToken(NumberOrString::Number(id)),
            Arc::new(Nobody),
        );
        let mut by_request = calls.by_request.lock().unwrap();
        by_request.get_mut(&RequestId::Number(id)).unwrap().span = Some(span.clone());
        tracked
    }

    #[test]
    fn a_servers_request_finds_the_span_of_its_call() {
        let subscriber = tracing_subscriber::registry();
        let _default = tracing::subscriber::set_default(subscriber);
        let calls = Arc::new(Calls::default());
        let (one, two) = (tracing::info_span!("one"), tracing::info_span!("two"));
        let first = tracked(&calls, 1, &one);
        let id = |span: Option<tracing::Span>| span.and_then(|span| span.id());
        // The only call in flight, whatever the request says.
        assert_eq!(id(calls.span(None)), one.id());
        assert_eq!(id(calls.span(Some(&RequestId::Number(9)))), one.id());
        let second = tracked(&calls, 2, &two);
        assert_eq!(id(calls.span(Some(&RequestId::Number(2)))), two.id());
        assert_eq!(id(calls.span(Some(&RequestId::Number(1)))), one.id());
        // Two in flight and no id that names one: no call's.
        assert!(calls.span(None).is_none());
        drop((first, second));
        assert!(calls.span(None).is_none());
        // Not exported: nothing is kept.
        let _third = calls.track(
            RequestId::Number(3),
            &ProgressToken(NumberOrString::Number(3)),
            Arc::new(Nobody),
        );
        assert!(calls.span(None).is_none());
    }
}
