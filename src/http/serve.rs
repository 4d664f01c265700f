//! The HTTP connection loop: serves the router on every accepted connection (HTTP/1.1) within
//! the connection-level bounds `axum::serve` lacks: at most `MCP_BRIDGE_MAX_CONNECTIONS` open at
//! once, request headers within `MCP_BRIDGE_HEADER_TIMEOUT_SECS`, a body within
//! `MCP_BRIDGE_BODY_TIMEOUT_SECS`. Without them, a client that opens connections and sends
//! headers or a body byte by byte holds a descriptor each for as long as it likes, without any
//! token.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::time::{Instant, Sleep};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// The connection-level bounds.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub max_connections: usize,
    pub header_timeout: Duration,
    pub body_timeout: Duration,
}

/// Serves `app` on `listener` until `shutdown`, then waits for the open connections to finish
/// their requests (the caller bounds that wait).
pub async fn serve(
    listener: TcpListener,
    app: Router,
    bounds: Bounds,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let permits = Arc::new(Semaphore::new(bounds.max_connections));
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(bounds.header_timeout);
    loop {
        // A permit first: past the limit, connections wait in the kernel's backlog, costing
        // this process nothing.
        let permit = tokio::select! {
            permit = permits.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break,
            },
            _ = shutdown.cancelled() => break,
        };
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(error) => {
                    // Out of descriptors (EMFILE) or a connection reset before it was taken:
                    // wait a little rather than spin.
                    tracing::warn!(%error, "cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = shutdown.cancelled() => break,
        };
        // No Nagle delay: where a response goes out in more than one write (event streams,
        // rmcp's `/mcp` answers), a later write would wait for the client's delayed ACK, some
        // 40 ms per call on a kept-alive connection.
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!(%error, "cannot turn Nagle's algorithm off");
        }
        let router = app.clone();
        let body_timeout = bounds.body_timeout;
        let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
            let req = req.map(|body| TimedBody::new(body, body_timeout));
            router.clone().oneshot(req)
        });
        let conn = graceful.watch(http.serve_connection(TokioIo::new(tcp), service));
        // hyper wakes a connection's task from inside its own poll: `wake` polls it again
        // rather than have tokio wake the other worker to steal it.
        crate::wake::spawn(async move {
            if let Err(error) = conn.await {
                tracing::debug!(%error, "connection ended with an error");
            }
            drop(permit);
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}

/// A request body the client must send within a deadline counted from its headers.
#[derive(Debug, thiserror::Error)]
#[error(
    "the request body did not arrive within {0} s (MCP_BRIDGE_BODY_TIMEOUT_SECS); the connection is closed"
)]
pub struct BodyTimeout(u64);

pin_project_lite::pin_project! {
    pub struct TimedBody {
        #[pin]
        inner: Incoming,
        // None for a body that is already complete (a GET): no timer at all.
        #[pin]
        deadline: Option<Sleep>,
        limit: Duration,
    }
}

impl TimedBody {
    fn new(inner: Incoming, limit: Duration) -> Self {
        let deadline = match inner.is_end_stream() {
            true => None,
            false => Some(tokio::time::sleep_until(Instant::now() + limit)),
        };
        Self {
            inner,
            deadline,
            limit,
        }
    }
}

impl Body for TimedBody {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.project();
        if let Poll::Ready(frame) = this.inner.poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        match this.deadline.as_pin_mut().map(|d| d.poll(cx)) {
            Some(Poll::Ready(())) => {
                Poll::Ready(Some(Err(BodyTimeout(this.limit.as_secs()).into())))
            }
            _ => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

// The service `service_fn` needs is infallible, as the router is.
const _: fn() = || {
    fn infallible<S: tower::Service<axum::http::Request<TimedBody>, Error = Infallible>>() {}
    infallible::<Router>();
};
