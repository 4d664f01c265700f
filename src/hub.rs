//! The hub: one channel per agent (its SSE streams, a bounded replay buffer) and the table of
//! server-initiated requests waiting for an agent's answer. Everything that reaches agents or
//! waits for them goes through `publish`, `broadcast` and `ask`, so a cross-replica hub can
//! stand behind the same few calls later.

mod channel;
mod pending;
mod recipient;

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use channel::{Event, Opened};
pub use pending::AnswerError;
pub use recipient::{AgentChannel, Answer, AskKind, Recipient, ServerRequest};

use channel::Channel;
use pending::Pending;

/// Why an agent gave no answer.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum AskError {
    #[error("agent \"{0}\" has no event stream open")]
    NotConnected(String),
    #[error("agent \"{0}\" did not answer within {1:?}")]
    Timeout(String, Duration),
    #[error("the service is shutting down")]
    Shutdown,
    #[error("agent \"{0}\" already has {1} requests waiting for its answer")]
    TooMany(String, usize),
}

/// A notification for the MCP clients of `/mcp`, with the server it came from.
#[derive(Debug, Clone)]
pub struct McpNotice {
    pub server_id: String,
    pub method: String,
    pub params: Value,
    /// The agents whose sessions may have it; `None`: any session.
    pub agents: Option<Vec<String>>,
}

/// How long an agent's channel outlives its last stream.
const IDLE_CHANNEL: Duration = Duration::from_secs(3600);
/// How often idle channels are looked for.
const IDLE_SWEEP: Duration = Duration::from_secs(300);

pub struct Hub {
    channels: RwLock<HashMap<String, Arc<Channel>>>,
    /// Notifications for MCP clients of `/mcp`.
    downstream: tokio::sync::broadcast::Sender<McpNotice>,
    pending: Pending,
    replay: usize,
    shutdown: CancellationToken,
}

