//! The bound on one message from a server (`max_message_bytes`), the same on every transport.
//! A message over it is never held whole: the transport reads through it with [`IdScanner`],
//! which keeps only the message's top-level `id` and whether it has a `method`. An answer
//! (an `id`, no `method`) is replaced by a JSON-RPC error for that id ([`too_large`]), so rmcp
//! fails that one request and nothing else; a notification or a server's request is dropped
//! with a warning ([`dropped`]). The connection stays either way.

use rmcp::ErrorData;
use rmcp::RoleClient;
use rmcp::model::{ErrorCode, RequestId, ServerJsonRpcMessage};
use rmcp::service::RxJsonRpcMessage;

/// The JSON-RPC error code of the error put in place of a server's answer that is larger than
/// the limit. In the range JSON-RPC leaves to implementations (-32000 to -32099), and used by
/// no MCP SDK; a call that gets it fails with `mcp_protocol_error` (502, not retryable: the
/// same call would get the same answer).
pub const MESSAGE_TOO_LARGE: i32 = -32090;

/// The setting that sets the limit, named in every message about it.
pub const SETTING: &str = "MCP_BRIDGE_MAX_MESSAGE_BYTES";

/// Longest `id` kept, in bytes of JSON text; a longer one counts as none.
const MAX_ID: usize = 256;

/// `bytes` for people: "16 MiB", "64 KiB" or "1000000 bytes".
pub fn human(bytes: usize) -> String {
    const KIB: usize = 1024;
    const MIB: usize = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// The sentence a call fails with when its answer is over `limit`.
pub fn message(limit: usize) -> String {
    format!(
        "the server's answer is larger than the {} limit ({SETTING})",
        human(limit)
    )
}

/// The error answer for request `id`, put in place of an answer over `limit`.
pub fn too_large(id: RequestId, limit: usize) -> RxJsonRpcMessage<RoleClient> {
    failed(id, message(limit))
}

/// An error answer for request `id` with the code of an answer over the limit.
pub fn failed(id: RequestId, message: String) -> RxJsonRpcMessage<RoleClient> {
    ServerJsonRpcMessage::error(
        ErrorData::new(ErrorCode(MESSAGE_TOO_LARGE), message, None),
        Some(id),
    )
}

/// What to do with a message over `limit` of `server_id` once it has been read through: the
/// error answer for its request, or `None` (it was no answer, and a warning says so).
pub fn verdict(
    scanned: &IdScanner,
    server_id: &str,
    limit: usize,
) -> Option<RxJsonRpcMessage<RoleClient>> {
    match (scanned.has_method(), scanned.id()) {
        (false, Some(id)) => {
            tracing::warn!(
                %server_id,
                %id,
                limit,
                "an answer of the server is larger than {} ({SETTING}); the call fails",
                human(limit)
            );
            Some(too_large(id, limit))
        }
        (has_method, _) => {
            dropped(server_id, limit, has_method);
            None
        }
    }
}

/// Logs a message over `limit` that answers nothing (a notification or a server's request).
pub fn dropped(server_id: &str, limit: usize, has_method: bool) {
    let what = if has_method {
        "a notification or request"
    } else {
        "a message without an id"
    };
    tracing::warn!(
        %server_id,
        limit,
        "the server sent {what} larger than {} ({SETTING}); it is dropped",
        human(limit)
    );
}

/// Where a scan is inside the top-level object.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Expect {
    #[default]
    Key,
    Colon,
    Value,
}

/// Reads a JSON-RPC message byte by byte, however it is chunked, keeping only its top-level
/// `id` (at most [`MAX_ID`] bytes of it) and whether it has a top-level `method`; `id` and
/// `method` keys deeper in the message, and anything inside strings, are ignored. Memory is
/// constant whatever the message's size.
#[derive(Debug, Default)]
pub struct IdScanner {
    depth: u32,
    in_string: bool,
    escaped: bool,
    expect: Expect,
    /// Reading a key of the top-level object.
    in_key: bool,
    /// The key being read (only its first bytes: the keys looked for are short).
    key: Vec<u8>,
    /// The text of the top-level `id` value while it is read.
    capture: Option<Vec<u8>>,
    id: Option<Vec<u8>>,
    has_method: bool,
    /// The top-level value has ended (or is no object).
    done: bool,
}

