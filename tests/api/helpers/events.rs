//! Server-sent events: `EventStream`, a reader of `/v1/events` or any SSE response, and
//! predicates on its messages.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;

use super::app::TestApp;

/// One server-sent event.
#[derive(Debug, Clone)]
pub struct SseMessage {
    pub id: Option<String>,
    pub event: String,
    pub data: Value,
}

/// A reader of an SSE response.
pub struct EventStream {
    resp: reqwest::Response,
    buffer: String,
}

impl EventStream {
    /// Opens the agent's `/v1/events`, optionally resuming after `last_event_id`.
    pub async fn open(app: &TestApp, token: &str, last_event_id: Option<&str>) -> Self {
        let mut req = app
            .client
            .get(format!("{}/v1/events", app.base))
            .bearer_auth(token);
        if let Some(id) = last_event_id {
            req = req.header("Last-Event-ID", id);
        }
        let resp = req.send().await.expect("the event stream opens");
        assert_eq!(resp.status(), StatusCode::OK);
        assert!(
            resp.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/event-stream")
        );
        Self::from_response(resp)
    }

    pub fn from_response(resp: reqwest::Response) -> Self {
        Self {
            resp,
            buffer: String::new(),
        }
    }

    /// The next event, or `None` when none comes within `within` or the stream ends.
    pub async fn next(&mut self, within: Duration) -> Option<SseMessage> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                if let Some(message) = parse_block(&block) {
                    return Some(message);
                }
                continue;
            }
            let chunk = tokio::time::timeout_at(deadline, self.resp.chunk())
                .await
                .ok()?
                .ok()??;
            self.buffer
                .push_str(&String::from_utf8_lossy(&chunk).replace("\r\n", "\n"));
        }
    }

    /// The first event that `wanted` accepts, skipping others; panics naming `what` after `within`.
    pub async fn wait_for(
        &mut self,
        what: &str,
        within: Duration,
        wanted: impl Fn(&SseMessage) -> bool,
    ) -> SseMessage {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match self.next(left).await {
                Some(message) if wanted(&message) => return message,
                Some(_) => {}
                None => panic!("{what} did not arrive within {within:?}"),
            }
        }
    }

    /// Whether the stream ends (the server closes it) within `within`.
    pub async fn ends_within(&mut self, within: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            match tokio::time::timeout_at(deadline, self.resp.chunk()).await {
                Ok(Ok(Some(_))) => continue,
                Ok(Ok(None)) | Ok(Err(_)) => return true,
                Err(_) => return false,
            }
        }
    }

    /// Every event that arrives within `within`.
    pub async fn drain(&mut self, within: Duration) -> Vec<SseMessage> {
        let deadline = tokio::time::Instant::now() + within;
        let mut all = Vec::new();
        while let Some(message) = self
            .next(deadline.saturating_duration_since(tokio::time::Instant::now()))
            .await
        {
            all.push(message);
        }
        all
    }
}

fn parse_block(block: &str) -> Option<SseMessage> {
    let (mut id, mut event, mut data) = (None, String::from("message"), String::new());
    for line in block.lines() {
        if let Some(v) = line.strip_prefix("id:") {
            id = Some(v.trim().to_owned());
        } else if let Some(v) = line.strip_prefix("event:") {
            event = v.trim().to_owned();
        } else if let Some(v) = line.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(v.strip_prefix(' ').unwrap_or(v));
        }
    }
    if data.is_empty() {
        return None; // a keep-alive comment
    }
    Some(SseMessage {
        id,
        event,
        data: serde_json::from_str(&data).unwrap_or(Value::String(data)),
    })
}

/// A push of `method` (optionally from `server_id`).
pub fn is_push(message: &SseMessage, method: &str) -> bool {
    message.event == "mcp/server/push" && message.data["method"] == method
}
