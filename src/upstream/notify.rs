//! Where a server's notifications go, one at a time in the order they came: list changes to the
//! supervisor (which re-syncs, then tells every agent), `resources/updated` to the agents
//! subscribed to that URI, progress to the caller, log messages and the rest to the owner (on a
//! `per_agent` server's session, to the agent whose session it is, and to no one else).
//!
//! A call's answer waits for this pump: once it has its answer, the call hands the pump a
//! [`Note::Flush`] and keeps itself known until the pump reaches it, so the notifications the
//! server sent before the answer (which the transport queued here before it handed the answer
//! on) have gone to the call's recipient before the answer does, not after the call has ended,
//! when they would go to no one.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use rmcp::model::{ConstString, SubscriptionsAcknowledgedNotificationMethod};
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::sync::oneshot;
use tracing::Span;

use super::calls::{CallOrigin, Calls};
use super::handler::Context;
use crate::a2e::{Message, NotificationMethod, ServerPush};
use crate::hub::{LogTaken, Logged};
use crate::naming;

/// What the pump is handed, in the order the server sent it.
#[derive(Debug)]
pub enum Note {
    /// A notification of the server's, as JSON (`method`, `params`).
    Notified(Value),
    /// Answered once everything handed before it has gone where it goes, with what resolves
    /// once the events it made are in the replicas' log ([`crate::hub::Hub::logged`]).
    Flush(oneshot::Sender<Logged>),
}

