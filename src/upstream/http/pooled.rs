//! The connections a Streamable HTTP server's POSTs go over, kept alive and reused. Opening one
//! per call cost the bridge and the server a TCP handshake and an accept each call.
//!
//! No connection has a task of its own: whoever waits on it polls it, the request's sender until
//! the answer's head comes, then whoever reads the answer's body, and an idle connection is not
//! polled at all (taken again, it is polled first, and one the server closed meanwhile is left
//! for another). With a task per connection (hyper-util's pooled client), each chunk of an
//! answer was a hop between two tasks, the connection's and the reader's, and a call made four
//! or more of them; past tokio's third hop in a row the next went through the run queue and
//! woke the other worker to steal it. Here the connection wakes its reader inside one poll, and
//! [`Lease::drive`] polls both again at once instead of handing the wake to the scheduler (the
//! eighth round's pool did so too, BENCHMARKS.md; hyper-util, which replaced it, cannot).
//!
//! The connector keeps what the bridge needs of every connection to a server: addresses
//! resolved and checked by the guard, Nagle off, HTTPS verified as reqwest does
//! (`rustls-platform-verifier`, in the one configuration every server shares:
//! [`crate::guard::tls_config`]), and `TCP_QUICKACK` after every read. Reused, a connection
//! stalls where the server's Nagle algorithm holds the rest of an answer until the first part is
//! acknowledged, and the bridge's delayed ACK waits 40 ms for something to send back; the quick
//! ACK sends the pending one at once, whatever the server does.

use std::future::{Future, poll_fn};
use std::io;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use axum::http::uri::{Authority, Scheme};
use axum::http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, Uri};
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::{Body as _, Frame, Incoming, SizeHint};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio::time::Instant;

use crate::guard::{Guard, MAX_REDIRECTS, Refused, Stream};
use crate::wake::Repoller;

/// How long an idle connection is kept: less than the 5 s after which Node.js and uvicorn close
/// an idle connection themselves, so a connection the server is closing is not picked for a call
/// (the call would fail; the soak saw 2 of 1,045,122 calls to server-everything fail so with 30 s).
const IDLE: Duration = Duration::from_secs(4);
/// At most this many idle connections are kept per server (more are opened under load and
/// closed once idle).
const MAX_IDLE: usize = 64;
/// How long the rest of a body being finished is waited for before its connection is closed.
const FINISH: Duration = Duration::from_secs(10);
/// The bytes a stream's connection reads at a time ([`Pool::stream`]). Such a connection waits
/// most of its life between small events, its read buffer held all along: hyper's adaptive one
/// never goes below 8 KiB, about a twentieth of an idle server's memory. hyper takes it as
/// the most an answer's head may be too: a server whose heads are larger (many proxies' headers)
/// has its streams read with the adaptive buffer from then on.
const STREAM_READ: usize = 1024;

type Connection = http1::Connection<Conn, Full<Bytes>>;

/// The connections to one server (and where it redirects, on the same origin).
#[derive(Clone)]
pub struct Pool {
    shared: Arc<Shared>,
    guard: Guard,
}

/// What a pool's clones and the bodies of its answers share.
struct Shared {
    idle: Mutex<Idle>,
    /// Whether an answer's head has been larger than [`STREAM_READ`].
    wide_heads: AtomicBool,
}

#[derive(Default)]
struct Idle {
    /// The most recently used last.
    leases: Vec<Lease>,
    /// Whether a task closes those idle for longer than [`IDLE`].
    sweeping: bool,
}

impl Pool {
    pub fn new(guard: Guard) -> io::Result<Self> {
        // The TLS configuration every upstream shares, made now: a pool that could not verify
        // a server is refused here rather than at each connection.
        crate::guard::tls_config()?;
        let shared = Arc::new(Shared {
            idle: Mutex::new(Idle::default()),
            wide_heads: AtomicBool::new(false),
        });
        Ok(Self { shared, guard })
    }

    /// Sends a request with `body`, following same-origin 307 and 308 redirects (which keep
    /// the method and the body) as the bridge's other HTTP clients do: at most
    /// [`MAX_REDIRECTS`], each checked by the guard.
    pub async fn send(
        &self,
        method: Method,
        uri: Uri,
        headers: &HeaderMap,
        body: Bytes,
    ) -> io::Result<Response<Body>> {
        self.exchange(Use::Pooled, method, uri, headers, body).await
    }

