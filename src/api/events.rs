//! `GET /v1/events`: the agent's event stream (SSE). `event:` is the A2E type, `data:` the
//! message, `id:` the event id; `Last-Event-ID` replays what the buffer still holds, and a
//! reconnect past the buffer first gets `bridge/events_lost`.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::Extension;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use serde::Serialize;
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;
use tokio::time::{Instant, Interval, MissedTickBehavior};
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
) -> Response {
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
    let every = Duration::from_secs(state.config.keepalive_secs);
    let feed = Feed {
        lost_after: opened.lost_after,
        replay: opened.replay.into(),
        last_sent: opened.position,
        live: opened.live,
        keep_alive: keep_alive(every),
        agent: agent.id.clone(),
        stream,
    };
    let frames = futures::stream::unfold(feed, Feed::next);
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(frames),
    )
        .into_response()
}

/// A keep-alive comment every `every` (the first one `every` after the stream opens), so that
/// proxies keep the connection and a client gone away is noticed. It ticks whether or not events
/// went out meanwhile: moving its deadline at every event cost each stream a clock read and a
/// timer update per event, for a comment a busy stream can well afford.
fn keep_alive(every: Duration) -> Interval {
    let mut ticks = tokio::time::interval_at(Instant::now() + every, every);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    ticks
}

/// The state of one open stream.
struct Feed {
    lost_after: Option<u64>,
    replay: VecDeque<Arc<Event>>,
    /// The id of the last event this stream sent (or skipped past when it opened).
    last_sent: u64,
    /// Ends (closed) when the service stops.
    live: tokio::sync::broadcast::Receiver<Arc<Event>>,
    keep_alive: Interval,
    agent: String,
    /// Keeps the agent counted as connected while the stream is open.
    stream: hub::Stream,
}

/// What a stream sends next.
#[derive(Debug)]
enum Item {
    Event(Arc<Event>),
    /// The events after this id are no longer in the replay buffer.
    Lost(u64),
    KeepAlive,
}

