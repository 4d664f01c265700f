//! Where a server's notifications go, one at a time in the order they came: list changes to the
//! supervisor (which re-syncs, then tells every agent), `resources/updated` to the agents
//! subscribed to that URI, progress to the caller, log messages and the rest to the owner (on a
//! `per_agent` server's session, to the agent whose session it is, and to no one else).

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;

use super::calls::{CallOrigin, Calls};
use super::handler::Context;
use crate::a2e::{Message, NotificationMethod, ServerPush};

/// Progress of the call `origin` made, to it.
pub async fn progress(server_id: &str, origin: &CallOrigin, params: Value) {
    let push = ServerPush {
        server_id: server_id.to_owned(),
        method: NotificationMethod::Progress.as_str().to_owned(),
        params,
        ..Default::default()
    };
    origin.progress(push).await;
}

/// How long a `resources/updated` waits for the store to tell its subscribers (a database
/// restarting), and how often it asks meanwhile: the update goes out once the store answers, in
/// order, instead of being dropped while the call that caused it was answered.
const SUBSCRIBERS_WAIT: (std::time::Duration, std::time::Duration) = (
    std::time::Duration::from_secs(60),
    std::time::Duration::from_millis(250),
);

/// The agents subscribed to `uri` on the server, asking the store again while it fails, up to
/// [`SUBSCRIBERS_WAIT`].
async fn subscribers(ctx: &Context, uri: &str) -> Result<Vec<String>, crate::store::StoreError> {
    let (most, every) = SUBSCRIBERS_WAIT;
    let started = std::time::Instant::now();
    loop {
        match ctx.store.subscribers(&ctx.server_id, uri).await {
            Err(error) if started.elapsed() < most => {
                tracing::debug!(%error, "cannot read the subscribers of {uri} yet");
                tokio::time::sleep(every).await;
            }
            read => return read,
        }
    }
}

pub async fn pump(ctx: Context, calls: Arc<Calls>, mut notifications: UnboundedReceiver<Value>) {
    while let Some(notification) = notifications.recv().await {
        let method = notification
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let params = notification
            .get("params")
            .cloned()
            .unwrap_or_else(|| json!({}));
        let push = |req_id: Option<String>| ServerPush {
            server_id: ctx.server_id.clone(),
            method: method.clone(),
            params: params.clone(),
            req_id,
            ..Default::default()
        };
        match NotificationMethod::parse(&method) {
            Some(list) if list.is_list_changed() => drop(ctx.events.send(list)),
            // rmcp itself acts on a cancellation.
            Some(NotificationMethod::Cancelled) => {}
            Some(NotificationMethod::ResourcesUpdated) => {
                let uri = params
                    .get("uri")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if ctx.private {
                    // One agent's session: another agent following the same URI follows it on
                    // its own session, with its own grant, and is told from there.
                    ctx.hub.to_mcp_clients_of(
                        &ctx.server_id,
                        vec![ctx.owner.clone()],
                        &method,
                        params.clone(),
                    );
                } else {
                    ctx.hub
                        .to_mcp_clients(&ctx.server_id, &method, params.clone());
                }
                match subscribers(&ctx, uri).await {
                    Ok(agents) => {
                        for agent in agents
                            .into_iter()
                            .filter(|agent| !ctx.private || *agent == ctx.owner)
                        {
                            ctx.hub.publish(&agent, ServerPush::TYPE, &push(None));
                        }
                    }
                    Err(error) => tracing::error!(%error, "cannot read the subscribers of {uri}"),
                }
            }
            Some(NotificationMethod::Progress) => {
                let Some(origin) = params.get("progressToken").and_then(|t| calls.by_token(t))
                else {
                    tracing::debug!(server_id = %ctx.server_id, "progress for no call in flight");
                    continue;
                };
                progress(&ctx.server_id, &origin, params).await;
            }
            Some(NotificationMethod::Message) => {
                // A server's log is its owner's, and the caller's when it came during the only
                // call in flight (it may be that call's): never every session's.
                let mut agents = vec![ctx.owner.clone()];
                agents.extend(calls.sole().map(|origin| origin.agent_id().to_owned()));
                ctx.hub
                    .to_mcp_clients_of(&ctx.server_id, agents, &method, params.clone());
                ctx.hub.publish(&ctx.owner, ServerPush::TYPE, &push(None));
            }
            _ => ctx.hub.publish(&ctx.owner, ServerPush::TYPE, &push(None)),
        }
    }
}
