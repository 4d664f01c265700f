//! 2025-11-25 sessions shared by replicas, so that any replica serves any request of a session
//! behind a load balancer that sticks to nothing. rmcp restores a session it does not have from
//! an external [`SessionStore`]: it loads the client's initialize parameters and replays the
//! handshake to a fresh session worker under the same id (`StreamableHttpService`'s
//! `try_restore_from_store`). This is that store, in the bridge's database (PostgreSQL when
//! replicas share it), with what else a session needs on every replica: the agent that opened
//! it (a session is its agent's alone, and the agent's cap counts its sessions on every
//! replica), and the URIs and log level it asked for (sent to it by the replica that holds its
//! GET stream). A session ended on one replica is ended on the others at their next request of
//! it, since its row is gone; one unused for [`IDLE`] is gone too, as rmcp forgets it.
//!
//! Chosen over forwarding each request to a session's home replica: nothing waits on a home
//! that may die (a `kill -9` loses only the calls in flight there), and no response stream
//! crosses the bus. One replica alone (no NATS) keeps every session in memory, as before.

use std::time::Duration;

use rmcp::transport::streamable_http_server::session::store::{
    SessionState, SessionStore, SessionStoreError,
};

use crate::store::{SessionInterests, SharedSession, Store};

/// How long a shared session lives unused: rmcp's own idle timeout for a session worker
/// (`SessionConfig::DEFAULT_KEEP_ALIVE`, 300 s), and a margin for replicas that mark it used
/// only every [`TOUCH_EVERY`].
pub const IDLE: Duration = Duration::from_secs(300 + 30);

/// How often a session in use is marked used in the store (at most).
pub const TOUCH_EVERY: Duration = Duration::from_secs(15);

/// The sessions in the store.
#[derive(Clone)]
pub struct SharedSessions {
    store: Store,
}

impl SharedSessions {
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// Session `id` while it lives; marked used when it was not lately.
    pub async fn get(&self, id: &str) -> Result<Option<SharedSession>, crate::store::StoreError> {
        let session = self.store.mcp_session(id, IDLE).await?;
        if let Some(session) = &session
            && session.idle_secs >= TOUCH_EVERY.as_secs_f64()
            && let Err(error) = self.store.touch_mcp_session(id).await
        {
            tracing::debug!(%error, "cannot mark an /mcp session used");
        }
        Ok(session)
    }

    /// Names the agent that opened session `id`.
    pub async fn opened(&self, id: &str, agent: &str) {
        if let Err(error) = self.store.set_mcp_session_agent(id, agent).await {
            tracing::warn!(%error, "cannot record the agent of an /mcp session");
        }
    }

    /// Names this replica as the one holding session `id`'s GET stream.
    pub async fn streams_here(&self, id: &str, replica: &str) {
        if let Err(error) = self.store.set_mcp_session_stream(id, replica).await {
            tracing::warn!(%error, "cannot record where an /mcp session listens");
        }
    }

    /// The replica other than `me` that holds session `id`'s GET stream, if another does.
    pub async fn stream_elsewhere(&self, id: &str, me: &str) -> Option<String> {
        let session = self.store.mcp_session(id, IDLE).await.ok()??;
        session.stream_replica.filter(|replica| replica != me)
    }

    /// How many live sessions `agent` has, on every replica.
    pub async fn count(&self, agent: &str) -> Result<usize, crate::store::StoreError> {
        self.store.count_mcp_sessions(agent, IDLE).await
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
        self.store.mcp_session_interests(IDLE).await
    }
}

#[async_trait::async_trait]
impl SessionStore for SharedSessions {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let Some(session) = self.store.mcp_session(session_id, IDLE).await? else {
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
