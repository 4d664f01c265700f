//! Per-agent limits on `/v1` and `/mcp`: requests per second (`governor`'s GCRA, keyed by
//! agent, which allows bursts), requests in flight and event streams open. Over either, the
//! answer is 429 `rate_limited` with a `Retry-After`; nothing of the request has run.

use foldhash::HashMap;
use std::future::Future;
use std::num::NonZeroU32;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderValue, Method};
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use governor::middleware::NoOpMiddleware;
use governor::state::keyed::HashMapStateStore;
use governor::{Quota, RateLimiter};

use crate::a2e::ErrorCode;
use crate::caller::Caller;
use crate::http::error::ApiError;

/// Agents whose rate is tracked before those back to a full burst are forgotten.
const TRACKED: usize = 10_000;

/// Requests per second per agent: governor's keyed GCRA over its `HashMapStateStore` (one
/// mutex) and the std clock, not its default `DashMap` and `quanta`, which saved 15 to 20 ns a
/// check for 4 crates more. Measured in release, in CPU time, with the guard taken and dropped:
/// 215 ns to admit a request, against 140 ns for the hand-written token bucket it replaced; a
/// request through the bridge costs tens of microseconds.
type Rate<C> =
    RateLimiter<String, HashMapStateStore<String>, C, NoOpMiddleware<<C as Clock>::Instant>>;

/// Requests in flight and event streams open, by agent; an agent with neither has no entry.
/// What each agent has open, by its id (shared with each request's guard, not copied into it).
type Open = Arc<Mutex<HashMap<Arc<str>, Usage>>>;

pub struct Limits<C: Clock = DefaultClock> {
    /// None: no rate limit.
    rate: Option<Rate<C>>,
    /// How many agents the rate may track before the next sweep of idle ones.
    sweep_at: AtomicUsize,
    /// Requests in flight per agent; 0: no limit.
    concurrency: usize,
    /// Event streams open per agent; 0: no limit.
    streams: usize,
    open: Open,
}

#[derive(Default)]
struct Usage {
    /// Requests in flight and task calls running (each task also counts in `tasks`).
    in_flight: usize,
    streams: usize,
    tasks: usize,
}

/// Why a request was not admitted, and when to try again.
#[derive(Debug, PartialEq)]
pub struct Refused {
    pub why: &'static str,
    pub retry_after: Duration,
}

/// A request in flight; counted until dropped.
pub struct InFlight {
    open: Open,
    agent: Arc<str>,
    stream: bool,
    task: bool,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(usage) = open.get_mut(&self.agent) {
            match self.stream {
                true => usage.streams = usage.streams.saturating_sub(1),
                false => usage.in_flight = usage.in_flight.saturating_sub(1),
            }
            if self.task {
                usage.tasks = usage.tasks.saturating_sub(1);
            }
            if usage.streams == 0 && usage.in_flight == 0 && usage.tasks == 0 {
                open.remove(&self.agent);
            }
        }
    }
}

impl Limits {
    /// `rate` requests per second (0: no rate limit) with bursts of `burst` (0: twice the rate,
    /// at least 1); `concurrency` requests in flight and `streams` event streams (0: no limit).
    pub fn new(rate: u32, burst: u32, concurrency: usize, streams: usize) -> Arc<Self> {
        Arc::new(Self::with_clock(
            rate,
            burst,
            concurrency,
            streams,
            DefaultClock::default(),
        ))
    }
}

impl<C: Clock> Limits<C> {
    fn with_clock(rate: u32, burst: u32, concurrency: usize, streams: usize, clock: C) -> Self {
        let rate = NonZeroU32::new(rate).map(|per_second| {
            let burst = NonZeroU32::new(burst)
                .unwrap_or(per_second.saturating_mul(NonZeroU32::new(2).expect("2 > 0")));
            let quota = Quota::per_second(per_second).allow_burst(burst);
            RateLimiter::new(quota, HashMapStateStore::default(), clock)
        });
        Self {
            rate,
            sweep_at: AtomicUsize::new(TRACKED),
            concurrency,
            streams,
            open: Open::default(),
        }
    }

    /// Admits a request of `agent`; `in_flight` when it counts against the concurrency limit
    /// until the returned guard is dropped.
    pub fn admit(&self, agent: &str, in_flight: bool) -> Result<Option<InFlight>, Refused> {
        self.admit_as(agent, in_flight, false)
    }

    /// Admits an event stream of `agent`: counted against the rate, and against the streams
    /// limit until the returned guard is dropped.
    pub fn admit_stream(&self, agent: &str) -> Result<Option<InFlight>, Refused> {
        self.admit_as(agent, false, true)
    }

