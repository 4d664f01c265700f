//! The hub: one channel per agent (its SSE streams, a bounded replay buffer) and the table of
//! server-initiated requests waiting for an agent's answer. Everything that reaches agents or
//! waits for them goes through `publish`, `broadcast` and `ask`; in-process by default, or
//! across replicas once [`Hub::join`]ed to NATS (`bus.rs`).

mod budget;
pub mod bus;
mod channel;
mod pending;
mod recipient;
pub mod relayed;

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use budget::{DEFAULT_AGENT_BYTES, DEFAULT_BYTES, Kind, Limits};
pub use bus::{BusConfig, BusError};
pub use channel::{Event, Opened};
pub use pending::AnswerError;
pub use recipient::{
    AgentChannel, Answer, AskKind, InputRounds, LogTaken, Recipient, ServerRequest,
};

use budget::{Budget, Payload};
use bus::{Asked, Bus, Entry, RelayOutcome, RelayedAnswer};
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

/// A notification for the MCP clients of `/mcp`, with the server it came from (as it crosses
/// replicas too).
pub use bus::Notice as McpNotice;
/// The method of the notice [`Hub::authorized`] sends: the bridge's own, never an MCP client's.
pub const AUTHORIZED: &str = "mcp-bridge/authorized";

/// See [`Hub::logged`].
#[must_use]
#[derive(Debug)]
pub struct Logged(Option<tokio::sync::oneshot::Receiver<()>>);

impl Logged {
    /// Waits for it.
    pub async fn wait(self) {
        if let Some(done) = self.0 {
            let _ = done.await;
        }
    }
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
    /// The replay buffers' limits and global byte account.
    budget: Arc<Budget>,
    /// Across replicas: the last payload applied from the log, so the entries of one
    /// [`Hub::publish_to`] (one per agent, consecutive) share one copy here too (and one
    /// charge: this keeps at most one payload counted after its buffers let it go).
    last_applied: std::sync::Mutex<Option<Payload>>,
    shutdown: CancellationToken,
    /// The other replicas, once joined.
    bus: OnceLock<Arc<Bus>>,
    /// Across replicas: the log's sequence before the first entry this replica applied (a
    /// channel knows nothing up to it).
    origin: std::sync::atomic::AtomicU64,
    /// Across replicas: recipients of calls forwarded to a server's holder (relayed.rs).
    lent: relayed::Lent,
    /// This replica's `/mcp` sessions, as other replicas reach them (relayed.rs).
    session_peers: OnceLock<Arc<dyn relayed::SessionPeers>>,
}

impl Hub {
    /// A hub keeping the last events of each agent within `replay` (a count alone takes the
    /// default byte budgets); `shutdown` ends every stream. Channels of agents gone for an hour
    /// are forgotten.
    pub fn new(replay: impl Into<Limits>, shutdown: CancellationToken) -> Arc<Self> {
        let hub = Arc::new(Self {
            channels: RwLock::default(),
            downstream: tokio::sync::broadcast::channel(256).0,
            pending: Pending::default(),
            budget: Budget::new(replay.into()),
            last_applied: std::sync::Mutex::default(),
            shutdown,
            bus: OnceLock::new(),
            origin: std::sync::atomic::AtomicU64::new(0),
            lent: relayed::Lent::default(),
            session_peers: OnceLock::new(),
        });
        let weak = Arc::downgrade(&hub);
        let stop = hub.shutdown.clone();
        tokio::spawn(async move {
            let mut sweeps = tokio::time::interval(IDLE_SWEEP);
            loop {
                tokio::select! {
                    _ = stop.cancelled() => {
                        if let Some(hub) = weak.upgrade() {
                            hub.close_streams();
                        }
                        return;
                    }
                    _ = sweeps.tick() => match weak.upgrade() {
                        Some(hub) => hub.forget_idle(IDLE_CHANNEL),
                        None => return,
                    },
                }
            }
        });
        hub
    }

