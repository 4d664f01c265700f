//! Replicas (a PostgreSQL store and NATS): each server is held by one replica at a time, by a
//! lease in the store that it renews, and only that replica connects it. The holder shares the
//! server's status and lists with the others (a key per holder and server in the hub's shared
//! state), so every replica lists the same; what needs the connection (calls, reads, prompts,
//! subscriptions, listings, reconnects) is forwarded to the holder. A replica that dies stops
//! renewing and the others take its servers over when its leases lapse; one that shuts down
//! releases them at once.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize, de::DeserializeOwned};
use serde_json::{Map, Value, json};
use tokio::sync::{Notify, mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::entry::Remote;
use super::{Error, Inbox, Registry, ServerEntry, State, Supervision, supervisor};
use crate::a2e::{ErrorCode, McpServerStatus, NotificationMethod};
use crate::hub::bus::{Announcement, Bus, BusError, Listing, Peer, RemoteError, Request};
use crate::store::Store;
use crate::upstream::Lists;

/// How long another replica may take to say whether it cancelled a call.
const CANCEL_ASK_BOUND: Duration = Duration::from_secs(2);

/// How much longer than the work itself a forwarded request may take.
const FORWARD_MARGIN: Duration = Duration::from_secs(5);

/// This replica among the others.
pub struct Cluster {
    pub replica: String,
    pub(super) bus: Arc<Bus>,
    pub(super) lease: Duration,
    /// Each server's tenure here: `Some` (not cancelled) while this replica holds it.
    pub(super) holds: Mutex<HashMap<String, watch::Sender<Option<CancellationToken>>>>,
    /// Which replica holds each server, as the store said last.
    pub(super) holders: Mutex<HashMap<String, String>>,
    /// What each holder shared of each server, by (replica, server).
    snapshots: Mutex<HashMap<(String, String), Snapshot>>,
    /// Held while an entry is brought in line with its holder: of two mirrors that raced
    /// (one after learning the holder, one after its snapshot), the later one to apply must
    /// not be the one that read before the other's news.
    mirroring: Mutex<()>,
    /// Wakes the lease loop (a replica handed its servers over).
    pub(super) wake: Notify,
    share: mpsc::UnboundedSender<Weak<ServerEntry>>,
    shares: Mutex<Option<mpsc::UnboundedReceiver<Weak<ServerEntry>>>>,
    /// Calls and other requests sent to another replica since start.
    pub forwarded: AtomicU64,
    /// The calls other replicas forwarded here that are running, by their `call_key`.
    forwarded_calls: ForwardedCalls,
    /// Leases taken or lost here since start.
    pub lease_changes: AtomicU64,
}

/// What the holder shares of a server.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Snapshot {
    remote: Remote,
    lists: Lists,
    status: McpServerStatus,
    error: String,
    last_ping_ms: f64,
    attempts: u64,
    connections: u64,
    /// Tools held back until approved (tool pinning); every replica hides the same.
    #[serde(default)]
    held_back: Vec<String>,
}

/// What another replica asks the holder of a server to do: the replica protocol's requests.
pub(super) use crate::hub::bus::Request as Op;

/// How long a cancel that arrived before its call is kept for the call to find.
const EARLY_CANCEL_KEPT: Duration = Duration::from_secs(60);

/// The forwarded calls running here, each with the token that stops it. A `CancelCall` may
/// overtake its `CallTool` (each bus request is served in its own task): the cancel is then
/// kept, cancelled, for the call to find when it starts.
#[derive(Default)]
struct ForwardedCalls {
    running: Mutex<HashMap<String, (CancellationToken, Instant)>>,
}

/// A forwarded call's place among them, given up when it ends.
#[derive(Default)]
struct ForwardedCall<'a> {
    calls: Option<&'a ForwardedCalls>,
    key: String,
    token: CancellationToken,
}

