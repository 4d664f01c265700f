//! Per-agent limits on `/v1` and `/mcp`: requests per second (a token bucket that allows
//! bursts) and requests in flight. Over either, the answer is 429 `rate_limited` with a
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
use crate::state::AppState;

/// Agents tracked before idle ones are forgotten.
const TRACKED: usize = 10_000;

pub struct Limits {
    /// Requests per second; 0: no rate limit.
    rate: f64,
    /// Requests an agent may make at once after being idle.
    burst: f64,
    /// Requests in flight per agent; 0: no limit.
    concurrency: usize,
    agents: Mutex<HashMap<String, Usage>>,
}

struct Usage {
    tokens: f64,
    refilled: Instant,
    in_flight: usize,
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
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut agents = self.limits.agents.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(usage) = agents.get_mut(&self.agent) {
            usage.in_flight = usage.in_flight.saturating_sub(1);
        }
    }
}

impl Limits {
    /// `burst` 0 means twice the rate (at least 1).
    pub fn new(rate: u32, burst: u32, concurrency: usize) -> Arc<Self> {
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
        if self.rate == 0.0 && (self.concurrency == 0 || !in_flight) {
            return Ok(None);
        }
        let mut agents = self.agents.lock().unwrap_or_else(|e| e.into_inner());
        if agents.len() >= TRACKED && !agents.contains_key(agent) {
            // Forget the agents that have nothing in flight and a full bucket by now.
            let (rate, burst) = (self.rate, self.burst);
            agents.retain(|_, u| {
                let refill = now.saturating_duration_since(u.refilled).as_secs_f64() * rate;
                u.in_flight > 0 || u.tokens + refill < burst
            });
        }
        let usage = agents.entry(agent.to_owned()).or_insert(Usage {
            tokens: self.burst,
            refilled: now,
            in_flight: 0,
        });
        if in_flight && self.concurrency > 0 && usage.in_flight >= self.concurrency {
            return Err(Refused {
                why: "too many requests in flight",
                retry_after: Duration::from_secs(1),
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
        if !in_flight || self.concurrency == 0 {
            return Ok(None);
        }
        usage.in_flight += 1;
        Ok(Some(InFlight {
            limits: self.clone(),
            agent: agent.to_owned(),
        }))
    }
}

/// Middleware (after authentication): the caller's limits. A request stays in flight until its
/// answer has been sent, streamed answers (a call's progress, `/mcp` over SSE) included. The
/// event streams (`GET /v1/events`, a session's `GET /mcp`) count against the rate only: they
/// stay open for as long as the agent listens.
pub async fn limit_agent(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let Some(agent) = req.extensions().get::<Agent>() else {
        return next.run(req).await;
    };
    let path = req.uri().path();
    let listening = path == "/v1/events" || (path == "/mcp" && req.method() == Method::GET);
    match state.limits.admit(&agent.id, !listening, Instant::now()) {
        Ok(None) => next.run(req).await,
        Ok(Some(in_flight)) => next.run(req).await.map(|body| {
            Body::new(Counted {
                body,
                _in_flight: in_flight,
            })
        }),
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

/// An answer's body, with its request counted in flight until the body is sent (or dropped).
struct Counted {
    body: Body,
    _in_flight: InFlight,
}

impl http_body::Body for Counted {
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
        let limits = Limits::new(10, 3, 0);
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
        let limits = Limits::new(0, 0, 2);
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
        let limits = Limits::new(0, 0, 0);
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
}
