//! The WebSocket transport (not in the MCP specification, but in the A2E transport enum):
//! JSON-RPC as text frames over ws/wss, offering the subprotocol `mcp`, `headers` on the upgrade.

use std::future::Future;
use std::sync::Arc;

use axum::http::{HeaderMap, HeaderValue};
use futures::{SinkExt, StreamExt};
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::net::TcpStream;
use tokio::sync::Mutex;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::ConnectError;
use crate::guard::Guard;

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Largest message accepted from a server (16 MiB).
const MAX_MESSAGE: usize = 16 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct WsError(String);

pub struct WsTransport {
    sink: Arc<Mutex<futures::stream::SplitSink<Socket, Message>>>,
    stream: futures::stream::SplitStream<Socket>,
}

/// Opens the WebSocket, offering the `mcp` subprotocol, to an address the guard allows.
pub async fn connect(
    url: &str,
    headers: HeaderMap,
    guard: Guard,
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
    // The largest message taken, as rmcp bounds Streamable HTTP answers and the legacy SSE
    // transport its events.
    let limits = WebSocketConfig::default().max_message_size(Some(MAX_MESSAGE));
    let (socket, _response) =
        tokio_tungstenite::client_async_tls_with_config(request, tcp, Some(limits), None)
            .await
            .map_err(|e| {
                ConnectError::Initialize(format!("WebSocket upgrade of {url}: {e}"), String::new())
            })?;
    let (sink, stream) = socket.split();
    Ok(WsTransport {
        sink: Arc::new(Mutex::new(sink)),
        stream,
    })
}

impl Transport<RoleClient> for WsTransport {
    type Error = WsError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
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
            let bytes = match self.stream.next().await? {
                Ok(Message::Text(text)) => text.as_bytes().to_vec(),
                Ok(Message::Binary(bytes)) => bytes.to_vec(),
                Ok(Message::Close(_)) => return None,
                // Pings are answered by the library; pongs and raw frames carry no message.
                Ok(_) => continue,
                Err(error) => {
                    tracing::debug!(%error, "the WebSocket broke");
                    return None;
                }
            };
            match serde_json::from_slice(&bytes) {
                Ok(message) => return Some(message),
                Err(error) => tracing::warn!(%error, "a WebSocket frame is not JSON-RPC"),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let mut sink = self.sink.lock().await;
        sink.close().await.map_err(|e| WsError(e.to_string()))
    }
}
