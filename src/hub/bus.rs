//! The hub across replicas, on NATS. Everything that reaches agents is appended to one ordered
//! log (a JetStream stream) that every replica applies from its start: each replica then holds
//! the same channels and replay buffers, the stream sequence is the event id, and an agent may
//! resume its stream with `Last-Event-ID` on any replica. Beside the log, on core NATS: presence
//! (which replica has which agent's streams open, every second), answers relayed to the replica
//! whose request waits for them, notices for `/mcp` clients, and requests between replicas.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

mod outbox;
pub mod protocol;
mod seal;

use async_nats::jetstream::{self, consumer, stream};
use bytes::Bytes;
use futures::StreamExt;
use futures::future::BoxFuture;
use serde_json::Value;
use tokio::sync::{Notify, mpsc, watch};
use tokio_util::sync::CancellationToken;

use crate::a2e::ErrorCode;
pub use protocol::{
    Announcement, Entry, Listing, Message, Notice, RelayOutcome, RelayedAnswer, RemoteError,
    Request,
};
use protocol::{Envelope, Refused};
pub use seal::BusKey;
use seal::{Seen, Unfit};

/// How often a replica says which agents have streams open on it.
const PRESENCE_EVERY: Duration = Duration::from_secs(1);
/// A replica not heard from for this long holds no streams.
const PRESENCE_LAPSE: Duration = Duration::from_secs(3);
/// How long the log keeps entries: a replica starting later applies what is younger.
const LOG_MAX_AGE: Duration = Duration::from_secs(3600);
/// How long a relayed answer or a request between replicas waits for the other replica.
pub const RELAY_TIMEOUT: Duration = Duration::from_secs(5);
/// How old a message on core NATS may be by the receiver's clock: older ones are refused, and
/// ids are remembered this long to refuse a message seen twice.
const REPLAY_WINDOW: Duration = Duration::from_secs(60);
/// How far replicas' clocks (and NATS's, which stamps what its streams store) may disagree: a
/// message sent later than now plus this is refused, and a replica takes no request sealed
/// more than this before it started (its seen set knows nothing older).
const CLOCK_SKEW: Duration = Duration::from_secs(10);
/// How many ids of messages taken on core NATS, and of log entries applied, are kept at most
/// (past it the oldest are forgotten and nothing as old is taken any more).
const SEEN_CAP: usize = 100_000;
const SEEN_LOG_CAP: usize = 1_000_000;
/// How many ended requests are remembered, to tell "already answered" from "no such request".
const ENDED_MEMORY: usize = 4096;

/// Where the replicas meet.
#[derive(Debug, Clone)]
pub struct BusConfig {
    pub url: String,
    /// Prefix of every subject and of the stream's name: replicas with the same prefix meet.
    pub prefix: String,
    pub replica: String,
    /// What every message is sealed with.
    pub key: Arc<BusKey>,
    /// Credentials and TLS for NATS.
    pub access: crate::config::NatsAccess,
    /// How many bytes of log entries wait for NATS at most (the oldest dropped past it).
    pub outbox_bytes: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum BusError {
    #[error("cannot reach NATS at {0}: {1}")]
    Connect(String, String),
    #[error("NATS JetStream: {0}")]
    JetStream(String),
    #[error("replica \"{0}\" did not answer: {1}")]
    Relay(String, String),
    #[error("{0}")]
    Config(String),
    /// The other replica served the request and it failed there.
    #[error(transparent)]
    Remote(#[from] RemoteError),
}

/// What the hub does with the log and with what other replicas send it.
pub trait Applier: Send + Sync + 'static {
    /// Applies entry `seq` of the log (in order, each once).
    fn apply(&self, seq: u64, entry: Entry);
    /// An answer relayed from another replica to a request waiting here.
    fn relayed_answer(&self, answer: RelayedAnswer) -> RelayOutcome;
    /// A notice for this replica's `/mcp` clients.
    fn mcp_notice(&self, notice: Notice);
}

/// What serves the requests and announcements of other replicas (the registry, installed with
/// [`Bus::serve`]).
pub trait Peer: Send + Sync + 'static {
    /// Serves `request` from replica `from`: the answer's JSON, or why not.
    fn request(
        self: Arc<Self>,
        from: String,
        request: Request,
    ) -> BoxFuture<'static, Result<Value, RemoteError>>;
    /// Takes in what replica `from` announced.
    fn announced(
        self: Arc<Self>,
        from: String,
        announcement: Announcement,
    ) -> BoxFuture<'static, ()>;
}

/// Where a request stands, as the log tells every replica.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asked {
    Waiting {
        replica: String,
        agent: String,
        kind: String,
    },
    Ended {
        agent: String,
        answered: bool,
    },
}

#[derive(Default)]
struct Asks {
    waiting: HashMap<String, Asked>,
    ended: VecDeque<String>,
}

pub struct Bus {
    client: async_nats::Client,
    js: jetstream::Context,
    stream: String,
    prefix: String,
    replica: String,
    log_subject: String,
    outbox: mpsc::UnboundedSender<Entry>,
    /// The last log sequence applied here.
    applied: watch::Sender<u64>,
    /// Which agents have streams open on each other replica, and when it said so.
    presence: Mutex<HashMap<String, (HashSet<String>, Instant)>>,
    /// Which agents have streams open here (kept by the hub).
    local_agents: Mutex<HashSet<String>>,
    presence_changed: Notify,
    asks: Mutex<Asks>,
    peer: Mutex<Option<Weak<dyn Peer>>>,
    /// Senders and versions already warned about (one line each).
    warned: Mutex<HashSet<(String, u32)>>,
    /// Messages refused since start (not understood, of an unknown version).
    refused: AtomicU64,
    key: Arc<BusKey>,
    outbox_bytes: usize,
    /// Log entries dropped since start (NATS away past the outbox's bound).
    dropped: AtomicU64,
    /// The most log entries awaiting their acknowledgement at once since start.
    most_in_flight: AtomicU64,
    /// The last value this replica put under each shared key (`None`: withdrawn), held while
    /// one is stored so that puts of a key stay in order.
    own_shared: tokio::sync::Mutex<HashMap<String, Option<Value>>>,
    /// Ids of the messages taken lately on core NATS, and of the log's entries applied.
    seen: Mutex<Seen>,
    seen_log: Mutex<Seen>,
    /// The sent-at time of the last value taken per shared key (a value never goes back).
    shared_at: Mutex<HashMap<String, u64>>,
    /// When a message on each subject was last refused with a warning.
    last_warned: Mutex<HashMap<String, Instant>>,
    /// State one replica shares with all: a JetStream stream keeping the last message of each
    /// subject `{prefix}.shared.{key}` (a key-value bucket as NATS 2.9 can serve it).
    shared: String,
    errors: AtomicU64,
    shutdown: CancellationToken,
    /// Connections to NATS made so far (the first included).
    connections: watch::Sender<u64>,
}

impl std::fmt::Debug for Bus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bus")
            .field("stream", &self.stream)
            .field("replica", &self.replica)
            .finish()
    }
}

/// The names of the two streams of a subject prefix: the log, and the shared state.
fn stream_names(prefix: &str) -> (String, String) {
    let base = subject_token(prefix);
    (format!("{base}_log"), format!("{base}_shared"))
}

