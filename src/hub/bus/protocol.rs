//! The replica protocol: every message one replica sends another (requests and their replies,
//! announcements, presence, relayed answers, `/mcp` notices, log entries, shared state) is one
//! [`Message`] in an [`Envelope`] that names its sender and its protocol version.
//!
//! Versions and rolling upgrades: a replica sends [`VERSION`] and reads every version in
//! [`READS`]. A release that changes the protocol raises the version and still reads the one
//! before it (v+1 readers accept v); it goes on sending v until every replica reads v+1, so a
//! rolling upgrade restarts replicas one by one and then raises what they send. A message of a
//! version a replica does not read, or of a variant its version does not know, is refused with
//! one warning naming the sender and both versions, and a request gets a typed error back; it
//! never panics.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::a2e::{CompletionArgument, CompletionContext, ErrorCode};

/// The protocol version this replica sends.
pub const VERSION: u32 = 1;
/// The protocol versions this replica reads.
pub const READS: std::ops::RangeInclusive<u32> = 1..=VERSION;

/// A message with its sender and protocol version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    pub v: u32,
    /// The replica that sent it.
    pub from: String,
    /// Unique per message (a log entry's keeps its id however often its append is retried).
    pub id: String,
    /// When it was sent, in milliseconds since the Unix epoch.
    pub at: u64,
    pub message: Message,
}

/// Everything replicas say to each other.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "body", rename_all = "snake_case")]
pub enum Message {
    /// Asks one replica to do something (`{prefix}.rpc.{replica}`).
    Request(Request),
    /// What a request came to.
    Reply(Result<Value, RemoteError>),
    /// Tells every replica something happened (`{prefix}.announce`).
    Announce(Announcement),
    /// Which agents have streams open on the sender (`{prefix}.presence`).
    Presence { agents: Vec<String> },
    /// An agent's answer for a request waiting on the addressee (`{prefix}.answer.{replica}`).
    Answer(RelayedAnswer),
    /// What became of a relayed answer.
    Relayed(RelayOutcome),
    /// A notification for every replica's `/mcp` clients (`{prefix}.mcp`).
    Notice(Notice),
    /// An entry of the replicas' log (`{prefix}.log`).
    Log(Entry),
    /// A shared value (`{prefix}.shared.{key}`); `None`: withdrawn.
    Shared(Option<Value>),
}

/// Which of a server's listings another replica is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Listing {
    Resources,
    Templates,
    Prompts,
}

/// What one replica asks another to do: mostly the holder of a server, for what needs its
/// connection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    CallTool {
        name: String,
        arguments: Map<String, Value>,
        timeout: Option<f64>,
        agent: String,
        req_id: String,
        /// Names the call for a later `CancelForwarded` (unique per forwarded call).
        call_key: String,
        /// The replica the call was made on, when its recipient is lent there under
        /// `call_key` (a `/mcp` client's call, hub/relayed.rs): its progress and requests go
        /// back there as [`Request::ToCaller`].
        #[serde(default, skip_serializing_if = "Option::is_none")]
        caller: Option<String>,
    },
    /// To the replica a forwarded call was made on, for the recipient lent there under
    /// `call_key`: `{"progress": ServerPush}` or `{"ask": request}` (hub/relayed.rs).
    ToCaller {
        call_key: String,
        body: Value,
    },
    /// To the replica holding `/mcp` session `session`'s GET stream: `{"answer": message}`
    /// (its client's answer, posted elsewhere) or `{"ask": request}` (hub/relayed.rs).
    ToSession {
        session: String,
        body: Value,
    },
    /// The caller gave up on a forwarded call: drop it, which tells its server.
    CancelForwarded {
        call_key: String,
    },
    /// Whether the addressee is there: any answer says it is (the bus answers it itself).
    Ping,
    /// Cancel the agent's call `id` if it runs on the addressee (answers whether it did).
    CancelInFlight {
        agent: String,
        id: String,
    },
    ReadResource {
        agent: String,
        server_id: String,
        uri: String,
    },
    Subscribe {
        agent: String,
        server_id: String,
        uri: String,
    },
    Unsubscribe {
        agent: String,
        server_id: String,
        uri: String,
    },
    GetPrompt {
        agent: String,
        server_id: String,
        name: String,
        arguments: Map<String, Value>,
    },
    Complete {
        agent: String,
        server_id: String,
        reference: Value,
        argument: CompletionArgument,
        context: Option<CompletionContext>,
    },
    List {
        what: Listing,
        server_id: String,
        cursor: Option<String>,
    },
    Reconnect {
        server_id: String,
    },
    /// Drop `agent`'s own session of a `per_agent` server: it was authorized again elsewhere,
    /// and its next call opens one with the new grant.
    DropSession {
        server_id: String,
        agent: String,
    },
    /// Approve a changed tool definition (the agent's rights were checked where it asked).
    ApproveTool {
        agent: String,
        server_id: String,
        tool: String,
    },
}

