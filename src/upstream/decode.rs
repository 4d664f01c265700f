//! Reading a server's messages knowing what was asked. rmcp parses every answer as its untagged
//! `ServerResult`, trying some twenty result types in turn until one fits; an answer to
//! `tools/call` fits the sixteenth, after fifteen failed attempts that each format an error:
//! some 32k instructions an answer, a sixth of a whole call through the bridge (BENCHMARKS.md).
//! A connection that notes the `tools/call` requests it sends parses their answers as
//! `CallToolResult` directly, and everything else (or an answer that is no `CallToolResult`,
//! such as one asking for input) as rmcp does.

use foldhash::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};

use rmcp::model::{
    CallToolResult, ClientJsonRpcMessage, ClientNotification, ClientRequest, JsonRpcMessage,
    JsonRpcResponse, JsonRpcVersion2_0, RequestId, ServerJsonRpcMessage, ServerResult,
};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

/// The plain `tools/call` requests in flight on one connection, by id. Clones share them.
#[derive(Clone, Debug, Default)]
pub struct Calls(Arc<Mutex<HashSet<RequestId>>>);

impl Calls {
    fn ids(&self) -> MutexGuard<'_, HashSet<RequestId>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Notes `message`, sent to the server: a `tools/call` is expected back, a cancelled
    /// request is not.
    pub fn sent(&self, message: &ClientJsonRpcMessage) {
        match message {
            JsonRpcMessage::Request(request) if is_call(&request.request) => {
                self.ids().insert(request.id.clone());
            }
            JsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    self.ids().remove(id);
                }
            }
            _ => {}
        }
    }

    /// `bytes`, a message of the server, parsed: as the answer to a call in flight when it is
    /// one, or as rmcp parses any message.
    pub fn decode(&self, bytes: &[u8]) -> serde_json::Result<ServerJsonRpcMessage> {
        let Ok(envelope) = serde_json::from_slice::<Envelope>(bytes) else {
            return serde_json::from_slice(bytes);
        };
        let answered = match &envelope.id {
            Some(id) if envelope.method.is_none() => self.ids().remove(id),
            _ => false,
        };
        match answered.then(|| answer(envelope)).flatten() {
            Some(message) => Ok(message),
            None => serde_json::from_slice(bytes),
        }
    }
}

/// Whether `request` is a `tools/call` whose answer is a `CallToolResult` (not a task).
pub fn is_call(request: &ClientRequest) -> bool {
    matches!(request, ClientRequest::CallToolRequest(_))
}

/// `bytes`, the server's answer to a request that `call` says was a `tools/call`, parsed.
pub fn decode_answer(bytes: &[u8], call: bool) -> serde_json::Result<ServerJsonRpcMessage> {
    if call
        && let Ok(envelope) = serde_json::from_slice::<Envelope>(bytes)
        && envelope.method.is_none()
        && let Some(message) = answer(envelope)
    {
        return Ok(message);
    }
    serde_json::from_slice(bytes)
}

/// A message's members, its `result` left unparsed. `jsonrpc` is checked as rmcp checks it.
#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(rename = "jsonrpc")]
    _jsonrpc: JsonRpcVersion2_0,
    id: Option<RequestId>,
    method: Option<IgnoredAny>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    error: Option<IgnoredAny>,
}

/// The `CallToolResult` answer `envelope` carries, if it is one.
fn answer(envelope: Envelope) -> Option<ServerJsonRpcMessage> {
    let (Some(id), Some(result), None) = (envelope.id, envelope.result, envelope.error) else {
        return None;
    };
    let result: CallToolResult = serde_json::from_str(result.get()).ok()?;
    Some(JsonRpcMessage::Response(JsonRpcResponse {
        jsonrpc: JsonRpcVersion2_0,
        id,
        result: ServerResult::CallToolResult(result),
    }))
}

#[cfg(test)]
mod tests {
    use rmcp::model::{CallToolRequestParams, ClientRequest, NumberOrString, Request};
    use serde_json::json;

    use super::*;

    fn call(id: i64) -> ClientJsonRpcMessage {
        let request = Request::new(CallToolRequestParams::new("echo"));
        JsonRpcMessage::request(
            ClientRequest::CallToolRequest(request),
            NumberOrString::Number(id),
        )
    }

    fn bytes(value: serde_json::Value) -> Vec<u8> {
        serde_json::to_vec(&value).unwrap()
    }

    /// Both ways of parsing, compared through their JSON (rmcp's types are not all `PartialEq`).
    fn same(a: &ServerJsonRpcMessage, b: &ServerJsonRpcMessage) -> bool {
        serde_json::to_value(a).unwrap() == serde_json::to_value(b).unwrap()
    }

    #[test]
    fn an_answer_to_a_call_is_parsed_as_rmcp_parses_it() {
        let calls = Calls::default();
        calls.sent(&call(7));
        let answer = bytes(json!({"jsonrpc": "2.0", "id": 7, "result": {
            "content": [{"type": "text", "text": "hi"}], "isError": false,
            "structuredContent": {"a": 1}, "_meta": {"k": "v"}}}));
        let fast = calls.decode(&answer).unwrap();
        assert!(matches!(
            &fast,
            JsonRpcMessage::Response(JsonRpcResponse {
                result: ServerResult::CallToolResult(_),
                ..
            })
        ));
        assert!(same(&fast, &serde_json::from_slice(&answer).unwrap()));
        // Answered: the id is no longer in flight.
        assert!(calls.ids().is_empty());
    }

    #[test]
    fn what_is_no_call_result_is_parsed_as_rmcp_parses_it() {
        let calls = Calls::default();
        calls.sent(&call(1));
        calls.sent(&call(2));
        calls.sent(&call(3));
        for message in [
            // An answer asking for input instead.
            json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required",
                "inputRequests": {}}}),
            // An error, and an answer to a request that was no call.
            json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "no"}}),
            json!({"jsonrpc": "2.0", "id": 99, "result": {"tools": []}}),
            // A request and a notification of the server's.
            json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}),
            json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
        ] {
            let raw = bytes(message.clone());
            let rmcp: serde_json::Result<ServerJsonRpcMessage> = serde_json::from_slice(&raw);
            let ours = calls.decode(&raw);
            match (rmcp, ours) {
                (Ok(a), Ok(b)) => assert!(same(&a, &b), "{message}"),
                (Err(_), Err(_)) => {}
                (a, b) => panic!("{message}: rmcp {a:?}, here {b:?}"),
            }
        }
        // The server's request with id 3 left call 3 in flight.
        assert!(calls.ids().contains(&NumberOrString::Number(3)));
    }

    #[test]
    fn a_cancelled_call_is_forgotten_and_bad_json_fails_as_in_rmcp() {
        let calls = Calls::default();
        calls.sent(&call(5));
        let cancelled: ClientJsonRpcMessage = serde_json::from_value(json!({"jsonrpc": "2.0",
            "method": "notifications/cancelled", "params": {"requestId": 5}}))
        .unwrap();
        calls.sent(&cancelled);
        assert!(calls.ids().is_empty());
        let bad = br#"{"jsonrpc": "2.0", "id": 5, "result": "#;
        let rmcp = serde_json::from_slice::<ServerJsonRpcMessage>(bad).unwrap_err();
        assert_eq!(calls.decode(bad).unwrap_err().classify(), rmcp.classify());
        let wrong_version = bytes(json!({"jsonrpc": "1.0", "id": 5, "result": {"content": []}}));
        assert!(decode_answer(&wrong_version, true).is_err());
    }
}
