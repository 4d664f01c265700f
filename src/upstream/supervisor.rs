//! One supervisor task per registered server: it owns the connection, connects and reconnects
//! (exponential backoff with jitter when `auto_reconnect`), re-lists the catalogue when the server
//! says it changed, and closes the connection when the server is removed or the service stops.

use std::sync::Arc;
use std::time::Duration;

use rand::Rng;

use super::{Connection, UpstreamEvent};
use crate::a2e::McpServerStatus;
use crate::registry::{Control, Inbox, ServerEntry};
use crate::store::Store;

/// First delay before reconnecting; it doubles with each failure up to [`MAX_BACKOFF`].
const BASE_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// Bound on re-listing after a change notification.
const RELIST_TIMEOUT: Duration = Duration::from_secs(30);

/// How a connection's service ended.
enum Ended {
    Stop,
    Reconnect,
    Lost,
}

pub fn spawn(entry: Arc<ServerEntry>, inbox: Inbox, store: Store) {
    tokio::spawn(run(entry, inbox, store));
}

async fn run(entry: Arc<ServerEntry>, mut inbox: Inbox, store: Store) {
    let mut failures: u32 = 0;
    'supervise: loop {
        let conn = match entry.connection() {
            Some(conn) => conn,
            None => match connect(&entry, &store).await {
                Some(Ok(conn)) => conn,
                Some(Err(())) => {
                    failures += 1;
                    if !wait_before_retry(&entry, &mut inbox, failures).await {
                        break 'supervise;
                    }
                    continue;
                }
                None => break 'supervise,
            },
        };
        failures = 0;
        let ended = serve(&entry, &conn, &mut inbox).await;
        entry.detach();
        match ended {
            Ended::Stop => {
                conn.shutdown().await;
                break 'supervise;
            }
            Ended::Reconnect => conn.shutdown().await,
            Ended::Lost => {
                conn.shutdown().await;
                let tail = conn.stderr.as_ref().map(|t| t.render()).unwrap_or_default();
                tracing::warn!(server_id = %entry.id, "connection lost{tail}");
                entry.update_state(|s| {
                    s.status = McpServerStatus::Disconnected;
                    s.error = format!("the connection was lost{tail}");
                });
                failures += 1;
                if !wait_before_retry(&entry, &mut inbox, failures).await {
                    break 'supervise;
                }
            }
        }
    }
    if let Some(conn) = entry.detach() {
        conn.shutdown().await;
    }
    entry.update_state(|s| s.status = McpServerStatus::Disconnected);
    entry.stopped.cancel();
}

/// One connection attempt; `None` when asked to stop meanwhile. The server is ready once its
/// subscriptions are restored.
async fn connect(entry: &ServerEntry, store: &Store) -> Option<Result<Arc<Connection>, ()>> {
    entry.update_state(|s| s.status = McpServerStatus::Connecting);
    let config = entry.config();
    let attempt = tokio::select! {
        _ = entry.stop.cancelled() => return None,
        attempt = super::connect(&config, entry.upstream_context()) => attempt,
    };
    Some(match attempt {
        Ok(established) => {
            let conn = established.conn.clone();
            resubscribe(entry, &conn, store).await;
            entry.install(established);
            tracing::info!(server_id = %entry.id, "connected");
            Ok(conn)
        }
        Err(error) => {
            tracing::warn!(server_id = %entry.id, %error, "cannot connect");
            entry.update_state(|s| {
                s.status = McpServerStatus::Error;
                s.error = error.to_string();
                s.attempts += 1;
            });
            Err(())
        }
    })
}

/// Subscribes the new connection to every URI an agent follows on this server.
async fn resubscribe(entry: &ServerEntry, conn: &Connection, store: &Store) {
    let uris = match store.subscribed_uris(&entry.id).await {
        Ok(uris) => uris,
        Err(error) => {
            tracing::error!(server_id = %entry.id, %error, "cannot read the subscriptions to restore");
            return;
        }
    };
    let timeout = Duration::from_secs(entry.config().timeout);
    for uri in uris {
        match conn.subscribe(&uri, timeout).await {
            Ok(()) => tracing::debug!(server_id = %entry.id, %uri, "subscription restored"),
            Err(error) => {
                tracing::warn!(server_id = %entry.id, %uri, %error, "cannot restore a subscription")
            }
        }
    }
}

async fn serve(entry: &ServerEntry, conn: &Connection, inbox: &mut Inbox) -> Ended {
    loop {
        tokio::select! {
            _ = entry.stop.cancelled() => return Ended::Stop,
            _ = conn.lost() => return Ended::Lost,
            Some(Control::Reconnect) = inbox.control.recv() => return Ended::Reconnect,
            Some(event) = inbox.events.recv() => relist(entry, conn, event).await,
        }
    }
}

async fn relist(entry: &ServerEntry, conn: &Connection, event: UpstreamEvent) {
    let listed = tokio::time::timeout(RELIST_TIMEOUT, conn.list_all()).await;
    match listed {
        Ok(Ok(lists)) => {
            tracing::info!(server_id = %entry.id, ?event, "catalogue re-synced");
            entry.replace_lists(Some(lists));
            let method = match event {
                UpstreamEvent::ToolsChanged => "notifications/tools/list_changed",
                UpstreamEvent::ResourcesChanged => "notifications/resources/list_changed",
                UpstreamEvent::PromptsChanged => "notifications/prompts/list_changed",
            };
            entry.push_to_all(method, serde_json::json!({}));
        }
        Ok(Err(error)) => tracing::warn!(server_id = %entry.id, %error, "re-listing failed"),
        Err(_) => tracing::warn!(server_id = %entry.id, "re-listing timed out"),
    }
}

/// Waits before the next attempt: the backoff when `auto_reconnect`, else until asked to
/// reconnect. `false` when the server is being stopped.
async fn wait_before_retry(entry: &ServerEntry, inbox: &mut Inbox, failures: u32) -> bool {
    let auto = entry.config().auto_reconnect;
    let delay = backoff(failures);
    let sleep = tokio::time::sleep(delay);
    tokio::pin!(sleep);
    loop {
        tokio::select! {
            _ = entry.stop.cancelled() => return false,
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
fn backoff(failures: u32) -> Duration {
    let exp = BASE_BACKOFF.saturating_mul(1 << failures.saturating_sub(1).min(16));
    let capped = exp.min(MAX_BACKOFF);
    let jitter = rand::rng().random_range(0.75..1.25);
    capped.mul_f64(jitter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_is_bounded() {
        assert!(backoff(1) <= BASE_BACKOFF.mul_f64(1.25));
        assert!(backoff(3) >= BASE_BACKOFF.mul_f64(4.0 * 0.75));
        for failures in [10, 100, u32::MAX] {
            assert!(backoff(failures) <= MAX_BACKOFF.mul_f64(1.25));
        }
    }
}