/// What every other replica is told.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "what", rename_all = "snake_case")]
pub enum Announcement {
    /// A server was registered, changed or removed: read it again from the store.
    ServerChanged { server_id: String },
    /// The sender let go of its servers (it is stopping): take them now.
    HandedOver,
}

/// Why a request failed on the replica that served it, as an A2E error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct RemoteError {
    pub code: ErrorCode,
    pub message: String,
}

impl RemoteError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// An agent's answer, taken on one replica, for the request waiting on another.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RelayedAnswer {
    pub id: String,
    pub agent: String,
    pub kind: String,
    pub answer: Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RelayOutcome {
    Delivered,
    NotFound,
    AlreadyAnswered,
}

/// A notification for `/mcp` clients, from server `server_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Notice {
    pub server_id: String,
    pub method: String,
    pub params: Value,
    /// The agents whose sessions may have it; `None`: any session.
    pub agents: Option<Vec<String>>,
    /// The `/mcp` session that had it already, on its call's own stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub except_session: Option<String>,
}

/// One entry of the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "entry", rename_all = "snake_case")]
pub enum Entry {
    /// An event for one agent.
    Event {
        agent: String,
        kind: String,
        data: Arc<str>,
    },
    /// An event for every agent with a channel.
    All { kind: String, data: Arc<str> },
    /// An agent opened a stream: every replica gives it a channel from here on.
    Open { agent: String },
    /// A request to an agent (an event) that waits for its answer on `replica`.
    Ask {
        agent: String,
        kind: String,
        id: String,
        replica: String,
        data: Arc<str>,
    },
    /// The request `id` stopped waiting: answered, or not (timed out, given up).
    Done {
        id: String,
        agent: String,
        answered: bool,
    },
}

/// Why a message was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error(
        "replica \"{from}\" speaks replica protocol version {v}, this one reads versions {min} to {max}: {advice}",
        min = READS.start(),
        max = READS.end(),
        advice = version_advice(from, *v)
    )]
    Version { from: String, v: u32 },
    #[error(
        "replica \"{from}\" sent a message of replica protocol version {v} that this one does not understand ({why}): the two run different releases of one version; upgrade the older"
    )]
    NotUnderstood { from: String, v: u32, why: String },
    #[error("not a replica protocol message ({0})")]
    Garbage(String),
    #[error(
        "not sealed with this bridge's bus key for this subject (a sender without MCP_BRIDGE_BUS_KEY or MCP_BRIDGE_SECRETS_KEY, another key, or a message moved from another subject)"
    )]
    Unsealed,
    #[error(
        "a message from replica \"{from}\" sent {age_secs} s away from this replica's clock (more than the replay window: clocks out of step, or a replay)"
    )]
    Stale { from: String, age_secs: i64 },
    #[error("a message from replica \"{from}\" seen before (a replay)")]
    Replayed { from: String },
}

fn version_advice(from: &str, v: u32) -> String {
    if v > VERSION {
        "upgrade this replica (or roll the other back)".to_owned()
    } else {
        format!("upgrade replica \"{from}\"")
    }
}

/// Encodes message `id` from replica `from`, sent `at`, in the current version.
pub fn encode(from: &str, id: &str, at: u64, message: &Message) -> Vec<u8> {
    #[derive(Serialize)]
    struct Out<'a> {
        v: u32,
        from: &'a str,
        id: &'a str,
        at: u64,
        message: &'a Message,
    }
    // Every part of a message is a string, a number or JSON already: this cannot fail.
    serde_json::to_vec(&Out {
        v: VERSION,
        from,
        id,
        at,
        message,
    })
    .unwrap_or_default()
}

