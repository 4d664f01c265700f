//! One supervisor task per registered server: it owns the connection, connects and reconnects
//! (exponential backoff with jitter when `auto_reconnect`), re-lists the catalogue when the server
//! says it changed, and closes the connection when the server is removed or the service stops.

use std::sync::Arc;
use std::time::Duration;

use rand::Rng;

use super::{Control, Inbox, ServerEntry};
use crate::a2e::McpServerStatus;
use crate::a2e::NotificationMethod;
use crate::config::Config;
use crate::store::Store;
use crate::upstream::{self, Connection};

/// How servers are kept alive: reconnect backoff and health pings.
#[derive(Clone)]
pub struct Supervision {
    /// First delay before reconnecting; it doubles with each failure up to `max_backoff`.
    pub base_backoff: Duration,
    pub max_backoff: Duration,
    /// How often a live connection is pinged; `None` turns pings off.
    pub ping_interval: Option<Duration>,
    /// How long a ping may take before the connection counts as dead.
    pub ping_timeout: Duration,
    /// Where `http`, `sse` and `ws` servers may be.
    pub guard: crate::guard::Guard,
    /// Largest message taken from a server (`max_message_bytes`).
    pub max_message_bytes: usize,
    /// Whether a plain tool call may be posted without rmcp's client (`MCP_BRIDGE_FAST_PATHS`).
    pub fast_paths: bool,
    /// OAuth authorizations waiting for their person, and where the bridge is reached.
    pub authorizations: Arc<super::links::Authorizations>,
    /// Across replicas: this replica's name (set by start-up once it joined them).
    pub replica: Option<String>,
    /// Across replicas: how long a hold on a server lasts without renewal.
    pub lease: Duration,
    /// Longest catalogue name; longer ones get a short alias.
    pub max_tool_name: usize,
    /// What a changed tool definition does.
    pub pinning: crate::config::ToolPinning,
    /// The bound on a whole merged listing of resources, templates or prompts.
    pub list_timeout: Duration,
    /// Servers one agent (not an admin) may have registered; 0: no limit.
    pub agent_servers: usize,
    /// The agents' tokens, for the servers that carry each agent's identity.
    pub identities: Arc<super::Identities>,
    /// Turns to connect (`connect_concurrency`): a restart with a thousand stored servers, or
    /// their reconnecting after an outage, connects them a few dozen at a time. All at once,
    /// every one held a store connection in turn while the runtime was busy with the others'
    /// handshakes, and the store's pool starved (1,131 slow acquires and 31 s to ready at
    /// 1,000 servers); bounded, each attempt runs through without waiting on the rest.
    pub connecting: Arc<tokio::sync::Semaphore>,
}

impl Supervision {
    /// The settings the configuration gives, for a bridge listening on `addr`.
    pub fn from_config(config: &Config, addr: std::net::SocketAddr) -> Self {
        Self {
            base_backoff: Duration::from_millis(config.reconnect_base_ms),
            max_backoff: Duration::from_secs(config.reconnect_max_secs),
            ping_interval: (config.ping_interval_secs > 0)
                .then(|| Duration::from_secs(config.ping_interval_secs)),
            ping_timeout: Duration::from_secs(config.ping_timeout_secs),
            guard: crate::guard::Guard::new(config.allow_private_upstreams),
            max_message_bytes: config.max_message_bytes,
            fast_paths: config.fast_paths,
            authorizations: super::links::Authorizations::new(
                crate::upstream::oauth::Settings::new(
                    &config.public_base(addr),
                    config.oauth_client_metadata_url.as_deref(),
                ),
            ),
            replica: None,
            lease: Duration::from_secs(config.lease_secs),
            max_tool_name: config.max_tool_name,
            pinning: config.tool_pinning,
            list_timeout: Duration::from_secs(config.list_timeout),
            agent_servers: config.agent_servers,
            identities: Arc::default(),
            connecting: Arc::new(tokio::sync::Semaphore::new(
                config.connect_concurrency.max(1),
            )),
        }
    }
}

