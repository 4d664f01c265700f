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
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::http::{Method, Request, Response, StatusCode, Uri};
use bytes::Bytes;
use futures::future::BoxFuture;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
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

/// A pool of connections to one server's origin (and where it redirects, on the same origin).
#[derive(Clone)]
pub struct Pool {
    client: Client<Connector, Full<Bytes>>,
    guard: Guard,
}

impl Pool {
    pub fn new(guard: Guard) -> io::Result<Self> {
        let connector = Connector {
            guard,
            tls: Arc::new(tls_config()?),
        };
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
        headers: &axum::http::HeaderMap,
        body: Bytes,
    ) -> io::Result<Response<Incoming>> {
        for _ in 0..=MAX_REDIRECTS {
            let mut request = Request::new(Full::new(body.clone()));
            *request.method_mut() = method.clone();
            *request.uri_mut() = uri.clone();
            *request.headers_mut() = headers.clone();
            let response = self
                .client
                .request(request)
                .await
                .map_err(|error| failed(&uri, &error))?;
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
}

/// A request that failed, said as reqwest says it: the URL (redacted where it is shown) and
/// every cause, as hyper's own message names only the step ("client error (Connect)").
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
fn redirect(uri: &Uri, response: &Response<Incoming>) -> Option<Uri> {
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
#[derive(Clone)]
struct Connector {
    guard: Guard,
    tls: Arc<rustls::ClientConfig>,
}

impl tower_service::Service<Uri> for Connector {
    type Response = Conn;
    type Error = io::Error;
    type Future = BoxFuture<'static, io::Result<Conn>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let (guard, tls) = (self.guard, self.tls.clone());
        Box::pin(async move {
            let host = uri.host().unwrap_or_default().to_owned();
            let https = uri.scheme() == Some(&axum::http::uri::Scheme::HTTPS);
            let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
            let addrs = guard.resolve(&host, port).await.map_err(io::Error::other)?;
            let tcp = TcpStream::connect(addrs.as_slice()).await?;
            tcp.set_nodelay(true)?;
            let stream = if https {
                let name = host
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .to_owned();
                let name = rustls::pki_types::ServerName::try_from(name)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
                let tls = tokio_rustls::TlsConnector::from(tls)
                    .connect(name, tcp)
                    .await?;
                MaybeTlsStream::Rustls(tls)
            } else {
                MaybeTlsStream::Plain(tcp)
            };
            Ok(Conn(TokioIo::new(stream)))
        })
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