    /// Joins the other replicas on NATS: from now on every event goes through the replicas' log
    /// (applied here from its oldest entry before this returns), and answers, presence and
    /// `/mcp` notices through NATS.
    pub async fn join(self: &Arc<Self>, config: BusConfig) -> Result<(), BusError> {
        let applier: std::sync::Weak<dyn bus::Applier> = {
            let weak: std::sync::Weak<Self> = Arc::downgrade(self);
            weak
        };
        let bus = Bus::join(config, applier, self.shutdown.clone(), &self.origin).await?;
        let _ = self.bus.set(bus);
        Ok(())
    }

    /// The other replicas, when joined.
    pub fn bus(&self) -> Option<&Arc<Bus>> {
        self.bus.get()
    }

    /// What resolves once every event handed to the hub here before now is where no crash of
    /// this replica can take it: at once in one process (or while NATS is away), else once the
    /// replicas' log has acknowledged it. A call's answer waits on it (`upstream::notify`).
    pub fn logged(&self) -> Logged {
        Logged(self.bus.get().and_then(|bus| bus.logged()))
    }

    fn new_channel(&self) -> Channel {
        match self.bus.get() {
            None => Channel::new(&self.budget),
            Some(bus) => Channel::starting_at(
                &self.budget,
                bus.applied() + 1,
                self.origin.load(std::sync::atomic::Ordering::Acquire),
            ),
        }
    }

    fn channel(&self, agent_id: &str) -> Arc<Channel> {
        self.channel_or(agent_id, || self.new_channel())
    }

    /// The agent's channel as the log creates it: knowing nothing before the log's origin.
    fn channel_from_log(&self, agent_id: &str, seq: u64) -> Arc<Channel> {
        let origin = self.origin.load(std::sync::atomic::Ordering::Acquire);
        self.channel_or(agent_id, || Channel::starting_at(&self.budget, seq, origin))
    }

    /// The agent's channel, made by `new` when it has none yet.
    fn channel_or(&self, agent_id: &str, new: impl FnOnce() -> Channel) -> Arc<Channel> {
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
            .or_insert_with(|| Arc::new(new()))
            .clone()
    }

    /// Tells the other replicas which agents have streams open here.
    fn presence_changed(&self) {
        if let Some(bus) = self.bus.get() {
            let agents = self
                .channels
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .filter(|(_, channel)| channel.connected())
                .map(|(agent, _)| agent.clone())
                .collect();
            bus.set_local_agents(agents);
        }
    }

    /// Sends an A2E message to one agent; it is kept for replay when the agent is away.
    pub fn publish(&self, agent_id: &str, kind: &str, message: &impl Serialize) {
        self.publish_to([agent_id], kind, message);
    }

