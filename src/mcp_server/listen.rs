//! `subscriptions/listen` on `/mcp` (2026-07-28 clients): rmcp acknowledges the stream, then
//! each URI it names is followed upstream through the registry, as a 2025 client's
//! `resources/subscribe` is, for as long as the stream stays open; the resource updates and list
//! changes the hub hands to `/mcp` clients go out on it, tagged with its subscription id.

use std::collections::HashMap;
use std::sync::Mutex;

use rmcp::ErrorData;
use rmcp::service::{SubscriptionContext, SubscriptionSendError, SubscriptionSink};
use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;

use super::{BridgeServer, caller};
use crate::a2e::NotificationMethod;
use crate::caller::Caller;
use crate::hub::McpNotice;

/// A URI a listen follows: its server and upstream URI.
type Followed = (String, String);

/// What the open listen streams follow on behalf of their agents, so a subscription they made
/// is ended with the last stream that wanted it, and one the agent had already (over REST or a
/// 2025 session) is left alone.
#[derive(Default)]
pub struct Listens {
    held: Mutex<HashMap<(String, String, String), Hold>>,
}

struct Hold {
    /// How many open streams of the agent follow it.
    streams: usize,
    /// Whether the first of them subscribed the agent (it was not subscribed before).
    owned: bool,
}

impl Listens {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String, String), Hold>> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Notes one more stream of `agent` following `uri` on `server_id`; `owned` says whether
    /// its subscription is the stream's own doing.
    fn hold(&self, agent: &str, server_id: &str, uri: &str, owned: bool) {
        let key = (agent.to_owned(), server_id.to_owned(), uri.to_owned());
        self.lock()
            .entry(key)
            .and_modify(|hold| hold.streams += 1)
            .or_insert(Hold { streams: 1, owned });
    }

    /// One stream fewer; whether the agent's subscription is to end now (the last stream that
    /// follows it went, and the streams made it).
    fn release(&self, agent: &str, server_id: &str, uri: &str) -> bool {
        let key = (agent.to_owned(), server_id.to_owned(), uri.to_owned());
        let mut held = self.lock();
        let Some(hold) = held.get_mut(&key) else {
            return false;
        };
        hold.streams -= 1;
        if hold.streams > 0 {
            return false;
        }
        held.remove(&key).is_some_and(|hold| hold.owned)
    }
}

impl BridgeServer {
    /// Runs one `subscriptions/listen` stream until the client goes or the service stops.
    pub(super) async fn run_listen(
        &self,
        subscription: SubscriptionContext,
    ) -> Result<(), ErrorData> {
        let agent = caller(subscription.request_context())?;
        // Notices from here on: none that an upstream sends once subscribed is missed.
        let mut notices = self.state.hub.mcp_client_notifications();
        let uris = subscription
            .accepted()
            .resource_subscriptions
            .clone()
            .unwrap_or_default();
        let follows = self.follow(&agent, &uris).await;
        // However the stream ends (its future may also be dropped), what it made is undone.
        let _unfollow = Unfollow {
            server: self.clone(),
            agent: agent.clone(),
            follows: follows.keys().cloned().collect(),
        };
        let sink = subscription.sink().clone();
        loop {
            let notice = tokio::select! {
                _ = subscription.cancelled() => break,
                next = notices.recv() => match next {
                    Ok(notice) => notice,
                    // Missed notices: the client lists again.
                    Err(RecvError::Lagged(_)) => McpNotice {
                        server_id: String::new(),
                        method: NotificationMethod::ToolsListChanged.as_str().to_owned(),
                        params: Value::Null,
                        agents: None,
                        except_session: None,
                    },
                    Err(RecvError::Closed) => break,
                },
            };
            if let Err(error) = deliver(&sink, &agent, &follows, &notice).await {
                tracing::debug!(%error, "an /mcp listen stream ended");
                break;
            }
        }
        Ok(())
    }

