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
    ElicitRequest, ErrorBody, Message, RootsListRequest, SamplingRequest, ServerPush,
};
use crate::auth::Agent;
use crate::hub::{self, Event};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(events))
}

/// What an event's `data:` holds: one of these A2E messages, named by the event's `event:`.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
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
    responses(
        (status = 200, description = "Server-sent events", content_type = "text/event-stream", body = StreamEvent),
        (status = 401, body = ErrorBody)))]
async fn events(
    State(state): State<AppState>,
    Extension(agent): Extension<Agent>,
    headers: HeaderMap,
) -> Sse<impl FuturesStream<Item = Result<SseEvent, Infallible>>> {
    let last_event_id = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let mut stream = state.hub.open(&agent.id, last_event_id);
    let opened = stream.take();
    let feed = Feed {
        lost_after: opened.lost_after,
        replay: opened.replay.into(),
        live: opened.live,
        shutdown: state.hub.shutdown_token(),
        _stream: stream,
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
    live: tokio::sync::broadcast::Receiver<Arc<Event>>,
    shutdown: CancellationToken,
    /// Keeps the agent counted as connected while the stream is open.
    _stream: hub::Stream,
}

impl Feed {
    async fn next(mut self) -> Option<(Result<SseEvent, Infallible>, Self)> {
        if let Some(after) = self.lost_after.take() {
            return Some((Ok(events_lost(after)), self));
        }
        if let Some(event) = self.replay.pop_front() {
            return Some((Ok(sse(&event)), self));
        }
        let event = tokio::select! {
            _ = self.shutdown.cancelled() => return None,
            event = self.live.recv() => event,
        };
        match event {
            Ok(event) => Some((Ok(sse(&event)), self)),
            // This stream fell behind the live feed: say so, then go on with what comes next.
            Err(RecvError::Lagged(missed)) => {
                tracing::warn!(missed, "an event stream fell behind");
                Some((Ok(events_lost_live(missed)), self))
            }
            Err(RecvError::Closed) => None,
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
        method: "bridge/events_lost".into(),
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

fn events_lost_live(missed: u64) -> SseEvent {
    notice(json!({ "missed": missed, "reason": "this stream fell behind" }))
}