impl ForwardedCalls {
    fn start(&self, key: &str) -> ForwardedCall<'_> {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        let token = running
            .entry(key.to_owned())
            .or_insert_with(|| (CancellationToken::new(), Instant::now()))
            .0
            .clone();
        ForwardedCall {
            calls: Some(self),
            key: key.to_owned(),
            token,
        }
    }

    fn cancel(&self, key: &str) {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        // Cancels that never met their call (it had ended already) are let go after a while.
        running.retain(|_, (token, since)| {
            !token.is_cancelled() || since.elapsed() < EARLY_CANCEL_KEPT
        });
        running
            .entry(key.to_owned())
            .or_insert_with(|| (CancellationToken::new(), Instant::now()))
            .0
            .cancel();
    }
}

impl Drop for ForwardedCall<'_> {
    fn drop(&mut self) {
        if let Some(calls) = self.calls {
            calls
                .running
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&self.key);
        }
    }
}

/// Asks the holder of a forwarded call to drop it, unless the answer came first.
struct CancelRemote {
    cluster: Arc<Cluster>,
    holder: String,
    /// `None` once answered.
    call_key: Option<String>,
}

impl Drop for CancelRemote {
    fn drop(&mut self) {
        let Some(call_key) = self.call_key.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (bus, holder) = (self.cluster.bus.clone(), self.holder.clone());
        runtime.spawn(async move {
            let cancel = Request::CancelForwarded { call_key };
            if let Err(error) = bus.request(&holder, cancel, FORWARD_MARGIN).await {
                tracing::warn!(%holder, %error, "cannot cancel a call forwarded to another replica");
            }
        });
    }
}

impl Cluster {
    pub(super) fn new(bus: Arc<Bus>, supervision: &Supervision) -> Option<Arc<Self>> {
        let replica = supervision.replica.clone()?;
        let (share, shares) = mpsc::unbounded_channel();
        Some(Arc::new(Self {
            replica,
            bus,
            lease: supervision.lease,
            holds: Mutex::default(),
            holders: Mutex::default(),
            snapshots: Mutex::default(),
            mirroring: Mutex::default(),
            wake: Notify::new(),
            share,
            shares: Mutex::new(Some(shares)),
            forwarded: AtomicU64::new(0),
            forwarded_calls: ForwardedCalls::default(),
            lease_changes: AtomicU64::new(0),
        }))
    }

    /// Whether this replica holds the server now.
    pub(super) fn holds(&self, server_id: &str) -> bool {
        self.holds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(server_id)
            .is_some_and(|tx| tx.borrow().as_ref().is_some_and(|t| !t.is_cancelled()))
    }

    pub(super) fn held_ids(&self) -> Vec<String> {
        self.holds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(_, tx)| tx.borrow().as_ref().is_some_and(|t| !t.is_cancelled()))
            .map(|(id, _)| id.clone())
            .collect()
    }

    /// Starts a tenure on the server (its supervisor connects it).
    pub(super) fn begin(&self, entry: &ServerEntry) {
        if let Some(tx) = self
            .holds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&entry.id)
        {
            tx.send_replace(Some(entry.stop.child_token()));
            self.lease_changes.fetch_add(1, Ordering::Relaxed);
            tracing::info!(server_id = %entry.id, replica = %self.replica, "holding the server");
        }
    }

    /// Ends the tenure on the server (its connection is closed), and stops sharing it.
    pub(super) fn end(&self, server_id: &str) {
        let ended = self
            .holds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(server_id)
            .and_then(|tx| tx.send_replace(None));
        if let Some(token) = ended {
            token.cancel();
            self.lease_changes.fetch_add(1, Ordering::Relaxed);
            tracing::info!(%server_id, replica = %self.replica, "no longer holding the server");
            let bus = self.bus.clone();
            let key = shared_key(&self.replica, server_id);
            tokio::spawn(async move { bus.unshare(&key).await });
        }
    }

    /// What the others should show of the server now: the holder's latest snapshot.
    pub(super) fn mirror(&self, entry: &ServerEntry) {
        if self.holds(&entry.id) {
            return;
        }
        let _one_at_a_time = self.mirroring.lock().unwrap_or_else(|e| e.into_inner());
        let holder = self
            .holders
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&entry.id)
            .cloned();
        let snapshot = holder
            .as_ref()
            .and_then(|holder| self.serving(holder, &entry.id));
        match (holder, snapshot) {
            (Some(_), Some(snapshot)) => {
                let state = State {
                    status: snapshot.status,
                    error: snapshot.error,
                    last_ping_ms: snapshot.last_ping_ms,
                    attempts: snapshot.attempts,
                    connections: snapshot.connections,
                    ..State::default()
                };
                entry.mirror(snapshot.remote, snapshot.lists, state, snapshot.held_back);
            }
            // Held, but nothing shared yet: it is connecting there.
            (Some(holder), None) => {
                let mut state = entry.state();
                state.status = McpServerStatus::Connecting;
                let held_back = entry.held_back();
                entry.mirror(
                    Remote::at(holder),
                    entry.lists().as_ref().clone(),
                    state,
                    held_back,
                );
            }
            // Nobody holds it (its holder died): one of the replicas takes it over shortly.
            (None, _) => {
                let mut state = entry.state();
                state.status = McpServerStatus::Disconnected;
                let held_back = entry.held_back();
                entry.mirror(
                    Remote::at(String::new()),
                    entry.lists().as_ref().clone(),
                    state,
                    held_back,
                );
            }
        }
    }
}

