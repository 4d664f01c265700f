//! A live connection to one MCP server: what it knows of the server, and how each request on it
//! is run (bounded, failing at once when the connection drops, its errors redacted).

use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{ClientRequest, ServerCapabilities};
use rmcp::service::{RunningService, ServiceError};
use tokio_util::sync::CancellationToken;

use super::calls::Calls;
use super::{BridgeClient, CallError, StderrTail, direct, http, listen, notify};
use crate::a2e::McpVersion;

/// How long a stopped connection may take to close its transport (and stop its child).
const CLOSE_GRACE: Duration = Duration::from_secs(10);

/// How long a call's answer waits for the notifications the server sent before it to be handed
/// on: they are handed on at once, unless the pump is waiting out a store outage for a
/// `resources/updated` (`notify.rs`), which does not hold an answer up for longer than this.
const DELIVERY_WAIT: Duration = Duration::from_secs(5);

/// A live connection to one MCP server.
pub struct Connection {
    pub(super) client: RunningService<RoleClient, BridgeClient>,
    /// Fired when the transport ends (the server went away) or is being closed.
    pub(super) lost: CancellationToken,
    /// Fired once the transport has closed (and a stdio child has exited).
    pub(super) closed: CancellationToken,
    pub stderr: Option<Arc<StderrTail>>,
    pub mcp_version: String,
    pub server_name: String,
    pub server_version: String,
    pub capabilities: ServerCapabilities,
    pub connected_at: f64,
    /// Resource URIs subscribed to upstream on this connection (by `resources/subscribe`).
    pub(super) subscribed: std::sync::Mutex<std::collections::HashSet<String>>,
    /// On 2026-07-28, the `subscriptions/listen` stream that carries the list changes and the
    /// resource URIs followed instead (`listen.rs`).
    pub(super) listen: Option<Arc<listen::Listen>>,
    /// The calls in flight, by request id and progress token.
    pub(super) calls: Arc<Calls>,
    /// The config's secret values, hidden in every error text a call makes.
    pub(super) secrets: Vec<String>,
    /// What the server last answered a 401 or 403 with (Streamable HTTP).
    pub(super) challenges: Option<Arc<http::Challenges>>,
    /// Whether the server runs MCP tasks, once asked (`tasks.rs`).
    pub(super) runs_tasks: tokio::sync::OnceCell<bool>,
    /// The tools the server offers to run as tasks, as its raw `tools/list` answers say
    /// (`decode.rs`; rmcp's `Tool` has no `execution`).
    pub(super) task_tools: Arc<super::decode::TaskTools>,
    /// How plain tool calls are posted on a Streamable HTTP connection in a session
    /// (`direct.rs`); None on the other transports, with OAuth (whose token rmcp's client
    /// refreshes as it posts) and on 2026-07-28, which has no session.
    pub(super) direct: Option<direct::Direct>,
    /// The pump of the server's notifications (those of a call's stream read in `direct.rs`).
    pub(super) notifications: tokio::sync::mpsc::WeakUnboundedSender<notify::Note>,
}

impl Connection {
    /// Resolves when the connection has been lost or is closing.
    pub async fn lost(&self) {
        self.lost.cancelled().await
    }

    /// The tool calls in flight on this connection (a server handed to another replica is
    /// closed once they have ended).
    pub fn calls_in_flight(&self) -> usize {
        self.calls.in_flight()
    }

    /// Whether the connection has been lost or is closing.
    pub fn is_lost(&self) -> bool {
        self.lost.is_cancelled()
    }

    /// `text` with the server's secrets hidden (for errors not made by a call).
    pub fn redact(&self, text: &str) -> String {
        crate::a2e::redact_text(text, &self.secrets)
    }

    /// Stops the connection and waits (bounded) until the transport has closed.
    pub async fn shutdown(&self) {
        self.client.cancellation_token().cancel();
        if tokio::time::timeout(CLOSE_GRACE, self.closed.cancelled())
            .await
            .is_err()
        {
            tracing::warn!("connection did not close within {CLOSE_GRACE:?}");
        }
    }

