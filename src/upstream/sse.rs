//! The legacy HTTP+SSE transport (protocol 2024-11-05), which rmcp no longer ships: a GET opens
//! an event stream whose first `endpoint` event names the URL to POST JSON-RPC messages to;
//! the server's messages come back as `message` events. `headers` go on both. The stream's
//! framing, shared with Streamable HTTP's event streams, is in `frames.rs`.

mod frames;

use std::future::Future;

use axum::http::HeaderMap;
use axum::http::header::{ACCEPT, CONTENT_TYPE};
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::{mpsc, oneshot};

use super::decode::Calls;
use super::limit;
use super::{ConnectError, explain};
use crate::guard::Guard;
pub use frames::{Event, Frames};

/// A failed send or a broken stream.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SseError(String);

pub struct SseTransport {
    client: reqwest::Client,
    endpoint: reqwest::Url,
    headers: HeaderMap,
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    reader: tokio::task::JoinHandle<()>,
    /// Shared with the reader, which parses the answers to them.
    calls: Calls,
}

/// Opens the event stream and waits for the server to name its message endpoint.
pub async fn connect(
    url: &str,
    headers: HeaderMap,
    guard: Guard,
    limit: usize,
    server_id: &str,
) -> Result<SseTransport, ConnectError> {
    let fail = |why: String| ConnectError::Initialize(why, String::new());
    let url = reqwest::Url::parse(url).map_err(|e| ConnectError::Config(format!("`url`: {e}")))?;
    let client = guard
        .http_client(false)
        .build()
        .map_err(|e| fail(e.to_string()))?;
    let resp = client
        .get(url.clone())
        .headers(headers.clone())
        .header(ACCEPT, "text/event-stream")
        .send()
        .await
        .map_err(|e| fail(format!("GET {url}: {}", explain::chain(&e))))?;
    if let Some(needs) = super::refused::refused_for_authorization(resp.status(), resp.headers()) {
        return Err(needs);
    }
    if !resp.status().is_success() {
        return Err(fail(format!("GET {url} answered {}", resp.status())));
    }
    let (messages_tx, incoming) = mpsc::channel(64);
    let (endpoint_tx, endpoint_rx) = oneshot::channel();
    let calls = Calls::default();
    // Aborted if connecting is given up (the caller's deadline), so the GET does not linger.
    let reader = AbortOnDrop(Some(tokio::spawn(read_events(
        resp,
        messages_tx,
        endpoint_tx,
        calls.clone(),
        limit,
        server_id.to_owned(),
    ))));
    let Ok(path) = endpoint_rx.await else {
        return Err(fail(format!(
            "the stream of {url} ended before an `endpoint` event"
        )));
    };
    let endpoint = url
        .join(path.trim())
        .map_err(|e| fail(format!("the endpoint \"{path}\" is not a URL: {e}")))?;
    // Messages go where the stream came from, never elsewhere.
    if endpoint.origin() != url.origin() {
        return Err(fail(format!(
            "the endpoint {endpoint} is not on the origin of {url}"
        )));
    }
    let reader = reader.release();
    Ok(SseTransport {
        client,
        endpoint,
        headers,
        incoming,
        reader,
        calls,
    })
}

impl SseTransport {
    /// The tools the server offers to run as tasks, as its `tools/list` answers say.
    pub fn task_tools(&self) -> std::sync::Arc<super::decode::TaskTools> {
        self.calls.task_tools()
    }
}

/// Aborts a task when dropped, unless released.
struct AbortOnDrop(Option<tokio::task::JoinHandle<()>>);

impl AbortOnDrop {
    fn release(mut self) -> tokio::task::JoinHandle<()> {
        self.0.take().expect("released once")
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}

/// Reads the event stream: the first `endpoint` event, then every `message` event. An event
/// over `limit` that answers a request becomes the error answer for it.
async fn read_events(
    mut resp: reqwest::Response,
    messages: mpsc::Sender<RxJsonRpcMessage<RoleClient>>,
    endpoint: oneshot::Sender<String>,
    calls: Calls,
    limit: usize,
    server_id: String,
) {
    let mut endpoint = Some(endpoint);
    let mut frames = Frames::new(limit);
    loop {
        let chunk = match resp.chunk().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => return,
            Err(error) => return tracing::debug!(%error, "the SSE stream broke"),
        };
        frames.push(&chunk);
        while let Some(event) = frames.next_event() {
            let message = match event {
                Event::Whole(event, data) => match event.as_str() {
                    "endpoint" => {
                        if let Some(tx) = endpoint.take() {
                            let _ = tx.send(data);
                        }
                        continue;
                    }
                    "message" if !data.is_empty() => match calls.decode(data.as_bytes()) {
                        Ok(message) => message,
                        Err(error) => {
                            tracing::warn!(%error, "a message on the SSE stream is not JSON-RPC");
                            continue;
                        }
                    },
                    _ => continue,
                },
                Event::TooLarge {
                    id: Some(id),
                    has_method: false,
                } => {
                    tracing::warn!(
                        %server_id,
                        %id,
                        limit,
                        "an answer of the server is larger than {} ({}); the call fails",
                        limit::human(limit),
                        limit::SETTING
                    );
                    limit::too_large(id, limit)
                }
                Event::TooLarge { has_method, .. } => {
                    limit::dropped(&server_id, limit, has_method);
                    continue;
                }
            };
            if messages.send(message).await.is_err() {
                return;
            }
        }
    }
}

impl Transport<RoleClient> for SseTransport {
    type Error = SseError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.calls.sent(&item);
        let mut headers = self.headers.clone();
        // The trace the request carries in `_meta`, in headers too (W3C `traceparent`).
        headers.extend(super::traced::trace_headers(&item));
        let request = self
            .client
            .post(self.endpoint.clone())
            .headers(headers)
            .header(CONTENT_TYPE, "application/json")
            .json(&item);
        async move {
            let resp = request
                .send()
                .await
                .map_err(|e| SseError(format!("POST: {e}")))?;
            if resp.status().is_success() {
                Ok(())
            } else {
                Err(SseError(format!("POST answered {}", resp.status())))
            }
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.reader.abort();
        Ok(())
    }
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}
