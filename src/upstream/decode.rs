//! Reading a server's messages knowing what was asked. rmcp parses every answer as its untagged
//! `ServerResult`, trying some twenty result types in turn until one fits; an answer to
//! `tools/call` fits the sixteenth, after fifteen failed attempts that each format an error:
//! some 32k instructions an answer, a sixth of a whole call through the bridge (BENCHMARKS.md).
//! A connection that notes the `tools/call` requests it sends parses their answers as
//! `CallToolResult` directly, and everything else (or an answer that is no `CallToolResult`,
//! such as one asking for input) as rmcp does.
//!
//! It notes its `tools/list` requests too: rmcp's `Tool` has no `execution`, so which tools a
//! 2025-11-25 server offers to run as tasks (`execution.taskSupport`) is read from the raw
//! answers to them, all pages, into the connection's [`TaskTools`]. Only those answers are
//! read twice; a call's answer costs nothing more.

use foldhash::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use rmcp::model::{
    CallToolResult, ClientJsonRpcMessage, ClientNotification, ClientRequest, JsonRpcMessage,
    JsonRpcResponse, JsonRpcVersion2_0, RequestId, ServerJsonRpcMessage, ServerResult,
};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

/// The requests in flight on one connection whose answers are read here, by id. Clones share
/// them, and the record of the tools offered as tasks.
#[derive(Clone, Debug, Default)]
pub struct Calls {
    asked: Arc<Mutex<Asked>>,
    tools: Arc<TaskTools>,
}

#[derive(Debug, Default)]
struct Asked {
    /// Plain `tools/call` requests.
    calls: HashSet<RequestId>,
    /// `tools/list` requests, each with whether it asked for the first page (no cursor).
    lists: HashMap<RequestId, bool>,
}

impl Calls {
    fn asked(&self) -> MutexGuard<'_, Asked> {
        self.asked.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The tools the server offers to run as tasks, as its `tools/list` answers say.
    pub fn task_tools(&self) -> Arc<TaskTools> {
        self.tools.clone()
    }