impl Bus {
    /// Joins the replicas: connects, makes sure the log exists, and starts applying it to
    /// `applier` from its oldest entry; returns once what the log held at start is applied.
    pub async fn join(
        config: BusConfig,
        applier: std::sync::Weak<dyn Applier>,
        shutdown: CancellationToken,
        origin: &AtomicU64,
    ) -> Result<Arc<Self>, BusError> {
        // Counts connections to NATS: JetStream consumers do not outlive a NATS restart, so
        // each reconnection has them made again.
        let connections = watch::channel(0u64).0;
        let connected = connections.clone();
        let client = connect_options(&config.access)?
            .event_callback(move |event| {
                if matches!(event, async_nats::Event::Connected) {
                    connected.send_modify(|n| *n += 1);
                }
                std::future::ready(())
            })
            .name(format!("mcp-bridge {}", config.replica))
            .connection_timeout(Duration::from_secs(5))
            .request_timeout(Some(RELAY_TIMEOUT))
            .connect(config.url.split(',').map(str::trim).collect::<Vec<_>>())
            .await
            .map_err(|e| BusError::Connect(without_password(&config.url), e.to_string()))?;
        let js = jetstream::new(client.clone());
        let (name, shared) = stream_names(&config.prefix);
        let log_subject = format!("{}.log", config.prefix);
        let mut log = js
            .get_or_create_stream(stream::Config {
                name: name.clone(),
                subjects: vec![log_subject.clone()],
                max_age: LOG_MAX_AGE,
                max_messages: 1_000_000,
                max_bytes: 512 * 1024 * 1024,
                storage: stream::StorageType::File,
                discard: stream::DiscardPolicy::Old,
                duplicate_window: Duration::from_secs(120),
                ..Default::default()
            })
            .await
            .map_err(|e| BusError::JetStream(e.to_string()))?;
        let state = log
            .info()
            .await
            .map_err(|e| BusError::JetStream(e.to_string()))?
            .state
            .clone();
        let at_start = state.last_sequence;
        // What the log no longer holds is unknown here.
        origin.store(state.first_sequence.saturating_sub(1), Ordering::Release);
        js.get_or_create_stream(stream::Config {
            name: shared.clone(),
            subjects: vec![format!("{}.shared.>", config.prefix)],
            max_messages_per_subject: 1,
            storage: stream::StorageType::File,
            discard: stream::DiscardPolicy::Old,
            ..Default::default()
        })
        .await
        .map_err(|e| BusError::JetStream(e.to_string()))?;
        // A request sealed before this process started can only be a replay (core NATS keeps
        // nothing): its id is in no seen set here, so it is refused by its time.
        let started = now_ms();
        let skew = CLOCK_SKEW.as_millis() as u64;
        let mut seen = Seen::new(REPLAY_WINDOW.as_millis() as u64, skew, SEEN_CAP);
        seen.raise_floor(started.saturating_sub(skew));
        let mut seen_log = Seen::new(log_fresh_ms(), skew, SEEN_LOG_CAP);
        // Entries the log dropped before this replica read it (past its count or size) are
        // unknown here: nothing sealed before its oldest entry is taken.
        if state.messages > 0 {
            let first = state.first_timestamp.unix_timestamp_nanos() / 1_000_000;
            seen_log.raise_floor(u64::try_from(first).unwrap_or(0).saturating_sub(skew));
        }
        let (outbox, outgoing) = mpsc::unbounded_channel();
        let bus = Arc::new(Self {
            client,
            js,
            stream: name,
            prefix: config.prefix,
            replica: config.replica,
            log_subject,
            outbox,
            applied: watch::channel(0).0,
            presence: Mutex::default(),
            local_agents: Mutex::default(),
            presence_changed: Notify::new(),
            asks: Mutex::default(),
            peer: Mutex::default(),
            warned: Mutex::default(),
            refused: AtomicU64::new(0),
            key: config.key,
            outbox_bytes: config.outbox_bytes,
            dropped: AtomicU64::new(0),
            most_in_flight: AtomicU64::new(0),
            own_shared: Default::default(),
            seen: Mutex::new(seen),
            seen_log: Mutex::new(seen_log),
            shared_at: Mutex::default(),
            last_warned: Mutex::default(),
            shared,
            errors: AtomicU64::new(0),
            shutdown,
            connections,
        });
        let messages = bus.read_log(1).await?;
        tokio::spawn(bus.clone().apply_log(messages, applier.clone()));
        tokio::spawn(bus.clone().append_log(outgoing));
        tokio::spawn(bus.clone().share_again_on_reconnect());
        bus.clone().listen(applier).await?;
        tokio::spawn(bus.clone().announce_presence());
        if !bus.caught_up_to(at_start, Duration::from_secs(60)).await {
            return Err(BusError::JetStream(format!(
                "the log was not applied up to {at_start} within a minute"
            )));
        }
        Ok(bus)
    }

    pub fn replica(&self) -> &str {
        &self.replica
    }

    /// Whether NATS is reachable now.
    pub fn connected(&self) -> bool {
        self.client.connection_state() == async_nats::connection::State::Connected
    }

    /// Errors talking to NATS since start (appends given up, relays that failed).
    pub fn errors(&self) -> u64 {
        self.errors.load(Ordering::Relaxed)
    }

    fn error(&self) {
        self.errors.fetch_add(1, Ordering::Relaxed);
    }

    /// Appends an entry to the log (in order with this replica's other appends).
    pub fn append(&self, entry: Entry) {
        if self.outbox.send(entry).is_err() {
            self.error();
        }
    }

