//! Per-agent limits on `/v1` and `/mcp`: requests per second (a token bucket that allows
//! bursts), requests in flight and event streams open. Over either, the answer is 429 `rate_limited` with a
//! `Retry-After`; nothing of the request has run.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderValue, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::a2e::ErrorCode;
use crate::auth::Agent;
use crate::error::ApiError;

/// Agents tracked before idle ones are forgotten.
const TRACKED: usize = 10_000;

pub struct Limits {
    /// Requests per second; 0: no rate limit.
    rate: f64,
    /// Requests an agent may make at once after being idle.
    burst: f64,
    /// Requests in flight per agent; 0: no limit.
    concurrency: usize,
    /// Event streams open per agent; 0: no limit.
    streams: usize,
    agents: Mutex<HashMap<String, Usage>>,
}

struct Usage {
    tokens: f64,
    refilled: Instant,
    in_flight: usize,
    streams: usize,
}

/// Why a request was not admitted, and when to try again.
#[derive(Debug, PartialEq)]
pub struct Refused {
    pub why: &'static str,
    pub retry_after: Duration,
}

/// A request in flight; counted until dropped.
pub struct InFlight {
    limits: Arc<Limits>,
    agent: String,
    stream: bool,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut agents = self.limits.agents.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(usage) = agents.get_mut(&self.agent) {
            match self.stream {
                true => usage.streams = usage.streams.saturating_sub(1),
                false => usage.in_flight = usage.in_flight.saturating_sub(1),
            }
        }
    }
}

impl Limits {
    /// `burst` 0 means twice the rate (at least 1).
    pub fn new(rate: u32, burst: u32, concurrency: usize, streams: usize) -> Arc<Self> {
        let rate = f64::from(rate);
        let burst = if burst == 0 {
            (rate * 2.0).max(1.0)
        } else {
            f64::from(burst)
        };
        Arc::new(Self {
            rate,
            burst,
            concurrency,
            streams,
            agents: Mutex::default(),
        })
    }

    /// Admits a request of `agent` at `now`; `in_flight` when it counts against the
    /// concurrency limit until the returned guard is dropped.
    pub fn admit(
        self: &Arc<Self>,
        agent: &str,
        in_flight: bool,
        now: Instant,
    ) -> Result<Option<InFlight>, Refused> {
        self.admit_as(agent, in_flight, false, now)
    }

    /// Admits an event stream of `agent` at `now`: counted against the rate, and against the
    /// streams limit until the returned guard is dropped.
    pub fn admit_stream(
        self: &Arc<Self>,
        agent: &str,
        now: Instant,
    ) -> Result<Option<InFlight>, Refused> {
        self.admit_as(agent, false, true, now)
    }

    fn admit_as(
        self: &Arc<Self>,
        agent: &str,
        in_flight: bool,
        stream: bool,
        now: Instant,
    ) -> Result<Option<InFlight>, Refused> {
        let counted = (in_flight && self.concurrency > 0) || (stream && self.streams > 0);
        if self.rate == 0.0 && !counted {
            return Ok(None);
        }
        let mut agents = self.agents.lock().unwrap_or_else(|e| e.into_inner());
        if agents.len() >= TRACKED && !agents.contains_key(agent) {
            // Forget the agents that have nothing in flight and a full bucket by now.
            let (rate, burst) = (self.rate, self.burst);
            agents.retain(|_, u| {
                let refill = now.saturating_duration_since(u.refilled).as_secs_f64() * rate;
                u.in_flight > 0 || u.streams > 0 || u.tokens + refill < burst
            });
        }
        let usage = agents.entry(agent.to_owned()).or_insert(Usage {
            tokens: self.burst,
            refilled: now,
            in_flight: 0,
            streams: 0,
        });
        if in_flight && self.concurrency > 0 && usage.in_flight >= self.concurrency {
            return Err(Refused {
                why: "too many requests in flight",
                retry_after: Duration::from_secs(1),
            });
        }
        if stream && self.streams > 0 && usage.streams >= self.streams {
            return Err(Refused {
                why: "too many event streams open (MCP_BRIDGE_AGENT_EVENT_STREAMS)",
                retry_after: Duration::from_secs(5),
            });
        }
        if self.rate > 0.0 {
            let elapsed = now.saturating_duration_since(usage.refilled).as_secs_f64();
            usage.tokens = (usage.tokens + elapsed * self.rate).min(self.burst);
            usage.refilled = now;
            if usage.tokens < 1.0 {
                let wait = (1.0 - usage.tokens) / self.rate;
                return Err(Refused {
                    why: "too many requests per second",
                    retry_after: Duration::from_secs_f64(wait.ceil().max(1.0)),
                });
            }
            usage.tokens -= 1.0;
        }
        if !counted {
            return Ok(None);
        }
        match stream {
            true => usage.streams += 1,
            false => usage.in_flight += 1,
        }
        Ok(Some(InFlight {
            limits: self.clone(),
            agent: agent.to_owned(),
            stream,
        }))
    }
}