    /// Subscribes `agent` to each URI it may read (as `resources/subscribe` would), by its server
    /// and upstream URI, with the forms the client named it by. A URI it may not read, or one
    /// no server can follow, is left out: the stream brings no news of it, as of a URI that
    /// never changes.
    async fn follow(&self, agent: &Caller, uris: &[String]) -> HashMap<Followed, Vec<String>> {
        let mut follows: HashMap<Followed, Vec<String>> = HashMap::new();
        for uri in uris {
            let target = match self.resource_route(agent, uri).await {
                Ok(target) => target,
                Err(error) => {
                    tracing::debug!(agent = %agent.id, %uri, %error.message, "not followed on a listen stream");
                    continue;
                }
            };
            let known = follows.iter_mut().find(|((server_id, item), _)| {
                *item == target.item
                    && (target.server_id.is_empty() || *server_id == target.server_id)
            });
            if let Some((_, forms)) = known {
                forms.push(uri.clone());
                continue;
            }
            let before = self
                .state
                .store
                .subscription_servers(&agent.id, &target.item)
                .await
                .unwrap_or_default();
            let registry = &self.state.registry;
            match registry
                .subscribe(&agent.id, &target.server_id, &target.item)
                .await
            {
                Ok(server_id) => {
                    let owned = !before.contains(&server_id);
                    self.listens
                        .hold(&agent.id, &server_id, &target.item, owned);
                    follows.insert((server_id, target.item), vec![uri.clone()]);
                }
                Err(error) => {
                    tracing::debug!(agent = %agent.id, %uri, %error, "not followed on a listen stream")
                }
            }
        }
        follows
    }

    /// Ends the subscriptions a stream made once no other stream of its agent follows them.
    async fn unfollow(&self, agent: &Caller, follows: Vec<Followed>) {
        for (server_id, uri) in &follows {
            if !self.listens.release(&agent.id, server_id, uri) {
                continue;
            }
            let registry = &self.state.registry;
            if let Err(error) = registry.unsubscribe(&agent.id, server_id, uri).await {
                tracing::debug!(agent = %agent.id, %server_id, %uri, %error, "cannot end a listen stream's subscription");
            }
        }
    }
}

/// Ends a listen stream's subscriptions when it is dropped.
struct Unfollow {
    server: BridgeServer,
    agent: Caller,
    follows: Vec<Followed>,
}

impl Drop for Unfollow {
    fn drop(&mut self) {
        let follows = std::mem::take(&mut self.follows);
        if follows.is_empty() {
            return;
        }
        let (server, agent) = (self.server.clone(), self.agent.clone());
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                drop(runtime.spawn(async move { server.unfollow(&agent, follows).await }))
            }
            Err(_) => {
                tracing::warn!(agent = %agent.id, "a listen stream's subscriptions outlive it: no runtime to end them")
            }
        }
    }
}

/// Sends `notice` on a listen stream if it asked for it; an error when the stream is gone.
async fn deliver(
    sink: &SubscriptionSink,
    agent: &Caller,
    follows: &HashMap<Followed, Vec<String>>,
    notice: &McpNotice,
) -> Result<(), SubscriptionSendError> {
    if notice
        .agents
        .as_ref()
        .is_some_and(|agents| !agents.contains(&agent.id))
    {
        return Ok(());
    }
    let accepted = sink.accepted();
    let sent = match NotificationMethod::parse(&notice.method) {
        Some(NotificationMethod::ResourcesUpdated) => {
            let Some(uri) = notice.params.get("uri").and_then(Value::as_str) else {
                return Ok(());
            };
            let key = (notice.server_id.clone(), uri.to_owned());
            for form in follows.get(&key).into_iter().flatten() {
                sink.notify_resource_updated(form.clone()).await?;
            }
            Ok(())
        }
        Some(NotificationMethod::ToolsListChanged) if accepted.tools_list_changed == Some(true) => {
            sink.notify_tool_list_changed().await
        }
        Some(NotificationMethod::PromptsListChanged)
            if accepted.prompts_list_changed == Some(true) =>
        {
            sink.notify_prompt_list_changed().await
        }
        Some(NotificationMethod::ResourcesListChanged)
            if accepted.resources_list_changed == Some(true) =>
        {
            sink.notify_resource_list_changed().await
        }
        _ => Ok(()),
    };
    match sent {
        Err(SubscriptionSendError::NotificationNotAccepted(_)) => Ok(()),
        other => other,
    }
}
