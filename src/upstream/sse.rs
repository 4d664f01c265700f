//! The legacy HTTP+SSE transport (protocol 2024-11-05), which rmcp no longer ships: a GET opens
//! an event stream whose first `endpoint` event names the URL to POST JSON-RPC messages to;
//! the server's messages come back as `message` events. `headers` go on both.

use std::future::Future;

use axum::http::HeaderMap;
use axum::http::header::{ACCEPT, CONTENT_TYPE};
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::{mpsc, oneshot};

use super::ConnectError;
use crate::guard::Guard;

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
}

/// Opens the event stream and waits for the server to name its message endpoint.
pub async fn connect(
    url: &str,
    headers: HeaderMap,
    guard: Guard,
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
        .map_err(|e| fail(format!("GET {url}: {e}")))?;
    if !resp.status().is_success() {
        return Err(fail(format!("GET {url} answered {}", resp.status())));
    }
    let (messages_tx, incoming) = mpsc::channel(64);
    let (endpoint_tx, endpoint_rx) = oneshot::channel();
    // Aborted if connecting is given up (the caller's deadline), so the GET does not linger.
    let reader = AbortOnDrop(Some(tokio::spawn(read_events(
        resp,
        messages_tx,
        endpoint_tx,
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
    })
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

/// Longest event accepted; a stream that sends more without an event boundary is dropped.
const MAX_EVENT: usize = 16 * 1024 * 1024;

/// The framing of an SSE stream: bytes in, whole events out (name and data). Bytes are decoded
/// only once a whole event is in, so a character split between chunks stays whole; each byte is
/// looked at once for the blank line that ends an event, however the stream is chunked.
#[derive(Debug, Default)]
pub struct Frames {
    buffer: Vec<u8>,
    /// How far `buffer` is known to hold no event boundary.
    scanned: usize,
}

impl Frames {
    /// Adds a chunk; `false` when the event being read is larger than [`MAX_EVENT`].
    pub fn push(&mut self, chunk: &[u8]) -> bool {
        self.buffer.extend_from_slice(chunk);
        self.buffer.len() <= MAX_EVENT
    }

    /// The next whole event: its name (`message` when absent) and its data.
    pub fn next_event(&mut self) -> Option<(String, String)> {
        let end = self.event_end()?;
        let block: Vec<u8> = self.buffer.drain(..end).collect();
        self.scanned = 0;
        let block = String::from_utf8_lossy(&block).replace("\r\n", "\n");
        Some(parse_event(&block))
    }

    /// The end of the first event (after its blank line), for `\n` or `\r\n` lines.
    fn event_end(&mut self) -> Option<usize> {
        // A boundary is at most 4 bytes long: start a little before where the last scan ended.
        let from = self.scanned.saturating_sub(3);
        let found = self.buffer[from..]
            .windows(2)
            .enumerate()
            .find_map(|(i, w)| {
                let at = from + i;
                if w == b"\n\n" {
                    Some(at + 2)
                } else if self.buffer[at..].starts_with(b"\r\n\r\n") {
                    Some(at + 4)
                } else {
                    None
                }
            });
        if found.is_none() {
            self.scanned = self.buffer.len();
        }
        found
    }
}

/// Reads the event stream: the first `endpoint` event, then every `message` event. Bytes are
/// decoded only once a whole event is in, so a character split between chunks stays whole.
async fn read_events(
    mut resp: reqwest::Response,
    messages: mpsc::Sender<RxJsonRpcMessage<RoleClient>>,
    endpoint: oneshot::Sender<String>,
) {
    let mut endpoint = Some(endpoint);
    let mut frames = Frames::default();
    loop {
        let chunk = match resp.chunk().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => return,
            Err(error) => return tracing::debug!(%error, "the SSE stream broke"),
        };
        if !frames.push(&chunk) {
            return tracing::warn!(
                "an SSE event is larger than {MAX_EVENT} bytes; the stream is dropped"
            );
        }
        while let Some((event, data)) = frames.next_event() {
            match event.as_str() {
                "endpoint" => {
                    if let Some(tx) = endpoint.take() {
                        let _ = tx.send(data);
                    }
                }
                "message" if !data.is_empty() => match serde_json::from_str(&data) {
                    Ok(message) => {
                        if messages.send(message).await.is_err() {
                            return;
                        }
                    }
                    Err(error) => {
                        tracing::warn!(%error, "a message on the SSE stream is not JSON-RPC")
                    }
                },
                _ => {}
            }
        }
    }
}

/// The event name (`message` when absent) and the data of one SSE block.
fn parse_event(block: &str) -> (String, String) {
    let mut event = String::from("message");
    let mut data = Vec::new();
    for line in block.lines() {
        if let Some(v) = line.strip_prefix("event:") {
            event = v.trim().to_owned();
        } else if let Some(v) = line.strip_prefix("data:") {
            data.push(v.strip_prefix(' ').unwrap_or(v));
        }
    }
    (event, data.join("\n"))
}

impl Transport<RoleClient> for SseTransport {
    type Error = SseError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let request = self
            .client
            .post(self.endpoint.clone())
            .headers(self.headers.clone())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn events_of(stream: &[u8], chunk: usize) -> Vec<(String, String)> {
        let mut frames = Frames::default();
        let mut events = Vec::new();
        for part in stream.chunks(chunk) {
            assert!(frames.push(part));
            while let Some(event) = frames.next_event() {
                events.push(event);
            }
        }
        events
    }

    #[test]
    fn events_are_framed_the_same_however_the_stream_is_chunked() {
        let stream = "event: endpoint\r\ndata: /m?s=1\r\n\r\ndata: {\"é\":1}\n\n: ping\n\ndata: a\ndata: b\n\ntail";
        let whole = events_of(stream.as_bytes(), stream.len());
        assert_eq!(
            whole,
            [
                ("endpoint".into(), "/m?s=1".into()),
                ("message".into(), "{\"é\":1}".into()),
                ("message".into(), String::new()),
                ("message".into(), "a\nb".into()),
            ]
        );
        for chunk in 1..stream.len() {
            assert_eq!(
                events_of(stream.as_bytes(), chunk),
                whole,
                "chunks of {chunk}"
            );
        }
    }

    #[test]
    fn events_and_their_data() {
        assert_eq!(
            parse_event("event: endpoint\ndata: /message?sessionId=1\n\n"),
            ("endpoint".into(), "/message?sessionId=1".into())
        );
        assert_eq!(
            parse_event("data: {\"a\":1}\n\n"),
            ("message".into(), "{\"a\":1}".into())
        );
        assert_eq!(
            parse_event(": keep-alive\n\n"),
            ("message".into(), String::new())
        );
    }
}