    fn admit_as(
        &self,
        agent: &str,
        in_flight: bool,
        stream: bool,
    ) -> Result<Option<InFlight>, Refused> {
        let counted = (in_flight && self.concurrency > 0) || (stream && self.streams > 0);
        if !counted {
            return self.take_rate(agent).map(|()| None);
        }
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let usage = open.get(agent);
        let in_flight_now = usage.map_or(0, |u| u.in_flight);
        let streams_now = usage.map_or(0, |u| u.streams);
        if in_flight && self.concurrency > 0 && in_flight_now >= self.concurrency {
            return Err(Refused {
                why: "too many requests in flight",
                retry_after: Duration::from_secs(1),
            });
        }
        if stream && self.streams > 0 && streams_now >= self.streams {
            return Err(Refused {
                why: "too many event streams open (MCP_BRIDGE_AGENT_EVENT_STREAMS)",
                retry_after: Duration::from_secs(5),
            });
        }
        self.take_rate(agent)?;
        let key = match open.get_key_value(agent) {
            Some((key, _)) => key.clone(),
            None => Arc::from(agent),
        };
        let usage = open.entry(key.clone()).or_default();
        match stream {
            true => usage.streams += 1,
            false => usage.in_flight += 1,
        }
        Ok(Some(InFlight {
            open: self.open.clone(),
            agent: key,
            stream,
            task: false,
        }))
    }

    /// A slot of `agent`'s concurrency for one task's call, held until the guard is dropped
    /// (`Some(None)` when there is no limit); `None` while every slot the tasks may take is
    /// taken: the task waits (it is not refused). Tasks may take at most [`task_room`] of the
    /// slots, so the agent can still answer its tasks' questions, poll and cancel them.
    pub fn take_task_slot(&self, agent: &str) -> Option<Option<InFlight>> {
        if self.concurrency == 0 {
            return Some(None);
        }
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let usage = open.get(agent);
        let (in_flight, tasks) = usage.map_or((0, 0), |u| (u.in_flight, u.tasks));
        if in_flight >= self.concurrency || tasks >= task_room(self.concurrency) {
            return None;
        }
        let key = match open.get_key_value(agent) {
            Some((key, _)) => key.clone(),
            None => Arc::from(agent),
        };
        let usage = open.entry(key.clone()).or_default();
        usage.in_flight += 1;
        usage.tasks += 1;
        Some(Some(InFlight {
            open: self.open.clone(),
            agent: key,
            stream: false,
            task: true,
        }))
    }
}

/// The slots of a concurrency limit an agent's tasks may hold together: three quarters, at least 1.
pub fn task_room(concurrency: usize) -> usize {
    (concurrency * 3 / 4).max(1)
}

impl crate::tasks::Slots for Limits {
    fn take(&self, agent: &str) -> Option<Box<dyn Send + Sync>> {
        self.take_task_slot(agent)
            .map(|held| Box::new(held) as Box<dyn Send + Sync>)
    }
}

impl<C: Clock> Limits<C> {
    /// Takes one request of `agent`'s rate, if there is a rate limit.
    fn take_rate(&self, agent: &str) -> Result<(), Refused> {
        let Some(rate) = &self.rate else {
            return Ok(());
        };
        self.sweep(rate);
        rate.check_key(&agent.to_owned()).map_err(|not_until| {
            let wait = not_until.wait_time_from(rate.clock().now());
            Refused {
                why: "too many requests per second",
                retry_after: Duration::from_secs(wait.as_secs_f64().ceil().max(1.0) as u64),
            }
        })
    }

    /// Forgets the agents whose burst is full again once [`TRACKED`] are tracked; the next
    /// sweep waits until twice as many as are left, so a sweep costs O(1) per request.
    fn sweep(&self, rate: &Rate<C>) {
        if rate.len() < self.sweep_at.load(Ordering::Relaxed) {
            return;
        }
        rate.retain_recent();
        rate.shrink_to_fit();
        let next = TRACKED.max(rate.len().saturating_mul(2));
        self.sweep_at.store(next, Ordering::Relaxed);
    }
}