    /// Sends one A2E message to each of `agents`: serialised once, one copy in memory shared by
    /// every agent's channel (and counted once in the replay budget). Across replicas it is one
    /// log entry per agent (the log's entries name one agent each) carrying the same bytes;
    /// applying consecutive entries with the same bytes shares one copy again.
    pub fn publish_to<'a>(
        &self,
        agents: impl IntoIterator<Item = &'a str>,
        kind: &str,
        message: &impl Serialize,
    ) {
        let data: Arc<str> = match serde_json::to_string(message) {
            Ok(data) => data.into(),
            Err(error) => return tracing::error!(%error, kind, "cannot serialise an event"),
        };
        if let Some(bus) = self.bus.get() {
            for agent in agents {
                bus.append(Entry::Event {
                    agent: agent.to_owned(),
                    kind: kind.to_owned(),
                    data: data.clone(),
                });
            }
            return;
        }
        let payload = self.budget.payload(kind.into(), data);
        for agent in agents {
            self.channel(agent).publish_payload(&payload);
        }
    }

    /// Bytes of event data the replay buffers hold now (a payload shared by several agents
    /// counted once); never above `MCP_BRIDGE_REPLAY_BYTES` for long.
    pub fn replay_bytes(&self) -> usize {
        self.budget.held()
    }

    /// The payload of an entry applied from the log: the previous one's copy when the bytes are
    /// the same (the entries of one `publish_to`).
    fn applied_payload(&self, kind: &str, data: Arc<str>) -> Payload {
        let mut last = self.last_applied.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(same) = last
            .as_ref()
            .filter(|last| last.kind.as_str() == kind && *last.data == *data)
        {
            return same.clone();
        }
        let payload = self.budget.payload(kind.into(), data);
        *last = Some(payload.clone());
        payload
    }

    /// Sends an A2E message to every agent that has opened a stream since the service started.
    pub fn broadcast(&self, kind: &str, message: &impl Serialize) {
        let data: Arc<str> = match serde_json::to_string(message) {
            Ok(data) => data.into(),
            Err(error) => return tracing::error!(%error, kind, "cannot serialise an event"),
        };
        if let Some(bus) = self.bus.get() {
            return bus.append(Entry::All {
                kind: kind.to_owned(),
                data,
            });
        }
        let payload = self.budget.payload(kind.into(), data);
        self.broadcast_here(None, &payload);
    }

    /// Publishes to every channel of this replica (with the log's id across replicas).
    fn broadcast_here(&self, seq: Option<u64>, payload: &Payload) {
        let channels: Vec<Arc<Channel>> = self
            .channels
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect();
        for channel in channels {
            match seq {
                Some(seq) => channel.publish_at(seq, payload),
                None => {
                    channel.publish_payload(payload);
                }
            }
        }
    }

    /// Hands a notification from server `server_id` to the MCP clients of `/mcp` (which of them
    /// get it is theirs to say).
    pub fn to_mcp_clients(&self, server_id: &str, method: &str, params: Value) {
        self.notice(McpNotice {
            server_id: server_id.to_owned(),
            method: method.to_owned(),
            params,
            agents: None,
            except_session: None,
        });
    }

    fn notice(&self, notice: McpNotice) {
        match self.bus.get() {
            Some(bus) => bus.mcp_notice(&notice),
            None => {
                let _ = self.downstream.send(notice);
            }
        }
    }

    /// Like [`to_mcp_clients`](Self::to_mcp_clients), for the sessions of `agents` only.
    pub fn to_mcp_clients_of(
        &self,
        server_id: &str,
        agents: Vec<String>,
        method: &str,
        params: Value,
    ) {
        self.to_agents_sessions(server_id, agents, None, method, params);
    }

    /// Like [`to_mcp_clients_of`](Self::to_mcp_clients_of), but not for the session `except`,
    /// which had it on its call's own stream.
    pub fn to_mcp_clients_but(
        &self,
        server_id: &str,
        agents: Vec<String>,
        except: String,
        method: &str,
        params: Value,
    ) {
        self.to_agents_sessions(server_id, agents, Some(except), method, params);
    }

    /// Tells `/mcp` that `agent` has authorized server `server_id` (OAuth): the sessions that
    /// were handed the link as a URL elicitation learn that it is done.
    pub fn authorized(&self, server_id: &str, agent: &str) {
        self.to_mcp_clients_of(server_id, vec![agent.to_owned()], AUTHORIZED, Value::Null);
    }

    fn to_agents_sessions(
        &self,
        server_id: &str,
        agents: Vec<String>,
        except_session: Option<String>,
        method: &str,
        params: Value,
    ) {
        self.notice(McpNotice {
            server_id: server_id.to_owned(),
            method: method.to_owned(),
            params,
            agents: Some(agents),
            except_session,
        });
    }

    /// The notifications for MCP clients of `/mcp`, as they happen.
    pub fn mcp_client_notifications(&self) -> tokio::sync::broadcast::Receiver<McpNotice> {
        self.downstream.subscribe()
    }

    /// Whether the agent has an event stream open now (on any replica).
    pub fn is_connected(&self, agent_id: &str) -> bool {
        self.channels
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(agent_id)
            .is_some_and(|c| c.connected())
            || self
                .bus
                .get()
                .is_some_and(|bus| bus.connected_elsewhere(agent_id))
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
            hub: self,
            agent_id,
            id,
        };
        match self.bus.get() {
            Some(bus) => match serde_json::to_string(message) {
                Ok(data) => bus.append(Entry::Ask {
                    agent: agent_id.to_owned(),
                    kind: kind.to_owned(),
                    id: id.to_owned(),
                    replica: bus.replica().to_owned(),
                    data: data.into(),
                }),
                Err(error) => tracing::error!(%error, kind, "cannot serialise a request"),
            },
            None => self.publish(agent_id, kind, message),
        }
        tokio::select! {
            answer = answer => answer.map_err(|_| AskError::Shutdown),
            _ = tokio::time::sleep(deadline) => Err(AskError::Timeout(agent_id.to_owned(), deadline)),
            _ = self.shutdown.cancelled() => Err(AskError::Shutdown),
        }
    }

    /// Delivers an agent's answer to a request of `kind` that was sent to it: here, or relayed
    /// to the replica where the request waits.
    pub async fn answer(
        &self,
        agent_id: &str,
        kind: &'static str,
        id: &str,
        answer: Value,
    ) -> Result<(), AnswerError> {
        let Some(bus) = self.bus.get().filter(|_| !self.pending.holds(id)) else {
            return self.pending.answer(id, agent_id, kind, answer);
        };
        let asked = match bus.asked(id) {
            Some(asked) => Some(asked),
            // Perhaps this replica has not applied the request yet.
            None => {
                bus.catch_up().await;
                bus.asked(id)
            }
        };
        match asked {
            Some(Asked::Waiting {
                replica,
                agent,
                kind: asked_kind,
            }) if agent == agent_id && asked_kind == kind => {
                if replica == bus.replica() {
                    return self.pending.answer(id, agent_id, kind, answer);
                }
                let relayed = RelayedAnswer {
                    id: id.to_owned(),
                    agent: agent_id.to_owned(),
                    kind: kind.to_owned(),
                    answer,
                };
                match bus.relay_answer(&replica, &relayed).await {
                    Ok(RelayOutcome::Delivered) => Ok(()),
                    Ok(RelayOutcome::AlreadyAnswered) => {
                        Err(AnswerError::AlreadyAnswered(id.to_owned()))
                    }
                    Ok(RelayOutcome::NotFound) => Err(AnswerError::NotFound(id.to_owned())),
                    Err(error) => Err(AnswerError::Unreachable(id.to_owned(), error.to_string())),
                }
            }
            Some(Asked::Ended {
                agent,
                answered: true,
            }) if agent == agent_id => Err(AnswerError::AlreadyAnswered(id.to_owned())),
            _ => self.pending.answer(id, agent_id, kind, answer),
        }
    }

    /// Opens a stream for the agent, replaying what came after `last_event_id`. Across replicas
    /// the log is first applied here up to that id (bounded), and the others learn of the
    /// stream.
    pub async fn open(self: &Arc<Self>, agent_id: &str, last_event_id: Option<u64>) -> Stream {
        if let Some(bus) = self.bus.get() {
            bus.append(Entry::Open {
                agent: agent_id.to_owned(),
            });
            if let Some(last) = last_event_id {
                bus.caught_up_to(last, Duration::from_secs(2)).await;
            }
        }
        let stream = self.open_here(agent_id, last_event_id);
        self.presence_changed();
        stream
    }

    fn open_here(self: &Arc<Self>, agent_id: &str, last_event_id: Option<u64>) -> Stream {
        // Subscribed before it counts as connected (so nothing sent to a connected agent is
        // missed), and counted under the map's lock (so the idle sweep cannot drop it meanwhile).
        let (channel, opened) = {
            let mut channels = self.channels.write().unwrap_or_else(|e| e.into_inner());
            let channel = channels
                .entry(agent_id.to_owned())
                .or_insert_with(|| Arc::new(self.new_channel()))
                .clone();
            if self.shutdown.is_cancelled() {
                // Opened as the service stops, perhaps after the streams were closed: ends now.
                channel.close();
            }
            let opened = channel.open(last_event_id);
            channel.stream_opened();
            (channel, opened)
        };
        Stream {
            channel,
            opened: Some(opened),
            hub: self.clone(),
        }
    }

    /// Fired when the service stops: streams end.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Ends every event stream (the service is stopping): each channel's live feed closes, so a
    /// stream ends once it has sent what it was given, without waiting on the shutdown itself.
    fn close_streams(&self) {
        let channels = self.channels.read().unwrap_or_else(|e| e.into_inner());
        for channel in channels.values() {
            channel.close();
        }
    }

    /// Forgets the channels (and their replay buffers) of agents that have had no stream open
    /// for `idle` — a reconnect after that is told events were lost.
    pub fn forget_idle(&self, idle: Duration) {
        let mut channels = self.channels.write().unwrap_or_else(|e| e.into_inner());
        let bus = self.bus.get();
        channels.retain(|agent, channel| {
            !channel.idle_for(idle.as_secs()) || bus.is_some_and(|b| b.connected_elsewhere(agent))
        });
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

/// Removes a request from the waiting table when its asker is done with it (and tells the
/// other replicas).
struct Waiting<'a> {
    hub: &'a Hub,
    agent_id: &'a str,
    id: &'a str,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let unanswered = self.hub.pending.remove(self.id);
        if let Some(bus) = self.hub.bus.get() {
            bus.append(Entry::Done {
                id: self.id.to_owned(),
                agent: self.agent_id.to_owned(),
                answered: !unanswered,
            });
        }
    }
}

