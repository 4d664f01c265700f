//! The connections a Streamable HTTP server's POSTs go over, kept alive and reused: hyper-util's
//! pooled client, over a connector of the bridge's own. Opening one per call cost the bridge
//! and the server a TCP handshake, a spawned connection task and an accept each call.
//!
//! The connector keeps what the bridge needs of every connection to a server: addresses
//! resolved and checked by the guard, Nagle off, HTTPS verified as reqwest does
//! (`rustls-platform-verifier`, in the one configuration every server shares:
//! [`crate::guard::tls_config`]), and `TCP_QUICKACK` after every read. Reused, a connection
//! stalls where the server's Nagle algorithm holds the rest of an answer until the first part is
//! acknowledged, and the bridge's delayed ACK waits 40 ms for something to send back; the quick
//! ACK sends the pending one at once, whatever the server does.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::http::{HeaderMap, Method, Request, Response, StatusCode, Uri};
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::net::TcpStream;

use crate::guard::{Guard, MAX_REDIRECTS, Refused, Stream};

/// How long an idle connection is kept: less than the 5 s after which Node.js and uvicorn close
/// an idle connection themselves, so a connection the server is closing is not picked for a call
/// (the call would fail; the soak saw 2 of 1,045,122 calls to server-everything fail so with 30 s).
const IDLE: Duration = Duration::from_secs(4);
/// At most this many idle connections are kept per server (more are opened under load and
/// closed once idle).
const MAX_IDLE: usize = 64;
/// How long the rest of a body being finished is waited for before its connection is closed.
const FINISH: Duration = Duration::from_secs(10);

/// The connections to one server (and where it redirects, on the same origin).
#[derive(Clone)]
pub struct Pool {
    client: Client<Connector, Full<Bytes>>,
    guard: Guard,
}

impl Pool {
    pub fn new(guard: Guard) -> io::Result<Self> {
        // The TLS configuration every upstream shares, made now: a pool that could not verify
        // a server is refused here rather than at each connection.
        crate::guard::tls_config()?;
        let connector = Connector { guard };
        // A request that a reused connection could not send, because the server closed it
        // meanwhile, goes again on another: hyper-util's default, kept.
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(IDLE)
            .pool_max_idle_per_host(MAX_IDLE)
            .pool_timer(TokioTimer::new())
            .build(connector);
        Ok(Self { client, guard })
    }

    /// Sends a request with `body`, following same-origin 307 and 308 redirects (which keep
    /// the method and the body) as the bridge's other HTTP clients do: at most
    /// [`MAX_REDIRECTS`], each checked by the guard.
    pub async fn send(
        &self,
        method: Method,
        mut uri: Uri,
        headers: &HeaderMap,
        body: Bytes,
    ) -> io::Result<Response<Incoming>> {
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
            self.guard.check_url(&parsed).map_err(io::Error::other)?;
            uri = next;
        }
        Err(io::Error::other(Refused::Guard(format!(
            "more than {MAX_REDIRECTS} redirects"
        ))))
    }

    /// One request, on an idle connection or a new one. hyper-util names the host in `Host`
    /// (with the port, unless the scheme's own) unless the headers have one, and sends the path
    /// and query as the target.
    async fn send_once(
        &self,
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
        body: &Bytes,
    ) -> io::Result<Response<Incoming>> {
        let mut request = Request::new(Full::new(body.clone()));
        *request.method_mut() = method.clone();
        *request.uri_mut() = uri.clone();
        // Sized for every header at once: a copy of the map would grow to take `Host`.
        let mut all = HeaderMap::with_capacity(headers.len() + 1);
        for (name, value) in headers {
            all.append(name.clone(), value.clone());
        }
        *request.headers_mut() = all;
        self.client
            .request(request)
            .await
            .map_err(|error| failed(uri, &error))
    }
}

/// Reads the rest of `body` (a server ends an SSE answer after the answer) apart, so that its
/// connection goes back to the pool; dropped before its end, it would close the connection.
/// What has come already is read here, which is often all of it, without a task.
pub fn finish(mut body: Incoming) {
    use futures::FutureExt;
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
/// closed before message completed"), not why. hyper-util's own error names only the step
/// ("client error (Connect)"): its causes are enough, when it has any.
fn failed(uri: &Uri, error: &hyper_util::client::legacy::Error) -> io::Error {
    let mut message = format!("error sending request for url ({uri})");
    let mut cause: Option<&dyn std::error::Error> = match std::error::Error::source(error) {
        Some(source) => Some(source),
        None => Some(error),
    };
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

/// Opens connections to addresses the guard allows, with Nagle off: the service hyper-util's
/// client asks for a connection to a URI.
#[derive(Clone)]
struct Connector {
    guard: Guard,
}

impl tower::Service<Uri> for Connector {
    type Response = Conn;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<Conn>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let connector = self.clone();
        Box::pin(async move { connector.open(&uri).await })
    }
}

impl Connector {
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
        let stream = match https {
            true => Stream::Left(crate::guard::tls(&host, tcp).await?),
            false => Stream::Right(tcp),
        };
        Ok(Conn(TokioIo::new(stream)))
    }
}

/// One connection, as hyper reads and writes it.
struct Conn(TokioIo<Stream>);

impl Connection for Conn {
    fn connected(&self) -> Connected {
        Connected::new()
    }
}

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
    async fn send_with(pool: &Pool, uri: &Uri, headers: &HeaderMap) -> Response<Incoming> {
        let body = Bytes::from_static(b"{}");
        pool.send(Method::POST, uri.clone(), headers, body)
            .await
            .unwrap()
    }

    async fn send(pool: &Pool, uri: &Uri) -> Response<Incoming> {
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
            // Time for the connection to go back to the pool, which hyper-util does in a task.
            tokio::time::sleep(Duration::from_millis(10)).await;
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