    /// Runs one request, failing at once if the connection drops meanwhile.
    pub(super) fn run<T>(
        &self,
        timeout: Duration,
        request: impl Future<Output = Result<T, ServiceError>>,
    ) -> impl Future<Output = Result<T, CallError>> {
        // Boxed before the future that awaits it is made: an rmcp request's future is some
        // 4 to 8 KB, and unboxed it would make every future that awaits an upstream that
        // large, copied whole at each move (each boxing layer of axum, each spawn).
        let request = Box::pin(request);
        self.run_boxed(timeout, request)
    }

    async fn run_boxed<T>(
        &self,
        timeout: Duration,
        request: std::pin::Pin<Box<impl Future<Output = Result<T, ServiceError>>>>,
    ) -> Result<T, CallError> {
        // The answer first: one that came in just before the connection ended still counts
        // (a WebSocket message over the limit fails every call, then ends the connection).
        tokio::select! {
            biased;
            result = tokio::time::timeout(timeout, request) => match result {
                Ok(Ok(result)) => Ok(result),
                Ok(Err(error)) => {
                    // Refused for its token (401 after a refresh) or its scope (403).
                    if let Some(challenge) = self.challenges.as_ref().and_then(|c| c.take()) {
                        return Err(CallError::AuthRequired(challenge));
                    }
                    Err(CallError::from_service(error, &self.lost).redacted(&self.secrets))
                }
                Err(_) => Err(CallError::Timeout(timeout)),
            },
            _ = self.lost.cancelled() => Err(CallError::Lost),
        }
    }

    /// A direct call (`direct.rs`), failing at once if the connection drops meanwhile, its
    /// errors as `run` makes them.
    pub(super) async fn watch<T>(
        &self,
        call: std::pin::Pin<Box<impl Future<Output = Option<Result<T, CallError>>>>>,
    ) -> Option<Result<T, CallError>> {
        let answered = tokio::select! {
            biased;
            answered = call => answered?,
            _ = self.lost.cancelled() => return Some(Err(CallError::Lost)),
        };
        Some(answered.map_err(
            |error| match self.challenges.as_ref().and_then(|c| c.take()) {
                Some(challenge) => CallError::AuthRequired(challenge),
                None => error.redacted(&self.secrets),
            },
        ))
    }

    /// Waits (at most [`DELIVERY_WAIT`]) until the pump has handed on every notification the
    /// server sent before now, and the replicas' log holds the events they made: a call calls
    /// it once it has its answer, while it is still known as in flight, so that its progress
    /// and log messages reach its caller before the answer.
    pub(super) async fn delivered(&self) {
        let Some(pump) = self.notifications.upgrade() else {
            return;
        };
        let (flush, flushed) = tokio::sync::oneshot::channel();
        if pump.send(notify::Note::Flush(flush)).is_err() {
            return;
        }
        drop(pump);
        // Then until the events they made are in the replicas' log: a replica killed once the
        // answer is out must not take an update the caller was told of with it.
        let delivered = async {
            if let Ok(logged) = flushed.await {
                logged.wait().await;
            }
        };
        if tokio::time::timeout(DELIVERY_WAIT, delivered)
            .await
            .is_err()
        {
            tracing::debug!("the server's notifications before an answer are still on their way");
        }
    }

    /// Checks the server answers: a ping (a cheap listing on 2026-07-28, which has no ping).
    /// A server that does not implement ping still answered, so that counts as alive.
    pub async fn ping(&self, timeout: Duration) -> Result<Duration, CallError> {
        let started = tokio::time::Instant::now();
        let answered = if self.mcp_version == McpVersion::V2026_07_28.as_str() {
            self.run(timeout, self.client.list_tools(None))
                .await
                .map(drop)
        } else {
            let ping = ClientRequest::PingRequest(Default::default());
            self.run(timeout, self.client.peer().send_request(ping))
                .await
                .map(drop)
        };
        match answered {
            Ok(()) | Err(CallError::Rejected { .. }) => Ok(started.elapsed()),
            Err(error) => Err(error),
        }
    }

    /// Tells the server the client's roots changed.
    pub async fn roots_changed(&self) {
        #[allow(deprecated)] // Roots are how 2025-11-25 servers learn the client's filesystem.
        let sent = self.client.notify_roots_list_changed().await;
        if let Err(error) = sent {
            tracing::warn!(%error, "cannot tell a server the roots changed");
        }
    }
}
