//! The connections a Streamable HTTP server's POSTs go over, kept alive and reused. Opening one
//! per call cost the bridge and the server a TCP handshake, a spawned connection task and an
//! accept each call. Reused, a connection stalls where the server's Nagle algorithm holds the
//! rest of an answer until the first part is acknowledged, and the bridge's delayed ACK waits
//! 40 ms for something to send back: so every read here is followed by `TCP_QUICKACK`, which
//! sends the pending ACK at once, whatever the server does. Addresses are resolved and checked
//! by the guard, as for every other connection to a server; HTTPS is verified as reqwest does
//! (`rustls-platform-verifier`).

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use axum::http::header::HOST;
use axum::http::uri::Authority;
use axum::http::{HeaderValue, Method, Request, Response, StatusCode, Uri};
use bytes::Bytes;
use futures::FutureExt;
use http_body_util::BodyExt;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tokio_tungstenite::MaybeTlsStream;

use crate::guard::{Guard, MAX_REDIRECTS, Refused};

/// How long an idle connection is kept: less than the 5 s after which Node.js and uvicorn close
/// an idle connection themselves, so a connection the server is closing is not picked for a call
/// (the call would fail; the soak saw 2 of 1,045,122 calls to server-everything fail so with 30 s).
const IDLE: Duration = Duration::from_secs(4);
/// At most this many idle connections are kept per server (more are opened under load and
/// closed once idle).
const MAX_IDLE: usize = 64;
/// How long the rest of a body being finished is waited for before its connection is closed.
const FINISH: Duration = Duration::from_secs(10);

/// A pool of connections to one server's origin (and where it redirects, on the same origin).
///
/// Each connection is hyper's own HTTP/1.1 client connection; the pool is a stack of the idle
/// ones. hyper-util's pool, used before, keyed its connections by origin in a SipHash map and
/// spawned a task per request to put its connection back: some 11k instructions a call
/// (BENCHMARKS.md, fifth round). Here an answer's body puts its connection back once read to
/// its end; a connection whose answer was dropped before is closed, as hyper would not reuse it.
///
/// A connection has no task of its own: whoever waits on it drives it ([`Link`]), the caller
/// while it sends and reads the answer, the pool when it looks for an idle one.
#[derive(Clone)]
pub struct Pool {
    shared: Arc<Shared>,
}

struct Shared {
    connector: Connector,
    /// The idle connections, the most recently used last.
    idle: Mutex<Vec<Idle>>,
    /// Answers whose caller has what it wanted while the rest of the body (usually just its
    /// end) is still on its way, each with when it was put here: see [`PooledBody::finish`].
    finishing: Mutex<Vec<(PooledBody, Instant)>>,
    /// Whether a task is closing the connections idle for longer than [`IDLE`].
    reaping: Mutex<bool>,
    /// `Host` for the pool's origin (redirects stay on it), made once.
    host: OnceLock<(Authority, HeaderValue)>,
}

struct Idle {
    link: Link,
    since: Instant,
}

type Connection = hyper::client::conn::http1::Connection<Conn, Full<Bytes>>;

/// One connection: hyper's handle to send requests on it, and the connection itself, polled by
/// whoever waits on it rather than by a task of its own.
///
/// With a task of its own, an answer crossed between two tasks four times (its head to the
/// caller, the caller's wish for the body back, the body, the room for more back). Tokio runs
/// a task woken by the running one next on the same thread, but only three times in a row: the
/// fourth wake went to the other worker, a `futex` wake and a second thread up on every call
/// (BENCHMARKS.md, eighth round). Driven by the caller, those wakes are the caller's own.
struct Link {
    sender: SendRequest<Full<Bytes>>,
    /// None once it has finished (closed by either end, or failed): dropped then, as a task of
    /// its own would have dropped it, which fails whatever was still waiting on it.
    connection: Option<Pin<Box<Connection>>>,
}

impl Link {
    /// Lets the connection read and write what it can.
    fn drive(&mut self, cx: &mut Context<'_>) {
        let Some(connection) = self.connection.as_mut() else {
            return;
        };
        if let Poll::Ready(result) = connection.as_mut().poll(cx) {
            self.connection = None;
            if let Err(error) = result {
                tracing::debug!(%error, "a pooled connection ended");
            }
        }
    }