    /// Sends a GET whose answer is a long stream (a server's standalone SSE stream, or a call's
    /// resumed), on a connection of its own that reads [`STREAM_READ`] bytes at a time and is
    /// closed when the stream ends rather than kept: it would read an answer in small bites.
    /// Redirects are followed as by [`Pool::send`].
    pub async fn stream(&self, uri: Uri, headers: &HeaderMap) -> io::Result<Response<Body>> {
        self.exchange(Use::Stream, Method::GET, uri, headers, Bytes::new())
            .await
    }

    async fn exchange(
        &self,
        use_: Use,
        method: Method,
        mut uri: Uri,
        headers: &HeaderMap,
        body: Bytes,
    ) -> io::Result<Response<Body>> {
        for _ in 0..=MAX_REDIRECTS {
            let response = self.send_once(use_, &method, &uri, headers, &body).await?;
            if !matches!(
                response.status(),
                StatusCode::TEMPORARY_REDIRECT | StatusCode::PERMANENT_REDIRECT
            ) {
                return Ok(response);
            }
            let Some(next) = redirect(&uri, &response) else {
                return Ok(response);
            };
            let parsed = url::Url::parse(&next.to_string()).map_err(io::Error::other)?;
            self.guard.check_url(&parsed).map_err(io::Error::other)?;
            uri = next;
        }
        Err(io::Error::other(Refused::Guard(format!(
            "more than {MAX_REDIRECTS} redirects"
        ))))
    }

    /// One request, on an idle connection or a new one; a request an idle connection could not
    /// take, because the server closed it meanwhile, goes on another (as hyper-util's pooled
    /// client did). `Host` names the host (with the port, unless the scheme's own) unless the
    /// headers have one, and the target is the path and query.
    async fn send_once(
        &self,
        use_: Use,
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
        body: &Bytes,
    ) -> io::Result<Response<Body>> {
        let origin =
            Origin::of(uri).ok_or_else(|| failed(uri, &io::Error::other("the URL has no host")))?;
        let mut request = Some(request(method, uri, headers, body, &origin)?);
        loop {
            let idle = match use_ {
                Use::Pooled => self.shared.checkout(&origin),
                Use::Stream => None,
            };
            // A stream's connection reads little at a time, unless the server's heads are larger.
            let narrow = use_ == Use::Stream && !self.shared.wide_heads.load(Ordering::Relaxed);
            let (mut lease, reused) = match idle {
                Some(lease) => (lease, true),
                None => (self.connect(narrow, uri, origin.clone()).await?, false),
            };
            let ready = poll_fn(|cx| lease.drive(cx, |cx, send| send.poll_ready(cx))).await;
            if let Err(error) = ready {
                match reused {
                    true => continue,
                    false => return Err(failed(uri, &error)),
                }
            }
            let Some(next) = request.take() else {
                return Err(failed(uri, &io::Error::other("the request was lost")));
            };
            let mut sent = pin!(lease.send.try_send_request(next));
            match poll_fn(|cx| lease.drive(cx, |cx, _| sent.as_mut().poll(cx))).await {
                Ok(response) => {
                    let shared = (use_ == Use::Pooled).then(|| self.shared.clone());
                    return Ok(response.map(|inner| Body {
                        inner,
                        lease: Some(lease),
                        shared,
                    }));
                }
                // Not sent: the connection was closed before it could take the request.
                Err(mut error) if reused && error.message().is_some() => {
                    request = error.take_message();
                }
                // A head larger than a stream's small reads: read again with hyper's buffer.
                Err(error) if narrow && error.error().is_parse_too_large() => {
                    self.shared.wide_heads.store(true, Ordering::Relaxed);
                    request = Some(self::request(method, uri, headers, body, &origin)?);
                }
                Err(error) => return Err(failed(uri, error.error())),
            }
        }
    }