impl Cluster {
    /// What the replica serving a server held by `holder` shared: the holder's snapshot, or,
    /// while the holder is not ready with it yet, that of a previous holder that still is (it
    /// serves the server until the new holder is ready: a hand-over, `balance.rs`).
    fn serving(&self, holder: &str, server_id: &str) -> Option<Snapshot> {
        let snapshots = self.snapshots.lock().unwrap_or_else(|e| e.into_inner());
        let own = snapshots
            .get(&(holder.to_owned(), server_id.to_owned()))
            .cloned();
        if own
            .as_ref()
            .is_some_and(|s| s.status == McpServerStatus::Ready)
        {
            return own;
        }
        let up = self.bus.others();
        snapshots
            .iter()
            .find(|((replica, id), snapshot)| {
                id == server_id
                    && replica != holder
                    && snapshot.status == McpServerStatus::Ready
                    && up.contains(replica)
            })
            .map(|(_, snapshot)| snapshot.clone())
            .or(own)
    }

    /// Whether `replica` says the server is ready there.
    pub(super) fn ready_on(&self, replica: &str, server_id: &str) -> bool {
        self.snapshots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&(replica.to_owned(), server_id.to_owned()))
            .is_some_and(|s| s.status == McpServerStatus::Ready)
    }
}

/// The shared key of a server held by `replica`: subject tokens (a server id may hold dots).
fn shared_key(replica: &str, server_id: &str) -> String {
    format!("{replica}.{}", hex::encode(server_id))
}

/// Supervises a server across replicas: while this replica holds it, a tenure of the supervisor;
/// otherwise nothing (the entry mirrors the holder).
pub(super) fn spawn_hold(
    entry: Arc<ServerEntry>,
    mut inbox: Inbox,
    store: Store,
    supervision: Supervision,
    cluster: &Arc<Cluster>,
    held: bool,
) {
    let (tx, mut tenure) = watch::channel(None);
    cluster
        .holds
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(entry.id.clone(), tx);
    let _ = entry.shared.set(cluster.share.clone());
    entry.set_held_here(held);
    if held {
        cluster.begin(&entry);
    } else {
        cluster.mirror(&entry);
    }
    let cluster = cluster.clone();
    tokio::spawn(async move {
        loop {
            let token = tokio::select! {
                _ = entry.stop.cancelled() => break,
                changed = tenure.wait_for(|t| t.as_ref().is_some_and(|t| !t.is_cancelled())) => {
                    match changed {
                        Ok(token) => token.clone().expect("waited for"),
                        Err(_) => break,
                    }
                }
            };
            entry.set_held_here(true);
            // Shared at once, so the others see which replica holds it (connecting here now,
            // unless registration here already connected it).
            match entry.connection() {
                Some(_) => entry.update_state(|_| {}),
                // Counted afresh here: the supervisor reads attempts without a connection as a
                // registration waiting for its authorization, and this one must connect.
                None => entry.update_state(|s| {
                    s.status = McpServerStatus::Connecting;
                    s.attempts = 0;
                }),
            }
            supervisor::tenure(&entry, &mut inbox, &store, &supervision, &token).await;
            entry.set_held_here(false);
            cluster.mirror(&entry);
        }
        // Only its own: an entry loaded again meanwhile (a reload racing a registration here)
        // has put its own there, and dropping ours ended this loop.
        let mut holds = cluster.holds.lock().unwrap_or_else(|e| e.into_inner());
        if holds
            .get(&entry.id)
            .is_some_and(|tx| tenure.same_channel(&tx.subscribe()))
        {
            holds.remove(&entry.id);
        }
        drop(holds);
        entry.stopped.cancel();
    });
}