    /// Whether the connection is known to be closed, without reading what has come on it.
    fn ended(&self) -> bool {
        self.connection.is_none() || self.sender.is_closed()
    }

    /// Whether the connection is closed, as far as what has come on it tells without waiting.
    fn is_closed(&mut self) -> bool {
        self.drive(&mut Context::from_waker(std::task::Waker::noop()));
        self.ended()
    }

    /// Waits until a request can be sent.
    async fn ready(&mut self) -> hyper::Result<()> {
        std::future::poll_fn(|cx| {
            self.drive(cx);
            self.sender.poll_ready(cx)
        })
        .await
    }

    /// Sends `request` and waits for the head of its answer.
    async fn send(&mut self, request: Request<Full<Bytes>>) -> hyper::Result<Response<Incoming>> {
        let mut answer = std::pin::pin!(self.sender.send_request(request));
        std::future::poll_fn(|cx| {
            self.drive(cx);
            answer.as_mut().poll(cx)
        })
        .await
    }
}

impl Shared {
    /// `Host` for `uri`, the one made for the pool's origin when `uri` is on it.
    fn host(&self, uri: &Uri) -> io::Result<HeaderValue> {
        let authority = uri.authority();
        match self.host.get() {
            Some((known, host)) if Some(known) == authority => Ok(host.clone()),
            Some(_) => host_of(uri),
            None => {
                let host = host_of(uri)?;
                if let Some(authority) = authority {
                    let _ = self.host.set((authority.clone(), host.clone()));
                }
                Ok(host)
            }
        }
    }