impl IdScanner {
    /// Reads the next bytes of the message.
    pub fn feed(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            if self.done {
                return;
            }
            self.step(byte);
        }
    }

    fn step(&mut self, byte: u8) {
        if self.in_string {
            self.keep(byte);
            if self.escaped {
                self.escaped = false;
            } else if byte == b'\\' {
                self.escaped = true;
            } else if byte == b'"' {
                self.in_string = false;
                if self.in_key {
                    self.in_key = false;
                    self.expect = Expect::Colon;
                    return;
                }
            }
            if self.in_key && self.key.len() < 8 {
                self.key.push(byte);
            }
            return;
        }
        match byte {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.expect == Expect::Key {
                    self.in_key = true;
                    self.key.clear();
                } else {
                    self.keep(byte);
                }
            }
            b'{' | b'[' => {
                self.keep(byte);
                self.depth += 1;
                if self.depth == 1 {
                    // A batch (a top-level array) is not looked into.
                    self.done = byte == b'[';
                    self.expect = Expect::Key;
                }
            }
            b'}' | b']' => {
                if self.depth == 1 {
                    self.end_value();
                    self.done = true;
                } else {
                    self.keep(byte);
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b':' if self.depth == 1 && self.expect == Expect::Colon => {
                self.expect = Expect::Value;
                match self.key.as_slice() {
                    b"id" if self.id.is_none() => self.capture = Some(Vec::new()),
                    b"method" => self.has_method = true,
                    _ => {}
                }
            }
            b',' if self.depth == 1 => {
                self.end_value();
                self.expect = Expect::Key;
            }
            _ => self.keep(byte),
        }
    }

    /// Keeps a byte of the `id` value being read; a value too long is no id.
    fn keep(&mut self, byte: u8) {
        if let Some(capture) = &mut self.capture {
            if capture.len() < MAX_ID {
                capture.push(byte);
            } else {
                self.capture = None;
                self.id = Some(Vec::new());
            }
        }
    }

    fn end_value(&mut self) {
        if let Some(capture) = self.capture.take() {
            self.id = Some(capture);
        }
    }

    /// The top-level `id`, when there was one that is a number or a string.
    pub fn id(&self) -> Option<RequestId> {
        let raw = self.id.as_deref()?;
        serde_json::from_slice(raw.trim_ascii()).ok()
    }

    /// Whether the message has a top-level `method` (a request or a notification).
    pub fn has_method(&self) -> bool {
        self.has_method
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;

    fn scan(text: &str) -> IdScanner {
        let mut scanner = IdScanner::default();
        scanner.feed(text.as_bytes());
        scanner
    }

    /// The id, scanned whole and one byte at a time (the same either way).
    fn id_of(text: &str) -> Option<RequestId> {
        let whole = scan(text).id();
        let mut scanner = IdScanner::default();
        for byte in text.as_bytes() {
            scanner.feed(std::slice::from_ref(byte));
        }
        assert_eq!(scanner.id(), whole, "chunked the same as whole: {text}");
        whole
    }

    fn number(n: i64) -> Option<RequestId> {
        Some(NumberOrString::Number(n))
    }

    #[test]
    fn the_id_first_or_last() {
        assert_eq!(
            id_of(r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#),
            number(7)
        );
        assert_eq!(
            id_of(r#"{"jsonrpc":"2.0","result":{"content":[{"text":"xx"}]},"id":42}"#),
            number(42)
        );
        assert_eq!(id_of(r#" { "id" : 3 , "result" : {} } "#), number(3));
        assert_eq!(id_of("{\n\"result\": 1,\n\"id\":\t9\n}"), number(9));
    }

    #[test]
    fn numeric_and_string_ids() {
        assert_eq!(id_of(r#"{"id":0,"result":{}}"#), number(0));
        assert_eq!(
            id_of(r#"{"id":"abc-1","result":{}}"#),
            Some(NumberOrString::String("abc-1".into()))
        );
        assert_eq!(
            id_of(r#"{"result":{},"id":"q\"u}o,te"}"#),
            Some(NumberOrString::String("q\"u}o,te".into()))
        );
    }

    #[test]
    fn strings_may_hold_anything() {
        let text = r#"{"result":{"t":"\"id\":5, } ] { \\","u":"\\\""},"id":11}"#;
        assert_eq!(id_of(text), number(11));
        assert_eq!(
            id_of(r#"{"result":"}","id":12}"#),
            number(12),
            "a brace in a string ends nothing"
        );
    }

    #[test]
    fn nested_id_keys_are_ignored() {
        let text = r#"{"result":{"id":1,"structuredContent":{"id":2},"items":[{"id":3}]},"id":4}"#;
        assert_eq!(id_of(text), number(4));
        assert_eq!(id_of(r#"{"result":{"id":1}}"#), None);
        assert!(!scan(r#"{"result":{"method":"x"},"id":1}"#).has_method());
    }

    #[test]
    fn no_id() {
        assert_eq!(
            id_of(r#"{"jsonrpc":"2.0","method":"notifications/message"}"#),
            None
        );
        assert_eq!(id_of(r#"{"id":null,"error":{}}"#), None);
        assert_eq!(id_of(r#"[{"id":1}]"#), None, "a batch");
        assert_eq!(id_of(r#"{"id":1"#), None, "never ended");
        let long = format!(r#"{{"id":"{}","result":{{}}}}"#, "x".repeat(MAX_ID * 2));
        assert_eq!(id_of(&long), None, "an id too long is none");
    }

    #[test]
    fn requests_and_notifications_have_a_method() {
        let request = scan(r#"{"id":5,"params":{"x":"y"},"method":"sampling/createMessage"}"#);
        assert!(request.has_method());
        assert_eq!(request.id(), number(5));
        assert!(scan(r#"{"method":"notifications/progress"}"#).has_method());
        assert!(!scan(r#"{"id":5,"result":{}}"#).has_method());
    }

    #[test]
    fn the_verdict() {
        let answer = verdict(&scan(r#"{"id":5,"result":{}}"#), "s", 1 << 20).unwrap();
        let text = serde_json::to_value(&answer).unwrap();
        assert_eq!(text["id"], 5);
        assert_eq!(text["error"]["code"], MESSAGE_TOO_LARGE);
        assert_eq!(
            text["error"]["message"],
            "the server's answer is larger than the 1 MiB limit (MCP_BRIDGE_MAX_MESSAGE_BYTES)"
        );
        assert!(verdict(&scan(r#"{"id":5,"method":"ping"}"#), "s", 1 << 20).is_none());
        assert!(verdict(&scan(r#"{"method":"x"}"#), "s", 1 << 20).is_none());
        assert_eq!(human(65536), "64 KiB");
        assert_eq!(human(1_000_000), "1000000 bytes");
    }
}