    /// Waits until the log is applied here up to `seq`; false after `within`.
    pub async fn caught_up_to(&self, seq: u64, within: Duration) -> bool {
        let mut applied = self.applied.subscribe();
        tokio::time::timeout(within, applied.wait_for(|&at| at >= seq))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    /// Waits until what the log holds now is applied here (bounded): after it, whatever
    /// another replica appended before this call is known here.
    pub async fn catch_up(&self) -> bool {
        let last = match self.js.get_stream(&self.stream).await {
            Ok(log) => match log.get_info().await {
                Ok(info) => info.state.last_sequence,
                Err(_) => return false,
            },
            Err(_) => return false,
        };
        self.caught_up_to(last, Duration::from_secs(2)).await
    }

    pub fn applied(&self) -> u64 {
        *self.applied.borrow()
    }

    /// Whether another replica has a stream of the agent open now.
    pub fn connected_elsewhere(&self, agent: &str) -> bool {
        let presence = self.presence.lock().unwrap_or_else(|e| e.into_inner());
        presence
            .values()
            .any(|(agents, at)| at.elapsed() < PRESENCE_LAPSE && agents.contains(agent))
    }

    /// The other replicas heard from lately.
    pub fn others(&self) -> Vec<String> {
        let presence = self.presence.lock().unwrap_or_else(|e| e.into_inner());
        presence
            .iter()
            .filter(|(_, (_, at))| at.elapsed() < PRESENCE_LAPSE)
            .map(|(replica, _)| replica.clone())
            .collect()
    }

    /// Says which agents have streams open here (the hub calls it when that changes).
    pub fn set_local_agents(&self, agents: HashSet<String>) {
        *self.local_agents.lock().unwrap_or_else(|e| e.into_inner()) = agents;
        self.presence_changed.notify_one();
    }

    /// Where request `id` stands, as far as the log applied here says.
    pub fn asked(&self, id: &str) -> Option<Asked> {
        self.asks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .waiting
            .get(id)
            .cloned()
    }

    /// Keeps the table of requests in step with the log (called by the applier, in order).
    pub fn note_entry(&self, entry: &Entry) {
        let mut asks = self.asks.lock().unwrap_or_else(|e| e.into_inner());
        match entry {
            Entry::Ask {
                agent,
                kind,
                id,
                replica,
                ..
            } => {
                asks.waiting.insert(
                    id.clone(),
                    Asked::Waiting {
                        replica: replica.clone(),
                        agent: agent.clone(),
                        kind: kind.clone(),
                    },
                );
            }
            Entry::Done {
                id,
                agent,
                answered,
            } => {
                asks.waiting.insert(
                    id.clone(),
                    Asked::Ended {
                        agent: agent.clone(),
                        answered: *answered,
                    },
                );
                asks.ended.push_back(id.clone());
                if asks.ended.len() > ENDED_MEMORY
                    && let Some(old) = asks.ended.pop_front()
                {
                    asks.waiting.remove(&old);
                }
            }
            _ => {}
        }
    }

    /// Relays an agent's answer to the replica where its request waits.
    pub async fn relay_answer(
        &self,
        replica: &str,
        answer: &RelayedAnswer,
    ) -> Result<RelayOutcome, BusError> {
        let subject = format!("{}.answer.{}", self.prefix, subject_token(replica));
        let payload = self.wrap(&subject, &Message::Answer(answer.clone()));
        match self
            .until_disconnected(self.client.request(subject, payload))
            .await
        {
            Ok(reply) => match self.unwrap(&reply.subject, &reply.payload) {
                Ok(Envelope {
                    message: Message::Relayed(outcome),
                    ..
                }) => Ok(outcome),
                Ok(_) => Err(BusError::Relay(
                    replica.to_owned(),
                    "it answered something else".into(),
                )),
                Err(refused) => Err(BusError::Relay(replica.to_owned(), refused.to_string())),
            },
            // Nobody listens there any more: the replica (and so the request) is gone.
            Err(e) if e.kind() == async_nats::RequestErrorKind::NoResponders => {
                Ok(RelayOutcome::NotFound)
            }
            Err(e) => {
                self.error();
                Err(BusError::Relay(replica.to_owned(), e.to_string()))
            }
        }
    }

    /// Runs a request over NATS unless the connection is (or goes) away first: what waits for
    /// another replica fails fast rather than for its whole timeout.
    async fn until_disconnected<T>(
        &self,
        request: impl std::future::Future<Output = Result<T, async_nats::RequestError>>,
    ) -> Result<T, async_nats::RequestError> {
        let gone = async {
            loop {
                if !self.connected() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        };
        tokio::select! {
            done = request => done,
            _ = gone => Err(async_nats::RequestError::with_source(
                async_nats::RequestErrorKind::Other,
                "the connection to NATS is lost",
            )),
        }
    }

    /// Hands `/mcp` notices to every replica's `/mcp` clients.
    pub fn mcp_notice(&self, notice: &Notice) {
        let subject = format!("{}.mcp", self.prefix);
        self.publish(subject, &Message::Notice(notice.clone()));
    }

    /// Publishes a message on core NATS, in the background (nothing waits for it).
    fn publish(&self, subject: String, message: &Message) {
        let payload = self.wrap(&subject, message);
        let client = self.client.clone();
        tokio::spawn(async move {
            let _ = client.publish(subject, payload).await;
        });
    }

    /// Installs what serves requests and announcements from other replicas.
    pub fn serve(&self, peer: Weak<dyn Peer>) {
        *self.peer.lock().unwrap_or_else(|e| e.into_inner()) = Some(peer);
    }

    fn peer(&self) -> Option<Arc<dyn Peer>> {
        self.peer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(Weak::upgrade)
    }

    /// Sends `request` to `replica` and waits for its answer, `within` at most: the answer's
    /// JSON, or [`BusError::Remote`] when it failed there.
    pub async fn request(
        &self,
        replica: &str,
        request: Request,
        within: Duration,
    ) -> Result<Value, BusError> {
        let subject = format!("{}.rpc.{}", self.prefix, subject_token(replica));
        let payload = self.wrap(&subject, &Message::Request(request));
        let request = async_nats::Request::new()
            .payload(payload)
            .timeout(Some(within));
        let reply = self
            .until_disconnected(self.client.send_request(subject, request))
            .await
            .map_err(|e| {
                self.error();
                BusError::Relay(replica.to_owned(), e.to_string())
            })?;
        match self.unwrap(&reply.subject, &reply.payload) {
            Ok(Envelope {
                message: Message::Reply(answer),
                ..
            }) => Ok(answer?),
            Ok(_) => Err(BusError::Relay(
                replica.to_owned(),
                "it answered something else".into(),
            )),
            Err(refused) => Err(BusError::Relay(replica.to_owned(), refused.to_string())),
        }
    }

    /// Whether `replica` is there, asked directly (a lapsed presence can be a busy replica or
    /// a late message): `Some(true)` if it answered, `Some(false)` if nobody listens for it on
    /// NATS (its connection is gone), `None` if neither is known within `within`.
    pub async fn probe(&self, replica: &str, within: Duration) -> Option<bool> {
        let subject = format!("{}.rpc.{}", self.prefix, subject_token(replica));
        let payload = self.wrap(&subject, &Message::Request(Request::Ping));
        let request = async_nats::Request::new()
            .payload(payload)
            .timeout(Some(within));
        match self
            .until_disconnected(self.client.send_request(subject, request))
            .await
        {
            // Only a reply sealed with the bus key counts: anyone allowed to subscribe on the
            // subject could answer for a dead replica and hold its servers from a takeover.
            Ok(reply) => match self.unwrap(&reply.subject, &reply.payload) {
                Ok(Envelope {
                    message: Message::Reply(_),
                    ..
                }) => Some(true),
                _ => None,
            },
            Err(e) if e.kind() == async_nats::RequestErrorKind::NoResponders => Some(false),
            Err(_) => None,
        }
    }

    /// Says this replica is leaving: no streams here any more.
    pub async fn leave(&self) {
        let subject = format!("{}.presence", self.prefix);
        let payload = self.wrap(&subject, &Message::Presence { agents: Vec::new() });
        let _ = self.client.publish(subject, payload).await;
        let _ = self.client.flush().await;
    }

    /// A message as this replica puts it on `subject`: sealed, with a new id.
    fn wrap(&self, subject: &str, message: &Message) -> Bytes {
        self.wrap_as(subject, &uuid::Uuid::new_v4().simple().to_string(), message)
    }

    /// A message with id `id` as this replica puts it on `subject`.
    fn wrap_as(&self, subject: &str, id: &str, message: &Message) -> Bytes {
        let plain = protocol::encode(&self.replica, id, now_ms(), message);
        let version = u8::try_from(protocol::VERSION).unwrap_or(u8::MAX);
        self.key.seal(version, subject, &plain).into()
    }

    /// A message another replica put on `subject`, if sealed with the bus key for it, of a
    /// version and kind known here, and fresh: a log entry not applied before, anything else
    /// sent within the replay window and not seen before. A refusal is counted and said once
    /// per sender and version (or at most every 10 s per subject) without its content.
    fn unwrap(&self, subject: &str, payload: &[u8]) -> Result<Envelope, Refused> {
        self.unwrap_stored(subject, payload, None)
    }

    /// [`Self::unwrap`] for a message a stream stored at `stored` (ms since the epoch).
    fn unwrap_stored(
        &self,
        subject: &str,
        payload: &[u8],
        stored: Option<u64>,
    ) -> Result<Envelope, Refused> {
        let refused = match self.take(subject, payload, stored) {
            Ok(envelope) => return Ok(envelope),
            Err(refused) => refused,
        };
        self.refused.fetch_add(1, Ordering::Relaxed);
        let first = match &refused {
            Refused::Version { from, v } | Refused::NotUnderstood { from, v, .. } => self
                .warned
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert((from.clone(), *v)),
            _ => self.lapsed_since_warned(subject),
        };
        if first {
            tracing::warn!(%subject, replica = %self.replica, "a message between replicas is refused: {refused}");
        }
        Err(refused)
    }

    fn take(
        &self,
        subject: &str,
        payload: &[u8],
        stored: Option<u64>,
    ) -> Result<Envelope, Refused> {
        let (version, plain) = self.key.open(subject, payload).ok_or(Refused::Unsealed)?;
        let envelope = protocol::decode(&plain)?;
        if u32::from(version) != envelope.v {
            return Err(Refused::Unsealed);
        }
        let now = now_ms();
        let stale = |envelope: Envelope| Refused::Stale {
            age_secs: (i128::from(now) - i128::from(envelope.at))
                .div_euclid(1000)
                .clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64,
            from: envelope.from,
        };
        let seen = match envelope.message {
            // A log entry is sealed when it is published (again, after an outage), and the log
            // keeps entries for LOG_MAX_AGE: one sealed longer ago than that (plus the skew) is
            // no entry the log can still hold, so a replay of it is refused by its time, and
            // one younger is in the log after its original, whose id is known by then.
            Message::Log(_) => &self.seen_log,
            // The stream keeps the last value of each key however old, so a value is judged
            // by when NATS stored it: a genuine one is sealed just before, a replayed capture
            // is stored long after. And a key's value never goes back in time.
            Message::Shared(_) => {
                let window = REPLAY_WINDOW.as_millis() as u64;
                let fresh = stored.is_some_and(|stored| {
                    stored.abs_diff(envelope.at) <= window
                        && envelope.at <= now.saturating_add(CLOCK_SKEW.as_millis() as u64)
                });
                let mut last = self.shared_at.lock().unwrap_or_else(|e| e.into_inner());
                let later = last.get(subject).is_none_or(|&at| envelope.at >= at);
                if !fresh || !later {
                    return Err(stale(envelope));
                }
                last.insert(subject.to_owned(), envelope.at);
                return Ok(envelope);
            }
            _ => &self.seen,
        };
        let taken = seen.lock().unwrap_or_else(|e| e.into_inner()).take(
            &format!("{}/{}", envelope.from, envelope.id),
            envelope.at,
            now,
        );
        match taken {
            Ok(()) => Ok(envelope),
            Err(Unfit::Future | Unfit::Old) => Err(stale(envelope)),
            Err(Unfit::Replayed) => Err(Refused::Replayed {
                from: envelope.from,
            }),
        }
    }

    /// Whether a warning about `subject` is due (one every 10 s at most).
    fn lapsed_since_warned(&self, subject: &str) -> bool {
        let mut last = self.last_warned.lock().unwrap_or_else(|e| e.into_inner());
        let due = last
            .get(subject)
            .is_none_or(|at| at.elapsed() >= Duration::from_secs(10));
        if due {
            if last.len() > 1024 {
                last.clear();
            }
            last.insert(subject.to_owned(), Instant::now());
        }
        due
    }

    /// Log entries dropped since start, NATS away past the outbox's bound.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// The most log entries awaiting their acknowledgement at once since start.
    pub fn most_in_flight(&self) -> usize {
        self.most_in_flight.load(Ordering::Relaxed) as usize
    }

    /// Messages refused since start.
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// Deletes the log (tests, after their replicas stopped).
    pub async fn delete_log(url: &str, prefix: &str) -> Result<(), BusError> {
        let client = async_nats::connect(url)
            .await
            .map_err(|e| BusError::Connect(url.to_owned(), e.to_string()))?;
        let js = jetstream::new(client);
        let (name, shared) = stream_names(prefix);
        let _ = js.delete_stream(shared).await;
        js.delete_stream(name)
            .await
            .map_err(|e| BusError::JetStream(e.to_string()))?;
        Ok(())
    }

    /// Shares `value` under `key` (subject tokens) with every replica; the last value per key
    /// is kept.
    pub async fn share(&self, key: &str, value: &Value) -> Result<(), BusError> {
        self.put_shared(key, Some(value.clone())).await
    }

    /// Stops sharing `key`.
    pub async fn unshare(&self, key: &str) {
        if self.put_shared(key, None).await.is_err() {
            tracing::warn!(key, "cannot withdraw a shared value");
        }
    }

    async fn put_shared(&self, key: &str, value: Option<Value>) -> Result<(), BusError> {
        let mut own = self.own_shared.lock().await;
        own.insert(key.to_owned(), value.clone());
        self.store_shared(key, value).await
    }

    /// A share buffered by the NATS client across a reconnect may be stored long after it was
    /// sealed, and then refused by every replica for good: after each reconnect this replica
    /// puts its shared values again, sealed anew.
    async fn share_again_on_reconnect(self: Arc<Self>) {
        let mut reconnected = self.connections.subscribe();
        reconnected.mark_unchanged();
        loop {
            tokio::select! {
                _ = self.shutdown.cancelled() => return,
                changed = reconnected.changed() => if changed.is_err() { return },
            }
            let own = self.own_shared.lock().await;
            for (key, value) in own.iter() {
                if self.store_shared(key, value.clone()).await.is_err() {
                    tracing::warn!(key, "cannot share a value again after a reconnect");
                }
            }
        }
    }

    async fn store_shared(&self, key: &str, value: Option<Value>) -> Result<(), BusError> {
        let subject = format!("{}.shared.{key}", self.prefix);
        let payload = self.wrap(&subject, &Message::Shared(value));
        let stored = match self.js.publish(subject, payload).await {
            Ok(ack) => ack.await.map(drop).map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        stored.map_err(|e| {
            self.error();
            BusError::JetStream(e)
        })
    }

    /// Every shared key's last value, then each change as it happens (`None`: withdrawn).
    pub fn shared_values(self: &Arc<Self>) -> mpsc::UnboundedReceiver<(String, Option<Value>)> {
        let (tx, rx) = mpsc::unbounded_channel();
        let bus = self.clone();
        tokio::spawn(async move {
            let prefix = format!("{}.shared.", bus.prefix);
            loop {
                let mut reconnected = bus.connections.subscribe();
                reconnected.mark_unchanged();
                match bus.watch_shared().await {
                    Ok(mut messages) => loop {
                        let next = tokio::select! {
                            _ = bus.shutdown.cancelled() => return,
                            next = messages.next() => next,
                            _ = reconnected.changed() => None,
                        };
                        let message = match next {
                            Some(Ok(message)) => message,
                            // Read again from the start (each key's last value).
                            Some(Err(error)) => {
                                bus.error();
                                tracing::warn!(%error, "reading the replicas' shared state");
                                break;
                            }
                            None => break,
                        };
                        let Some(key) = message.subject.as_str().strip_prefix(&prefix) else {
                            continue;
                        };
                        let stored = message.info().ok().map(|info| {
                            let ms = info.published.unix_timestamp_nanos() / 1_000_000;
                            u64::try_from(ms).unwrap_or(0)
                        });
                        let value =
                            match bus.unwrap_stored(&message.subject, &message.payload, stored) {
                                Ok(Envelope {
                                    message: Message::Shared(value),
                                    ..
                                }) => value,
                                _ => continue,
                            };
                        if tx.send((key.to_owned(), value)).is_err() {
                            return;
                        }
                    },
                    Err(error) => {
                        bus.error();
                        tracing::warn!(%error, "watching the replicas' shared state");
                    }
                }
                tokio::select! {
                    _ = bus.shutdown.cancelled() => return,
                    _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                }
            }
        });
        rx
    }

    async fn watch_shared(&self) -> Result<consumer::pull::Ordered, BusError> {
        let shared = self
            .js
            .get_stream(&self.shared)
            .await
            .map_err(|e| BusError::JetStream(e.to_string()))?;
        shared
            .create_consumer(consumer::pull::OrderedConfig {
                deliver_policy: consumer::DeliverPolicy::LastPerSubject,
                filter_subject: format!("{}.shared.>", self.prefix),
                ..Default::default()
            })
            .await
            .map_err(|e| BusError::JetStream(e.to_string()))?
            .messages()
            .await
            .map_err(|e| BusError::JetStream(e.to_string()))
    }

    /// Tells every other replica what happened here.
    pub fn announce(&self, announcement: Announcement) {
        let subject = format!("{}.announce", self.prefix);
        self.publish(subject, &Message::Announce(announcement));
    }

    /// The log from sequence `from` on, in order.
    async fn read_log(&self, from: u64) -> Result<consumer::pull::Ordered, BusError> {
        let log = self
            .js
            .get_stream(&self.stream)
            .await
            .map_err(|e| BusError::JetStream(e.to_string()))?;
        log.create_consumer(consumer::pull::OrderedConfig {
            deliver_policy: consumer::DeliverPolicy::ByStartSequence {
                start_sequence: from,
            },
            filter_subject: self.log_subject.clone(),
            ..Default::default()
        })
        .await
        .map_err(|e| BusError::JetStream(e.to_string()))?
        .messages()
        .await
        .map_err(|e| BusError::JetStream(e.to_string()))
    }

    /// Applies the log in order; when reading it fails (NATS went away), reads it again from
    /// after the last entry applied.
    async fn apply_log(
        self: Arc<Self>,
        mut messages: consumer::pull::Ordered,
        applier: std::sync::Weak<dyn Applier>,
    ) {
        let mut reconnected = self.connections.subscribe();
        reconnected.mark_unchanged();
        loop {
            let next = tokio::select! {
                _ = self.shutdown.cancelled() => return,
                next = messages.next() => next,
                // Its consumer is gone with the NATS that held it.
                _ = reconnected.changed() => None,
            };
            let message = match next {
                Some(Ok(message)) => message,
                failed => {
                    if let Some(Err(error)) = failed {
                        tracing::warn!(%error, "reading the replicas' log; reading it again");
                    }
                    self.error();
                    messages = loop {
                        tokio::select! {
                            _ = self.shutdown.cancelled() => return,
                            _ = tokio::time::sleep(Duration::from_millis(500)) => {}
                        }
                        match self.read_log(self.applied() + 1).await {
                            Ok(messages) => break messages,
                            Err(error) => {
                                tracing::debug!(%error, "the replicas' log cannot be read yet")
                            }
                        }
                    };
                    continue;
                }
            };
            let Ok(seq) = message.info().map(|i| i.stream_sequence) else {
                continue;
            };
            let Some(applier) = applier.upgrade() else {
                return;
            };
            match self.unwrap(&message.subject, &message.payload) {
                Ok(Envelope {
                    message: Message::Log(entry),
                    ..
                }) => {
                    self.note_entry(&entry);
                    applier.apply(seq, entry);
                }
                Ok(_) => tracing::warn!(seq, "an entry of the replicas' log is no log entry"),
                Err(_) => {}
            }
            self.applied.send_replace(seq);
        }
    }

    /// Subscribes to what other replicas send this one: presence, relayed answers, `/mcp`
    /// notices and requests.
    async fn listen(
        self: Arc<Self>,
        applier: std::sync::Weak<dyn Applier>,
    ) -> Result<(), BusError> {
        let subscribe = |subject: String| {
            let client = self.client.clone();
            async move {
                client
                    .subscribe(subject)
                    .await
                    .map_err(|e| BusError::JetStream(e.to_string()))
            }
        };
        let me = subject_token(&self.replica);
        let mut presence = subscribe(format!("{}.presence", self.prefix)).await?;
        let mut answers = subscribe(format!("{}.answer.{me}", self.prefix)).await?;
        let mut notices = subscribe(format!("{}.mcp", self.prefix)).await?;
        let mut requests = subscribe(format!("{}.rpc.{me}", self.prefix)).await?;
        let mut announcements = subscribe(format!("{}.announce", self.prefix)).await?;
        let bus = self.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = bus.shutdown.cancelled() => return,
                    Some(message) = presence.next() => bus.heard_presence(&message),
                    Some(message) = notices.next() => {
                        if let (Ok(Envelope { message: Message::Notice(notice), .. }), Some(applier)) =
                            (bus.unwrap(&message.subject, &message.payload), applier.upgrade())
                        {
                            applier.mcp_notice(notice);
                        }
                    }
                    Some(message) = answers.next() => {
                        let outcome = match (bus.unwrap(&message.subject, &message.payload), applier.upgrade()) {
                            (Ok(Envelope { message: Message::Answer(answer), .. }), Some(applier)) => {
                                applier.relayed_answer(answer)
                            }
                            _ => RelayOutcome::NotFound,
                        };
                        // Not awaited here: a slow publish (NATS busy or away) must not hold up
                        // presence, notices and requests behind it.
                        if let Some(reply) = message.reply {
                            let payload = bus.wrap(&reply, &Message::Relayed(outcome));
                            let client = bus.client.clone();
                            tokio::spawn(async move {
                                let _ = client.publish(reply, payload).await;
                            });
                        }
                    }
                    Some(message) = requests.next() => {
                        tokio::spawn(bus.clone().serve_request(message));
                    }
                    Some(message) = announcements.next() => {
                        match (bus.unwrap(&message.subject, &message.payload), bus.peer()) {
                            (Ok(Envelope { from, message: Message::Announce(announcement), .. }), Some(peer))
                                if from != bus.replica =>
                            {
                                tokio::spawn(peer.announced(from, announcement));
                            }
                            _ => {}
                        }
                    }
                    else => return,
                }
            }
        });
        Ok(())
    }

    /// Serves a request from another replica and replies with what it came to (a typed error
    /// for a request this replica refuses).
    async fn serve_request(self: Arc<Self>, message: async_nats::Message) {
        let answer = match self.unwrap(&message.subject, &message.payload) {
            Ok(Envelope {
                message: Message::Request(Request::Ping),
                ..
            }) => Ok(Value::Null),
            Ok(Envelope {
                from,
                message: Message::Request(request),
                ..
            }) => match self.peer() {
                Some(peer) => peer.request(from, request).await,
                None => Err(RemoteError::new(
                    ErrorCode::McpServerUnavailable,
                    format!(
                        "replica \"{}\" serves no requests yet; try again",
                        self.replica
                    ),
                )),
            },
            Ok(_) => Err(RemoteError::new(
                ErrorCode::InvalidRequest,
                "not a request between replicas",
            )),
            Err(refused) => Err(RemoteError::new(
                ErrorCode::McpServerUnavailable,
                refused.to_string(),
            )),
        };
        if let Some(reply) = message.reply {
            let payload = self.wrap(&reply, &Message::Reply(answer));
            let _ = self.client.publish(reply, payload).await;
        }
    }

    fn heard_presence(&self, message: &async_nats::Message) {
        let Ok(Envelope {
            from,
            message: Message::Presence { agents },
            ..
        }) = self.unwrap(&message.subject, &message.payload)
        else {
            return;
        };
        if from == self.replica {
            return;
        }
        self.presence
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(from, (agents.into_iter().collect(), Instant::now()));
    }

    async fn announce_presence(self: Arc<Self>) {
        let subject = format!("{}.presence", self.prefix);
        loop {
            let agents: Vec<String> = self
                .local_agents
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .cloned()
                .collect();
            let payload = self.wrap(&subject, &Message::Presence { agents });
            if self.client.publish(subject.clone(), payload).await.is_err() {
                self.error();
            }
            tokio::select! {
                _ = self.shutdown.cancelled() => return,
                _ = tokio::time::sleep(PRESENCE_EVERY) => {}
                _ = self.presence_changed.notified() => {}
            }
        }
    }
}

