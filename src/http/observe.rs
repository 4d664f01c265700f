//! The outermost layer of every route: a request id (`X-Request-Id`, the caller's or a new UUID,
//! echoed on the answer), the request's span (method, route, request id, and the server and tool
//! of a tool call), a log line for each answer and the count of answers by route and status.
//!
//! One layer in place of four (tower-http's `SetRequestId`, `PropagateRequestId` and `Trace`, and
//! a counting `from_fn`): axum wraps every route in each layer, cloning a boxed service and boxing
//! a future per layer and request, and the four cost some 9k instructions a call beside the
//! span's own 5k (BENCHMARKS.md, fifth round). This one has a future of its own type.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::Body;
use axum::extract::{MatchedPath, Request};
use axum::http::{HeaderName, HeaderValue};
use axum::response::Response;
use tower::{Layer, Service};
use tracing::Span;

use crate::metrics::Metrics;

/// The header a request id travels in, both ways.
pub static X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The layer: [`Observe`] around each route.
#[derive(Clone)]
pub struct ObserveLayer {
    metrics: Arc<Metrics>,
}

impl ObserveLayer {
    pub fn new(metrics: Arc<Metrics>) -> Self {
        Self { metrics }
    }
}

impl<S> Layer<S> for ObserveLayer {
    type Service = Observe<S>;

    fn layer(&self, inner: S) -> Observe<S> {
        Observe {
            inner,
            metrics: self.metrics.clone(),
        }
    }
}

#[derive(Clone)]
pub struct Observe<S> {
    inner: S,
    metrics: Arc<Metrics>,
}

impl<S> Service<Request> for Observe<S>
where
    S: Service<Request, Response = Response>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Observed<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request) -> Self::Future {
        let started = Instant::now();
        let id = match req.headers().get(&X_REQUEST_ID) {
            Some(given) => given.clone(),
            None => {
                let mut text = uuid::Uuid::encode_buffer();
                let text = uuid::Uuid::new_v4().hyphenated().encode_lower(&mut text);
                let id = HeaderValue::from_str(text).expect("a UUID is a header value");
                req.headers_mut().insert(X_REQUEST_ID.clone(), id.clone());
                id
            }
        };
        let route = req.extensions().get::<MatchedPath>().cloned();
        let span = tracing::info_span!(
            "request",
            method = %req.method(),
            route = route.as_ref().map_or("unmatched", MatchedPath::as_str),
            // Headers, and so tokens, are never recorded: this one is the caller's to give.
            request_id = id.to_str().unwrap_or_default(),
            // A tool call's, recorded by the registry when the request makes one.
            server_id = tracing::field::Empty,
            tool = tracing::field::Empty,
        );
        let otel = match crate::telemetry::exporting() {
            true => server_span(&req, route.as_ref()),
            false => Span::none(),
        };
        let post = req.method() == axum::http::Method::POST;
        let inner = span.in_scope(|| otel.in_scope(|| self.inner.call(req)));
        Observed {
            inner,
            seen: Some(Seen {
                span,
                otel,
                post,
                id,
                route,
                started,
                metrics: self.metrics.clone(),
            }),
        }
    }
}

/// The request's span in a trace (HTTP server semantic conventions), continuing the caller's
/// `traceparent`. Only made when spans are exported; apart from the log's `request` span, which
/// the log formats as it opens and a trace has no use for.
fn server_span(req: &Request, route: Option<&MatchedPath>) -> Span {
    let method = req.method().as_str();
    let route = route.map_or("unmatched", MatchedPath::as_str);
    let span = tracing::info_span!(
        target: crate::telemetry::SPANS,
        "http.server",
        otel.name = %format_args!("{method} {route}"),
        otel.kind = "server",
        http.request.method = method,
        http.route = route,
        url.path = req.uri().path(),
        url.scheme = "http",
        http.response.status_code = tracing::field::Empty,
    );
    crate::telemetry::continue_from(&span, req.headers());
    span
}

/// What the answer is logged, counted and marked with.
struct Seen {
    span: Span,
    /// The request's span in a trace ([`server_span`]), or none.
    otel: Span,
    /// A POST's streamed answer is the call's work, kept in its spans to the end; a GET's stream
    /// (events, a session's stream) may last hours, and its spans end when it starts.
    post: bool,
    id: HeaderValue,
    route: Option<MatchedPath>,
    started: Instant,
    metrics: Arc<Metrics>,
}

pin_project_lite::pin_project! {
    /// The route's future, polled in the request's span.
    pub struct Observed<F> {
        #[pin]
        inner: F,
        seen: Option<Seen>,
    }
}

impl<F, E> Future for Observed<F>
where
    F: Future<Output = Result<Response, E>>,
{
    type Output = Result<Response, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let seen = this.seen.as_ref().expect("polled after its answer");
        let answer = match seen
            .span
            .in_scope(|| seen.otel.in_scope(|| this.inner.poll(cx)))
        {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(answer) => answer,
        };
        let seen = this.seen.take().expect("polled after its answer");
        Poll::Ready(answer.map(|resp| seen.answered(resp)))
    }
}

impl Seen {
    fn answered(self, mut resp: Response) -> Response {
        let status = resp.status();
        if !self.otel.is_disabled() {
            self.otel
                .record("http.response.status_code", i64::from(status.as_u16()));
            if status.is_server_error() {
                let reason = status.canonical_reason().unwrap_or("server error");
                crate::telemetry::failed(&self.otel, status.as_str(), reason);
            }
        }
        let route = self.route.as_ref().map_or("unmatched", MatchedPath::as_str);
        self.metrics.http_request(route, status.as_u16());
        {
            let _in = self.span.enter();
            // Refusals and failures at info, the rest at debug: a line per successful call costs
            // a busy gateway measurably, and /metrics counts every request by route and status.
            let latency_ms = self.started.elapsed().as_secs_f64() * 1000.0;
            if status.is_client_error() || status.is_server_error() {
                tracing::info!(status = status.as_u16(), latency_ms, "request answered");
            } else {
                tracing::debug!(status = status.as_u16(), latency_ms, "request answered");
            }
        }
        resp.headers_mut().entry(&X_REQUEST_ID).or_insert(self.id);
        // A body sent whole logs nothing; a POST's streamed answer (a call's progress) is polled
        // in the request's spans, as its future was. A GET's stream (an agent's events, an MCP
        // session's stream) is not: it may last hours, and entering its span at each poll of
        // each open stream cost a fan-out to 10,000 streams some 3 % of its CPU (`perf`); what
        // such a stream logs names its agent itself.
        if http_body::Body::size_hint(resp.body()).exact().is_some() || !self.post {
            return resp;
        }
        let (span, otel) = (self.span, self.otel);
        resp.map(|body| Body::new(InSpan { body, span, otel }))
    }
}

pin_project_lite::pin_project! {
    /// A streamed answer's body, polled in its request's span.
    struct InSpan {
        #[pin]
        body: Body,
        span: Span,
        otel: Span,
    }
}

impl http_body::Body for InSpan {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let this = self.project();
        let otel = this.otel;
        this.span
            .in_scope(|| otel.in_scope(|| this.body.poll_frame(cx)))
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}
