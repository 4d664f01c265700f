//! The hub across replicas, on NATS. Everything that reaches agents is appended to one ordered
//! log (a JetStream stream) that every replica applies from its start: each replica then holds
//! the same channels and replay buffers, the stream sequence is the event id, and an agent may
//! resume its stream with `Last-Event-ID` on any replica. Beside the log, on core NATS: presence
//! (which replica has which agent's streams open, every second), answers relayed to the replica
//! whose request waits for them, notices for `/mcp` clients, and requests between replicas.
//! Here: the bus's configuration, its state and joining; each concern in a file of its own
//! (`log`, `outbox`, `asks`, `presence`, `rpc`, `shared`, `wrap`, `connect`, `protocol`, `seal`,
//! `traced`).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

mod asks;
mod connect;
mod log;
mod outbox;
mod presence;
pub mod protocol;
mod rpc;
mod seal;
mod shared;
#[cfg(test)]
mod testing;
mod traced;
mod wrap;

use async_nats::jetstream::{self, stream};
use futures::future::BoxFuture;
use serde_json::Value;
use tokio::sync::{Notify, mpsc, watch};
use tokio_util::sync::CancellationToken;

pub use asks::Asked;
use asks::Asks;
use connect::{connect_options, without_password};
use protocol::Envelope;
pub use protocol::{
    Announcement, Entry, Listing, Message, Notice, RelayOutcome, RelayedAnswer, RemoteError,
    Request,
};
pub use seal::BusKey;
use seal::Seen;

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

/// What the outbox is handed, in the order it was handed.
enum Outgoing {
    /// An entry to append to the log.
    Entry(Entry),
    /// Answered once every entry handed before it is acknowledged (or dropped past the bound).
    Logged(tokio::sync::oneshot::Sender<()>),
}

pub struct Bus {
    client: async_nats::Client,
    js: jetstream::Context,
    stream: String,
    prefix: String,
    replica: String,
    log_subject: String,
    outbox: mpsc::UnboundedSender<Outgoing>,
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
    /// Whether the log is refusing this replica's entries now (NATS up, JetStream not taking
    /// them): nothing waits for them to be logged meanwhile.
    log_failing: std::sync::atomic::AtomicBool,
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
            log_failing: Default::default(),
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
}