impl bus::Applier for Hub {
    fn apply(&self, seq: u64, entry: Entry) {
        match entry {
            Entry::Event { agent, kind, data }
            | Entry::Ask {
                agent, kind, data, ..
            } => {
                let payload = self.applied_payload(&kind, data);
                self.channel_from_log(&agent, seq).publish_at(seq, &payload);
            }
            Entry::All { kind, data } => {
                let payload = self.applied_payload(&kind, data);
                self.broadcast_here(Some(seq), &payload);
            }
            Entry::Open { agent } => {
                self.channel_from_log(&agent, seq);
            }
            Entry::Done { .. } => {}
        }
    }

    fn relayed_answer(&self, answer: RelayedAnswer) -> RelayOutcome {
        match self
            .pending
            .answer(&answer.id, &answer.agent, &answer.kind, answer.answer)
        {
            Ok(()) => RelayOutcome::Delivered,
            Err(AnswerError::AlreadyAnswered(_)) => RelayOutcome::AlreadyAnswered,
            Err(_) => RelayOutcome::NotFound,
        }
    }

    fn mcp_notice(&self, notice: McpNotice) {
        let _ = self.downstream.send(notice);
    }
}

/// An open stream; counts as connected until dropped.
pub struct Stream {
    channel: Arc<Channel>,
    opened: Option<Opened>,
    hub: Arc<Hub>,
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
        self.hub.presence_changed();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn one_message_to_many_agents_is_one_shared_copy_counted_once() {
        let hub = Hub::new(10, CancellationToken::new());
        let agents = ["a", "b", "c"];
        let streams: Vec<Stream> = agents.iter().map(|a| hub.open_here(a, None)).collect();
        let message = json!({ "n": 1 });
        hub.publish_to(agents, "k", &message);
        let size = serde_json::to_string(&message).unwrap().len();
        assert_eq!(hub.replay_bytes(), size);
        let events: Vec<Arc<Event>> = agents
            .iter()
            .map(|a| hub.channel(a).open(Some(0)).replay.remove(0))
            .collect();
        for event in &events[1..] {
            assert!(Arc::ptr_eq(&event.data, &events[0].data));
            assert_eq!(event.kind, events[0].kind);
        }
        // One agent at a time costs a copy each.
        hub.publish("a", "k", &message);
        hub.publish("b", "k", &message);
        assert_eq!(hub.replay_bytes(), 3 * size);
        drop(streams);
        hub.forget_idle(Duration::ZERO);
        assert_eq!(hub.replay_bytes(), 0);
    }

    #[tokio::test]
    async fn log_entries_of_one_message_to_many_agents_share_one_copy() {
        use bus::Applier;
        let hub = Hub::new(10, CancellationToken::new());
        // As deserialised from the log: equal bytes, separate allocations.
        let entry = |agent: &str| Entry::Event {
            agent: agent.to_owned(),
            kind: "k".to_owned(),
            data: Arc::from("{\"n\":1}"),
        };
        hub.apply(5, entry("a"));
        hub.apply(6, entry("b"));
        assert_eq!(hub.replay_bytes(), 7);
        let a = hub.channel("a").open(Some(0)).replay.remove(0);
        let b = hub.channel("b").open(Some(0)).replay.remove(0);
        assert!(Arc::ptr_eq(&a.data, &b.data));
        assert_eq!((a.id, b.id), (5, 6));
    }
}