/// Middleware (after authentication): the caller's limits. A request stays in flight until its
/// answer has been sent, streamed answers (a call's progress, `/mcp` over SSE) included. The
/// event streams count against the rate only, not the requests in flight: they stay open for as
/// long as the agent listens; `GET /v1/events` also holds one of the agent's stream slots
/// (`MCP_BRIDGE_AGENT_EVENT_STREAMS`) until it ends (a session's `GET /mcp` is bounded by the
/// sessions cap instead).
pub async fn limit_agent(State(limits): State<Arc<Limits>>, req: Request, next: Next) -> Response {
    let Some(agent) = req.extensions().get::<Agent>() else {
        return next.run(req).await;
    };
    let path = req.uri().path();
    let events = path == "/v1/events";
    let listening = events || (path == "/mcp" && req.method() == Method::GET);
    let admitted = match events {
        true => limits.admit_stream(&agent.id, Instant::now()),
        false => limits.admit(&agent.id, !listening, Instant::now()),
    };
    match admitted {
        Ok(None) => next.run(req).await,
        Ok(Some(held)) => next
            .run(req)
            .await
            .map(|body| Body::new(Held { body, _held: held })),
        Err(refused) => {
            let message = format!(
                "{} for agent \"{}\"; retry after {} s",
                refused.why,
                agent.id,
                refused.retry_after.as_secs()
            );
            let mut resp = ApiError::new(ErrorCode::RateLimited, message).into_response();
            if let Ok(value) = HeaderValue::try_from(refused.retry_after.as_secs().to_string()) {
                resp.headers_mut().insert(RETRY_AFTER, value);
            }
            resp
        }
    }
}

/// An answer's body holding its request's slot (in flight, or an event stream's) until the body
/// is sent or dropped.
struct Held {
    body: Body,
    _held: InFlight,
}

impl http_body::Body for Held {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_allows_a_burst_then_refills() {
        let limits = Limits::new(10, 3, 0, 0);
        let t0 = Instant::now();
        for _ in 0..3 {
            assert!(limits.admit("alice", true, t0).is_ok());
        }
        let refused = limits.admit("alice", true, t0).err().unwrap();
        assert_eq!(refused.retry_after, Duration::from_secs(1));
        assert!(limits.admit("bob", true, t0).is_ok(), "per agent");
        // A tenth of a second later one more is allowed, and only one.
        let later = t0 + Duration::from_millis(100);
        assert!(limits.admit("alice", true, later).is_ok());
        assert!(limits.admit("alice", true, later).is_err());
    }

    #[test]
    fn requests_in_flight_are_bounded_until_they_end() {
        let limits = Limits::new(0, 0, 2, 0);
        let now = Instant::now();
        let first = limits.admit("alice", true, now).unwrap();
        let _second = limits.admit("alice", true, now).unwrap();
        assert_eq!(
            limits.admit("alice", true, now).err().unwrap().why,
            "too many requests in flight"
        );
        assert!(
            limits.admit("alice", false, now).is_ok(),
            "a stream is not counted"
        );
        drop(first);
        assert!(limits.admit("alice", true, now).is_ok());
    }

    #[test]
    fn no_limits_track_nothing() {
        let limits = Limits::new(0, 0, 0, 0);
        for _ in 0..1000 {
            assert!(
                limits
                    .admit("alice", true, Instant::now())
                    .unwrap()
                    .is_none()
            );
        }
        assert!(limits.agents.lock().unwrap().is_empty());
    }

    #[test]
    fn event_streams_are_bounded_until_they_end() {
        let limits = Limits::new(0, 0, 1, 2);
        let now = Instant::now();
        let first = limits.admit_stream("alice", now).unwrap();
        let _second = limits.admit_stream("alice", now).unwrap();
        let refused = limits.admit_stream("alice", now).err().unwrap();
        assert!(refused.why.contains("event streams"), "{}", refused.why);
        assert!(limits.admit_stream("bob", now).is_ok(), "per agent");
        assert!(
            limits.admit("alice", true, now).unwrap().is_some(),
            "streams are not requests in flight"
        );
        drop(first);
        assert!(limits.admit_stream("alice", now).is_ok());
    }
}