/// Decodes a message, refusing a version this replica does not read, and a message its version
/// does not know.
pub fn decode(bytes: &[u8]) -> Result<Envelope, Refused> {
    #[derive(Deserialize)]
    struct Head {
        v: u32,
        #[serde(default)]
        from: String,
    }
    let head: Head = serde_json::from_slice(bytes).map_err(|e| Refused::Garbage(kind_of(&e)))?;
    if !READS.contains(&head.v) {
        return Err(Refused::Version {
            from: head.from,
            v: head.v,
        });
    }
    serde_json::from_slice(bytes).map_err(|e| Refused::NotUnderstood {
        from: head.from,
        v: head.v,
        why: kind_of(&e),
    })
}

/// The kind of a decoding error and where it is, never serde's text: that quotes what it
/// could not take, and a message is decrypted by then (a call's arguments, an answer).
fn kind_of(error: &serde_json::Error) -> String {
    let kind = match error.classify() {
        serde_json::error::Category::Io => "unreadable",
        serde_json::error::Category::Syntax => "not JSON",
        serde_json::error::Category::Data => "a field or variant not known, or of another type",
        serde_json::error::Category::Eof => "cut short",
    };
    format!("{kind}, at line {} column {}", error.line(), error.column())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn every_message() -> Vec<Message> {
        let arguments: Map<String, Value> = json!({"a": [1, "x"]}).as_object().unwrap().clone();
        let requests = [
            Request::CallTool {
                name: "srv__echo".into(),
                arguments: arguments.clone(),
                timeout: Some(1.5),
                agent: "alice".into(),
                req_id: "r-1".into(),
                call_key: "k-1".into(),
                caller: Some("b".into()),
            },
            Request::ToCaller {
                call_key: "k-1".into(),
                body: json!({"ask": {"kind": "sampling", "id": "s-1"}}),
            },
            Request::ToSession {
                session: "sess-1".into(),
                body: json!({"answer": {"jsonrpc": "2.0", "id": 0, "result": {}}}),
            },
            Request::CancelForwarded {
                call_key: "k-1".into(),
            },
            Request::Ping,
            Request::CancelInFlight {
                agent: "alice".into(),
                id: "c-1".into(),
            },
            Request::ReadResource {
                agent: "alice".into(),
                server_id: "srv".into(),
                uri: "file:///a".into(),
            },
            Request::Subscribe {
                agent: "alice".into(),
                server_id: "srv".into(),
                uri: "file:///a".into(),
            },
            Request::Unsubscribe {
                agent: "alice".into(),
                server_id: "srv".into(),
                uri: "file:///a".into(),
            },
            Request::GetPrompt {
                agent: "alice".into(),
                server_id: "srv".into(),
                name: "p".into(),
                arguments,
            },
            Request::Complete {
                agent: "alice".into(),
                server_id: "srv".into(),
                reference: json!({"type": "ref/prompt", "name": "p"}),
                argument: CompletionArgument::default(),
                context: Some(CompletionContext::default()),
            },
            Request::List {
                what: Listing::Templates,
                server_id: "srv".into(),
                cursor: Some("c".into()),
            },
            Request::Reconnect {
                server_id: "srv".into(),
            },
            Request::DropSession {
                server_id: "srv".into(),
                agent: "alice".into(),
            },
            Request::ApproveTool {
                agent: "alice".into(),
                server_id: "srv".into(),
                tool: "echo".into(),
            },
        ];
        let entries = [
            Entry::Event {
                agent: "alice".into(),
                kind: "mcp/server/push".into(),
                data: "{\"a\":1}".into(),
            },
            Entry::All {
                kind: "mcp/server/push".into(),
                data: "{}".into(),
            },
            Entry::Open {
                agent: "bob smith".into(),
            },
            Entry::Ask {
                agent: "alice".into(),
                kind: "mcp/sample/req".into(),
                id: "r-1".into(),
                replica: "a".into(),
                data: "{}".into(),
            },
            Entry::Done {
                id: "r-1\nx".into(),
                agent: "alice".into(),
                answered: true,
            },
        ];
        let mut messages: Vec<Message> = requests.into_iter().map(Message::Request).collect();
        messages.extend(entries.into_iter().map(Message::Log));
        messages.extend([
            Message::Reply(Ok(json!({"content": []}))),
            Message::Reply(Err(RemoteError::new(ErrorCode::Forbidden, "no"))),
            Message::Announce(Announcement::ServerChanged {
                server_id: "srv".into(),
            }),
            Message::Announce(Announcement::HandedOver),
            Message::Presence {
                agents: vec!["alice".into()],
            },
            Message::Answer(RelayedAnswer {
                id: "r-1".into(),
                agent: "alice".into(),
                kind: "mcp/sample/req".into(),
                answer: json!("yes"),
            }),
            Message::Relayed(RelayOutcome::AlreadyAnswered),
            Message::Notice(Notice {
                server_id: "srv".into(),
                method: "notifications/message".into(),
                params: json!({}),
                agents: Some(vec!["alice".into()]),
                except_session: Some("s-1".into()),
            }),
            Message::Shared(Some(json!({"k": 1}))),
            Message::Shared(None),
        ]);
        messages
    }

    #[test]
    fn every_message_round_trips() {
        for message in every_message() {
            let decoded = decode(&encode("a", "m-1", 7, &message)).unwrap();
            assert_eq!(
                decoded,
                Envelope {
                    v: VERSION,
                    from: "a".into(),
                    id: "m-1".into(),
                    at: 7,
                    message
                }
            );
        }
    }

    #[test]
    fn an_unknown_version_is_refused_naming_the_sender() {
        let mut wire: Value = serde_json::from_slice(&encode(
            "b",
            "m",
            0,
            &Message::Announce(Announcement::HandedOver),
        ))
        .unwrap();
        wire["v"] = json!(VERSION + 1);
        let refused = decode(&serde_json::to_vec(&wire).unwrap()).unwrap_err();
        assert_eq!(
            refused,
            Refused::Version {
                from: "b".into(),
                v: VERSION + 1
            }
        );
        let said = refused.to_string();
        assert!(
            said.contains("\"b\"") && said.contains("upgrade this replica"),
            "{said}"
        );
        wire["v"] = json!(0);
        let said = decode(&serde_json::to_vec(&wire).unwrap())
            .unwrap_err()
            .to_string();
        assert!(said.contains("upgrade replica \"b\""), "{said}");
    }

    #[test]
    fn an_unknown_variant_of_a_known_version_is_refused() {
        let wire = json!({"v": VERSION, "from": "c", "id": "m", "at": 0, "message": {"type": "request", "body": {"op": "format_disk"}}});
        let refused = decode(&serde_json::to_vec(&wire).unwrap()).unwrap_err();
        assert!(
            matches!(&refused, Refused::NotUnderstood { from, v, .. } if from == "c" && *v == VERSION),
            "{refused:?}"
        );
        // The wire format before versions (a topic and a body) is no message at all.
        let old = json!(["op", {"op": "call_tool", "name": "srv__t", "agent": "nobody"}]);
        assert!(matches!(
            decode(&serde_json::to_vec(&old).unwrap()),
            Err(Refused::Garbage(_))
        ));
    }

    /// A refusal is logged: it says what kind of error, never what the (decrypted) message
    /// held, which serde's text would quote.
    #[test]
    fn a_refusal_quotes_nothing_of_the_message() {
        let secret = "the-argument-no-log-may-quote-51c2";
        let wrong_type = json!({"v": VERSION, "from": "c", "id": "m", "at": 0,
            "message": {"type": "request", "body": {"op": "reconnect", "server_id": {"k": secret}}}});
        let unknown = json!({"v": VERSION, "from": "c", "id": "m", "at": 0,
            "message": {"type": "request", "body": {"op": secret}}});
        let garbage = format!("{{\"v\": \"{secret}\"}}");
        for bytes in [
            serde_json::to_vec(&wrong_type).unwrap(),
            serde_json::to_vec(&unknown).unwrap(),
            garbage.into_bytes(),
        ] {
            let said = decode(&bytes).unwrap_err().to_string();
            assert!(!said.contains(secret), "{said}");
            assert!(said.contains("line 1"), "{said}");
        }
    }
}