impl Registry {
    /// Across replicas: mirrors what the holders share and serves what other replicas forward
    /// here (the leases are kept by `balance`).
    pub(super) fn serve_replicas(self: &Arc<Self>) {
        let Some(cluster) = self.cluster.clone() else {
            return;
        };
        let peer: Weak<dyn Peer> = Arc::downgrade(self) as Weak<Registry>;
        cluster.bus.serve(peer);
        tokio::spawn(follow_snapshots(Arc::downgrade(self), cluster.clone()));
        let shares = cluster
            .shares
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(shares) = shares {
            tokio::spawn(share_snapshots(cluster, shares));
        }
    }

    pub fn cluster(&self) -> Option<&Arc<Cluster>> {
        self.cluster.as_ref()
    }

    /// Across replicas: a page of a server's own listing, from the replica holding it. A
    /// listing is safe to repeat: it survives the holder's death as a read does (`relay`).
    pub(super) async fn forward_list<T: DeserializeOwned>(
        &self,
        holder: &str,
        what: Listing,
        server_id: String,
        cursor: Option<String>,
        timeout: Duration,
    ) -> Result<(Vec<T>, Option<String>), Error> {
        let op = Request::List {
            what,
            server_id: server_id.clone(),
            cursor: cursor.clone(),
        };
        let Ok(entry) = self.get(&server_id) else {
            return self.forward(holder, op, timeout).await;
        };
        match self
            .relay_within(&entry, holder.to_owned(), timeout, op)
            .await
        {
            super::relay::Relayed::Done(answer) => answer,
            // This replica took the server over meanwhile: listed here.
            super::relay::Relayed::HereNow => {
                let listed = self.list_here(&entry, what, cursor).await?;
                serde_json::from_value(listed)
                    .map_err(|e| Error::Internal(format!("a listing: {e}")))
            }
        }
    }

    /// A page of `entry`'s own listing from its connection here, as the replica protocol
    /// answers it (`[items, next_cursor]`).
    async fn list_here(
        &self,
        entry: &ServerEntry,
        what: Listing,
        cursor: Option<String>,
    ) -> Result<Value, Error> {
        let server_id = &entry.id;
        let conn = entry
            .connection()
            .ok_or_else(|| Error::Unavailable(server_id.clone()))?;
        let timeout = Duration::from_secs(entry.config().timeout);
        let listed = match what {
            Listing::Resources => conn
                .list_resources(cursor, timeout)
                .await
                .map(|r| (to_value(&r.resources), r.next_cursor)),
            Listing::Templates => conn
                .list_templates(cursor, timeout)
                .await
                .map(|r| (to_value(&r.resource_templates), r.next_cursor)),
            Listing::Prompts => conn
                .list_prompts(cursor, timeout)
                .await
                .map(|r| (to_value(&r.prompts), r.next_cursor)),
        };
        let (items, next) = listed.map_err(|error| Error::Upstream {
            what: format!("listing on server \"{server_id}\""),
            error,
        })?;
        Ok(json!([items?, next]))
    }