/// How this replica connects to NATS: its credentials (a user and password, an NKey seed or a
/// `.creds` file) and TLS (a CA to trust, a client certificate).
fn connect_options(
    access: &crate::config::NatsAccess,
) -> Result<async_nats::ConnectOptions, BusError> {
    use secrecy::ExposeSecret;
    let mut options = async_nats::ConnectOptions::new();
    if let Some((user, password)) = &access.user {
        options = options.user_and_password(user.clone(), password.expose_secret().to_owned());
    }
    if let Some(seed) = &access.nkey_seed {
        options = options.nkey(seed.expose_secret().to_owned());
    }
    if let Some(creds) = &access.creds {
        options = options.credentials(creds.expose_secret()).map_err(|e| {
            BusError::Config(format!(
                "MCP_BRIDGE_NATS_CREDS_FILE is not a NATS .creds file: {e}"
            ))
        })?;
    }
    if let Some(ca) = &access.tls_ca {
        options = options.add_root_certificates(ca.clone());
    }
    if let Some((cert, key)) = &access.tls_cert {
        options = options.add_client_certificate(cert.clone(), key.clone());
    }
    Ok(options.require_tls(access.tls_required))
}

/// NATS URLs (comma-separated) fit for a log line or an error: without the passwords they
/// may carry.
fn without_password(urls: &str) -> String {
    urls.split(',')
        .map(|url| without_password_one(url.trim()))
        .collect::<Vec<_>>()
        .join(",")
}

