//! Across replicas: the way back to a call made on one replica and run on another (the replica
//! holding its server). A recipient that must be reached where it is (a `/mcp` client's call:
//! its session or its input-required result, its call stream for progress) is lent under the
//! forwarded call's key on the replica of the call; the holder's [`RelayedCaller`] sends it
//! the server's progress and requests over the bus, and the answer comes back the same way.
//! Other recipients (an agent's channel) are reached from any replica through the hub itself,
//! so they are not lent. Both ways are requests of the replica protocol
//! ([`Request::ToCaller`], [`Request::ToSession`]), their bodies the JSON this file writes.
//!
//! Likewise for the sessions of `/mcp` that replicas share: a server's request for a session
//! goes out from the replica holding the session's GET stream (or the one whose call's stream
//! carries it), and a client's answer to it, whichever replica it reaches, is relayed to the
//! replica its id names ([`SessionPeers`]); a session deleted on one
//! replica is ended on the one holding its GET stream at once, which closes the stream.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::Hub;
use super::bus::Request;
use super::recipient::{AgentChannel, Answer, AskKind, Recipient, ServerRequest};
use crate::a2e::ServerPush;

/// The `/mcp` sessions open on this replica, as the bus reaches them.
pub trait SessionPeers: Send + Sync {
    /// Gives session `session` its client's answer to a request this replica sent it.
    fn answer(&self, session: String, message: Value) -> BoxFuture<'_, Result<(), String>>;
    /// Asks session `session`'s client a server's request; the MCP result.
    fn ask(&self, session: String, request: ServerRequest) -> BoxFuture<'_, Result<Value, String>>;
    /// Ends session `session` here (it was deleted on another replica): its GET stream closes.
    fn end(&self, session: String) -> BoxFuture<'_, Result<(), String>>;
}

/// How long a holder waits for a progress notification to be taken.
const PROGRESS_BOUND: Duration = Duration::from_secs(5);
/// What a relayed request may take beyond its own deadline (the bus's two hops).
const ASK_MARGIN: Duration = Duration::from_secs(2);

/// The recipients lent on this replica, by forwarded call key.
#[derive(Default)]
pub(super) struct Lent {
    recipients: Mutex<HashMap<String, Arc<dyn Recipient>>>,
}

impl Lent {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<dyn Recipient>>> {
        self.recipients.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A recipient lent for the length of a forwarded call: it is withdrawn when this is dropped.
pub struct Lending {
    hub: Arc<Hub>,
    key: String,
    replica: String,
}

impl Lending {
    /// The replica the recipient is on (where the holder relays to).
    pub fn replica(&self) -> &str {
        &self.replica
    }
}

impl Drop for Lending {
    fn drop(&mut self) {
        self.hub.lent.lock().remove(&self.key);
    }
}

impl Hub {
    /// Lends `recipient` under forwarded call `key`, when there are replicas and it must be
    /// reached where it is.
    pub fn lend(self: &Arc<Self>, key: &str, recipient: &Arc<dyn Recipient>) -> Option<Lending> {
        let bus = self.bus.get()?;
        if !recipient.relayed() {
            return None;
        }
        self.lent.lock().insert(key.to_owned(), recipient.clone());
        Some(Lending {
            hub: self.clone(),
            key: key.to_owned(),
            replica: bus.replica().to_owned(),
        })
    }

    /// On the holder: the recipient of a call forwarded by `replica` under `key`, made by
    /// `agent` as its call `req_id`.
    pub fn relayed_caller(
        self: &Arc<Self>,
        replica: String,
        key: String,
        agent: String,
        req_id: String,
    ) -> Arc<dyn Recipient> {
        Arc::new(RelayedCaller {
            hub: self.clone(),
            replica,
            key,
            fallback: AgentChannel::new(self.clone(), agent, req_id),
            trace: crate::telemetry::exporting().then(tracing::Span::current),
        })
    }