    /// Across replicas: calls a tool on the replica holding its server. Dropped before the
    /// answer (the caller cancelled or went away), it asks the holder to drop the call too,
    /// which tells the server.
    pub(super) async fn forward_call(
        &self,
        holder: &str,
        name: String,
        arguments: Map<String, Value>,
        timeout: Option<f64>,
        origin: &crate::upstream::CallOrigin,
        within: Duration,
    ) -> Result<(String, rmcp::model::CallToolResult), Error> {
        let call_key = crate::a2e::new_id();
        let lent = self.hub.lend(&call_key, origin);
        let op = Request::CallTool {
            name,
            arguments,
            timeout,
            agent: origin.agent_id().to_owned(),
            req_id: origin.call_id().unwrap_or_default(),
            call_key: call_key.clone(),
            caller: lent.as_ref().map(|lent| lent.replica().to_owned()),
        };
        let guard = self.cluster.clone().map(|cluster| CancelRemote {
            cluster,
            holder: holder.to_owned(),
            call_key: Some(call_key),
        });
        let answer = self.forward(holder, op, within).await;
        if let Some(mut guard) = guard {
            guard.call_key = None;
        }
        drop(lent);
        answer
    }

    /// Across replicas: forwards `op` to `holder` and decodes its answer.
    pub(super) async fn forward<T: DeserializeOwned>(
        &self,
        holder: &str,
        op: Op,
        within: Duration,
    ) -> Result<T, Error> {
        let Some(cluster) = &self.cluster else {
            return Err(Error::Internal("no other replica to forward to".into()));
        };
        cluster.forwarded.fetch_add(1, Ordering::Relaxed);
        let answer = cluster
            .bus
            .request(holder, op, within + FORWARD_MARGIN)
            .await
            .map_err(|e| match e {
                BusError::Remote(RemoteError { code, message }) => Error::Remote(code, message),
                e => Error::Remote(
                    ErrorCode::McpServerUnavailable,
                    format!("the replica holding the server did not answer ({e}); try again"),
                ),
            })?;
        serde_json::from_value(answer)
            .map_err(|e| Error::Internal(format!("a forwarded answer: {e}")))
    }

    /// Cancels `agent`'s call `id` in flight here or, failing that, on another replica (the
    /// agent's request may be open on any); whether one was.
    pub async fn cancel_call(&self, agent: &str, id: &str) -> bool {
        if self.in_flight.cancel(agent, id) {
            return true;
        }
        let Some(cluster) = &self.cluster else {
            return false;
        };
        let asked = cluster.bus.others().into_iter().map(|replica| {
            let cancel = Request::CancelInFlight {
                agent: agent.to_owned(),
                id: id.to_owned(),
            };
            async move {
                let answer = cluster
                    .bus
                    .request(&replica, cancel, CANCEL_ASK_BOUND)
                    .await;
                matches!(answer, Ok(Value::Bool(true)))
            }
        });
        futures::future::join_all(asked)
            .await
            .into_iter()
            .any(|cancelled| cancelled)
    }