/// Bound on re-listing after a change notification.
const RELIST_TIMEOUT: Duration = Duration::from_secs(30);

/// How a connection's service ended.
enum Ended {
    Stop,
    Reconnect,
    /// The connection died, or stopped answering (why).
    Lost(String),
}

pub fn spawn(entry: Arc<ServerEntry>, inbox: Inbox, store: Store, supervision: Supervision) {
    tokio::spawn(run(entry, inbox, store, supervision));
}

async fn run(entry: Arc<ServerEntry>, mut inbox: Inbox, store: Store, supervision: Supervision) {
    let stop = entry.stop.clone();
    tenure(&entry, &mut inbox, &store, &supervision, &stop).await;
    entry.stopped.cancel();
}

/// Owns the server's connection until `stop` fires (the server is removed, the service stops,
/// or, across replicas, this replica's hold on it ends), then closes it.
pub(super) async fn tenure(
    entry: &Arc<ServerEntry>,
    inbox: &mut Inbox,
    store: &Store,
    supervision: &Supervision,
    stop: &tokio_util::sync::CancellationToken,
) {
    let mut failures: u32 = 0;
    // Registered without a connection (it waits for a person to authorize it, or no link could
    // be made for one): nothing to try until someone authorizes or asks to reconnect.
    let mut waiting = entry.connection().is_none() && entry.state().attempts > 0;
    'supervise: loop {
        if std::mem::take(&mut waiting) {
            tokio::select! {
                _ = stop.cancelled() => break 'supervise,
                control = inbox.control.recv() => if control.is_none() {
                    break 'supervise;
                },
            }
        }
        let conn = match entry.connection() {
            Some(conn) => conn,
            // Boxed, as are the other steps taken rarely: a future holds room for the largest
            // step it may await, and this one lives as long as the server, idle nearly all that
            // time in `serve`. With these steps inline, its task took 36 KB a server (heaptrack,
            // 1,000 servers).
            None => match Box::pin(connect(entry, store, &supervision.connecting, stop)).await {
                Attempt::Connected(conn) => conn,
                Attempt::Failed => {
                    failures += 1;
                    if !wait_before_retry(entry, inbox, failures, supervision, stop).await {
                        break 'supervise;
                    }
                    continue;
                }
                Attempt::Stopped => break 'supervise,
                Attempt::NeedsAuthorization(challenge) => {
                    Box::pin(entry.wait_for_authorization(challenge)).await;
                    // Nothing to retry until someone authorizes (or asks to reconnect).
                    waiting = true;
                    continue;
                }
            },
        };
        failures = 0;
        let ended = serve(entry, &conn, inbox, supervision, stop).await;
        entry.detach();
        match ended {
            Ended::Stop => {
                Box::pin(conn.shutdown()).await;
                break 'supervise;
            }
            Ended::Reconnect => Box::pin(conn.shutdown()).await,
            Ended::Lost(why) => {
                Box::pin(conn.shutdown()).await;
                // `why` and the tail come with the server's secrets hidden.
                let tail = conn.stderr.as_ref().map(|t| t.render()).unwrap_or_default();
                tracing::warn!(server_id = %entry.id, "{why}{tail}");
                entry.update_state(|s| {
                    s.status = McpServerStatus::Disconnected;
                    s.error = why;
                    s.stderr_tail = tail;
                });
                failures += 1;
                if !wait_before_retry(entry, inbox, failures, supervision, stop).await {
                    break 'supervise;
                }
            }
        }
    }
    if let Some(conn) = entry.detach() {
        Box::pin(conn.shutdown()).await;
    }
    entry.update_state(|s| s.status = McpServerStatus::Disconnected);
}

/// How one connection attempt ended.
enum Attempt {
    Connected(Arc<Connection>),
    /// It failed; the entry's state says why.
    Failed,
    /// The server was asked to stop meanwhile.
    Stopped,
    /// The server wants an OAuth authorization a person must give (its challenge).
    NeedsAuthorization(Option<String>),
}