    /// A new connection to `uri`'s server, reading [`STREAM_READ`] bytes at a time when
    /// `narrow`.
    async fn connect(&self, narrow: bool, uri: &Uri, origin: Origin) -> io::Result<Lease> {
        let stream = open(&self.guard, uri).await.map_err(|e| failed(uri, &e))?;
        let mut builder = http1::Builder::new();
        if narrow {
            builder.read_buf_exact_size(Some(STREAM_READ));
        }
        let (send, conn) = builder
            .handshake(Conn(TokioIo::new(stream)))
            .await
            .map_err(|e| failed(uri, &e))?;
        Ok(Lease {
            send,
            conn: Some(Box::pin(conn)),
            repoller: Repoller::default(),
            origin,
            since: Instant::now(),
        })
    }
}

/// What a connection is for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Use {
    /// Requests and their answers, one after another, the connection kept idle between them.
    Pooled,
    /// One long stream ([`Pool::stream`]).
    Stream,
}

/// The request to send: its target the path and query, its `Host` the URI's unless `headers`
/// name one.
fn request(
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: &Bytes,
    origin: &Origin,
) -> io::Result<Request<Full<Bytes>>> {
    let mut request = Request::new(Full::new(body.clone()));
    *request.method_mut() = method.clone();
    *request.uri_mut() = match uri.path_and_query() {
        Some(target) => Uri::from(target.clone()),
        None => Uri::from_static("/"),
    };
    // Sized for every header at once: a copy of the map would grow to take `Host`.
    let mut all = HeaderMap::with_capacity(headers.len() + 1);
    for (name, value) in headers {
        all.append(name.clone(), value.clone());
    }
    if !all.contains_key(axum::http::header::HOST) {
        let host = origin.host().map_err(|e| failed(uri, &e))?;
        all.insert(axum::http::header::HOST, host);
    }
    *request.headers_mut() = all;
    Ok(request)
}

/// Where a connection goes: only a request to the same scheme, host and port takes it.
#[derive(Clone, PartialEq, Eq)]
struct Origin {
    scheme: Scheme,
    authority: Authority,
}

impl Origin {
    fn of(uri: &Uri) -> Option<Self> {
        Some(Self {
            scheme: uri.scheme()?.clone(),
            authority: uri.authority()?.clone(),
        })
    }

    /// The `Host` of a request: the host, with the port unless it is the scheme's own.
    fn host(&self) -> Result<HeaderValue, axum::http::header::InvalidHeaderValue> {
        let host = self.authority.host();
        let default = match self.scheme == Scheme::HTTPS {
            true => 443,
            false => 80,
        };
        match self.authority.port_u16().filter(|port| *port != default) {
            Some(port) => HeaderValue::try_from(format!("{host}:{port}")),
            None => HeaderValue::try_from(host),
        }
    }
}

impl Shared {
    /// The connection to `origin` used last, unless every idle one is gone.
    fn checkout(&self, origin: &Origin) -> Option<Lease> {
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        let at = idle
            .leases
            .iter()
            .rposition(|lease| lease.origin == *origin)?;
        Some(idle.leases.remove(at))
    }

    /// Keeps `lease`, whose answer was read to its end, for the next request, unless its
    /// connection has ended or cannot take one.
    fn checkin(self: &Arc<Self>, mut lease: Lease) {
        // Polled once more, the connection finishes with the answer and waits for a request
        // (or ends, when the server said it closes it). Nobody waits on it while it is idle.
        let mut unwatched = Context::from_waker(Waker::noop());
        if let Some(conn) = &mut lease.conn
            && conn.as_mut().poll(&mut unwatched).is_ready()
        {
            lease.conn = None;
        }
        if lease.conn.is_none() || !lease.send.is_ready() {
            return;
        }
        lease.since = Instant::now();
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.leases.len() >= MAX_IDLE {
            return;
        }
        idle.leases.push(lease);
        // Where no runtime is current, as when everything is torn down, nothing is swept: the
        // pool goes with the rest.
        if !idle.sweeping
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            idle.sweeping = true;
            runtime.spawn(sweep(Arc::downgrade(self)));
        }
    }
}

