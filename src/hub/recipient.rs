//! The way back to whoever made a call: what a server sends during a call (its progress, and
//! its sampling and elicitation requests with their answers) goes to the call's [`Recipient`].
//! The front ends implement it (an agent's event channel, a streamed REST call, a `/mcp`
//! session); upstream code holds nothing else of theirs.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;

use super::Hub;
use crate::a2e::{ElicitRequest, Message, SamplingRequest, ServerPush};

/// The kinds of request a server makes of a call's recipient.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AskKind {
    Sampling,
    Elicitation,
}

impl AskKind {
    /// The A2E message type an agent is asked with.
    pub fn a2e_type(self) -> &'static str {
        match self {
            AskKind::Sampling => SamplingRequest::TYPE,
            AskKind::Elicitation => ElicitRequest::TYPE,
        }
    }
}

/// A server's request during a call, in both the forms a recipient may want it in.
#[derive(Debug, Clone)]
pub struct ServerRequest {
    pub kind: AskKind,
    /// The MCP request's params, for a recipient that speaks MCP.
    pub params: Value,
    /// The A2E request message (its id is [`ServerRequest::id`]), for an agent.
    pub message: Value,
    pub id: String,
    /// How long the server waits for the answer.
    pub deadline: Duration,
}

/// What became of a log message a recipient was offered ([`Recipient::log`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogTaken {
    /// It went nowhere: it goes where log messages go.
    Not,
    /// It went on the call's stream of this `/mcp` session.
    Session(String),
    /// It went on the call's stream of a client with no session (2026-07-28), or was below the
    /// level that client asked for.
    Stateless,
}

/// A recipient's answer, in the form it was asked in.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// The MCP result (`CreateMessageResult`, `ElicitResult`).
    Mcp(Value),
    /// The agent's A2E response message.
    A2e(Value),
}

/// Whoever made a call. Its methods are how a server's traffic during that call gets back.
pub trait Recipient: Send + Sync + std::fmt::Debug {
    /// The agent the call belongs to.
    fn agent_id(&self) -> &str;

    /// Takes the call's progress (`params` carries the server's progress token).
    fn progress(&self, push: ServerPush) -> BoxFuture<'_, ()>;

    /// Asks the recipient a server's request; `Err` says why there is no answer.
    fn ask(&self, request: ServerRequest) -> BoxFuture<'_, Result<Answer, String>>;

    /// Takes a log message (`notifications/message`) the server sent during the call, on the
    /// call's own stream, so that it comes before the call's result: whether it did, and the
    /// id of the `/mcp` session it went to, which is not to have it again.
    fn log(&self, _push: &ServerPush) -> BoxFuture<'_, LogTaken> {
        Box::pin(std::future::ready(LogTaken::Not))
    }

    /// The A2E `id` of the call this recipient made, when it has one (a forwarded call's
    /// progress carries it on another replica).
    fn call_id(&self) -> Option<String> {
        None
    }

    /// Whether a server's traffic during the call must come back to this recipient where it
    /// is when the call runs on another replica (hub/relayed.rs); otherwise the holder sends
    /// it to the agent's channel, which every replica reaches.
    fn relayed(&self) -> bool {
        false
    }

    /// A 2026-07-28 client that answers a server's input requests itself: the server's
    /// input-required result goes back to it as it is, and its answers come back to the server.
    fn input_rounds(&self) -> Option<&InputRounds> {
        None
    }
}

/// A 2026-07-28 (stateless) client's part in its server's input-required rounds (SEP-2322). The
/// server's `InputRequiredResult` reaches the client unchanged (its keys, all its requests at
/// once, its `requestState`), and the client's next call carries `inputResponses` and
/// `requestState` back to the server, which checks its own state. The server sees the client's
/// capabilities, not the bridge's, so that it asks only for what the client can give.
#[derive(Debug, Default)]
pub struct InputRounds {
    /// The agent whose client it is.
    pub agent_id: String,
    /// What the client's call carries for the server from the round before.
    pub responses: Option<rmcp::model::InputResponses>,
    pub request_state: Option<String>,
    /// What the client declared in its request's `_meta`.
    pub capabilities: Option<rmcp::model::ClientCapabilities>,
    /// The server's input-required result, once it answered with one.
    pub required: std::sync::Mutex<Option<rmcp::model::InputRequiredResult>>,
}

impl InputRounds {
    /// What a client's call carries for its server's input rounds.
    pub fn new(
        agent_id: &str,
        responses: Option<rmcp::model::InputResponses>,
        request_state: Option<String>,
        capabilities: Option<rmcp::model::ClientCapabilities>,
    ) -> Self {
        Self {
            agent_id: agent_id.to_owned(),
            responses,
            request_state,
            capabilities,
            required: Default::default(),
        }
    }

    /// Keeps the server's input-required result for the client.
    pub fn hand_over(&self, required: rmcp::model::InputRequiredResult) {
        *self.required.lock().unwrap_or_else(|e| e.into_inner()) = Some(required);
    }

    /// The server's input-required result, when the call ended with one.
    pub fn take(&self) -> Option<rmcp::model::InputRequiredResult> {
        self.required
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }
}

/// An agent's event channel as the recipient of its call: progress is pushed to the channel,
/// requests are asked there and answered over REST.
#[derive(Clone)]
pub struct AgentChannel {
    hub: Arc<Hub>,
    agent_id: String,
    /// The A2E `id` of the call, carried by its progress pushes as `req_id`.
    req_id: String,
}

impl std::fmt::Debug for AgentChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentChannel")
            .field("agent_id", &self.agent_id)
            .field("req_id", &self.req_id)
            .finish()
    }
}

impl AgentChannel {
    pub fn new(hub: Arc<Hub>, agent_id: impl Into<String>, req_id: impl Into<String>) -> Self {
        Self {
            hub,
            agent_id: agent_id.into(),
            req_id: req_id.into(),
        }
    }

    /// The A2E `id` of the call.
    pub fn req_id(&self) -> &str {
        &self.req_id
    }
}

impl Recipient for AgentChannel {
    fn agent_id(&self) -> &str {
        &self.agent_id
    }

    fn call_id(&self) -> Option<String> {
        Some(self.req_id.clone())
    }

    fn progress(&self, mut push: ServerPush) -> BoxFuture<'_, ()> {
        push.req_id = Some(self.req_id.clone());
        self.hub.publish(&self.agent_id, ServerPush::TYPE, &push);
        Box::pin(std::future::ready(()))
    }

    fn ask(&self, request: ServerRequest) -> BoxFuture<'_, Result<Answer, String>> {
        Box::pin(async move {
            self.hub
                .ask(
                    &self.agent_id,
                    request.kind.a2e_type(),
                    &request.id,
                    &request.message,
                    request.deadline,
                )
                .await
                .map(Answer::A2e)
                .map_err(|e| e.to_string())
        })
    }
}
