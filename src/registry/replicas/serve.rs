//! Across replicas, the serving side: what other replicas forward here for a server this
//! replica holds, the forwarded calls running here (and their cancels), and announcements.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::not_held;
use crate::hub::bus::{Announcement, Listing, Peer, RemoteError, Request};
use crate::registry::{Error, Registry, ServerEntry};

/// How long a cancel that arrived before its call is kept for the call to find.
const EARLY_CANCEL_KEPT: Duration = Duration::from_secs(60);

/// The forwarded calls running here, each with the token that stops it. A `CancelCall` may
/// overtake its `CallTool` (each bus request is served in its own task): the cancel is then
/// kept, cancelled, for the call to find when it starts.
#[derive(Default)]
pub(super) struct ForwardedCalls {
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

impl Registry {
    /// A page of `entry`'s own listing from its connection here, as the replica protocol
    /// answers it (`[items, next_cursor]`).
    pub(super) async fn list_here(
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
                if let Some((server_id, _)) = crate::registry::naming::split(&name) {
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
                let _ = entry.control.send(crate::registry::Control::Reconnect);
                entry
                    .settled_after(since, bound + Duration::from_secs(1))
                    .await;
                Ok(Value::Null)
            }
        }
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

fn to_value<T: Serialize>(value: &T) -> Result<Value, Error> {
    serde_json::to_value(value).map_err(|e| Error::Internal(e.to_string()))
}