fn without_password_one(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => match rest.rsplit_once('@') {
            Some((credentials, host)) => {
                let user = credentials.split(':').next().unwrap_or_default();
                format!("{scheme}://{user}:***@{host}")
            }
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// How long after it was sealed a log entry is applied: while the log can still hold it (it
/// keeps entries LOG_MAX_AGE), plus the clock skew of a sender whose clock lags. Ids are kept
/// as long, so a replay of one the log still holds is refused by its id.
fn log_fresh_ms() -> u64 {
    LOG_MAX_AGE.saturating_add(CLOCK_SKEW).as_millis() as u64
}

/// Now, in milliseconds since the Unix epoch.
fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A NATS subject token (or stream name) for a free-form name: letters, digits, `-` and `_`
/// only (replica ids are checked at start; this keeps any other character out).
fn subject_token(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_safe_for_nats() {
        assert_eq!(
            stream_names("t.run-1"),
            ("t_run-1_log".into(), "t_run-1_shared".into())
        );
        assert_eq!(subject_token("a.b*c>"), "a_b_c_");
    }

    const TEST_KEY: [u8; 32] = [7; 32];

    /// Hubs joined on the NATS of `MCP_BRIDGE_TEST_NATS` (skipped without it) under a prefix
    /// of their own; the log is deleted when the test ends.
    struct Replicas {
        url: String,
        prefix: String,
        stop: CancellationToken,
    }

    impl Replicas {
        fn new() -> Option<Self> {
            let url = std::env::var("MCP_BRIDGE_TEST_NATS").ok()?;
            let prefix = format!("t{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
            Some(Self {
                url,
                prefix,
                stop: CancellationToken::new(),
            })
        }

        async fn hub(&self, replica: &str) -> Arc<crate::hub::Hub> {
            self.hub_with(replica, 1 << 20).await
        }

        /// A hub whose outbox keeps `outbox_bytes` at most.
        async fn hub_with(&self, replica: &str, outbox_bytes: usize) -> Arc<crate::hub::Hub> {
            let hub = crate::hub::Hub::new(200, self.stop.child_token());
            hub.join(BusConfig {
                url: self.url.clone(),
                prefix: self.prefix.clone(),
                replica: replica.into(),
                key: Arc::new(BusKey::derive(&TEST_KEY)),
                access: Default::default(),
                outbox_bytes,
            })
            .await
            .unwrap();
            hub
        }
    }

    impl Drop for Replicas {
        fn drop(&mut self) {
            self.stop.cancel();
            let (url, prefix) = (self.url.clone(), self.prefix.clone());
            // A runtime of its own: the test's is ending.
            std::thread::spawn(move || {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap()
                    .block_on(Bus::delete_log(&url, &prefix))
            })
            .join()
            .unwrap()
            .unwrap();
        }
    }

    async fn next(opened: &mut crate::hub::Opened) -> Arc<crate::hub::Event> {
        tokio::time::timeout(Duration::from_secs(5), opened.live.recv())
            .await
            .expect("an event within 5 s")
            .unwrap()
    }

    /// An event NATS will never take (over its max_payload, 1 MiB by default) is dropped and
    /// told, rather than retried at the head of the outbox with every later event behind it.
    #[tokio::test]
    async fn an_event_too_large_for_nats_is_told_lost_and_holds_nothing_up() {
        let Some(replicas) = Replicas::new() else {
            return;
        };
        let a = replicas.hub("a").await;
        let mut opened = a.open("alice", None).await;
        let mut live = opened.take();
        let big = "x".repeat(2 << 20);
        a.publish("alice", "mcp/server/push", &serde_json::json!({"big": big}));
        a.publish("alice", "mcp/server/push", &serde_json::json!({"n": 1}));
        let first = next(&mut live).await;
        let second = next(&mut live).await;
        assert_eq!(&*first.data, r#"{"n":1}"#);
        assert!(
            second.data.contains("bridge/events_lost"),
            "{}",
            second.data
        );
        assert_eq!(a.bus().unwrap().dropped(), 1);
    }

    #[tokio::test]
    async fn an_event_reaches_a_stream_on_another_replica_and_resumes_on_a_third() {
        let Some(replicas) = Replicas::new() else {
            return;
        };
        let a = replicas.hub("a").await;
        let b = replicas.hub("b").await;
        let mut on_b = b.open("alice", None).await;
        let mut live = on_b.take();
        a.publish("alice", "mcp/server/push", &serde_json::json!({"n": 1}));
        a.broadcast("mcp/server/push", &serde_json::json!({"n": 2}));
        let first = next(&mut live).await;
        let second = next(&mut live).await;
        assert_eq!(&*first.data, r#"{"n":1}"#);
        assert_eq!(&*second.data, r#"{"n":2}"#);
        assert!(second.id > first.id);
        // A replica joining later applies the log: it resumes the stream after the first event.
        let c = replicas.hub("c").await;
        let mut on_c = c.open("alice", Some(first.id)).await;
        let resumed = on_c.take();
        assert_eq!(resumed.lost_after, None);
        assert_eq!(
            resumed.replay.iter().map(|e| e.id).collect::<Vec<_>>(),
            [second.id]
        );
        // Before the log began, events are not known: the stream is told.
        let from_nowhere = c.open("alice", Some(u64::MAX / 2)).await.take();
        assert_eq!(from_nowhere.lost_after, Some(u64::MAX / 2));
    }

    #[tokio::test]
    async fn a_request_waiting_on_one_replica_is_answered_on_another_once() {
        let Some(replicas) = Replicas::new() else {
            return;
        };
        let a = replicas.hub("a").await;
        let b = replicas.hub("b").await;
        assert!(!a.is_connected("alice"));
        let mut stream = b.open("alice", None).await;
        let mut live = stream.take();
        let wait = Instant::now();
        while !a.is_connected("alice") {
            assert!(
                wait.elapsed() < Duration::from_secs(5),
                "presence reaches a"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let asking = {
            let a = a.clone();
            tokio::spawn(async move {
                a.ask(
                    "alice",
                    "mcp/sample/req",
                    "req-1",
                    &serde_json::json!({"q": 1}),
                    Duration::from_secs(10),
                )
                .await
            })
        };
        let request = next(&mut live).await;
        assert_eq!(request.kind, "mcp/sample/req");
        let c = replicas.hub("c").await;
        assert_eq!(
            c.answer("bob", "mcp/sample/req", "req-1", Value::Null)
                .await,
            Err(crate::hub::AnswerError::NotFound("req-1".into())),
            "only the addressee answers"
        );
        c.answer("alice", "mcp/sample/req", "req-1", serde_json::json!("yes"))
            .await
            .unwrap();
        assert_eq!(asking.await.unwrap(), Ok(serde_json::json!("yes")));
        // Once the end is in the log, every replica knows the request was answered.
        assert!(c.bus().unwrap().catch_up().await);
        let again = c
            .answer("alice", "mcp/sample/req", "req-1", Value::Null)
            .await;
        assert_eq!(
            again,
            Err(crate::hub::AnswerError::AlreadyAnswered("req-1".into()))
        );
        assert_eq!(
            b.answer("alice", "mcp/sample/req", "nope", Value::Null)
                .await,
            Err(crate::hub::AnswerError::NotFound("nope".into()))
        );
        drop(stream);
        let wait = Instant::now();
        while a.is_connected("alice") {
            assert!(
                wait.elapsed() < Duration::from_secs(5),
                "a hears the stream closed"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// `message` from replica "z", sealed with the test key for `subject`, sent `at`.
    fn sealed(subject: &str, id: &str, at: u64, message: &Message) -> Vec<u8> {
        let plain = protocol::encode("z", id, at, message);
        BusKey::derive(&TEST_KEY).seal(protocol::VERSION as u8, subject, &plain)
    }

    /// What a replica takes is fresh: a request sealed before it started (its seen set knows
    /// nothing older, so it would take a replay), one from the future beyond the clock skew,
    /// and a log entry older than the log keeps entries are refused; fresh ones are taken.
    #[tokio::test]
    async fn stale_future_and_pre_start_messages_are_refused() {
        let Some(replicas) = Replicas::new() else {
            return;
        };
        let a = replicas.hub("a").await;
        let bus = a.bus().unwrap();
        let rpc = format!("{}.rpc.a", replicas.prefix);
        let ping = Message::Request(Request::Ping);
        let now = now_ms();
        let before_start = bus.unwrap(&rpc, &sealed(&rpc, "m1", now - 30_000, &ping));
        assert!(
            matches!(before_start, Err(Refused::Stale { .. })),
            "{before_start:?}"
        );
        let ahead = bus.unwrap(&rpc, &sealed(&rpc, "m2", now + 30_000, &ping));
        assert!(matches!(ahead, Err(Refused::Stale { .. })), "{ahead:?}");
        assert!(
            bus.unwrap(&rpc, &sealed(&rpc, "m3", now_ms(), &ping))
                .is_ok()
        );
        let log = format!("{}.log", replicas.prefix);
        let open = Message::Log(Entry::Open {
            agent: "alice".into(),
        });
        let old = bus.unwrap(&log, &sealed(&log, "l1", now - 90 * 60_000, &open));
        assert!(matches!(old, Err(Refused::Stale { .. })), "{old:?}");
        let ahead = bus.unwrap(&log, &sealed(&log, "l2", now + 30 * 60_000, &open));
        assert!(matches!(ahead, Err(Refused::Stale { .. })), "{ahead:?}");
        assert!(
            bus.unwrap(&log, &sealed(&log, "l3", now_ms(), &open))
                .is_ok()
        );
        // The log still holds an entry stored just inside its max age, and one from a sender
        // whose clock lags by up to the skew: both are taken.
        let hour = LOG_MAX_AGE.as_millis() as u64;
        let kept = bus.unwrap(&log, &sealed(&log, "l4", now_ms() - hour + 5_000, &open));
        assert!(kept.is_ok(), "{kept:?}");
        let lagging = bus.unwrap(&log, &sealed(&log, "l5", now_ms() - hour - 5_000, &open));
        assert!(lagging.is_ok(), "{lagging:?}");
    }

    /// A shared value captured and stored again later (the stream keeps the last value of
    /// each key) is refused: its sealed time is far from when NATS stored it. The replay is
    /// stored while the watcher runs (a value on another key shows it does) and is the first
    /// value of its key it sees, so only its time refuses it.
    #[tokio::test]
    async fn a_shared_value_stored_again_later_is_refused() {
        let Some(replicas) = Replicas::new() else {
            return;
        };
        let a = replicas.hub("a").await;
        let bus = a.bus().unwrap();
        let mut values = bus.shared_values();
        let mut next_value = async || {
            tokio::time::timeout(Duration::from_secs(5), values.recv())
                .await
                .expect("a value within 5 s")
                .unwrap()
        };
        bus.share("ready", &serde_json::json!("first"))
            .await
            .unwrap();
        let (key, value) = next_value().await;
        assert_eq!(
            (key.as_str(), value),
            ("ready", Some(serde_json::json!("first")))
        );
        let refused = bus.refused();
        let subject = format!("{}.shared.k", replicas.prefix);
        let replayed = sealed(
            &subject,
            "s1",
            now_ms() - 10 * 60_000,
            &Message::Shared(Some(serde_json::json!("old"))),
        );
        let js = jetstream::new(async_nats::connect(&replicas.url).await.unwrap());
        js.publish(subject, replayed.into())
            .await
            .unwrap()
            .await
            .unwrap();
        let wait = Instant::now();
        while bus.refused() == refused {
            assert!(
                wait.elapsed() < Duration::from_secs(5),
                "the replayed value is not refused"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        bus.share("k", &serde_json::json!("new")).await.unwrap();
        let (key, value) = next_value().await;
        assert_eq!((key.as_str(), value), ("k", Some(serde_json::json!("new"))));
    }

    /// The outbox keeps MCP_BRIDGE_BUS_OUTBOX_BYTES of entries while the log takes none (here
    /// its stream is gone until another replica makes it again): past it the oldest events are
    /// dropped and counted, never the stream's opening; once the log is back the rest arrive,
    /// newest included, and the agent is told events were lost.
    #[tokio::test]
    async fn the_outbox_keeps_its_byte_bound_and_the_opening_of_a_stream() {
        let Some(replicas) = Replicas::new() else {
            return;
        };
        let a = replicas.hub_with("a", 64 * 1024).await;
        let js = jetstream::new(async_nats::connect(&replicas.url).await.unwrap());
        js.delete_stream(stream_names(&replicas.prefix).0)
            .await
            .unwrap();
        let _on_a = a.open("alice", None).await;
        let filler = "x".repeat(1024);
        for n in 0..100 {
            a.publish(
                "alice",
                "mcp/server/push",
                &serde_json::json!({"n": n, "filler": filler}),
            );
        }
        let bus = a.bus().unwrap().clone();
        let wait = Instant::now();
        while bus.dropped() == 0 {
            assert!(wait.elapsed() < Duration::from_secs(5), "nothing dropped");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let dropped = bus.dropped();
        // ~1.1 KiB each: about 57 fit in 64 KiB.
        assert!((30..=60).contains(&dropped), "{dropped} dropped");
        // b makes the log again; a's outbox flushes into it.
        let b = replicas.hub("b").await;
        let mut on_b = b.open("alice", Some(0)).await;
        let mut live = on_b.take();
        let mut seen: Vec<Arc<crate::hub::Event>> = std::mem::take(&mut live.replay);
        while !seen.iter().any(|e| e.data.contains("bridge/events_lost")) {
            seen.push(next(&mut live).await);
        }
        let numbers: Vec<u64> = seen
            .iter()
            .filter_map(|e| serde_json::from_str::<Value>(&e.data).ok()?["n"].as_u64())
            .collect();
        assert!(numbers.contains(&99), "the newest arrives: {numbers:?}");
        assert!(!numbers.contains(&0), "the oldest went: {numbers:?}");
        assert_eq!(numbers.len() as u64, 100 - dropped, "{numbers:?}");
        assert_eq!(bus.dropped(), dropped);
    }

    /// An entry that waited in the outbox is sealed when it is published at last, not when it
    /// was appended: after an outage longer than the log's freshness it is still taken.
    #[tokio::test]
    async fn an_entry_that_waited_is_sealed_when_it_is_published() {
        let Some(replicas) = Replicas::new() else {
            return;
        };
        let a = replicas.hub("a").await;
        let bus = a.bus().unwrap().clone();
        let js = jetstream::new(async_nats::connect(&replicas.url).await.unwrap());
        let name = stream_names(&replicas.prefix).0;
        js.delete_stream(&name).await.unwrap();
        let errors = bus.errors();
        let _on_a = a.open("alice", None).await;
        a.publish(
            "alice",
            "mcp/server/push",
            &serde_json::json!({"waited": true}),
        );
        let wait = Instant::now();
        while bus.errors() == errors {
            assert!(wait.elapsed() < Duration::from_secs(5), "no append failed");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let back = now_ms();
        // b makes the log again; a's outbox publishes into it.
        let _b = replicas.hub("b").await;
        let log = js.get_stream(&name).await.unwrap();
        let key = BusKey::derive(&TEST_KEY);
        let wait = Instant::now();
        let at = 'found: loop {
            assert!(
                wait.elapsed() < Duration::from_secs(5),
                "the event is not in the log"
            );
            let last = log.get_info().await.unwrap().state.last_sequence;
            for seq in 1..=last {
                let Ok(stored) = log.get_raw_message(seq).await else {
                    continue;
                };
                let (_, plain) = key.open(&stored.subject, &stored.payload).unwrap();
                let envelope = protocol::decode(&plain).unwrap();
                if let Message::Log(Entry::Event { data, .. }) = &envelope.message
                    && data.contains("waited")
                {
                    break 'found envelope.at;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert!(
            at >= back,
            "sealed at {at}, before the log was back at {back}"
        );
    }

    /// An agent reconnecting again and again while the log takes nothing adds one opening of
    /// its stream to the outbox, not one per attempt: the log gets one from this replica.
    #[tokio::test]
    async fn an_agent_reopening_during_an_outage_waits_as_one_opening() {
        let Some(replicas) = Replicas::new() else {
            return;
        };
        let a = replicas.hub("a").await;
        let bus = a.bus().unwrap().clone();
        let js = jetstream::new(async_nats::connect(&replicas.url).await.unwrap());
        let name = stream_names(&replicas.prefix).0;
        js.delete_stream(&name).await.unwrap();
        let errors = bus.errors();
        for _ in 0..50 {
            drop(a.open("alice", None).await);
        }
        let _on_a = a.open("alice", None).await;
        a.publish(
            "alice",
            "mcp/server/push",
            &serde_json::json!({"last": true}),
        );
        let wait = Instant::now();
        while bus.errors() == errors {
            assert!(wait.elapsed() < Duration::from_secs(5), "no append failed");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // b makes the log again; a's outbox publishes into it.
        let _b = replicas.hub("b").await;
        let log = js.get_stream(&name).await.unwrap();
        let key = BusKey::derive(&TEST_KEY);
        let wait = Instant::now();
        let opens = 'found: loop {
            assert!(
                wait.elapsed() < Duration::from_secs(5),
                "the event is not in the log"
            );
            let last = log.get_info().await.unwrap().state.last_sequence;
            let mut opens = 0;
            for seq in 1..=last {
                let Ok(stored) = log.get_raw_message(seq).await else {
                    continue;
                };
                let (_, plain) = key.open(&stored.subject, &stored.payload).unwrap();
                let envelope = protocol::decode(&plain).unwrap();
                match &envelope.message {
                    Message::Log(Entry::Open { .. }) if envelope.from == "a" => opens += 1,
                    Message::Log(Entry::Event { data, .. }) if data.contains("last") => {
                        break 'found opens;
                    }
                    _ => {}
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert_eq!(opens, 1);
    }

    /// After a reconnect the replica puts what it shares again, sealed anew: a put the client
    /// buffered across the reconnect and NATS stored late is replaced by a fresh one.
    #[tokio::test]
    async fn a_shared_value_is_put_again_after_a_reconnect() {
        let Some(replicas) = Replicas::new() else {
            return;
        };
        let a = replicas.hub("a").await;
        let bus = a.bus().unwrap().clone();
        bus.share("k", &serde_json::json!("v")).await.unwrap();
        let js = jetstream::new(async_nats::connect(&replicas.url).await.unwrap());
        let shared = js
            .get_stream(stream_names(&replicas.prefix).1)
            .await
            .unwrap();
        let subject = format!("{}.shared.k", replicas.prefix);
        let first = shared
            .get_last_raw_message_by_subject(&subject)
            .await
            .unwrap()
            .sequence;
        bus.client.force_reconnect().await.unwrap();
        let wait = Instant::now();
        loop {
            let last = shared
                .get_last_raw_message_by_subject(&subject)
                .await
                .unwrap();
            if last.sequence > first {
                let (_, plain) = BusKey::derive(&TEST_KEY)
                    .open(&last.subject, &last.payload)
                    .unwrap();
                let envelope = protocol::decode(&plain).unwrap();
                assert!(matches!(
                    envelope.message,
                    Message::Shared(Some(ref v)) if v == "v"
                ));
                break;
            }
            assert!(
                wait.elapsed() < Duration::from_secs(5),
                "the value is not put again"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The outbox keeps a window of entries in flight rather than one per round trip: a burst
    /// reaches the log with many entries awaiting their acknowledgement at once.
    #[tokio::test]
    async fn a_burst_reaches_the_log_with_a_window_in_flight() {
        let Some(replicas) = Replicas::new() else {
            return;
        };
        let a = replicas.hub("a").await;
        let bus = a.bus().unwrap().clone();
        let js = jetstream::new(async_nats::connect(&replicas.url).await.unwrap());
        let mut log = js
            .get_stream(stream_names(&replicas.prefix).0)
            .await
            .unwrap();
        let _on_a = a.open("alice", None).await;
        let start = Instant::now();
        for n in 0..1000 {
            a.publish("alice", "mcp/server/push", &serde_json::json!({"n": n}));
        }
        while log.info().await.unwrap().state.messages < 1001 {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "the burst is not in the log"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        eprintln!("1,000 entries in the log after {:?}", start.elapsed());
        let most = bus.most_in_flight();
        assert!(most > 1, "at most {most} entry in flight");
        assert!(most <= outbox::WINDOW, "{most} in flight");
    }

    #[tokio::test]
    async fn a_request_of_an_unknown_version_gets_a_typed_refusal() {
        let Some(replicas) = Replicas::new() else {
            return;
        };
        let a = replicas.hub("a").await;
        let client = async_nats::connect(&replicas.url).await.unwrap();
        let request = serde_json::json!({"v": protocol::VERSION + 1, "from": "z", "id": "m",
            "at": now_ms(), "message": {"type": "request", "body": {"op": "reconnect", "server_id": "s"}}});
        let key = BusKey::derive(&TEST_KEY);
        let subject = format!("{}.rpc.a", replicas.prefix);
        let version = protocol::VERSION as u8 + 1;
        let sealed = key.seal(version, &subject, &serde_json::to_vec(&request).unwrap());
        let reply = client.request(subject, sealed.into()).await.unwrap();
        let (_, plain) = key.open(&reply.subject, &reply.payload).unwrap();
        let Ok(Envelope {
            message: Message::Reply(Err(refused)),
            ..
        }) = protocol::decode(&plain)
        else {
            panic!("a typed refusal, not {:?}", reply.payload);
        };
        assert_eq!(refused.code, ErrorCode::McpServerUnavailable);
        assert!(refused.message.contains("\"z\""), "{}", refused.message);
        assert_eq!(a.bus().unwrap().refused(), 1);
    }
}