/// Closes the connections of a pool that have been idle for [`IDLE`], until none is left idle
/// or the pool is gone.
async fn sweep(shared: Weak<Shared>) {
    loop {
        let next = {
            let Some(shared) = shared.upgrade() else {
                return;
            };
            let mut idle = shared.idle.lock().unwrap_or_else(|e| e.into_inner());
            let now = Instant::now();
            idle.leases.retain(|lease| now < lease.since + IDLE);
            match idle.leases.iter().map(|lease| lease.since).min() {
                Some(oldest) => oldest + IDLE,
                None => {
                    idle.sweeping = false;
                    return;
                }
            }
        };
        tokio::time::sleep_until(next).await;
    }
}

/// One connection, and the request sender of it, with what polls it.
struct Lease {
    send: http1::SendRequest<Full<Bytes>>,
    /// None once the connection has ended.
    conn: Option<Pin<Box<Connection>>>,
    repoller: Repoller,
    origin: Origin,
    /// When it was last put back idle.
    since: Instant,
}

impl Lease {
    /// Polls `step` (sending on the connection, or reading its answer's body) with the
    /// connection polled before it, under a waker of their own ([`Repoller`]): a wake one of
    /// them gives the other while they are polled makes another round here, not a trip through
    /// the scheduler; any other goes to the task polling (`cx`).
    fn drive<T>(
        &mut self,
        cx: &mut Context<'_>,
        mut step: impl FnMut(&mut Context<'_>, &mut http1::SendRequest<Full<Bytes>>) -> Poll<T>,
    ) -> Poll<T> {
        let Lease {
            send,
            conn,
            repoller,
            ..
        } = self;
        repoller.poll(cx, |cx| {
            if let Some(driven) = conn
                && driven.as_mut().poll(cx).is_ready()
            {
                // Ended (closed, or failed: what was reading from it gets the error).
                *conn = None;
            }
            step(cx, send)
        })
    }
}

/// The body of an answer, which drives its connection while it is read, and gives the
/// connection back to the pool once read to its end (dropped before, it closes it).
pub struct Body {
    inner: Incoming,
    /// None once given back or closed.
    lease: Option<Lease>,
    /// Where the connection goes back to; None for a stream's, closed at its end.
    shared: Option<Arc<Shared>>,
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let Body {
            inner,
            lease,
            shared,
        } = self.get_mut();
        let polled = match lease {
            Some(lease) => lease.drive(cx, |cx, _| Pin::new(&mut *inner).poll_frame(cx)),
            None => Pin::new(inner).poll_frame(cx),
        };
        match &polled {
            Poll::Ready(None) => {
                if let (Some(lease), Some(shared)) = (lease.take(), shared) {
                    shared.checkin(lease);
                }
            }
            Poll::Ready(Some(Err(_))) => *lease = None,
            _ => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl std::fmt::Debug for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Body")
            .field("inner", &self.inner)
            .field("pooled", &self.lease.is_some())
            .finish()
    }
}

impl Drop for Body {
    fn drop(&mut self) {
        // An answer without a body (a notification's 202) is over unread.
        if let (Some(lease), Some(shared)) = (self.lease.take(), &self.shared)
            && self.inner.is_end_stream()
        {
            shared.checkin(lease);
        }
    }
}

/// Reads the rest of `body` (a server ends an SSE answer after the answer) apart, so that its
/// connection goes back to the pool; dropped before its end, it would close the connection.
/// What has come already is read here, which is often all of it, without a task.
pub fn finish(mut body: Body) {
    use futures::FutureExt;
    use http_body_util::BodyExt;
    loop {
        match body.frame().now_or_never() {
            // The rest of an answered stream is not for anyone.
            Some(Some(Ok(_))) => continue,
            Some(None | Some(Err(_))) => return,
            None => break,
        }
    }
    // A body may be finished where no runtime is current, as when everything is torn down:
    // dropped then, and its connection with it.
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(async move {
            // Each frame dropped as it comes: nothing of the rest is kept, however much comes.
            let drained = async { while let Some(Ok(_)) = body.frame().await {} };
            let _ = tokio::time::timeout(FINISH, drained).await;
        });
    }
}