    /// Installs the sessions of this replica's `/mcp`, for the other replicas to reach.
    pub fn serve_sessions(&self, peers: Arc<dyn SessionPeers>) {
        let _ = self.session_peers.set(peers);
    }

    /// This replica's name, when there are replicas.
    pub fn replica(&self) -> Option<&str> {
        self.bus.get().map(|bus| bus.replica())
    }

    /// Relays a client's answer (`message`) to session `session` on `replica`.
    pub async fn answer_session(
        &self,
        replica: &str,
        session: &str,
        message: Value,
    ) -> Result<(), String> {
        let bus = self.bus.get().ok_or("no bus")?;
        let request = Request::ToSession {
            session: session.to_owned(),
            body: json!({ "answer": message }),
        };
        bus.request(replica, request, PROGRESS_BOUND)
            .await
            .map(drop)
            .map_err(|e| e.to_string())
    }

    /// Tells `replica`, which holds session `session`'s GET stream, that the session has ended.
    pub async fn end_session(&self, replica: &str, session: &str) -> Result<(), String> {
        let bus = self.bus.get().ok_or("no bus")?;
        let request = Request::ToSession {
            session: session.to_owned(),
            body: json!({ "end": true }),
        };
        bus.request(replica, request, PROGRESS_BOUND)
            .await
            .map(drop)
            .map_err(|e| e.to_string())
    }

    /// Asks session `session`'s client through `replica`, which holds its GET stream.
    pub async fn ask_session(
        &self,
        replica: &str,
        session: &str,
        request: &ServerRequest,
    ) -> Result<Value, String> {
        let bus = self.bus.get().ok_or("no bus")?;
        let within = request.deadline + ASK_MARGIN;
        let request = Request::ToSession {
            session: session.to_owned(),
            body: json!({ "ask": relayed_request(request) }),
        };
        let answer = bus
            .request(replica, request, within)
            .await
            .map_err(|e| e.to_string())?;
        match answer.get("mcp") {
            Some(value) => Ok(value.clone()),
            None => Err(answer
                .get("refused")
                .and_then(Value::as_str)
                .unwrap_or("the session's replica gave no answer")
                .to_owned()),
        }
    }

    /// Serves what another replica sends session `session` of this one
    /// ([`Request::ToSession`]).
    pub async fn serve_session(&self, session: &str, body: Value) -> Result<Value, String> {
        let peers = self.session_peers.get().ok_or("no /mcp here")?;
        let session = session.to_owned();
        if let Some(message) = body.get("answer") {
            peers.answer(session, message.clone()).await?;
            return Ok(Value::Null);
        }
        if body.get("end").is_some() {
            peers.end(session).await?;
            return Ok(Value::Null);
        }
        let ask = body
            .get("ask")
            .ok_or("neither an answer, a request nor an end")?;
        Ok(match peers.ask(session, request_of(ask)?).await {
            Ok(value) => json!({ "mcp": value }),
            Err(refused) => json!({ "refused": refused }),
        })
    }

