//! `GET /v1/events`: the agent's event stream (SSE). `event:` is the A2E type, `data:` the
//! message, `id:` the event id; `Last-Event-ID` replays what the buffer still holds, and a
//! reconnect past the buffer first gets `bridge/events_lost`.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Extension;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures::Stream as FuturesStream;
use serde::Serialize;
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::a2e::{
    ElicitRequest, Message, NotificationMethod, RootsListRequest, SamplingRequest, ServerPush,
};
use crate::caller::Caller;
use crate::http::state::AppState;
use crate::hub::{self, Event};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(events))
}

/// What an event's `data:` holds: one of these A2E messages, named by the event's `event:` and
/// by its own `type`.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
#[schema(discriminator(property_name = "type", mapping(
    ("mcp/server/push" = "#/components/schemas/ServerPush"),
    ("mcp/sample/req" = "#/components/schemas/SamplingRequest"),
    ("mcp/root/list/req" = "#/components/schemas/RootsListRequest"),
    ("mcp/elicit/req" = "#/components/schemas/ElicitRequest"),
)))]
#[allow(dead_code)] // Documents the stream; the messages are built where they happen.
enum StreamEvent {
    /// `mcp/server/push`: a forwarded notification, a status change (`bridge/server_status`) or
    /// `bridge/events_lost`.
    Push(ServerPush),
    /// `mcp/sample/req`: answer with `POST /v1/sampling/responses`.
    Sample(SamplingRequest),
    /// `mcp/root/list/req`: answer with `POST /v1/roots/responses`.
    Roots(RootsListRequest),
    /// `mcp/elicit/req`: answer with `POST /v1/elicitation/responses`.
    Elicit(ElicitRequest),
}

/// This agent's event stream: pushes from servers and the requests they make of it. Several
/// streams of one agent all get every event.
#[utoipa::path(get, path = "/v1/events", tag = "events", security(("bearer" = [])),
    params(("Last-Event-ID" = Option<String>, Header, description = "Resume after this event id")),
    responses((status = 200, description = "Server-sent events", content_type = "text/event-stream", body = StreamEvent)))]
async fn events(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    headers: HeaderMap,
) -> Sse<impl FuturesStream<Item = Result<SseEvent, Infallible>>> {
    let last_event_id = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    // Its roles, so that a call held for approval reaches it if its roles approve it.
    let roles = serde_json::to_string(&agent.roles).unwrap_or_default();
    if let Err(error) = state
        .store
        .note_agent_roles(&agent.id, &roles, crate::a2e::now())
        .await
    {
        tracing::warn!(%error, agent = %agent.id, "cannot note an agent's roles");
    }
    let mut stream = state.hub.open(&agent.id, last_event_id).await;
    let opened = stream.take();
    let feed = Feed {
        lost_after: opened.lost_after,
        replay: opened.replay.into(),
        last_sent: opened.position,
        live: opened.live,
        shutdown: state.hub.shutdown_token(),
        stream,
    };
    let keep_alive = KeepAlive::new()
        .interval(Duration::from_secs(state.config.keepalive_secs))
        .text("keep-alive");
    Sse::new(futures::stream::unfold(feed, Feed::next)).keep_alive(keep_alive)
}

/// The state of one open stream.
struct Feed {
    lost_after: Option<u64>,
    replay: VecDeque<Arc<Event>>,
    /// The id of the last event this stream sent (or skipped past when it opened).
    last_sent: u64,
    live: tokio::sync::broadcast::Receiver<Arc<Event>>,
    shutdown: CancellationToken,
    /// Keeps the agent counted as connected while the stream is open.
    stream: hub::Stream,
}

/// What a stream sends next.
#[derive(Debug)]
enum Item {
    Event(Arc<Event>),
    /// The events after this id are no longer in the replay buffer.
    Lost(u64),
}

impl Feed {
    async fn next(mut self) -> Option<(Result<SseEvent, Infallible>, Self)> {
        let sent = match self.next_item().await? {
            Item::Event(event) => sse(&event),
            Item::Lost(after) => events_lost(after),
        };
        Some((Ok(sent), self))
    }