/// The caller's limits (after authentication), then `go` with the request when they admit it.
/// A request stays in flight until its answer has been sent, streamed answers (a call's
/// progress, `/mcp` over SSE) included. The event streams count against the rate only, not the
/// requests in flight: they stay open for as long as the agent listens; `GET /v1/events` also
/// holds one of the agent's stream slots (`MCP_BRIDGE_AGENT_EVENT_STREAMS`) until it ends (a
/// session's `GET /mcp` is bounded by the sessions cap instead).
///
/// Called by the authenticating middleware rather than being one: each `from_fn` layer clones a
/// boxed service and boxes a future for every request.
pub async fn admitted<F>(limits: &Limits, req: Request, go: impl FnOnce(Request) -> F) -> Response
where
    F: Future<Output = Response>,
{
    let Some(agent) = req.extensions().get::<Caller>() else {
        return go(req).await;
    };
    let path = req.uri().path();
    let events = path == "/v1/events";
    let listening = events || (path == "/mcp" && req.method() == Method::GET);
    let admitted = match events {
        true => limits.admit_stream(&agent.id),
        false => limits.admit(&agent.id, !listening),
    };
    match admitted {
        Ok(None) => go(req).await,
        Ok(Some(held)) => go(req)
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
    use governor::clock::FakeRelativeClock;

    #[test]
    fn the_rate_allows_a_burst_then_refills() {
        let clock = FakeRelativeClock::default();
        let limits = Limits::with_clock(10, 3, 0, 0, clock.clone());
        for _ in 0..3 {
            assert!(limits.admit("alice", true).is_ok());
        }
        let refused = limits.admit("alice", true).err().unwrap();
        assert_eq!(refused.retry_after, Duration::from_secs(1));
        assert!(limits.admit("bob", true).is_ok(), "per agent");
        // A tenth of a second later one more is allowed, and only one.
        clock.advance(Duration::from_millis(100));
        assert!(limits.admit("alice", true).is_ok());
        assert!(limits.admit("alice", true).is_err());
    }

    #[test]
    fn the_burst_is_twice_the_rate_by_default() {
        let limits = Limits::with_clock(2, 0, 0, 0, FakeRelativeClock::default());
        for _ in 0..4 {
            assert!(limits.admit("alice", true).is_ok());
        }
        assert!(limits.admit("alice", true).is_err());
    }

    #[test]
    fn agents_back_to_a_full_burst_are_forgotten() {
        let clock = FakeRelativeClock::default();
        let limits = Limits::with_clock(1, 1, 0, 0, clock.clone());
        for i in 0..TRACKED {
            assert!(limits.admit(&format!("agent{i}"), true).is_ok());
        }
        clock.advance(Duration::from_secs(3));
        assert!(limits.admit("alice", true).is_ok());
        let rate = limits.rate.as_ref().unwrap();
        assert_eq!(rate.len(), 1, "only alice is left");
        assert!(
            limits.admit("alice", true).is_err(),
            "alice is still counted"
        );
    }

    #[test]
    fn requests_in_flight_are_bounded_until_they_end() {
        let limits = Limits::new(0, 0, 2, 0);
        let first = limits.admit("alice", true).unwrap();
        let _second = limits.admit("alice", true).unwrap();
        assert_eq!(
            limits.admit("alice", true).err().unwrap().why,
            "too many requests in flight"
        );
        assert!(
            limits.admit("alice", false).is_ok(),
            "a stream is not counted"
        );
        drop(first);
        assert!(limits.admit("alice", true).is_ok());
    }

    #[test]
    fn tasks_take_slots_of_the_concurrency_but_leave_room_for_requests() {
        let limits = Limits::new(0, 0, 4, 0);
        let first = limits.take_task_slot("alice").unwrap();
        let _more: Vec<_> = (0..2)
            .map(|_| limits.take_task_slot("alice").unwrap())
            .collect();
        assert!(limits.take_task_slot("alice").is_none(), "3 of 4 for tasks");
        assert!(limits.take_task_slot("bob").is_some(), "per agent");
        let request = limits.admit("alice", true).unwrap();
        assert!(
            limits.admit("alice", true).is_err(),
            "the tasks count against the requests in flight"
        );
        drop(first);
        let _again = limits.take_task_slot("alice").unwrap();
        assert!(limits.admit("alice", true).is_err(), "4 in flight");
        drop(request);
        assert!(
            limits.take_task_slot("alice").is_none(),
            "tasks may hold 3 slots"
        );
        assert!(
            limits.admit("alice", true).is_ok(),
            "the last slot is the requests'"
        );
    }

    #[test]
    fn no_limits_track_nothing() {
        let limits = Limits::new(0, 0, 0, 0);
        for _ in 0..1000 {
            assert!(limits.admit("alice", true).unwrap().is_none());
        }
        assert!(limits.open.lock().unwrap().is_empty());
        assert!(limits.rate.is_none());
    }

    #[test]
    fn an_agent_with_nothing_open_is_forgotten() {
        let limits = Limits::new(0, 0, 2, 2);
        let held = limits.admit("alice", true).unwrap();
        let stream = limits.admit_stream("alice").unwrap();
        drop(held);
        assert_eq!(limits.open.lock().unwrap().len(), 1);
        drop(stream);
        assert!(limits.open.lock().unwrap().is_empty());
    }

    #[test]
    fn event_streams_are_bounded_until_they_end() {
        let limits = Limits::new(0, 0, 1, 2);
        let first = limits.admit_stream("alice").unwrap();
        let _second = limits.admit_stream("alice").unwrap();
        let refused = limits.admit_stream("alice").err().unwrap();
        assert!(refused.why.contains("event streams"), "{}", refused.why);
        assert!(limits.admit_stream("bob").is_ok(), "per agent");
        assert!(
            limits.admit("alice", true).unwrap().is_some(),
            "streams are not requests in flight"
        );
        drop(first);
        assert!(limits.admit_stream("alice").is_ok());
    }

    /// The cost of admitting a request with every limit on, one agent and a thousand:
    /// `cargo test --release --lib admit_cost -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn admit_cost() {
        for agents in [1, 1000] {
            let names: Vec<String> = (0..agents).map(|i| format!("agent{i}")).collect();
            let limits = Limits::new(1_000_000_000, 1_000_000_000, 64, 8);
            let n = 2_000_000;
            let started = std::time::Instant::now();
            for i in 0..n {
                drop(limits.admit(&names[i % agents], true).unwrap());
            }
            let ns = started.elapsed().as_nanos() as f64 / n as f64;
            println!("{agents} agent(s): {ns:.0} ns per admit");
        }
    }
}