/// Progress of the call `origin` made, to it.
/// With `span` (the call's, when spans are exported), the progress carries its trace in
/// `_meta`, as every event of a call does.
pub async fn progress(server_id: &str, origin: &CallOrigin, params: Value, span: Option<&Span>) {
    let mut params = params;
    if let Some(span) = span {
        super::traced::put_trace(span, &mut params);
    }
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
/// order, instead of being dropped while the call that caused it was answered. The wait counts
/// from when the store was first found away by this pump, so a long outage stalls the server's
/// other notifications (progress, list changes) once, not for each update.
const SUBSCRIBERS_WAIT: (Duration, Duration) =
    (Duration::from_secs(60), Duration::from_millis(250));

/// Reads with `read`, asking again every `every` while it fails, until `most` after `away` (when
/// this pump first found the store away; set here on a failure, cleared on a success). Once past
/// `most`, one failed read returns at once until a read succeeds.
async fn retried<T, E: std::fmt::Display, F: Future<Output = Result<T, E>>>(
    away: &mut Option<Instant>,
    (most, every): (Duration, Duration),
    mut read: impl FnMut() -> F,
) -> Result<T, E> {
    loop {
        match read().await {
            Ok(value) => {
                *away = None;
                return Ok(value);
            }
            Err(error) if away.get_or_insert_with(Instant::now).elapsed() < most => {
                tracing::debug!(%error, "cannot read from the store yet");
                tokio::time::sleep(every).await;
            }
            Err(error) => return Err(error),
        }
    }
}

/// Where a 2026-07-28 server names the listen a notification came on.
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// `params` without the id of the bridge's listen (and without a `_meta` left empty): it names
/// the bridge's own request upstream, nothing an agent could use.
fn without_subscription_id(params: &mut Value) {
    let Some(meta) = params.get_mut("_meta").and_then(Value::as_object_mut) else {
        return;
    };
    meta.remove(SUBSCRIPTION_ID);
    if meta.is_empty()
        && let Some(params) = params.as_object_mut()
    {
        params.remove("_meta");
    }
}

pub async fn pump(ctx: Context, calls: Arc<Calls>, mut notes: UnboundedReceiver<Note>) {
    // Since when the store has failed to say who is subscribed (none: it answered last).
    let mut away = None;
    while let Some(note) = notes.recv().await {
        let notification = match note {
            Note::Notified(notification) => notification,
            Note::Flush(flushed) => {
                let _ = flushed.send(ctx.hub.logged());
                continue;
            }
        };
        let method = notification
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if method == <SubscriptionsAcknowledgedNotificationMethod as ConstString>::VALUE {
            // The server's answer to the bridge's own listen (`listen.rs`): no one else's news.
            continue;
        }
        let mut params = notification
            .get("params")
            .cloned()
            .unwrap_or_else(|| json!({}));
        without_subscription_id(&mut params);
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
                let read = || ctx.store.subscribers(&ctx.server_id, uri);
                match retried(&mut away, SUBSCRIBERS_WAIT, read).await {
                    Ok(agents) => {
                        // The URI as agents subscribed to it: a `ui://` one is shown qualified.
                        let mut update = push(None);
                        if let Some(shown) = naming::qualify_ui(&ctx.server_id, uri) {
                            update.params["uri"] = Value::String(shown);
                        }
                        // Serialised once, one copy shared by every subscriber's channel.
                        let agents = agents
                            .iter()
                            .filter(|agent| !ctx.private || **agent == ctx.owner)
                            .map(String::as_str);
                        ctx.hub.publish_to(agents, ServerPush::TYPE, &update);
                    }
                    Err(error) => tracing::error!(%error, "cannot read the subscribers of {uri}"),
                }
            }
            Some(NotificationMethod::Progress) => {
                let Some((origin, span)) =
                    params.get("progressToken").and_then(|t| calls.by_token(t))
                else {
                    tracing::debug!(server_id = %ctx.server_id, "progress for no call in flight");
                    continue;
                };
                progress(&ctx.server_id, &origin, params, span.as_ref()).await;
            }
            Some(NotificationMethod::Message) => {
                // A server's log is its owner's, and the caller's when it came during the only
                // call in flight (it may be that call's): never every session's.
                // The caller's own session has it on its call's stream, before the result.
                let sole = calls.sole();
                let mut agents = vec![ctx.owner.clone()];
                let logged = match &sole {
                    Some(origin) => origin.log(&push(None)).await,
                    None => LogTaken::Not,
                };
                if logged != LogTaken::Stateless {
                    agents.extend(sole.as_ref().map(|origin| origin.agent_id().to_owned()));
                }
                match logged {
                    LogTaken::Session(session) => ctx.hub.to_mcp_clients_but(
                        &ctx.server_id,
                        agents,
                        session,
                        &method,
                        params.clone(),
                    ),
                    LogTaken::Not | LogTaken::Stateless => {
                        ctx.hub
                            .to_mcp_clients_of(&ctx.server_id, agents, &method, params.clone())
                    }
                }
                ctx.hub.publish(&ctx.owner, ServerPush::TYPE, &push(None));
            }
            _ => ctx.hub.publish(&ctx.owner, ServerPush::TYPE, &push(None)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listen_id_is_taken_out_of_what_agents_get() {
        let mut params = json!({"uri": "a://b", "_meta": {SUBSCRIPTION_ID: 7}});
        without_subscription_id(&mut params);
        assert_eq!(params, json!({"uri": "a://b"}));
        let mut params = json!({"uri": "a://b", "_meta": {SUBSCRIPTION_ID: 7, "other": 1}});
        without_subscription_id(&mut params);
        assert_eq!(params, json!({"uri": "a://b", "_meta": {"other": 1}}));
        let mut params = json!({"uri": "a://b"});
        without_subscription_id(&mut params);
        assert_eq!(params, json!({"uri": "a://b"}));
    }
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test]
    async fn a_store_away_past_the_wait_is_asked_once_per_read_until_it_answers() {
        const WAIT: (Duration, Duration) = (Duration::from_millis(300), Duration::from_millis(20));
        let reads = AtomicUsize::new(0);
        let answers = std::sync::atomic::AtomicBool::new(false);
        let read = || async {
            reads.fetch_add(1, Ordering::SeqCst);
            match answers.load(Ordering::SeqCst) {
                true => Ok(()),
                false => Err("store away"),
            }
        };
        let mut away = None;
        // The first read waits the whole time, asking again meanwhile.
        let started = Instant::now();
        assert!(retried(&mut away, WAIT, read).await.is_err());
        assert!(started.elapsed() >= WAIT.0);
        assert!(reads.load(Ordering::SeqCst) > 2);
        // Past the wait, the next reads ask once each and do not wait.
        for _ in 0..3 {
            reads.store(0, Ordering::SeqCst);
            let started = Instant::now();
            assert!(retried(&mut away, WAIT, read).await.is_err());
            // (One read each says it did not wait; the bound is loose for a loaded machine.)
            assert!(started.elapsed() < WAIT.0 / 2, "{:?}", started.elapsed());
            assert_eq!(reads.load(Ordering::SeqCst), 1);
        }
        // Once the store answers, a later outage gets the whole wait again.
        answers.store(true, Ordering::SeqCst);
        assert!(retried(&mut away, WAIT, read).await.is_ok());
        assert_eq!(away, None);
        answers.store(false, Ordering::SeqCst);
        let started = Instant::now();
        assert!(retried(&mut away, WAIT, read).await.is_err());
        assert!(started.elapsed() >= WAIT.0);
    }
}
