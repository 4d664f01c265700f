//! Across replicas: a request forwarded to the replica holding its server that survives that
//! replica's death. While the answer is awaited, the holder's presence on the bus is watched;
//! when it lapses and the holder does not answer a probe either (or the bus says nobody listens
//! for it), a request that is safe to repeat (reads, prompts, completions) waits for the
//! server's next holder (bounded by the request's own timeout) and is sent again there, or run
//! here when this replica took the server over.
//! A tool call that was delivered may have run: it is never sent twice, and fails at once with
//! the retryable `mcp_server_unavailable`; one that was never delivered (nobody listened, or
//! the replica reached no longer held the server) goes to the next holder.

use std::time::{Duration, Instant};

use futures::future::BoxFuture;

use super::{Error, Registry, ServerEntry};
use crate::a2e::{ErrorCode, McpServerStatus};
use crate::hub::bus::Request;

/// What the answer of a replica that does not hold the server says (`replicas::not_held`): the
/// request was not run there, and may go to the server's current holder.
pub(super) const NOT_HELD: &str = "is not held by the replica this request reached";

/// How often a relayed request looks whether its holder is still there.
const WATCH_EVERY: Duration = Duration::from_millis(100);
/// How long a holder whose presence lapsed has to answer a probe before it counts as gone.
const PROBE_BOUND: Duration = Duration::from_secs(2);

/// How a relayed request ended.
pub(super) enum Relayed<T> {
    /// Answered (or failed) by a holder elsewhere.
    Done(Result<T, Error>),
    /// This replica holds the server now: run the request here.
    HereNow,
}

/// Whether a request may be sent again after its holder died with it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Repeat {
    /// Reads, prompts, completions: running twice changes nothing.
    Safe,
    /// A tool call: sent again only when it was never delivered.
    Undelivered,
}

impl Registry {
    /// Across replicas, while the server changes hands (nobody holds it since its holder died,
    /// or its new holder is making its first connection), waits until it is ready there (this
    /// replica or another), within the server's timeout and two leases, so that a request made
    /// meanwhile goes there rather than failing. Otherwise, and once an attempt fails, it
    /// returns at once.
    pub(super) async fn settle(&self, entry: &ServerEntry) {
        let Some(cluster) = self.cluster() else {
            return;
        };
        let changing_hands = || {
            let state = entry.state();
            !entry.reachable()
                && (entry.orphaned()
                    || (state.status == McpServerStatus::Connecting && state.error.is_empty()))
        };
        if !changing_hands() {
            return;
        }
        let within = Duration::from_secs(entry.config().timeout).min(2 * cluster.lease);
        let deadline = Instant::now() + within;
        while Instant::now() < deadline && changing_hands() {
            tokio::time::sleep(WATCH_EVERY).await;
        }
    }

    /// Forwards `request` to `holder`, the replica holding `entry`'s server, and survives its
    /// death as `repeat` allows, within `within` (the request's own timeout) overall.
    pub(super) async fn relay<'a, T>(
        &self,
        entry: &ServerEntry,
        mut holder: String,
        within: Duration,
        repeat: Repeat,
        attempt: impl Fn(String, Duration) -> BoxFuture<'a, Result<T, Error>>,
    ) -> Relayed<T> {
        let started = Instant::now();
        loop {
            let left = within.saturating_sub(started.elapsed());
            let answer = tokio::select! {
                answer = attempt(holder.clone(), left) => answer.map_err(undelivered),
                () = self.gone(&holder) => Err(Gone::WhileWaiting),
            };
            let refused = match answer {
                Ok(answer) => return Relayed::Done(Ok(answer)),
                Err(Gone::Failed(error)) => return Relayed::Done(Err(error)),
                Err(Gone::WhileWaiting) if repeat == Repeat::Undelivered => {
                    return Relayed::Done(Err(died_with_call(&entry.id, &holder)));
                }
                Err(Gone::Refused) => true,
                Err(Gone::WhileWaiting | Gone::Undelivered) => false,
            };
            tracing::info!(server_id = %entry.id, %holder, "the replica holding the server is gone; waiting for the next");
            match self
                .next_holder(entry, &holder, refused, started + within)
                .await
            {
                Some(Some(next)) => holder = next,
                Some(None) => return Relayed::HereNow,
                None => return Relayed::Done(Err(Error::Unavailable(entry.id.clone()))),
            }
        }
    }

    /// Forwards `op`, which is safe to repeat (a read, prompt or completion), to `holder` within
    /// the server's own timeout, surviving the holder's death as [`relay`](Self::relay) does.
    pub(super) async fn relay_safe<T: serde::de::DeserializeOwned>(
        &self,
        entry: &ServerEntry,
        holder: String,
        op: Request,
    ) -> Relayed<T> {
        let timeout = Duration::from_secs(entry.config().timeout);
        self.relay_within(entry, holder, timeout, op).await
    }

    /// [`relay_safe`](Self::relay_safe) within `timeout` (a listing's own bound).
    pub(super) async fn relay_within<T: serde::de::DeserializeOwned>(
        &self,
        entry: &ServerEntry,
        holder: String,
        timeout: Duration,
        op: Request,
    ) -> Relayed<T> {
        let attempt = |holder: String, left: Duration| -> BoxFuture<'_, _> {
            let op = op.clone();
            Box::pin(async move { self.forward(&holder, op, left).await })
        };
        self.relay(entry, holder, timeout, Repeat::Safe, attempt)
            .await
    }

    /// Resolves once `holder` is gone: its presence on the bus lapsed, and asked directly it
    /// did not answer (nobody listens for it on NATS, or no answer within [`PROBE_BOUND`]). A
    /// lapsed presence alone is not enough: a replica busy for a few seconds (a loaded
    /// machine) would have its calls failed while they run.
    async fn gone(&self, holder: &str) {
        let Some(cluster) = self.cluster() else {
            return std::future::pending().await;
        };
        loop {
            tokio::time::sleep(WATCH_EVERY).await;
            if cluster.bus.others().iter().any(|r| r == holder) {
                continue;
            }
            if cluster.bus.probe(holder, PROBE_BOUND).await != Some(true) {
                return;
            }
            // Alive: its presence is awaited again before the next probe.
            tokio::time::sleep(PROBE_BOUND).await;
        }
    }

    /// The server's next holder other than `dead` once it is ready there (`Some(None)` when it
    /// is this replica), before `deadline`. When `dead` `refused` the request (it does not hold
    /// the server) and this replica's view still names it after a lease (the view is read again
    /// from the store every third of a lease), none: the request fails now, retryable, rather
    /// than at its deadline.
    async fn next_holder(
        &self,
        entry: &ServerEntry,
        dead: &str,
        refused: bool,
        deadline: Instant,
    ) -> Option<Option<String>> {
        let cluster = self.cluster()?;
        let since = Instant::now();
        while Instant::now() < deadline {
            let named = entry.held_elsewhere();
            if gives_up(
                refused,
                named.as_deref(),
                dead,
                since.elapsed(),
                cluster.lease,
            ) {
                return None;
            }
            if entry.held_here() && entry.connection().is_some() {
                return Some(None);
            }
            if let Some(next) = entry.held_elsewhere()
                && next != dead
                && entry.reachable()
                && cluster.bus.others().contains(&next)
            {
                return Some(Some(next));
            }
            tokio::time::sleep(WATCH_EVERY).await;
        }
        None
    }
}