/// One connection attempt. The server is ready once its subscriptions are restored.
async fn connect(
    entry: &ServerEntry,
    store: &Store,
    turns: &tokio::sync::Semaphore,
    stop: &tokio_util::sync::CancellationToken,
) -> Attempt {
    entry.update_state(|s| s.status = McpServerStatus::Connecting);
    // Held to the end of the attempt: connecting, listing, resubscribing and pinning.
    let _turn = tokio::select! {
        _ = stop.cancelled() => return Attempt::Stopped,
        turn = turns.acquire() => turn,
    };
    if entry.per_agent() && entry.listing_agent().is_empty() {
        // After a restart: the first agent that authorized lists for everyone.
        if let Ok(Some(first)) = store
            .oauth_agents(&entry.id)
            .await
            .map(|a| a.into_iter().next())
        {
            *entry.listing.write().unwrap_or_else(|e| e.into_inner()) = first;
        }
    }
    // A server that carries agents' identities lists over its listing agent's.
    let config = match entry.listing_config().await {
        Ok(config) => config,
        Err(error) => {
            tracing::warn!(server_id = %entry.id, %error, "cannot connect");
            entry.update_state(|s| {
                s.status = McpServerStatus::Error;
                s.error = error.to_string();
                s.attempts += 1;
            });
            return Attempt::Failed;
        }
    };
    let attempt = tokio::select! {
        _ = stop.cancelled() => return Attempt::Stopped,
        attempt = upstream::connect(&config, entry.upstream_context()) => attempt,
    };
    match attempt {
        Ok(established) => {
            let conn = established.conn.clone();
            tokio::select! {
                _ = stop.cancelled() => {
                    conn.shutdown().await;
                    return Attempt::Stopped;
                }
                _ = resubscribe(entry, &conn, store) => {}
            }
            entry.review_pins(&established.lists).await;
            entry.install(established);
            tracing::info!(server_id = %entry.id, "connected");
            Attempt::Connected(conn)
        }
        Err(upstream::ConnectError::AuthRequired(challenge)) if !entry.identity_bound() => {
            tracing::info!(server_id = %entry.id, "waiting for an OAuth authorization");
            Attempt::NeedsAuthorization(challenge)
        }
        Err(error) => {
            tracing::warn!(server_id = %entry.id, %error, "cannot connect");
            entry.update_state(|s| {
                s.status = McpServerStatus::Error;
                s.error = error.without_tail();
                s.stderr_tail = error.stderr_tail().to_owned();
                s.attempts += 1;
            });
            Attempt::Failed
        }
    }
}

/// Subscribes the new connection to every URI an agent follows on this server (on 2026-07-28,
/// with the listen it opened at connect).
async fn resubscribe(entry: &ServerEntry, conn: &Connection, store: &Store) {
    if entry.per_agent() {
        // Each agent follows resources on its own session, with its own grant: none of them is
        // made again over this one.
        return;
    }
    let uris = match store.subscribed_uris(&entry.id).await {
        Ok(uris) => uris,
        Err(error) => {
            tracing::error!(server_id = %entry.id, %error, "cannot read the subscriptions to restore");
            return;
        }
    };
    let timeout = Duration::from_secs(entry.config().timeout);
    if let Some(followed) = conn.follow_all(&uris, timeout).await {
        match followed {
            Ok(()) => {
                tracing::debug!(server_id = %entry.id, count = uris.len(), "subscriptions restored")
            }
            Err(error) => {
                tracing::warn!(server_id = %entry.id, %error, "cannot restore the subscriptions")
            }
        }
        return;
    }
    for uri in uris {
        match conn.subscribe(&uri, timeout).await {
            Ok(()) => tracing::debug!(server_id = %entry.id, %uri, "subscription restored"),
            Err(error) => {
                tracing::warn!(server_id = %entry.id, %uri, %error, "cannot restore a subscription")
            }
        }
    }
}