    /// Notes `message`, sent to the server: a `tools/call` or a `tools/list` is expected back,
    /// a cancelled request is not.
    pub fn sent(&self, message: &ClientJsonRpcMessage) {
        match message {
            JsonRpcMessage::Request(request) => {
                if is_call(&request.request) {
                    self.asked().calls.insert(request.id.clone());
                } else if let Some(first) = tools_page(&request.request) {
                    self.asked().lists.insert(request.id.clone(), first);
                }
            }
            JsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    let mut asked = self.asked();
                    asked.calls.remove(id);
                    asked.lists.remove(id);
                }
            }
            _ => {}
        }
    }

    /// `bytes`, a message of the server, parsed: as the answer to a call in flight when it is
    /// one, or as rmcp parses any message (an answer to `tools/list` noted first).
    pub fn decode(&self, bytes: &[u8]) -> serde_json::Result<ServerJsonRpcMessage> {
        let Ok(envelope) = serde_json::from_slice::<Envelope>(bytes) else {
            return serde_json::from_slice(bytes);
        };
        let (answered, listed) = match &envelope.id {
            Some(id) if envelope.method.is_none() => {
                let mut asked = self.asked();
                match asked.calls.remove(id) {
                    true => (true, None),
                    false => (false, asked.lists.remove(id)),
                }
            }
            _ => (false, None),
        };
        if let (Some(first), Some(result), None) = (listed, envelope.result, &envelope.error) {
            self.tools.page(first, result.get().as_bytes());
        }
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

/// For a `tools/list` request, whether it asks for the first page (no cursor).
pub fn tools_page(request: &ClientRequest) -> Option<bool> {
    match request {
        ClientRequest::ListToolsRequest(list) => {
            Some(list.params.as_ref().is_none_or(|p| p.cursor.is_none()))
        }
        _ => None,
    }
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

/// The tools a server offers to run as tasks (2025-11-25): those whose `execution.taskSupport`
/// is `"optional"` or `"required"` in its last whole `tools/list` (absent is `"forbidden"`).
/// A listing read to its last page replaces the record; until one has been, no tool is offered.
#[derive(Debug, Default)]
pub struct TaskTools(Mutex<Listing>);

#[derive(Debug, Default)]
struct Listing {
    /// Of the last listing read to its end; None before one was.
    listed: Option<HashSet<String>>,
    /// Of the listing being read, its pages so far.
    reading: HashSet<String>,
}

impl TaskTools {
    fn listing(&self) -> MutexGuard<'_, Listing> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the server's last listing offers `tool` as a task.
    pub fn offers(&self, tool: &str) -> bool {
        self.listing()
            .listed
            .as_ref()
            .is_some_and(|tools| tools.contains(tool))
    }

    /// Notes `bytes`, the server's whole answer to a `tools/list` (of its first page when
    /// `first`), unless it is an error.
    pub fn note_answer(&self, first: bool, bytes: &[u8]) {
        if let Ok(envelope) = serde_json::from_slice::<Envelope>(bytes)
            && envelope.method.is_none()
            && envelope.error.is_none()
            && let Some(result) = envelope.result
        {
            self.page(first, result.get().as_bytes());
        }
    }

    /// Notes `result`, the raw result of a `tools/list` (of its first page when `first`). A
    /// page that cannot be read offers nothing.
    pub fn page(&self, first: bool, result: &[u8]) {
        let page = serde_json::from_slice::<ToolsPage>(result).ok();
        let mut listing = self.listing();
        if first {
            listing.reading.clear();
        }
        let Some(page) = page else {
            return;
        };
        let offered = page.tools.into_iter().filter(|tool| {
            let support = tool.execution.get("taskSupport").and_then(|s| s.as_str());
            matches!(support, Some("optional" | "required"))
        });
        listing.reading.extend(offered.map(|tool| tool.name));
        if page.next_cursor.is_none() {
            listing.listed = Some(std::mem::take(&mut listing.reading));
        }
    }
}

/// What a `tools/list` result says of tasks.
#[derive(Deserialize)]
struct ToolsPage {
    tools: Vec<ListedTool>,
    #[serde(rename = "nextCursor", default)]
    next_cursor: Option<String>,
}

#[derive(Deserialize)]
struct ListedTool {
    name: String,
    #[serde(default)]
    execution: serde_json::Value,
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

    fn list(id: i64, cursor: Option<&str>) -> ClientJsonRpcMessage {
        let params =
            rmcp::model::PaginatedRequestParams::default().with_cursor(cursor.map(str::to_owned));
        JsonRpcMessage::request(
            ClientRequest::ListToolsRequest(rmcp::model::RequestOptionalParam::with_param(params)),
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
        assert!(calls.asked().calls.is_empty());
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
        assert!(calls.asked().calls.contains(&NumberOrString::Number(3)));
    }

    #[test]
    fn a_cancelled_call_is_forgotten_and_bad_json_fails_as_in_rmcp() {
        let calls = Calls::default();
        calls.sent(&call(5));
        let cancelled: ClientJsonRpcMessage = serde_json::from_value(json!({"jsonrpc": "2.0",
            "method": "notifications/cancelled", "params": {"requestId": 5}}))
        .unwrap();
        calls.sent(&cancelled);
        assert!(calls.asked().calls.is_empty());
        let bad = br#"{"jsonrpc": "2.0", "id": 5, "result": "#;
        let rmcp = serde_json::from_slice::<ServerJsonRpcMessage>(bad).unwrap_err();
        assert_eq!(calls.decode(bad).unwrap_err().classify(), rmcp.classify());
        let wrong_version = bytes(json!({"jsonrpc": "1.0", "id": 5, "result": {"content": []}}));
        assert!(decode_answer(&wrong_version, true).is_err());
    }

    /// A page of `tools/list` as a server answers request `id`; the tools named with a
    /// `taskSupport` have it, the others have no `execution`.
    fn page(id: i64, tools: &[(&str, Option<&str>)], next: Option<&str>) -> Vec<u8> {
        let tools: Vec<_> = tools
            .iter()
            .map(|(name, support)| match support {
                Some(s) => json!({"name": name, "inputSchema": {"type": "object"},
                    "execution": {"taskSupport": s}}),
                None => json!({"name": name, "inputSchema": {"type": "object"}}),
            })
            .collect();
        let mut result = json!({ "tools": tools });
        if let Some(next) = next {
            result["nextCursor"] = json!(next);
        }
        bytes(json!({"jsonrpc": "2.0", "id": id, "result": result}))
    }

    #[test]
    fn the_tools_offered_as_tasks_are_read_from_every_page_of_a_listing() {
        let calls = Calls::default();
        let tools = calls.task_tools();
        // Nothing listed yet: nothing is offered.
        assert!(!tools.offers("slow"));
        calls.sent(&list(1, None));
        let first = page(
            1,
            &[
                ("slow", Some("optional")),
                ("add", None),
                ("no", Some("forbidden")),
            ],
            Some("p2"),
        );
        let parsed = calls.decode(&first).unwrap();
        // rmcp still reads the answer (its `Tool` without `execution`).
        assert!(same(&parsed, &serde_json::from_slice(&first).unwrap()));
        // A listing counts once read to its last page.
        assert!(!tools.offers("slow"));
        calls.sent(&list(2, Some("p2")));
        calls
            .decode(&page(
                2,
                &[("must", Some("required")), ("odd", Some("sometimes"))],
                None,
            ))
            .unwrap();
        for (tool, offered) in [
            ("slow", true),
            ("must", true),
            ("add", false),
            ("no", false),
            ("odd", false),
        ] {
            assert_eq!(tools.offers(tool), offered, "{tool}");
        }
        // A new listing replaces the record once whole; a page of no listing asked is not read.
        calls
            .decode(&page(3, &[("add", Some("optional"))], None))
            .unwrap();
        assert!(!tools.offers("add"));
        calls.sent(&list(4, None));
        calls
            .decode(&page(4, &[("add", Some("optional")), ("slow", None)], None))
            .unwrap();
        assert!(tools.offers("add"));
        assert!(!tools.offers("slow"));
        assert!(!tools.offers("must"));
        // An error answers the listing: the record stays, and the id is no longer asked.
        calls.sent(&list(5, None));
        calls
            .decode(&bytes(json!({"jsonrpc": "2.0", "id": 5,
                "error": {"code": -32603, "message": "no"}})))
            .unwrap();
        assert!(tools.offers("add"));
        assert!(calls.asked().lists.is_empty());
    }

    #[test]
    fn a_listing_answer_of_a_strange_shape_offers_nothing() {
        let tools = TaskTools::default();
        tools.page(
            true,
            br#"{"tools": [{"name": "a", "execution": "optional"},
            {"name": "b", "execution": {"taskSupport": 1}}]}"#,
        );
        assert!(!tools.offers("a") && !tools.offers("b"));
        // Not a listing at all: nothing offered, and nothing published.
        tools.page(true, br#"{"content": []}"#);
        assert!(!tools.offers("a"));
        tools.page(
            true,
            br#"{"tools": [{"name": "c", "execution": {"taskSupport": "optional"}}]}"#,
        );
        assert!(tools.offers("c"));
    }
}
