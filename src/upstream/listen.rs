//! What a 2026-07-28 server sends outside a call: it comes only on a `subscriptions/listen`
//! stream (the answer to one long request), not after `resources/subscribe`. A connection in that
//! era keeps one listen open carrying the list changes the server announces and every resource
//! URI the bridge follows there. When that set changes, a listen with the new set replaces the
//! old one, opened before the old is cancelled so nothing falls between them; a stream the server
//! ends while the connection lives is opened again. The notifications themselves reach the pump
//! through the transport's tap (`watched.rs`), as on 2025-11-25: here they are only read off, so
//! rmcp's buffer of the stream never fills.

use std::collections::BTreeSet;
use std::sync::{Arc, Weak};
use std::time::Duration;

use rmcp::model::{ServerCapabilities, SubscriptionFilter};
use rmcp::service::{ServiceError, Subscription};
use rmcp::{Peer, RoleClient};
use tokio_util::sync::CancellationToken;

use crate::a2e::McpServerConfig;

/// The wait before opening again a stream the server ended, doubled after each failure up to
/// the second value.
const REOPEN: (Duration, Duration) = (Duration::from_millis(250), Duration::from_secs(30));

/// Bound on the server acknowledging a listen opened again (no caller waits on it).
const REOPEN_TIMEOUT: Duration = Duration::from_secs(30);

type Opening<'a> = std::pin::Pin<Box<dyn Future<Output = Result<(), ServiceError>> + Send + 'a>>;

/// The listen of one connection.
pub struct Listen {
    peer: Peer<RoleClient>,
    /// For the log: the server, and its secrets, hidden in every error text.
    server_id: String,
    secrets: Vec<String>,
    /// The list changes the server announces (its `listChanged` capabilities), always asked for.
    lists: SubscriptionFilter,
    /// Fired when the connection is lost or closing: a stream ended then is not opened again.
    lost: CancellationToken,
    state: tokio::sync::Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The resource URIs followed upstream.
    uris: BTreeSet<String>,
    /// The stream open now (none before the first, or when there is nothing to ask for).
    stream: Option<Stream>,
    /// How many streams were opened: which one is current, so a stream that ended is opened
    /// again only when nothing replaced it meanwhile.
    opened: u64,
}

/// The task reading one stream; dropping it cancels the listen upstream (rmcp sends
/// `notifications/cancelled` as the subscription drops).
struct Stream(tokio::task::JoinHandle<()>);

impl Drop for Stream {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Listen {
    pub fn new(
        peer: Peer<RoleClient>,
        config: &McpServerConfig,
        capabilities: &ServerCapabilities,
        lost: CancellationToken,
    ) -> Arc<Self> {
        Arc::new(Self {
            peer,
            server_id: config.server_id.clone(),
            secrets: config.secret_values(),
            lists: list_changes(capabilities),
            lost,
            state: Default::default(),
        })
    }

    /// Opens the first stream: the list changes, and any URI already followed.
    pub async fn start(self: &Arc<Self>) -> Result<(), ServiceError> {
        let mut state = self.state.lock().await;
        let uris = state.uris.clone();
        self.open(&mut state, uris).await
    }

    /// Follows `uris` as well; nothing changes unless the server acknowledges the new listen.
    pub async fn follow(
        self: &Arc<Self>,
        uris: impl IntoIterator<Item = String>,
    ) -> Result<(), ServiceError> {
        let mut state = self.state.lock().await;
        let mut wanted = state.uris.clone();
        wanted.extend(uris);
        if wanted == state.uris && state.stream.is_some() {
            return Ok(());
        }
        self.open(&mut state, wanted).await
    }

    /// Stops following `uri`. It leaves the set even when the server refuses the new listen
    /// (the old stream then runs on, and the next listen leaves it out).
    pub async fn unfollow(self: &Arc<Self>, uri: &str) -> Result<(), ServiceError> {
        let mut state = self.state.lock().await;
        if !state.uris.remove(uri) {
            return Ok(());
        }
        let uris = state.uris.clone();
        self.open(&mut state, uris).await
    }

