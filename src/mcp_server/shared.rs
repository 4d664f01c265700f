//! 2025-11-25 sessions shared by replicas, so that any replica serves any request of a session
//! behind a load balancer that sticks to nothing. rmcp restores a session it does not have from
//! an external [`SessionStore`]: it loads the client's initialize parameters and replays the
//! handshake to a fresh session worker under the same id (`StreamableHttpService`'s
//! `try_restore_from_store`). This is that store, in the bridge's database (PostgreSQL when
//! replicas share it), with what else a session needs on every replica: the agent that opened
//! it (a session is its agent's alone, and the agent's cap counts its sessions on every
//! replica), and the URIs and log level it asked for (sent to it by the replica that holds its
//! GET stream). A session ended on one replica is ended on the others at their next request of
//! it, since its row is gone; one unused for `MCP_BRIDGE_MCP_SESSION_IDLE_SECS` (330 s: rmcp's
//! own idle timeout for a session worker, 300 s, and a margin for replicas that mark it used only
//! every [`TOUCH_EVERY`]) is gone too, as rmcp forgets it. The replica holding a session's GET
//! stream marks it used while the stream is open.
//!
//! Chosen over forwarding each request to a session's home replica: nothing waits on a home
//! that may die (a `kill -9` loses only the calls in flight there), and no response stream
//! crosses the bus. One replica alone (no NATS) keeps every session in memory, as before.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use rmcp::transport::streamable_http_server::session::store::{
    SessionState, SessionStore, SessionStoreError,
};

use crate::store::{SessionClaim, SessionInterests, SharedSession, Store};

/// How often a session in use is marked used in the store (at most); a session's GET stream
/// marks it used this often while it is open (or a quarter of the idle timeout, if shorter).
pub const TOUCH_EVERY: Duration = Duration::from_secs(15);

/// The sessions in the store.
#[derive(Clone)]
pub struct SharedSessions {
    store: Store,
    /// How long a session lives unused.
    idle: Duration,
    /// How many GET streams of each session are open here: rmcp may hold a second one (a
    /// client's new GET before its old one is dropped), and only the last one to end says the
    /// session no longer listens here.
    listeners: Arc<Mutex<HashMap<String, usize>>>,
}

impl SharedSessions {
    pub fn new(store: Store, idle: Duration) -> Self {
        Self {
            store,
            idle,
            listeners: Arc::default(),
        }
    }

    /// How often a session in use is marked used.
    fn touch_every(&self) -> Duration {
        TOUCH_EVERY.min(self.idle / 4)
    }

    /// Session `id` while it lives; marked used when it was not lately.
    pub async fn get(&self, id: &str) -> Result<Option<SharedSession>, crate::store::StoreError> {
        let session = self.store.mcp_session(id, self.idle).await?;
        if let Some(session) = &session
            && session.idle_secs >= self.touch_every().as_secs_f64()
            && let Err(error) = self.store.touch_mcp_session(id).await
        {
            tracing::debug!(%error, "cannot mark an /mcp session used");
        }
        Ok(session)
    }

    /// Names the agent that opened session `id`, unless it has `cap` sessions already (0: no
    /// cap). Expired sessions are removed on the way.
    pub async fn opened(&self, id: &str, agent: &str, cap: usize) -> SessionClaim {
        match self
            .store
            .claim_mcp_session(id, agent, cap, self.idle)
            .await
        {
            Ok(claim) => claim,
            Err(error) => {
                tracing::warn!(%error, "cannot record the agent of an /mcp session");
                SessionClaim::Unrecorded
            }
        }
    }

    /// Ends session `id` in the store.
    pub async fn end(&self, id: &str) {
        if let Err(error) = self.store.delete_mcp_session(id).await {
            tracing::warn!(%error, "cannot end a shared /mcp session");
        }
    }