    fn idle(&self) -> MutexGuard<'_, Vec<Idle>> {
        lock(&self.idle)
    }

    /// The most recently used idle connection that is still open (bodies finished first).
    fn take(&self) -> Option<Link> {
        self.finish();
        let mut idle = self.idle();
        while let Some(Idle { mut link, since }) = idle.pop() {
            if since.elapsed() < IDLE && !link.is_closed() {
                return Some(link);
            }
        }
        None
    }

    /// Reads what has come of the bodies being finished: one that has ended has put its
    /// connection back; one past [`FINISH`] is dropped, and its connection closed.
    fn finish(&self) {
        let mut bodies = {
            let mut finishing = lock(&self.finishing);
            if finishing.is_empty() {
                return;
            }
            std::mem::take(&mut *finishing)
        };
        // Polled without the lock: a body that ends puts its connection back.
        bodies.retain_mut(|(body, since)| {
            loop {
                match body.frame().now_or_never() {
                    // The rest of an answered stream is not for anyone.
                    Some(Some(Ok(_))) => continue,
                    Some(None | Some(Err(_))) => break false,
                    None => break since.elapsed() < FINISH,
                }
            }
        });
        let mut finishing = lock(&self.finishing);
        match finishing.is_empty() {
            // The list keeps its room, for the next answer's body.
            true => std::mem::swap(&mut *finishing, &mut bodies),
            false => finishing.append(&mut bodies),
        }
    }

    /// Starts the task that closes idle connections, unless it runs.
    fn reap(self: &Arc<Self>) {
        let mut reaping = lock(&self.reaping);
        // A body may be dropped (and give its connection back) where no runtime is current, as
        // when everything is torn down: no task then, and none needed.
        if !*reaping && let Ok(runtime) = tokio::runtime::Handle::try_current() {
            *reaping = true;
            runtime.spawn(reap(Arc::downgrade(self)));
        }
    }

    /// Keeps `link`, whose answer has been read, for the next request. It is not driven here:
    /// [`Shared::take`] looks at what has come on it when it is next picked.
    fn give_back(self: &Arc<Self>, link: Link) {
        if link.ended() {
            return;
        }
        {
            let mut idle = self.idle();
            if idle.len() >= MAX_IDLE {
                return;
            }
            idle.push(Idle {
                link,
                since: Instant::now(),
            });
        }
        self.reap();
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Closes the connections of a pool that have been idle for longer than [`IDLE`], and finishes
/// the bodies left to it (see [`PooledBody::finish`]), until none of either is left or the pool
/// is gone.
async fn reap(shared: Weak<Shared>) {
    loop {
        tokio::time::sleep(IDLE).await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        shared.finish();
        let mut idle = shared.idle();
        idle.retain_mut(|kept| kept.since.elapsed() < IDLE && !kept.link.is_closed());
        if idle.is_empty() && lock(&shared.finishing).is_empty() {
            // Under the idle list's lock: a connection given back now starts a new task.
            *lock(&shared.reaping) = false;
            return;
        }
    }
}

impl Pool {
    pub fn new(guard: Guard) -> io::Result<Self> {
        let connector = Connector {
            guard,
            tls: Arc::new(tls_config()?),
        };
        let shared = Shared {
            connector,
            idle: Mutex::default(),
            finishing: Mutex::default(),
            reaping: Mutex::new(false),
            host: OnceLock::new(),
        };
        Ok(Self {
            shared: Arc::new(shared),
        })
    }

    /// Sends a request with `body`, following same-origin 307 and 308 redirects (which keep
    /// the method and the body) as the bridge's other HTTP clients do: at most
    /// [`MAX_REDIRECTS`], each checked by the guard.
    pub async fn send(
        &self,
        method: Method,
        mut uri: Uri,
        headers: &axum::http::HeaderMap,
        body: Bytes,
    ) -> io::Result<Response<PooledBody>> {
        for _ in 0..=MAX_REDIRECTS {
            let response = self.send_once(&method, &uri, headers, &body).await?;
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
            self.shared
                .connector
                .guard
                .check_url(&parsed)
                .map_err(io::Error::other)?;
            uri = next;
        }
        Err(io::Error::other(Refused::Guard(format!(
            "more than {MAX_REDIRECTS} redirects"
        ))))
    }

    /// One request, on an idle connection or a new one. A request that an idle connection
    /// failed to send (the server closed it meanwhile) goes once more on a new connection.
    async fn send_once(
        &self,
        method: &Method,
        uri: &Uri,
        headers: &axum::http::HeaderMap,
        body: &Bytes,
    ) -> io::Result<Response<PooledBody>> {
        let host = self.shared.host(uri)?;
        let mut idle = self.shared.take();
        loop {
            let reused = idle.is_some();
            let mut link = match idle.take() {
                Some(link) => link,
                None => self.shared.connector.connect(uri).await?,
            };
            let request = request(method, uri, &host, headers, body);
            let sent = match link.ready().await {
                Ok(()) => link.send(request).await,
                Err(error) => Err(error),
            };
            match sent {
                Ok(response) => {
                    let link = Some((link, Arc::downgrade(&self.shared)));
                    return Ok(response.map(|incoming| PooledBody { incoming, link }));
                }
                Err(error) if reused && (error.is_canceled() || error.is_closed()) => {
                    idle = self.shared.take();
                }
                Err(error) => return Err(failed(uri, &error)),
            }
        }
    }
}

/// An HTTP/1.1 request for `uri` as sent on a connection to its origin: its path and query as
/// the target, its host (and port, unless the scheme's own) in `Host`.
fn request(
    method: &Method,
    uri: &Uri,
    host: &HeaderValue,
    headers: &axum::http::HeaderMap,
    body: &Bytes,
) -> Request<Full<Bytes>> {
    let mut request = Request::new(Full::new(body.clone()));
    *request.method_mut() = method.clone();
    *request.uri_mut() = match uri.path_and_query() {
        Some(target) => Uri::from(target.clone()),
        None => Uri::from_static("/"),
    };
    // Sized for every header at once: a copy of the map would grow to take `Host`.
    let mut all = axum::http::HeaderMap::with_capacity(headers.len() + 1);
    if !headers.contains_key(HOST) {
        all.insert(HOST, host.clone());
    }
    for (name, value) in headers {
        all.append(name.clone(), value.clone());
    }
    *request.headers_mut() = all;
    request
}

/// `Host` for `uri`: its host, and its port unless the scheme's own.
fn host_of(uri: &Uri) -> io::Result<HeaderValue> {
    let host = uri.host().unwrap_or_default();
    let https = uri.scheme() == Some(&axum::http::uri::Scheme::HTTPS);
    let host = match uri.port_u16() {
        Some(port) if port != if https { 443 } else { 80 } => {
            HeaderValue::try_from(format!("{host}:{port}"))
        }
        _ => HeaderValue::try_from(host),
    };
    host.map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
}

pin_project_lite::pin_project! {
    /// An answer's body: read to its end, it puts its connection back into the pool. Reading
    /// it drives the connection.
    pub struct PooledBody {
        #[pin]
        incoming: Incoming,
        link: Option<(Link, Weak<Shared>)>,
    }

    impl PinnedDrop for PooledBody {
        fn drop(this: Pin<&mut Self>) {
            // An answer with no body (a notification's 202) or read to its end without a look
            // for more keeps its connection; any other is closed, its answer not read.
            let this = this.project();
            if http_body::Body::is_end_stream(&*this.incoming)
                && let Some((link, pool)) = this.link.take()
                && let Some(pool) = pool.upgrade()
            {
                pool.give_back(link);
            }
        }
    }
}

impl PooledBody {
    /// Leaves the rest of the body to the pool, which reads it (usually just its end, not yet
    /// come) when it next looks for a connection, and so takes the connection back, without a
    /// task of its own for each answer. A body whose connection is not the pool's is dropped.
    pub fn finish(mut self) {
        let Some(pool) = self.link.as_ref().and_then(|(_, pool)| pool.upgrade()) else {
            return;
        };
        // What has come already is read here; a body that has ended (or failed) is done.
        loop {
            match self.frame().now_or_never() {
                Some(Some(Ok(_))) => continue,
                Some(None | Some(Err(_))) => return,
                None => break,
            }
        }
        {
            // Under the idle list's lock, where the reaper decides to stop.
            let _idle = pool.idle();
            lock(&pool.finishing).push((self, Instant::now()));
        }
        pool.reap();
    }
}

impl http_body::Body for PooledBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, hyper::Error>>> {
        let mut this = self.project();
        // Asked first, the body tells the connection it wants data; driven, the connection
        // reads and hands over what has come; asked again, the body has it.
        let frame = match this.incoming.as_mut().poll_frame(cx) {
            Poll::Ready(frame) => frame,
            Poll::Pending => {
                if let Some((link, _)) = this.link.as_mut() {
                    link.drive(cx);
                }
                ready!(this.incoming.as_mut().poll_frame(cx))
            }
        };
        let ended = match &frame {
            None => true,
            Some(Ok(_)) => this.incoming.is_end_stream(),
            Some(Err(_)) => {
                // Not reusable: dropped, the connection closes.
                this.link.take();
                false
            }
        };
        if ended
            && let Some((link, pool)) = this.link.take()
            && let Some(pool) = pool.upgrade()
        {
            pool.give_back(link);
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        self.incoming.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.incoming.size_hint()
    }
}

/// A request that failed, said as reqwest says it: the URL (redacted where it is shown) and
/// every cause in the error's chain, as hyper's own message names only what failed ("connection
/// closed before message completed"), not why.
fn failed(uri: &Uri, error: &dyn std::error::Error) -> io::Error {
    let mut message = format!("error sending request for url ({uri}): {error}");
    let mut source = error.source();
    while let Some(cause) = source {
        message.push_str(&format!(": {cause}"));
        source = cause.source();
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

fn tls_config() -> io::Result<rustls::ClientConfig> {
    let provider = rustls::crypto::CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::ring::default_provider()));
    let verifier =
        rustls_platform_verifier::Verifier::new(provider.clone()).map_err(io::Error::other)?;
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(io::Error::other)?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// Opens connections to addresses the guard allows, with Nagle off.
struct Connector {
    guard: Guard,
    tls: Arc<rustls::ClientConfig>,
}

impl Connector {
    /// A new connection to `uri`'s origin.
    async fn connect(&self, uri: &Uri) -> io::Result<Link> {
        let stream = self.open(uri).await.map_err(|error| failed(uri, &error))?;
        let (sender, connection) = hyper::client::conn::http1::handshake(stream)
            .await
            .map_err(|error| failed(uri, &error))?;
        Ok(Link {
            sender,
            connection: Some(Box::pin(connection)),
        })
    }

    async fn open(&self, uri: &Uri) -> io::Result<Conn> {
        let host = uri.host().unwrap_or_default().to_owned();
        let https = uri.scheme() == Some(&axum::http::uri::Scheme::HTTPS);
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        let addrs = self
            .guard
            .resolve(&host, port)
            .await
            .map_err(io::Error::other)?;
        let tcp = TcpStream::connect(addrs.as_slice()).await?;
        tcp.set_nodelay(true)?;
        let stream = if https {
            let name = host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned();
            let name = rustls::pki_types::ServerName::try_from(name)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
            let tls = tokio_rustls::TlsConnector::from(self.tls.clone())
                .connect(name, tcp)
                .await?;
            MaybeTlsStream::Rustls(tls)
        } else {
            MaybeTlsStream::Plain(tcp)
        };
        Ok(Conn(TokioIo::new(stream)))
    }
}

/// The TCP socket under `stream`.
fn tcp(stream: &MaybeTlsStream<TcpStream>) -> Option<&TcpStream> {
    match stream {
        MaybeTlsStream::Plain(tcp) => Some(tcp),
        MaybeTlsStream::Rustls(tls) => Some(tls.get_ref().0),
        _ => None,
    }
}

/// One connection, as hyper reads and writes it.
struct Conn(TokioIo<MaybeTlsStream<TcpStream>>);

impl hyper::rt::Read for Conn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let read = Pin::new(&mut this.0).poll_read(cx, buf);
        if matches!(read, Poll::Ready(Ok(())))
            && let Some(tcp) = tcp(this.0.inner())
        {
            // Not permanent in Linux: set again after each read. Failing is harmless (slower).
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
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A server on loopback that answers every request on a connection with `answer`, and closes
    /// the connection after `per_connection` answers; it counts the connections it accepted.
    async fn server(answer: &'static str, per_connection: usize) -> (Uri, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let uri = format!("http://{}/mcp", listener.local_addr().unwrap());
        let accepted = Arc::new(AtomicUsize::new(0));
        let counter = accepted.clone();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                counter.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut buffer = Vec::new();
                    for _ in 0..per_connection {
                        // Every request here has a body of 2 bytes, after its head.
                        let whole = |buffer: &[u8]| {
                            let head = buffer.windows(4).position(|w| w == b"\r\n\r\n");
                            head.is_some_and(|at| buffer.len() >= at + 4 + 2)
                        };
                        while !whole(&buffer) {
                            let mut chunk = [0; 4096];
                            match stream.read(&mut chunk).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
                            }
                        }
                        buffer.clear();
                        if stream.write_all(answer.as_bytes()).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        (uri.parse().unwrap(), accepted)
    }

    /// `POST uri` with a body of 2 bytes, as the test server expects.
    async fn send(pool: &Pool, uri: &Uri) -> Response<PooledBody> {
        let headers = axum::http::HeaderMap::new();
        let body = Bytes::from_static(b"{}");
        pool.send(Method::POST, uri.clone(), &headers, body)
            .await
            .unwrap()
    }

    /// `send`, its answer read whole.
    async fn post(pool: &Pool, uri: &Uri) -> (StatusCode, Bytes) {
        let response = send(pool, uri).await;
        let status = response.status();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (status, bytes)
    }

    const OK: &str = "HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello";

    #[tokio::test]
    async fn requests_one_after_another_share_one_connection() {
        let (uri, accepted) = server(OK, usize::MAX).await;
        let pool = Pool::new(Guard::new(true)).unwrap();
        for _ in 0..5 {
            assert_eq!(
                post(&pool, &uri).await,
                (StatusCode::OK, Bytes::from("hello"))
            );
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 1);
    }

    /// Nothing polls an idle connection: a server that closed it meanwhile is noticed when the
    /// pool next looks for one, and the request goes on a new connection.
    #[tokio::test]
    async fn a_connection_the_server_closed_while_idle_is_not_used_again() {
        let (uri, accepted) = server(OK, 1).await;
        let pool = Pool::new(Guard::new(true)).unwrap();
        for n in 1..=3 {
            assert_eq!(
                post(&pool, &uri).await,
                (StatusCode::OK, Bytes::from("hello"))
            );
            // Time for the server's FIN to arrive.
            tokio::time::sleep(Duration::from_millis(50)).await;
            assert_eq!(accepted.load(Ordering::SeqCst), n);
        }
    }

    /// An answer without a body (a notification's 202), dropped unread, keeps its connection.
    #[tokio::test]
    async fn an_answer_without_a_body_keeps_its_connection() {
        let accepted_answer = "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n";
        let (uri, accepted) = server(accepted_answer, usize::MAX).await;
        let pool = Pool::new(Guard::new(true)).unwrap();
        for _ in 0..3 {
            assert_eq!(send(&pool, &uri).await.status(), StatusCode::ACCEPTED);
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 1);
    }

    /// A body dropped before its end closes its connection; the next request opens another.
    #[tokio::test]
    async fn an_answer_dropped_before_its_end_closes_its_connection() {
        let (uri, accepted) = server(OK, usize::MAX).await;
        let pool = Pool::new(Guard::new(true)).unwrap();
        drop(send(&pool, &uri).await);
        assert_eq!(
            post(&pool, &uri).await,
            (StatusCode::OK, Bytes::from("hello"))
        );
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
    }

    /// What goes on the wire for `url`: the request's target and its `Host`.
    fn sent(url: &str) -> (String, String) {
        let uri: Uri = url.parse().unwrap();
        let headers = axum::http::HeaderMap::new();
        let host = host_of(&uri).unwrap();
        let request = request(&Method::POST, &uri, &host, &headers, &Bytes::new());
        let host = request.headers()[HOST].to_str().unwrap().to_owned();
        (request.uri().to_string(), host)
    }

    #[test]
    fn a_request_names_its_path_and_its_host_as_http_1_1_wants() {
        let pairs = |target: &str, host: &str| (target.to_owned(), host.to_owned());
        assert_eq!(
            sent("http://127.0.0.1:3001/mcp?x=1"),
            pairs("/mcp?x=1", "127.0.0.1:3001")
        );
        assert_eq!(
            sent("http://example.com:80/mcp"),
            pairs("/mcp", "example.com")
        );
        assert_eq!(
            sent("https://example.com:443/a/b"),
            pairs("/a/b", "example.com")
        );
        assert_eq!(
            sent("https://example.com:8443/"),
            pairs("/", "example.com:8443")
        );
        assert_eq!(sent("http://[::1]:8080/mcp"), pairs("/mcp", "[::1]:8080"));
        // No user info reaches `Host`.
        assert_eq!(
            sent("http://u:p@example.com/mcp"),
            pairs("/mcp", "example.com")
        );
    }

    #[test]
    fn a_request_keeps_every_header_and_a_configured_host() {
        let uri: Uri = "http://127.0.0.1:3001/mcp".parse().unwrap();
        let host = host_of(&uri).unwrap();
        let mut headers = axum::http::HeaderMap::new();
        headers.append("x-tag", HeaderValue::from_static("a"));
        headers.append("x-tag", HeaderValue::from_static("b"));
        let sent = request(&Method::POST, &uri, &host, &headers, &Bytes::new());
        let tags: Vec<_> = sent.headers().get_all("x-tag").iter().collect();
        assert_eq!(tags, ["a", "b"]);
        assert_eq!(sent.headers()[HOST], "127.0.0.1:3001");
        headers.insert(HOST, HeaderValue::from_static("front.example"));
        let sent = request(&Method::POST, &uri, &host, &headers, &Bytes::new());
        let hosts: Vec<_> = sent.headers().get_all(HOST).iter().collect();
        assert_eq!(hosts, ["front.example"]);
    }
}