    /// Runs what another replica forwarded, if this replica still holds the server.
    async fn serve_op(self: &Arc<Self>, op: Request) -> Result<Value, Error> {
        let held = |server_id: &str| -> Result<Arc<ServerEntry>, Error> {
            let entry = self.get(server_id)?;
            match entry.held_here() {
                true => Ok(entry),
                false => Err(not_held(server_id)),
            }
        };
        match op {
            Request::CallTool {
                name,
                arguments,
                timeout,
                agent,
                req_id,
                call_key,
                caller,
            } => {
                if let Some((server_id, _)) = super::naming::split(&name) {
                    held(server_id)?;
                }
                let origin: crate::upstream::CallOrigin = match caller {
                    Some(caller) => {
                        self.hub
                            .relayed_caller(caller, call_key.clone(), agent, req_id)
                    }
                    None => Arc::new(crate::hub::AgentChannel::new(
                        self.hub.clone(),
                        agent,
                        req_id,
                    )),
                };
                let call = self.call_tool(&name, arguments, timeout, origin);
                let cancelled = match &self.cluster {
                    Some(cluster) if !call_key.is_empty() => {
                        cluster.forwarded_calls.start(&call_key)
                    }
                    _ => Default::default(),
                };
                tokio::select! {
                    biased;
                    // Dropping the call tells its server.
                    _ = cancelled.token.cancelled() => Err(Error::Cancelled(call_key)),
                    called = call => to_value(&called?),
                }
            }
            // The way back to a /mcp client's call or session (hub/relayed.rs).
            Request::ToCaller { call_key, body } => self
                .hub
                .serve_relayed(&call_key, body)
                .await
                .map_err(Error::Internal),
            Request::ToSession { session, body } => self
                .hub
                .serve_session(&session, body)
                .await
                .map_err(Error::Internal),
            Request::CancelForwarded { call_key } => {
                if let Some(cluster) = &self.cluster {
                    cluster.forwarded_calls.cancel(&call_key);
                }
                Ok(Value::Null)
            }
            Request::CancelInFlight { agent, id } => Ok(json!(self.in_flight.cancel(&agent, &id))),
            // Answered by the bus before it reaches here; the same answer if it ever does.
            Request::Ping => Ok(Value::Null),
            Request::ReadResource {
                agent,
                server_id,
                uri,
            } => {
                held(&server_id)?;
                to_value(&self.read_resource_raw(&agent, &server_id, &uri).await?)
            }
            Request::Subscribe {
                agent,
                server_id,
                uri,
            } => {
                held(&server_id)?;
                to_value(&self.subscribe(&agent, &server_id, &uri).await?)
            }
            Request::Unsubscribe {
                agent,
                server_id,
                uri,
            } => {
                let entry = held(&server_id)?;
                if let Some(conn) = entry.session_of(&agent).await {
                    let timeout = Duration::from_secs(entry.config().timeout);
                    conn.unsubscribe(&uri, timeout)
                        .await
                        .map_err(|error| Error::Upstream {
                            what: format!("unsubscribing from \"{uri}\""),
                            error,
                        })?;
                }
                Ok(Value::Null)
            }
            Request::GetPrompt {
                agent,
                server_id,
                name,
                arguments,
            } => {
                held(&server_id)?;
                to_value(
                    &self
                        .get_prompt(&agent, &server_id, &name, arguments)
                        .await?,
                )
            }
            Request::Complete {
                agent,
                server_id,
                reference,
                argument,
                context,
            } => {
                held(&server_id)?;
                let completed = self
                    .complete(&agent, &server_id, reference, argument, context)
                    .await?;
                to_value(&completed)
            }
            Request::List {
                what,
                server_id,
                cursor,
            } => {
                let entry = held(&server_id)?;
                self.list_here(&entry, what, cursor).await
            }
            Request::ApproveTool {
                agent,
                server_id,
                tool,
            } => {
                let entry = held(&server_id)?;
                to_value(&entry.approve(&agent, &tool).await?)
            }
            Request::DropSession { server_id, agent } => {
                let entry = held(&server_id)?;
                if let Some(old) = entry.sessions.lock().await.remove(&agent) {
                    old.shutdown().await;
                }
                Ok(Value::Null)
            }
            Request::Reconnect { server_id } => {
                let entry = held(&server_id)?;
                let since = entry.state().attempts;
                let bound = entry.config().connect_bound();
                let _ = entry.control.send(super::Control::Reconnect);
                entry
                    .settled_after(since, bound + Duration::from_secs(1))
                    .await;
                Ok(Value::Null)
            }
        }
    }