/// A request that failed, said as reqwest says it: the URL (redacted where it is shown) and
/// every cause in the error's chain, as hyper's own message names only what failed ("connection
/// closed before message completed"), not why.
fn failed(uri: &Uri, error: &dyn std::error::Error) -> io::Error {
    let mut message = format!("error sending request for url ({uri})");
    let mut cause = Some(error);
    while let Some(error) = cause {
        message.push_str(&format!(": {error}"));
        cause = error.source();
    }
    io::Error::other(message)
}

/// Where `response` redirects a request to `uri`, if that is on the same origin.
fn redirect<B>(uri: &Uri, response: &Response<B>) -> Option<Uri> {
    let location = response
        .headers()
        .get(axum::http::header::LOCATION)?
        .to_str()
        .ok()?;
    let base = url::Url::parse(&uri.to_string()).ok()?;
    let next = base.join(location).ok()?;
    (next.origin() == base.origin())
        .then(|| next.as_str().parse().ok())
        .flatten()
}

/// A connection to `uri`'s server, at an address the guard allows, with Nagle off.
async fn open(guard: &Guard, uri: &Uri) -> io::Result<Stream> {
    let host = uri.host().unwrap_or_default();
    let https = uri.scheme() == Some(&Scheme::HTTPS);
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    let addrs = guard.resolve(host, port).await.map_err(io::Error::other)?;
    let tcp = TcpStream::connect(addrs.as_slice()).await?;
    tcp.set_nodelay(true)?;
    Ok(match https {
        true => Stream::Left(crate::guard::tls(host, tcp).await?),
        false => Stream::Right(tcp),
    })
}

/// One connection, as hyper reads and writes it.
struct Conn(TokioIo<Stream>);

impl hyper::rt::Read for Conn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let read = Pin::new(&mut this.0).poll_read(cx, buf);
        if matches!(read, Poll::Ready(Ok(()))) {
            // Not permanent in Linux: set again after each read. Failing is harmless (slower).
            let tcp = crate::guard::tcp(this.0.inner());
            let _ = socket2::SockRef::from(tcp).set_tcp_quickack(true);
        }
        read
    }
}