impl Feed {
    async fn next(mut self) -> Option<(Result<Bytes, Infallible>, Self)> {
        let sent = match self.next_item().await? {
            Item::Event(event) => frame(&event),
            Item::Lost(after) => events_lost(after),
            Item::KeepAlive => Bytes::from_static(KEEP_ALIVE),
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
                biased;
                event = self.live.recv() => event,
                _ = self.keep_alive.tick() => return Some(Item::KeepAlive),
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
                    tracing::debug!(missed, agent = %self.agent, "an event stream fell behind; catching up");
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

/// A keep-alive: an SSE comment, which clients skip.
const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

/// `event` as one SSE frame: `id:`, `event:` (the A2E type) and `data:` (the message), built in
/// one buffer of the exact size: one allocation and one copy of the data a stream and event.
fn frame(event: &Event) -> Bytes {
    let mut id = itoa::Buffer::new();
    let id = id.format(event.id);
    sse_frame(Some(id), event.kind.as_str(), &event.data)
}

/// An SSE frame of these fields. `data` is a JSON text, which has no line breaks; one that had
/// would go out as several `data:` lines (each break kept), as the SSE format wants.
fn sse_frame(id: Option<&str>, kind: &str, data: &str) -> Bytes {
    let data = data.as_bytes();
    let breaks = memchr::memchr2_iter(b'\n', b'\r', data).count();
    // `id: ` and `\n`, `event: ` and `\n`, `data: ` once and again after each break, the end.
    let size = id.map_or(0, |id| 5 + id.len()) + 8 + kind.len() + 6 * (1 + breaks) + data.len() + 2;
    let mut out = Vec::with_capacity(size);
    if let Some(id) = id {
        out.extend_from_slice(b"id: ");
        out.extend_from_slice(id.as_bytes());
        out.push(b'\n');
    }
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\ndata: ");
    let mut from = 0;
    for at in memchr::memchr2_iter(b'\n', b'\r', data) {
        out.extend_from_slice(&data[from..=at]);
        out.extend_from_slice(b"data: ");
        from = at + 1;
    }
    out.extend_from_slice(&data[from..]);
    out.extend_from_slice(b"\n\n");
    // Exact, so that the buffer becomes `Bytes` without another allocation.
    debug_assert_eq!(out.len(), size);
    Bytes::from(out)
}

fn notice(params: serde_json::Value) -> Bytes {
    let push = ServerPush {
        method: NotificationMethod::EventsLost.as_str().into(),
        params,
        ..Default::default()
    };
    let data = serde_json::to_string(&push).unwrap_or_default();
    sse_frame(None, ServerPush::TYPE, &data)
}

fn events_lost(after: u64) -> Bytes {
    notice(json!({
        "last_event_id": after.to_string(),
        "reason": "the events after this id are no longer in the replay buffer"
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::response::sse::{Event as SseEvent, Sse};
    use http_body_util::BodyExt;
    use tokio_util::sync::CancellationToken;

    /// What axum's `Sse` sends for `event`, the format the stream kept when it began writing its
    /// frames itself.
    async fn axum_frame(event: SseEvent) -> Bytes {
        let events = futures::stream::iter([Ok::<_, Infallible>(event)]);
        let body = Sse::new(events).into_response().into_body();
        body.collect().await.unwrap().to_bytes()
    }

    #[tokio::test]
    async fn a_frame_is_what_axum_would_send() {
        for data in [r#"{"a":1}"#, "two\nlines", "cr\rand\r\nboth\n"] {
            let event = Event {
                id: 1_796_529_445_532_205,
                kind: "mcp/server/push".into(),
                data: data.into(),
            };
            let axum = SseEvent::default()
                .id(event.id.to_string())
                .event("mcp/server/push")
                .data(data);
            assert_eq!(frame(&event), axum_frame(axum).await, "{data:?}");
        }
        let lost = SseEvent::default().event(ServerPush::TYPE).data("{}");
        assert_eq!(
            sse_frame(None, ServerPush::TYPE, "{}"),
            axum_frame(lost).await
        );
        let comment = SseEvent::default().comment("keep-alive");
        assert_eq!(Bytes::from_static(KEEP_ALIVE), axum_frame(comment).await);
    }

    #[tokio::test]
    async fn streams_end_when_the_service_stops_and_one_opened_after_ends_at_once() {
        let stop = CancellationToken::new();
        let hub = hub::Hub::new(100, stop.clone());
        let mut open = feed(&hub, "carol").await;
        stop.cancel();
        let ended = tokio::time::timeout(Duration::from_secs(5), open.next_item()).await;
        assert!(matches!(ended, Ok(None)), "{ended:?}");
        let mut late = feed(&hub, "dave").await;
        let ended = tokio::time::timeout(Duration::from_secs(5), late.next_item()).await;
        assert!(matches!(ended, Ok(None)), "{ended:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn an_idle_stream_sends_a_keep_alive_every_interval() {
        let hub = hub::Hub::new(100, CancellationToken::new());
        let mut feed = feed(&hub, "erin").await;
        feed.keep_alive = keep_alive(Duration::from_secs(15));
        let started = Instant::now();
        assert!(matches!(feed.next_item().await, Some(Item::KeepAlive)));
        assert_eq!(started.elapsed(), Duration::from_secs(15));
        hub.publish("erin", "mcp/server/push", &json!({}));
        assert!(matches!(feed.next_item().await, Some(Item::Event(_))));
        assert!(matches!(feed.next_item().await, Some(Item::KeepAlive)));
        assert_eq!(started.elapsed(), Duration::from_secs(30));
    }

    async fn feed(hub: &Arc<hub::Hub>, agent: &str) -> Feed {
        let mut stream = hub.open(agent, None).await;
        let opened = stream.take();
        Feed {
            lost_after: opened.lost_after,
            replay: opened.replay.into(),
            last_sent: opened.position,
            live: opened.live,
            keep_alive: keep_alive(Duration::from_secs(3600)),
            agent: agent.to_owned(),
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