    /// Across replicas: a server was registered, changed or removed on another replica; its
    /// config is read again from the store.
    pub(super) async fn reload(self: &Arc<Self>, server_id: &str) {
        let stored = match self.store.server(server_id).await {
            Ok(stored) => stored,
            Err(error) => {
                tracing::warn!(%server_id, %error, "cannot read a changed server from the store");
                return;
            }
        };
        match (stored, self.get(server_id)) {
            (None, Ok(_)) => self.forget(server_id).await,
            (Some(stored), Err(_)) => {
                // This replica's own limits on stdio commands hold for servers registered on
                // others too: it neither lists nor ever runs one they leave out.
                if self.disallowed_command(&stored.config).is_some()
                    || self.disallowed_env(&stored.config).is_some()
                {
                    tracing::debug!(%server_id, "a server registered elsewhere is not allowed here");
                    return;
                }
                let (entry, inbox) = ServerEntry::new(
                    stored.owner,
                    stored.config,
                    self.hub.clone(),
                    self.store.clone(),
                    &self.supervision,
                );
                // Registered here meanwhile (its lease, claimed before the registration ends,
                // made the lease loop look for it): the registration's entry is the one.
                let registering = self
                    .reserved
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .contains_key(server_id);
                if registering || self.get(server_id).is_ok() {
                    return;
                }
                self.insert_held(entry, inbox, false);
                // Who holds it now (usually the replica that registered it), without waiting
                // for the next look at the leases.
                if let (Some(cluster), Ok(holders)) =
                    (&self.cluster, self.store.lease_holders().await)
                    && let Some(holder) = holders.get(server_id)
                {
                    cluster
                        .holders
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(server_id.to_owned(), holder.clone());
                    if let Ok(entry) = self.get(server_id) {
                        cluster.mirror(&entry);
                    }
                }
            }
            (Some(stored), Ok(entry)) => {
                let old = entry.config();
                if *old == stored.config {
                    return;
                }
                let new = stored.config;
                let reconnect = super::needs_reconnect(&old, &new);
                *entry.config.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(new.clone());
                let tools_moved = new.tool_allow_list != old.tool_allow_list;
                let resources_moved = new.resource_allow_list != old.resource_allow_list;
                match (entry.held_here(), reconnect) {
                    (true, true) => {
                        let _ = entry.control.send(super::Control::Reconnect);
                    }
                    // As an update on this replica would: the lists follow the allow lists.
                    (true, false) => {
                        entry.replace_lists(None);
                        if tools_moved {
                            entry.push_to_all(NotificationMethod::ToolsListChanged, json!({}));
                        }
                        if resources_moved {
                            entry.push_to_all(NotificationMethod::ResourcesListChanged, json!({}));
                        }
                    }
                    // The holder shares its lists; the catalogue follows the new allow lists.
                    (false, _) => {
                        if let Some(cluster) = &self.cluster {
                            cluster.mirror(&entry);
                        }
                    }
                }
            }
            (None, Err(_)) => {}
        }
    }

    /// Drops a server removed on another replica (closing its connection when held here).
    pub(super) async fn forget(&self, server_id: &str) {
        let removed = self
            .servers
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(server_id);
        if let Some(entry) = removed {
            entry.stop.cancel();
            entry.close_sessions().await;
            tracing::info!(%server_id, "server removed on another replica");
        }
    }

    /// Tells the other replicas a server was registered, changed or removed here.
    pub(super) fn announce_change(&self, server_id: &str) {
        if let Some(cluster) = &self.cluster {
            cluster.bus.announce(Announcement::ServerChanged {
                server_id: server_id.to_owned(),
            });
        }
    }

    /// Across replicas: hands every server held here over (their connections are closed by
    /// then), so the others take them at once.
    pub(super) async fn hand_over(&self) {
        let Some(cluster) = &self.cluster else {
            return;
        };
        for id in cluster.held_ids() {
            cluster.end(&id);
        }
        if let Err(error) = self.store.release_leases(&cluster.replica).await {
            tracing::warn!(%error, "cannot release this replica's leases; they lapse instead");
        }
        // Not counted among the live replicas any more: nothing is planned for it.
        if let Err(error) = self.store.replica_gone(&cluster.replica).await {
            tracing::warn!(%error, "cannot say this replica is stopping; it lapses instead");
        }
        cluster.bus.announce(Announcement::HandedOver);
        cluster.bus.leave().await;
    }
}