impl hyper::rt::Write for Conn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// What a test server saw: the connections it accepted, and the head of each request.
    #[derive(Default)]
    struct Seen {
        accepted: AtomicUsize,
        heads: Mutex<Vec<String>>,
    }

    /// A server on loopback that answers every request on a connection with `answer`, and closes
    /// the connection after `per_connection` answers.
    async fn server(answer: &'static str, per_connection: usize) -> (Uri, Arc<Seen>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let uri = format!("http://{}/mcp", listener.local_addr().unwrap());
        let seen = Arc::new(Seen::default());
        let kept = seen.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                kept.accepted.fetch_add(1, Ordering::SeqCst);
                let kept = kept.clone();
                tokio::spawn(async move {
                    let mut buffer = Vec::new();
                    for _ in 0..per_connection {
                        // Every request here has a body of 2 bytes, after its head.
                        let head = |buffer: &[u8]| {
                            let at = buffer.windows(4).position(|w| w == b"\r\n\r\n")?;
                            (buffer.len() >= at + 4 + 2).then_some(at)
                        };
                        let at = loop {
                            if let Some(at) = head(&buffer) {
                                break at;
                            }
                            let mut chunk = [0; 4096];
                            match stream.read(&mut chunk).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
                            }
                        };
                        let text = String::from_utf8_lossy(&buffer[..at]).into_owned();
                        kept.heads.lock().unwrap().push(text);
                        buffer.clear();
                        if stream.write_all(answer.as_bytes()).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        (uri.parse().unwrap(), seen)
    }

    /// `POST uri` with `headers` and a body of 2 bytes, as the test server expects.
    async fn send_with(pool: &Pool, uri: &Uri, headers: &HeaderMap) -> Response<Body> {
        let body = Bytes::from_static(b"{}");
        pool.send(Method::POST, uri.clone(), headers, body)
            .await
            .unwrap()
    }

    async fn send(pool: &Pool, uri: &Uri) -> Response<Body> {
        send_with(pool, uri, &HeaderMap::new()).await
    }

    /// `send`, its answer read whole.
    async fn post(pool: &Pool, uri: &Uri) -> (StatusCode, Bytes) {
        let response = send(pool, uri).await;
        let status = response.status();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (status, bytes)
    }

    const OK: &str = "HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello";

    fn hello() -> (StatusCode, Bytes) {
        (StatusCode::OK, Bytes::from("hello"))
    }

    #[tokio::test]
    async fn requests_one_after_another_share_one_connection() {
        let (uri, seen) = server(OK, usize::MAX).await;
        let pool = Pool::new(Guard::new(true)).unwrap();
        for _ in 0..5 {
            assert_eq!(post(&pool, &uri).await, hello());
        }
        assert_eq!(seen.accepted.load(Ordering::SeqCst), 1);
    }

    /// A server that closed a connection while it was idle: the request goes on a new one.
    #[tokio::test]
    async fn a_connection_the_server_closed_while_idle_is_not_used_again() {
        let (uri, seen) = server(OK, 1).await;
        let pool = Pool::new(Guard::new(true)).unwrap();
        for n in 1..=3 {
            assert_eq!(post(&pool, &uri).await, hello());
            // Time for the server's FIN to arrive.
            tokio::time::sleep(Duration::from_millis(50)).await;
            assert_eq!(seen.accepted.load(Ordering::SeqCst), n);
        }
    }

    /// An answer without a body (a notification's 202), dropped unread, keeps its connection.
    #[tokio::test]
    async fn an_answer_without_a_body_keeps_its_connection() {
        let accepted_answer = "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n";
        let (uri, seen) = server(accepted_answer, usize::MAX).await;
        let pool = Pool::new(Guard::new(true)).unwrap();
        for _ in 0..3 {
            assert_eq!(send(&pool, &uri).await.status(), StatusCode::ACCEPTED);
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(seen.accepted.load(Ordering::SeqCst), 1);
    }

    /// A body left to [`finish`] gives its connection back once read to its end.
    #[tokio::test]
    async fn a_finished_answer_gives_its_connection_back() {
        let (uri, seen) = server(OK, usize::MAX).await;
        let pool = Pool::new(Guard::new(true)).unwrap();
        for _ in 0..3 {
            finish(send(&pool, &uri).await.into_body());
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(seen.accepted.load(Ordering::SeqCst), 1);
    }

    /// An answer that comes in parts, apart in time, is read as they come (its reader drives
    /// the connection, which has no task of its own), and its connection is used again.
    #[tokio::test]
    async fn an_answer_in_parts_is_read_whole_and_its_connection_kept() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let uri: Uri = format!("http://{}/mcp", listener.local_addr().unwrap())
            .parse()
            .unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let counted = accepted.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut chunk = [0; 4096];
                    // One request a read: each here is small, and sent at once.
                    while let Ok(1..) = stream.read(&mut chunk).await {
                        let head = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n";
                        let parts = [head, "5\r\nhello\r\n", "6\r\n world\r\n", "0\r\n\r\n"];
                        for part in parts {
                            if stream.write_all(part.as_bytes()).await.is_err() {
                                return;
                            }
                            tokio::time::sleep(Duration::from_millis(20)).await;
                        }
                    }
                });
            }
        });
        let pool = Pool::new(Guard::new(true)).unwrap();
        for _ in 0..3 {
            let (status, bytes) = post(&pool, &uri).await;
            assert_eq!(
                (status, bytes),
                (StatusCode::OK, Bytes::from("hello world"))
            );
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 1);
    }

    /// A server that answers every request with `answer` (one request a read: each here is
    /// small, and sent at once), and the count of connections it accepted.
    async fn answering(answer: String) -> (Uri, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let uri = format!("http://{}/mcp", listener.local_addr().unwrap());
        let accepted = Arc::new(AtomicUsize::new(0));
        let counted = accepted.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                counted.fetch_add(1, Ordering::SeqCst);
                let answer = answer.clone();
                tokio::spawn(async move {
                    let mut chunk = [0; 4096];
                    while let Ok(1..) = stream.read(&mut chunk).await {
                        if stream.write_all(answer.as_bytes()).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        (uri.parse().unwrap(), accepted)
    }

    /// A stream's GET goes on a connection of its own, which reads an answer larger than its
    /// read size whole and is closed at its end, not kept: the POSTs keep theirs.
    #[tokio::test]
    async fn a_stream_has_a_connection_of_its_own_closed_at_its_end() {
        let event = "x".repeat(3 * STREAM_READ);
        let answer = format!(
            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{event}",
            event.len()
        );
        let (uri, accepted) = answering(answer).await;
        let pool = Pool::new(Guard::new(true)).unwrap();
        assert_eq!(post(&pool, &uri).await.1, event);
        for opened in 2..=3 {
            let response = pool.stream(uri.clone(), &HeaderMap::new()).await.unwrap();
            let bytes = response.into_body().collect().await.unwrap().to_bytes();
            assert_eq!(bytes, event);
            assert_eq!(accepted.load(Ordering::SeqCst), opened);
        }
        let idle = pool.shared.idle.lock().unwrap().leases.len();
        assert_eq!(idle, 1, "only the POST's connection is kept");
        assert_eq!(post(&pool, &uri).await.1, event);
        assert_eq!(accepted.load(Ordering::SeqCst), 3);
    }

    /// A stream whose answer's head is larger than a stream's reads is read again with hyper's
    /// own buffer, and the server's next streams are read so at once.
    #[tokio::test]
    async fn a_stream_with_a_large_head_is_read_with_a_larger_buffer() {
        let padding = "p".repeat(3 * STREAM_READ);
        let answer =
            format!("HTTP/1.1 200 OK\r\nx-padding: {padding}\r\ncontent-length: 5\r\n\r\nhello");
        let (uri, accepted) = answering(answer).await;
        let pool = Pool::new(Guard::new(true)).unwrap();
        for opened in [2, 3] {
            let response = pool.stream(uri.clone(), &HeaderMap::new()).await.unwrap();
            assert_eq!(response.headers()["x-padding"], padding.as_str());
            let bytes = response.into_body().collect().await.unwrap().to_bytes();
            assert_eq!(bytes, "hello");
            assert_eq!(accepted.load(Ordering::SeqCst), opened);
        }
    }

    /// An address the guard refuses is not connected to, and the error says why.
    #[tokio::test]
    async fn the_guard_refuses_what_it_does_not_allow() {
        let pool = Pool::new(Guard::new(false)).unwrap();
        let uri: Uri = "http://169.254.169.254/mcp".parse().unwrap();
        let headers = HeaderMap::new();
        let error = pool
            .send(Method::POST, uri, &headers, Bytes::from_static(b"{}"))
            .await
            .unwrap_err()
            .to_string();
        let expected = "error sending request for url (http://169.254.169.254/mcp): \
                        refused by the upstream address guard";
        assert!(error.starts_with(expected), "{error}");
    }

    /// The head of the first request the test server saw.
    fn head(seen: &Seen) -> String {
        seen.heads.lock().unwrap()[0].clone()
    }

    #[tokio::test]
    async fn a_request_names_its_path_and_its_host_as_http_1_1_wants() {
        let (uri, seen) = server(OK, usize::MAX).await;
        let pool = Pool::new(Guard::new(true)).unwrap();
        let with_query: Uri = format!("{uri}?x=1").parse().unwrap();
        send(&pool, &with_query).await;
        let head = head(&seen);
        let authority = uri.authority().unwrap().as_str();
        assert!(head.starts_with("POST /mcp?x=1 HTTP/1.1\r\n"), "{head}");
        assert!(head.contains(&format!("\r\nhost: {authority}")), "{head}");
    }

    #[tokio::test]
    async fn a_request_keeps_every_header_and_a_configured_host() {
        let (uri, seen) = server(OK, usize::MAX).await;
        let pool = Pool::new(Guard::new(true)).unwrap();
        let mut headers = HeaderMap::new();
        headers.append("x-tag", "a".parse().unwrap());
        headers.append("x-tag", "b".parse().unwrap());
        headers.insert(axum::http::header::HOST, "front.example".parse().unwrap());
        send_with(&pool, &uri, &headers).await;
        let head = head(&seen);
        assert!(head.contains("\r\nx-tag: a\r\nx-tag: b"), "{head}");
        let hosts: Vec<_> = head.lines().filter(|l| l.starts_with("host:")).collect();
        assert_eq!(hosts, ["host: front.example"]);
    }
}
