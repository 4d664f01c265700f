//! The WebSocket transport (not in the MCP specification, but in the A2E transport enum):
//! JSON-RPC as text frames over ws/wss, offering the subprotocol `mcp`, `headers` on the upgrade.
//!
//! A message over `max_message_bytes` sent in one frame (as servers send them) is read through
//! below tungstenite by [`BoundedFrames`]: its call alone fails, the connection stays. One sent
//! in several frames is caught by tungstenite, which stops with the rest of it unread: the
//! socket cannot be read past it, so every request in flight gets the error answer naming the
//! limit at once and the connection ends (the supervisor reconnects), rather than the calls
//! learning of it as a lost connection.

use std::collections::{HashSet, VecDeque};
use std::future::Future;
use std::sync::Arc;

use axum::http::{HeaderMap, HeaderValue};
use futures::{SinkExt, StreamExt};
use rmcp::RoleClient;
use rmcp::model::{ClientNotification, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::net::TcpStream;
use tokio::sync::Mutex;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::error::CapacityError;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{Error as Tungstenite, Message};

use super::ConnectError;
use super::decode::Calls;
use super::limit;
use bounded::BoundedFrames;

mod bounded;
use crate::guard::{Guard, Stream};

type Socket = WebSocketStream<BoundedFrames<Stream>>;

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct WsError(String);

pub struct WsTransport {
    sink: Arc<Mutex<futures::stream::SplitSink<Socket, Message>>>,
    stream: futures::stream::SplitStream<Socket>,
    limit: usize,
    server_id: String,
    /// The requests sent and not yet answered (nor cancelled).
    pending: Arc<std::sync::Mutex<HashSet<RequestId>>>,
    calls: Calls,
    /// Error answers still to hand on before the end, once a message was over the limit.
    failing: Option<VecDeque<RxJsonRpcMessage<RoleClient>>>,
}

/// Opens the WebSocket, offering the `mcp` subprotocol, to an address the guard allows.
pub async fn connect(
    url: &str,
    headers: HeaderMap,
    guard: Guard,
    limit: usize,
    server_id: &str,
) -> Result<WsTransport, ConnectError> {
    let mut request = url
        .into_client_request()
        .map_err(|e| ConnectError::Config(format!("`url`: {e}")))?;
    let parsed = url::Url::parse(url).map_err(|e| ConnectError::Config(format!("`url`: {e}")))?;
    let refused = |refused: crate::guard::Refused| match refused {
        crate::guard::Refused::Guard(_) => ConnectError::Config(refused.to_string()),
        crate::guard::Refused::Unresolved(why) => ConnectError::Initialize(why, String::new()),
    };
    guard.check_url(&parsed).map_err(refused)?;
    let host = parsed.host_str().unwrap_or_default();
    let port = parsed.port_or_known_default().unwrap_or(80);
    // Resolved and checked here, and the socket opened to a checked address: tungstenite
    // would resolve the name again.
    let addrs = guard.resolve(host, port).await.map_err(refused)?;
    let tcp = TcpStream::connect(addrs.as_slice()).await.map_err(|e| {
        ConnectError::Initialize(format!("cannot connect to {url}: {e}"), String::new())
    })?;
    request.headers_mut().extend(headers);
    request
        .headers_mut()
        .insert("Sec-WebSocket-Protocol", HeaderValue::from_static("mcp"));
    // The largest message taken (max_message_bytes), whether in one frame or several.
    let limits = WebSocketConfig::default()
        .max_message_size(Some(limit))
        .max_frame_size(Some(limit));
    // TLS is set up here rather than by tungstenite, so that BoundedFrames sits between it and
    // tungstenite, on the plain frames; it is every upstream's (`guard::tls`), system roots.
    let stream =
        match parsed.scheme() {
            "wss" => Stream::Left(crate::guard::tls(host, tcp).await.map_err(|e| {
                ConnectError::Initialize(format!("TLS to {url}: {e}"), String::new())
            })?),
            _ => Stream::Right(tcp),
        };
    let stream = BoundedFrames::new(stream, limit, server_id);
    let (socket, _response) =
        tokio_tungstenite::client_async_with_config(request, stream, Some(limits))
            .await
            .map_err(|e| {
                if let tokio_tungstenite::tungstenite::Error::Http(refused) = &e
                    && let Some(needs) = super::refused::refused_for_authorization(
                        refused.status(),
                        refused.headers(),
                    )
                {
                    return needs;
                }
                ConnectError::Initialize(format!("WebSocket upgrade of {url}: {e}"), String::new())
            })?;
    let (sink, stream) = socket.split();
    Ok(WsTransport {
        sink: Arc::new(Mutex::new(sink)),
        stream,
        limit,
        server_id: server_id.to_owned(),
        pending: Default::default(),
        calls: Calls::default(),
        failing: None,
    })
}

impl WsTransport {
    /// The tools the server offers to run as tasks, as its `tools/list` answers say.
    pub fn task_tools(&self) -> std::sync::Arc<super::decode::TaskTools> {
        self.calls.task_tools()
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, HashSet<RequestId>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A message in several frames over the limit: every request in flight fails with the
    /// error naming it, then the connection ends.
    fn fail_pending(&mut self, size: usize) {
        let pending: Vec<RequestId> = self.pending().drain().collect();
        tracing::warn!(
            server_id = %self.server_id,
            size,
            limit = self.limit,
            calls = pending.len(),
            "a WebSocket message of the server is larger than {} ({}); the connection ends \
             and the calls in flight fail",
            limit::human(self.limit),
            limit::SETTING
        );
        let why = format!(
            "a message of the server is larger than the {} limit ({}); over WebSocket that \
             ends the connection, and every call in flight on it",
            limit::human(self.limit),
            limit::SETTING
        );
        self.failing = Some(
            pending
                .into_iter()
                .map(|id| limit::failed(id, why.clone()))
                .collect(),
        );
    }
}

impl Transport<RoleClient> for WsTransport {
    type Error = WsError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.calls.sent(&item);
        match &item {
            JsonRpcMessage::Request(request) => {
                self.pending().insert(request.id.clone());
            }
            JsonRpcMessage::Notification(n) => {
                if let ClientNotification::CancelledNotification(cancelled) = &n.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    self.pending().remove(id);
                }
            }
            _ => {}
        }
        let sink = self.sink.clone();
        async move {
            let text = serde_json::to_string(&item).map_err(|e| WsError(e.to_string()))?;
            sink.lock()
                .await
                .send(Message::text(text))
                .await
                .map_err(|e| WsError(e.to_string()))
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            if let Some(failing) = &mut self.failing {
                // Then None: the connection has ended.
                return failing.pop_front();
            }
            let bytes = match self.stream.next().await? {
                Ok(Message::Text(text)) => text.as_bytes().to_vec(),
                Ok(Message::Binary(bytes)) => bytes.to_vec(),
                Ok(Message::Close(_)) => return None,
                // Pings are answered by the library; pongs and raw frames carry no message.
                Ok(_) => continue,
                Err(Tungstenite::Capacity(CapacityError::MessageTooLong { size, .. })) => {
                    self.fail_pending(size);
                    continue;
                }
                Err(error) => {
                    tracing::debug!(%error, "the WebSocket broke");
                    return None;
                }
            };
            let message = match self.calls.decode(&bytes) {
                Ok(message) => message,
                Err(error) => {
                    tracing::warn!(%error, "a WebSocket frame is not JSON-RPC");
                    continue;
                }
            };
            match &message {
                JsonRpcMessage::Response(response) => {
                    self.pending().remove(&response.id);
                }
                JsonRpcMessage::Error(error) => {
                    if let Some(id) = &error.id {
                        self.pending().remove(id);
                    }
                }
                _ => {}
            }
            return Some(message);
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let mut sink = self.sink.lock().await;
        sink.close().await.map_err(|e| WsError(e.to_string()))
    }
}