    /// Session `id`'s GET stream, held on `replica`, as its answer's body: while it is open the
    /// session is marked used (a client that only listens keeps it), and once it ends the
    /// session no longer names `replica` as where it listens.
    pub fn listening(&self, id: &str, replica: &str, body: axum::body::Body) -> axum::body::Body {
        *self.listeners().entry(id.to_owned()).or_default() += 1;
        let shared = self.clone();
        let session = id.to_owned();
        let every = self.touch_every();
        let touching = tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            ticks.tick().await;
            loop {
                ticks.tick().await;
                if let Err(error) = shared.store.touch_mcp_session(&session).await {
                    tracing::debug!(%error, "cannot mark a listening /mcp session used");
                }
            }
        });
        axum::body::Body::new(Listening {
            body,
            touching,
            shared: self.clone(),
            session: id.to_owned(),
            replica: replica.to_owned(),
        })
    }

    fn listeners(&self) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
        self.listeners.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One GET stream of session `id` ended here: whether it was the last one.
    fn stopped_listening(&self, id: &str) -> bool {
        let mut listeners = self.listeners();
        let Some(open) = listeners.get_mut(id) else {
            return true;
        };
        *open = open.saturating_sub(1);
        if *open > 0 {
            return false;
        }
        listeners.remove(id);
        true
    }

    /// Names this replica as the one holding session `id`'s GET stream.
    pub async fn streams_here(&self, id: &str, replica: &str) {
        if let Err(error) = self.store.set_mcp_session_stream(id, replica).await {
            tracing::warn!(%error, "cannot record where an /mcp session listens");
        }
    }

    /// The replica other than `me` that holds session `id`'s GET stream, if another does.
    pub async fn stream_elsewhere(&self, id: &str, me: &str) -> Option<String> {
        let session = self.store.mcp_session(id, self.idle).await.ok()??;
        session.stream_replica.filter(|replica| replica != me)
    }

    /// How many live sessions `agent` has, on every replica.
    pub async fn count(&self, agent: &str) -> Result<usize, crate::store::StoreError> {
        self.store.count_mcp_sessions(agent, self.idle).await
    }

    /// Records what session `id` asked to be sent.
    pub async fn set_interests(&self, id: &str, uris: &[String], log_level: Option<&str>) {
        if let Err(error) = self
            .store
            .set_mcp_session_interests(id, uris, log_level)
            .await
        {
            tracing::warn!(%error, "cannot share what an /mcp session subscribed to");
        }
    }

    /// What every live session asked to be sent (URIs, log level), by session id.
    pub async fn interests(&self) -> Result<Vec<SessionInterests>, crate::store::StoreError> {
        self.store.mcp_session_interests(self.idle).await
    }
}

#[async_trait::async_trait]
impl SessionStore for SharedSessions {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let Some(session) = self.store.mcp_session(session_id, self.idle).await? else {
            return Ok(None);
        };
        Ok(Some(serde_json::from_str(&session.state)?))
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let state = serde_json::to_string(state)?;
        Ok(self.store.insert_mcp_session(session_id, &state).await?)
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        Ok(self.store.delete_mcp_session(session_id).await?)
    }
}

/// A session's GET stream as its answer's body (see [`SharedSessions::listening`]).
struct Listening {
    body: axum::body::Body,
    touching: tokio::task::JoinHandle<()>,
    shared: SharedSessions,
    session: String,
    replica: String,
}

impl http_body::Body for Listening {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.touching.abort();
        let (shared, session, replica) = (
            self.shared.clone(),
            std::mem::take(&mut self.session),
            std::mem::take(&mut self.replica),
        );
        if !shared.stopped_listening(&session) {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                // A GET of the session may have begun here since.
                if shared.listeners().contains_key(&session) {
                    return;
                }
                if let Err(error) = shared
                    .store
                    .clear_mcp_session_stream(&session, &replica)
                    .await
                {
                    tracing::debug!(%error, "cannot forget where an /mcp session listened");
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::testing::backends;

    async fn listens_on(shared: &SharedSessions) -> Option<String> {
        let session = shared.store.mcp_session("s", shared.idle).await.unwrap();
        session.unwrap().stream_replica
    }

    #[tokio::test]
    async fn a_session_listens_here_until_its_last_stream_here_ends() {
        for db in backends().await {
            let shared = SharedSessions::new(db.open().await, Duration::from_secs(60));
            shared.store.insert_mcp_session("s", "{}").await.unwrap();
            shared.streams_here("s", "a").await;
            let primary = shared.listening("s", "a", axum::body::Body::empty());
            // A second GET while the first is open: rmcp gives it an idle "shadow" stream.
            let shadow = shared.listening("s", "a", axum::body::Body::empty());
            drop(shadow);
            // What is tested is that nothing happens: time for a clear to land, were one sent.
            tokio::time::sleep(Duration::from_millis(500)).await;
            assert_eq!(
                listens_on(&shared).await.as_deref(),
                Some("a"),
                "{}",
                db.url()
            );
            drop(primary);
            let mut left = 100;
            while listens_on(&shared).await.is_some() {
                left -= 1;
                assert!(
                    left > 0,
                    "{}: still listening after its last stream",
                    db.url()
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}