impl Hub {
    /// A hub keeping the last `replay` events of each agent; `shutdown` ends every stream.
    /// Channels of agents gone for an hour are forgotten.
    pub fn new(replay: usize, shutdown: CancellationToken) -> Arc<Self> {
        let hub = Arc::new(Self {
            channels: RwLock::default(),
            downstream: tokio::sync::broadcast::channel(256).0,
            pending: Pending::default(),
            replay,
            shutdown,
        });
        let weak = Arc::downgrade(&hub);
        let stop = hub.shutdown.clone();
        tokio::spawn(async move {
            let mut sweeps = tokio::time::interval(IDLE_SWEEP);
            loop {
                tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = sweeps.tick() => match weak.upgrade() {
                        Some(hub) => hub.forget_idle(IDLE_CHANNEL),
                        None => return,
                    },
                }
            }
        });
        hub
    }

    fn channel(&self, agent_id: &str) -> Arc<Channel> {
        if let Some(channel) = self
            .channels
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(agent_id)
        {
            return channel.clone();
        }
        let mut channels = self.channels.write().unwrap_or_else(|e| e.into_inner());
        channels
            .entry(agent_id.to_owned())
            .or_insert_with(|| Arc::new(Channel::new(self.replay)))
            .clone()
    }

    /// Sends an A2E message to one agent; it is kept for replay when the agent is away.
    pub fn publish(&self, agent_id: &str, kind: &str, message: &impl Serialize) {
        match serde_json::to_string(message) {
            Ok(data) => {
                self.channel(agent_id).publish(kind, data.into());
            }
            Err(error) => tracing::error!(%error, kind, "cannot serialise an event"),
        }
    }

    /// Sends an A2E message to every agent that has opened a stream since the service started.
    pub fn broadcast(&self, kind: &str, message: &impl Serialize) {
        let data: Arc<str> = match serde_json::to_string(message) {
            Ok(data) => data.into(),
            Err(error) => return tracing::error!(%error, kind, "cannot serialise an event"),
        };
        let channels: Vec<Arc<Channel>> = self
            .channels
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect();
        for channel in channels {
            channel.publish(kind, data.clone());
        }
    }

    /// Hands a notification from server `server_id` to the MCP clients of `/mcp` (which of them
    /// get it is theirs to say).
    pub fn to_mcp_clients(&self, server_id: &str, method: &str, params: Value) {
        let _ = self.downstream.send(McpNotice {
            server_id: server_id.to_owned(),
            method: method.to_owned(),
            params,
            agents: None,
        });
    }

    /// Like [`to_mcp_clients`](Self::to_mcp_clients), for the sessions of `agents` only.
    pub fn to_mcp_clients_of(
        &self,
        server_id: &str,
        agents: Vec<String>,
        method: &str,
        params: Value,
    ) {
        let _ = self.downstream.send(McpNotice {
            server_id: server_id.to_owned(),
            method: method.to_owned(),
            params,
            agents: Some(agents),
        });
    }

    /// The notifications for MCP clients of `/mcp`, as they happen.
    pub fn mcp_client_notifications(&self) -> tokio::sync::broadcast::Receiver<McpNotice> {
        self.downstream.subscribe()
    }

    /// Whether the agent has an event stream open now.
    pub fn is_connected(&self, agent_id: &str) -> bool {
        self.channels
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(agent_id)
            .is_some_and(|c| c.connected())
    }

    /// Sends request `id` (an A2E message of `kind`) to the agent and waits for its answer.
    pub async fn ask(
        &self,
        agent_id: &str,
        kind: &'static str,
        id: &str,
        message: &impl Serialize,
        deadline: Duration,
    ) -> Result<Value, AskError> {
        if !self.is_connected(agent_id) {
            return Err(AskError::NotConnected(agent_id.to_owned()));
        }
        let answer = self.pending.insert(id, agent_id, kind).ok_or_else(|| {
            AskError::TooMany(agent_id.to_owned(), pending::MAX_WAITING_PER_AGENT)
        })?;
        // However this ends (an answer, the deadline, or the asker giving up), the request stops waiting.
        let _waiting = Waiting {
            pending: &self.pending,
            id,
        };
        self.publish(agent_id, kind, message);
        tokio::select! {
            answer = answer => answer.map_err(|_| AskError::Shutdown),
            _ = tokio::time::sleep(deadline) => Err(AskError::Timeout(agent_id.to_owned(), deadline)),
            _ = self.shutdown.cancelled() => Err(AskError::Shutdown),
        }
    }

    /// Delivers an agent's answer to a request of `kind` that was sent to it.
    pub fn answer(
        &self,
        agent_id: &str,
        kind: &'static str,
        id: &str,
        answer: Value,
    ) -> Result<(), AnswerError> {
        self.pending.answer(id, agent_id, kind, answer)
    }

    /// Opens a stream for the agent, replaying what came after `last_event_id`.
    pub fn open(&self, agent_id: &str, last_event_id: Option<u64>) -> Stream {
        // Subscribed before it counts as connected (so nothing sent to a connected agent is
        // missed), and counted under the map's lock (so the idle sweep cannot drop it meanwhile).
        let (channel, opened) = {
            let mut channels = self.channels.write().unwrap_or_else(|e| e.into_inner());
            let channel = channels
                .entry(agent_id.to_owned())
                .or_insert_with(|| Arc::new(Channel::new(self.replay)))
                .clone();
            let opened = channel.open(last_event_id);
            channel.stream_opened();
            (channel, opened)
        };
        Stream {
            channel,
            opened: Some(opened),
        }
    }

    /// Fired when the service stops: streams end.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Forgets the channels (and their replay buffers) of agents that have had no stream open
    /// for `idle` — a reconnect after that is told events were lost.
    pub fn forget_idle(&self, idle: Duration) {
        let mut channels = self.channels.write().unwrap_or_else(|e| e.into_inner());
        channels.retain(|_, channel| !channel.idle_for(idle.as_secs()));
    }

    /// Agents with a stream open, and streams open, now.
    pub fn connections(&self) -> (usize, usize) {
        let channels = self.channels.read().unwrap_or_else(|e| e.into_inner());
        let streams: Vec<usize> = channels.values().map(|c| c.stream_count()).collect();
        (
            streams.iter().filter(|&&n| n > 0).count(),
            streams.iter().sum(),
        )
    }

    /// Server-initiated requests waiting for an answer now.
    pub fn pending_requests(&self) -> usize {
        self.pending.len()
    }
}

/// Removes a request from the waiting table when its asker is done with it.
struct Waiting<'a> {
    pending: &'a Pending,
    id: &'a str,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.pending.remove(self.id);
    }
}

/// An open stream; counts as connected until dropped.
pub struct Stream {
    channel: Arc<Channel>,
    opened: Option<Opened>,
}

impl Stream {
    pub fn take(&mut self) -> Opened {
        self.opened.take().expect("taken once")
    }

    /// Catches up a stream that fell behind the live feed: the buffered events after `last`,
    /// and the live feed anew.
    pub fn resume(&self, last: u64) -> Opened {
        self.channel.open(Some(last))
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        self.channel.stream_closed();
    }
}