    /// Opens a listen for the list changes and `uris`, then lets the current stream go. Boxed,
    /// as a future of a named type: a stream's task, which opens it again when it ends, is
    /// itself started here.
    fn open<'a>(self: &'a Arc<Self>, state: &'a mut State, uris: BTreeSet<String>) -> Opening<'a> {
        Box::pin(self.replace(state, uris))
    }

    async fn replace(
        self: &Arc<Self>,
        state: &mut State,
        uris: BTreeSet<String>,
    ) -> Result<(), ServiceError> {
        let filter = self.filter(&uris);
        if filter == SubscriptionFilter::default() {
            // Nothing to hear of: no stream at all.
            state.stream = None;
            state.uris = uris;
            return Ok(());
        }
        let subscription = self.peer.listen(filter.clone()).await?;
        if subscription.acknowledged() != &filter {
            tracing::warn!(
                server_id = %self.server_id,
                asked = ?filter,
                acknowledged = ?subscription.acknowledged(),
                "the server listens for less than the bridge asked"
            );
        }
        state.opened += 1;
        let read = read(Arc::downgrade(self), subscription, state.opened);
        state.stream = Some(Stream(tokio::spawn(read)));
        state.uris = uris;
        Ok(())
    }

    fn filter(&self, uris: &BTreeSet<String>) -> SubscriptionFilter {
        let mut filter = self.lists.clone();
        if !uris.is_empty() {
            filter.resource_subscriptions = Some(uris.iter().cloned().collect());
        }
        filter
    }
}

/// The list changes `capabilities` announce, as a filter.
fn list_changes(capabilities: &ServerCapabilities) -> SubscriptionFilter {
    let mut filter = SubscriptionFilter::builder();
    if capabilities.tools.as_ref().and_then(|c| c.list_changed) == Some(true) {
        filter = filter.tools_list_changed();
    }
    if capabilities.prompts.as_ref().and_then(|c| c.list_changed) == Some(true) {
        filter = filter.prompts_list_changed();
    }
    if capabilities.resources.as_ref().and_then(|c| c.list_changed) == Some(true) {
        filter = filter.resources_list_changed();
    }
    filter.build()
}

/// Reads stream `opened` until it ends, then, unless the connection is going, has it opened
/// again.
async fn read(listen: Weak<Listen>, mut subscription: Subscription, opened: u64) {
    let why = loop {
        match subscription.next().await {
            Ok(Some(_)) => {}
            Ok(None) => break format!("{:?}", subscription.end()),
            Err(error) => break error.to_string(),
        }
    };
    let Some(listen) = listen.upgrade() else {
        return;
    };
    if listen.lost.is_cancelled() {
        return;
    }
    let why = crate::a2e::redact_text(&why, &listen.secrets);
    let server_id = &listen.server_id;
    tracing::info!(%server_id, %why, "the server ended its subscriptions/listen stream: opening it again");
    // A task of its own: opening replaces this task's handle, which aborts it.
    tokio::spawn(reopen(Arc::downgrade(&listen), opened));
}

/// Opens again the stream `ended`, with backoff, until it works, something else replaced it,
/// or the connection is going.
async fn reopen(listen: Weak<Listen>, ended: u64) {
    let mut delay = REOPEN.0;
    loop {
        tokio::time::sleep(delay).await;
        let Some(listen) = listen.upgrade() else {
            return;
        };
        let mut state = listen.state.lock().await;
        if listen.lost.is_cancelled() || state.opened != ended {
            return;
        }
        let uris = state.uris.clone();
        let opened = tokio::select! {
            _ = listen.lost.cancelled() => return,
            opened = tokio::time::timeout(REOPEN_TIMEOUT, listen.open(&mut state, uris)) => opened,
        };
        match opened {
            Ok(Ok(())) => return,
            Ok(Err(error)) => {
                let error = crate::a2e::redact_text(&error.to_string(), &listen.secrets);
                let server_id = &listen.server_id;
                tracing::warn!(%server_id, %error, "cannot open the subscriptions/listen stream again")
            }
            Err(_) => tracing::warn!(
                server_id = %listen.server_id,
                "no acknowledgement of subscriptions/listen within {REOPEN_TIMEOUT:?}"
            ),
        }
        drop(state);
        delay = (delay * 2).min(REOPEN.1);
    }
}