async fn serve(
    entry: &ServerEntry,
    conn: &Connection,
    inbox: &mut Inbox,
    supervision: &Supervision,
    stop: &tokio_util::sync::CancellationToken,
) -> Ended {
    let period = supervision.ping_interval.unwrap_or(Duration::MAX / 4);
    let mut pings = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    pings.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = stop.cancelled() => return Ended::Stop,
            _ = conn.lost() => return Ended::Lost("the connection was lost".into()),
            Some(Control::Reconnect) = inbox.control.recv() => return Ended::Reconnect,
            Some(event) = inbox.events.recv() => {
                // Changes announced together need one re-listing.
                let mut events = vec![event];
                while let Ok(more) = inbox.events.try_recv() {
                    if !events.contains(&more) {
                        events.push(more);
                    }
                }
                // Boxed, as the steps `tenure` takes rarely are (see there).
                tokio::select! {
                    _ = stop.cancelled() => return Ended::Stop,
                    _ = Box::pin(relist(entry, conn, &events)) => {}
                }
            }
            _ = pings.tick(), if supervision.ping_interval.is_some() => {
                let ping = tokio::select! {
                    _ = stop.cancelled() => return Ended::Stop,
                    ping = Box::pin(conn.ping(supervision.ping_timeout)) => ping,
                };
                match ping {
                    Ok(took) => entry.update_state(|s| s.last_ping_ms = took.as_secs_f64() * 1000.0),
                    Err(error) => return Ended::Lost(format!("the server stopped answering pings ({error})")),
                }
            }
        }
    }
}

async fn relist(entry: &ServerEntry, conn: &Connection, events: &[NotificationMethod]) {
    let listed = tokio::time::timeout(RELIST_TIMEOUT, conn.list_all()).await;
    match listed {
        Ok(Ok(lists)) => {
            tracing::info!(server_id = %entry.id, ?events, "catalogue re-synced");
            entry.review_pins(&lists).await;
            entry.replace_lists(Some(lists));
            for &method in events {
                entry.push_to_all(method, serde_json::json!({}));
            }
        }
        Ok(Err(error)) => {
            let error = conn.redact(&error.to_string());
            tracing::warn!(server_id = %entry.id, %error, "re-listing failed")
        }
        Err(_) => tracing::warn!(server_id = %entry.id, "re-listing timed out"),
    }
}

/// Waits before the next attempt: the backoff when `auto_reconnect`, else until asked to
/// reconnect. `false` when the server is being stopped.
async fn wait_before_retry(
    entry: &ServerEntry,
    inbox: &mut Inbox,
    failures: u32,
    supervision: &Supervision,
    stop: &tokio_util::sync::CancellationToken,
) -> bool {
    let auto = entry.config().auto_reconnect;
    let delay = backoff(failures, supervision);
    let sleep = tokio::time::sleep(delay);
    tokio::pin!(sleep);
    loop {
        tokio::select! {
            _ = stop.cancelled() => return false,
            _ = &mut sleep, if auto => return true,
            control = inbox.control.recv() => match control {
                Some(Control::Reconnect) => return true,
                None => return false,
            },
            // Notifications of a closed connection: nothing to re-list.
            Some(_) = inbox.events.recv() => {}
        }
    }
}

/// Exponential backoff with ±25 % jitter, so servers that failed together retry apart.
fn backoff(failures: u32, supervision: &Supervision) -> Duration {
    let exp = supervision
        .base_backoff
        .saturating_mul(1 << failures.saturating_sub(1).min(16));
    let capped = exp.min(supervision.max_backoff);
    let jitter = rand::rng().random_range(0.75..1.25);
    capped.mul_f64(jitter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_is_bounded() {
        let s = Supervision::from_config(&Config::default(), ([127, 0, 0, 1], 8080).into());
        assert!(backoff(1, &s) <= s.base_backoff.mul_f64(1.25));
        assert!(backoff(3, &s) >= s.base_backoff.mul_f64(4.0 * 0.75));
        for failures in [10, 100, u32::MAX] {
            assert!(backoff(failures, &s) <= s.max_backoff.mul_f64(1.25));
        }
    }
}