/// What other replicas ask and announce, served here.
impl Peer for Registry {
    fn request(
        self: Arc<Self>,
        _from: String,
        request: Request,
    ) -> futures::future::BoxFuture<'static, Result<Value, RemoteError>> {
        Box::pin(async move {
            self.serve_op(request)
                .await
                .map_err(|error| RemoteError::new(error.code(), error.to_string()))
        })
    }

    fn announced(
        self: Arc<Self>,
        _from: String,
        announcement: Announcement,
    ) -> futures::future::BoxFuture<'static, ()> {
        Box::pin(async move {
            match announcement {
                Announcement::ServerChanged { server_id } => self.reload(&server_id).await,
                Announcement::HandedOver => {
                    if let Some(cluster) = &self.cluster {
                        cluster.wake.notify_one();
                    }
                }
            }
        })
    }
}

/// The answer to a request forwarded here for a server this replica does not hold (any more):
/// the sender's view of the holder is out of date.
pub(super) fn not_held(server_id: &str) -> Error {
    Error::Remote(
        ErrorCode::McpServerUnavailable,
        format!(
            "server \"{server_id}\" {}; try again",
            super::relay::NOT_HELD
        ),
    )
}

fn to_value<T: Serialize>(value: &T) -> Result<Value, Error> {
    serde_json::to_value(value).map_err(|e| Error::Internal(e.to_string()))
}

/// Publishes what changed on the servers held here.
async fn share_snapshots(
    cluster: Arc<Cluster>,
    mut shares: mpsc::UnboundedReceiver<Weak<ServerEntry>>,
) {
    while let Some(first) = shares.recv().await {
        // Changes that came together are shared once.
        let mut batch = vec![first];
        while let Ok(more) = shares.try_recv() {
            batch.push(more);
        }
        let mut seen = HashSet::new();
        for entry in batch.iter().filter_map(Weak::upgrade) {
            if !seen.insert(entry.id.clone()) || !cluster.holds(&entry.id) {
                continue;
            }
            let info = entry.info();
            let state = entry.state();
            let snapshot = Snapshot {
                remote: Remote {
                    replica: cluster.replica.clone(),
                    mcp_version: info.mcp_version,
                    server_name: info.server_name,
                    server_version: info.server_version,
                    connected_at: info.connected_at,
                    capabilities: entry.capabilities().unwrap_or_default(),
                },
                lists: entry.lists().as_ref().clone(),
                status: state.status,
                error: state.error,
                last_ping_ms: state.last_ping_ms,
                attempts: state.attempts,
                connections: state.connections,
                held_back: entry.held_back(),
            };
            let key = shared_key(&cluster.replica, &entry.id);
            match serde_json::to_value(&snapshot) {
                Ok(value) => {
                    if let Err(error) = cluster.bus.share(&key, &value).await {
                        tracing::warn!(server_id = %entry.id, %error, "cannot share a server's state");
                    }
                }
                Err(error) => tracing::error!(%error, "cannot serialise a server's state"),
            }
        }
    }
}

/// Applies what the holders share to the entries here.
async fn follow_snapshots(registry: Weak<Registry>, cluster: Arc<Cluster>) {
    let mut values = cluster.bus.shared_values();
    while let Some((key, value)) = values.recv().await {
        let Some((replica, server_id)) = key
            .split_once('.')
            .and_then(|(r, s)| Some((r, String::from_utf8(hex::decode(s).ok()?).ok()?)))
        else {
            continue;
        };
        let id = (replica.to_owned(), server_id.clone());
        {
            let mut snapshots = cluster.snapshots.lock().unwrap_or_else(|e| e.into_inner());
            match value.and_then(|v| serde_json::from_value::<Snapshot>(v).ok()) {
                Some(snapshot) => snapshots.insert(id, snapshot),
                None => snapshots.remove(&id),
            };
        }
        let Some(registry) = registry.upgrade() else {
            return;
        };
        if let Ok(entry) = registry.get(&server_id) {
            cluster.mirror(&entry);
        }
    }
}