    async fn next_item(&mut self) -> Option<Item> {
        loop {
            if let Some(after) = self.lost_after.take() {
                return Some(Item::Lost(after));
            }
            if let Some(event) = self.replay.pop_front() {
                self.last_sent = event.id;
                return Some(Item::Event(event));
            }
            let event = tokio::select! {
                _ = self.shutdown.cancelled() => return None,
                event = self.live.recv() => event,
            };
            match event {
                Ok(event) if event.id <= self.last_sent => continue,
                Ok(event) => {
                    self.last_sent = event.id;
                    return Some(Item::Event(event));
                }
                // This stream fell behind the live feed: it catches up from the replay buffer
                // (what is no longer there is reported as lost), then goes on live.
                Err(RecvError::Lagged(missed)) => {
                    tracing::debug!(missed, "an event stream fell behind; catching up");
                    let resumed = self.stream.resume(self.last_sent);
                    self.replay = resumed.replay.into();
                    self.lost_after = resumed.lost_after;
                    self.live = resumed.live;
                }
                Err(RecvError::Closed) => return None,
            }
        }
    }
}

fn sse(event: &Event) -> SseEvent {
    SseEvent::default()
        .id(event.id.to_string())
        .event(event.kind.as_str())
        .data(event.data.as_ref())
}

fn notice(params: serde_json::Value) -> SseEvent {
    let push = ServerPush {
        method: NotificationMethod::EventsLost.as_str().into(),
        params,
        ..Default::default()
    };
    SseEvent::default()
        .event(ServerPush::TYPE)
        .data(serde_json::to_string(&push).unwrap_or_default())
}

fn events_lost(after: u64) -> SseEvent {
    notice(json!({
        "last_event_id": after.to_string(),
        "reason": "the events after this id are no longer in the replay buffer"
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn feed(hub: &Arc<hub::Hub>, agent: &str) -> Feed {
        let mut stream = hub.open(agent, None).await;
        let opened = stream.take();
        Feed {
            lost_after: opened.lost_after,
            replay: opened.replay.into(),
            last_sent: opened.position,
            live: opened.live,
            shutdown: hub.shutdown_token(),
            stream,
        }
    }

    async fn ids(feed: &mut Feed, n: usize) -> Vec<u64> {
        let mut ids = Vec::new();
        for _ in 0..n {
            match feed.next_item().await {
                Some(Item::Event(event)) => ids.push(event.id),
                other => panic!("expected an event, got {other:?}"),
            }
        }
        ids
    }

    #[tokio::test]
    async fn a_stream_that_falls_behind_catches_up_from_the_replay_buffer() {
        let hub = hub::Hub::new(1000, CancellationToken::new());
        let mut feed = feed(&hub, "alice").await;
        // Far more than the live feed holds, in one burst the stream does not read.
        for i in 0..500 {
            hub.publish("alice", "mcp/server/push", &json!({ "n": i }));
        }
        let ids = ids(&mut feed, 500).await;
        assert!(
            ids.windows(2).all(|w| w[1] == w[0] + 1),
            "every event, in order, once"
        );
        hub.publish("alice", "mcp/server/push", &json!({ "n": 500 }));
        assert_eq!(
            self::ids(&mut feed, 1).await,
            [ids[499] + 1],
            "then live again"
        );
    }

    #[tokio::test]
    async fn a_stream_further_behind_than_the_buffer_is_told_what_was_lost() {
        let hub = hub::Hub::new(100, CancellationToken::new());
        let mut feed = feed(&hub, "bob").await;
        for i in 0..300 {
            hub.publish("bob", "mcp/server/push", &json!({ "n": i }));
        }
        let Some(Item::Lost(after)) = feed.next_item().await else {
            panic!("the stream is told events were lost");
        };
        let ids = ids(&mut feed, 100).await;
        assert!(ids[0] > after + 1, "the oldest events are gone");
        assert!(
            ids.windows(2).all(|w| w[1] == w[0] + 1),
            "the buffered 100 follow"
        );
    }
}