/// Whether a request refused by `dead` stops waiting for the next holder: this replica's view
/// still names `dead` (`named`) a lease after the refusal, so it is not a view behind the store.
fn gives_up(
    refused: bool,
    named: Option<&str>,
    dead: &str,
    waited: Duration,
    lease: Duration,
) -> bool {
    refused && named == Some(dead) && waited >= lease
}

/// An attempt's error: "no responders" means nobody listens for the holder on the bus, and
/// "not held" that the replica no longer holds the server (another took it over since this one
/// last looked); either way the request did not run there.
fn undelivered(error: Error) -> Gone {
    match &error {
        Error::Remote(ErrorCode::McpServerUnavailable, message) if message.contains(NOT_HELD) => {
            Gone::Refused
        }
        Error::Remote(ErrorCode::McpServerUnavailable, message)
            if message.contains("no responders") =>
        {
            Gone::Undelivered
        }
        _ => Gone::Failed(error),
    }
}

/// Why a relayed request has no answer.
enum Gone {
    /// The holder went away while the answer was awaited.
    WhileWaiting,
    /// The holder was gone before the request reached it.
    Undelivered,
    /// The replica the request reached does not hold the server (the request did not run).
    Refused,
    /// The holder answered with this error.
    Failed(Error),
}

/// The error of a tool call whose holder died after it was sent: it may or may not have run.
fn died_with_call(server_id: &str, holder: &str) -> Error {
    Error::Remote(
        ErrorCode::McpServerUnavailable,
        format!(
            "replica \"{holder}\" holding server \"{server_id}\" went away during the call; it may \
             or may not have run: try again once another replica holds the server"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hub::bus::RemoteError;

    /// What an error answered by another replica is once back here (`Peer::request`, then
    /// `Registry::forward`).
    fn over_the_bus(error: Error) -> Error {
        let remote = RemoteError::new(error.code(), error.to_string());
        Error::Remote(remote.code, remote.message)
    }

    #[test]
    fn a_request_refused_by_a_replica_not_holding_its_server_was_not_delivered() {
        let refused = over_the_bus(crate::registry::replicas::not_held("fs"));
        assert!(matches!(undelivered(refused), Gone::Refused));
        // A holder that holds the server but cannot reach it answered: that is its answer.
        let down = over_the_bus(Error::Unavailable("fs".into()));
        assert!(matches!(undelivered(down), Gone::Failed(_)));
    }

    #[test]
    fn a_refused_request_stops_waiting_once_the_view_still_names_the_refuser_after_a_lease() {
        let lease = Duration::from_secs(10);
        let (soon, later) = (Duration::from_secs(1), Duration::from_secs(10));
        // A view behind the store, a moment after the refusal: wait for it to catch up.
        assert!(!gives_up(true, Some("b"), "b", soon, lease));
        // Still naming the refuser a lease later: fail now, not at the request's deadline.
        assert!(gives_up(true, Some("b"), "b", later, lease));
        // Another holder named, or none yet: wait for it as before.
        assert!(!gives_up(true, Some("c"), "b", later, lease));
        assert!(!gives_up(true, None, "b", later, lease));
        // A holder that died (not a refusal) is waited for until the deadline, as before.
        assert!(!gives_up(false, Some("b"), "b", later, lease));
    }
}