    /// Serves what a holder relays to the recipient lent under `key` ([`Request::ToCaller`]).
    pub async fn serve_relayed(&self, key: &str, body: Value) -> Result<Value, String> {
        let recipient = self.lent.lock().get(key).cloned();
        let Some(recipient) = recipient else {
            return Err(format!("no call {key:?} waits here"));
        };
        if let Some(push) = body.get("progress") {
            let push: ServerPush = serde_json::from_value(push.clone())
                .map_err(|e| format!("relayed progress: {e}"))?;
            recipient.progress(push).await;
            return Ok(Value::Null);
        }
        let ask = body.get("ask").ok_or("neither progress nor a request")?;
        let request = request_of(ask)?;
        Ok(match recipient.ask(request).await {
            Ok(Answer::Mcp(value)) => json!({ "mcp": value }),
            Ok(Answer::A2e(value)) => json!({ "a2e": value }),
            Err(refused) => json!({ "refused": refused }),
        })
    }
}

/// A server's request as relayed.
fn relayed_request(request: &ServerRequest) -> Value {
    let kind = match request.kind {
        AskKind::Sampling => "sampling",
        AskKind::Elicitation => "elicitation",
    };
    json!({
        "kind": kind,
        "params": request.params,
        "message": request.message,
        "id": request.id,
        "deadline_ms": u64::try_from(request.deadline.as_millis()).unwrap_or(u64::MAX),
    })
}

fn request_of(ask: &Value) -> Result<ServerRequest, String> {
    let kind = match ask.get("kind").and_then(Value::as_str) {
        Some("sampling") => AskKind::Sampling,
        Some("elicitation") => AskKind::Elicitation,
        other => return Err(format!("a relayed request of kind {other:?}")),
    };
    let text = |name: &str| ask.get(name).cloned().unwrap_or_default();
    Ok(ServerRequest {
        kind,
        params: text("params"),
        message: text("message"),
        id: text("id").as_str().unwrap_or_default().to_owned(),
        deadline: Duration::from_millis(
            ask.get("deadline_ms")
                .and_then(Value::as_u64)
                .unwrap_or(60_000),
        ),
    })
}

/// On the holder of a server: the recipient of a call another replica forwarded, relaying to
/// the recipient lent there.
struct RelayedCaller {
    hub: Arc<Hub>,
    replica: String,
    key: String,
    /// The agent's call, for its id and name.
    fallback: AgentChannel,
    /// The span of the forwarded call here, when spans are exported: what is relayed back is
    /// in its trace (the server's requests and progress reach this replica outside it).
    trace: Option<tracing::Span>,
}

impl std::fmt::Debug for RelayedCaller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RelayedCaller")
            .field("replica", &self.replica)
            .field("key", &self.key)
            .finish()
    }
}

impl RelayedCaller {
    async fn relay(&self, body: Value, within: Duration) -> Result<Value, String> {
        let bus = self.hub.bus.get().ok_or("no bus")?;
        let request = Request::ToCaller {
            call_key: self.key.clone(),
            body,
        };
        let relayed = bus.request(&self.replica, request, within);
        let relayed = match &self.trace {
            None => relayed.await,
            Some(span) => {
                use tracing::Instrument as _;
                Box::pin(relayed.instrument(span.clone())).await
            }
        };
        relayed.map_err(|e| e.to_string())
    }
}

impl Recipient for RelayedCaller {
    fn agent_id(&self) -> &str {
        self.fallback.agent_id()
    }

    fn call_id(&self) -> Option<String> {
        self.fallback.call_id()
    }

    fn progress(&self, push: ServerPush) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let body = json!({ "progress": push });
            if let Err(error) = self.relay(body, PROGRESS_BOUND).await {
                tracing::debug!(%error, replica = %self.replica, "cannot relay a call's progress");
            }
        })
    }

    fn ask(&self, request: ServerRequest) -> BoxFuture<'_, Result<Answer, String>> {
        Box::pin(async move {
            let body = json!({ "ask": relayed_request(&request) });
            let answer = self.relay(body, request.deadline + ASK_MARGIN).await?;
            if let Some(value) = answer.get("mcp") {
                return Ok(Answer::Mcp(value.clone()));
            }
            if let Some(value) = answer.get("a2e") {
                return Ok(Answer::A2e(value.clone()));
            }
            Err(answer
                .get("refused")
                .and_then(Value::as_str)
                .unwrap_or("the caller's replica gave no answer")
                .to_owned())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_survives_its_relaying() {
        let request = ServerRequest {
            kind: AskKind::Elicitation,
            params: json!({"message": "m"}),
            message: json!({"type": "mcp/elicit/req", "id": "e-1"}),
            id: "e-1".into(),
            deadline: Duration::from_millis(1500),
        };
        let back = request_of(&relayed_request(&request)).unwrap();
        assert_eq!(back.kind, request.kind);
        assert_eq!(back.params, request.params);
        assert_eq!(back.message, request.message);
        assert_eq!(back.id, request.id);
        assert_eq!(back.deadline, request.deadline);
    }
}
