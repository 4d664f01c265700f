//! The chaos test's load: agents calling tools over REST and `/mcp` in a loop, writing each
//! call to the ledger, registering servers and policies, and following event streams.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::helpers::*;

use super::ledger::*;

// ---- load ----

pub struct Load {
    pub base: String,
    pub alice: String,
    pub admin: String,
    pub client: reqwest::Client,
    pub ledger: Ledger,
    pub stop: CancellationToken,
    pub workers: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

impl Load {
    pub fn id(kind: &str, n: u64) -> String {
        format!(
            "{kind}-{n}-{}",
            &uuid::Uuid::new_v4().simple().to_string()[..6]
        )
    }

    /// `POST /v1/tools/call` of `tool` with the arguments `args` makes of the call's id, until
    /// stopped.
    pub fn rest(self: &Arc<Self>, kind: &'static str, tool: String, args: fn(&str) -> Value) {
        let load = self.clone();
        let worker = tokio::spawn(async move {
            for n in 0.. {
                if load.stop.is_cancelled() {
                    break;
                }
                let id = Self::id(kind, n);
                let started = Instant::now();
                let sent = load
                    .client
                    .post(format!("{}/v1/tools/call", load.base))
                    .bearer_auth(&load.alice)
                    .json(&json!({"name": tool, "arguments": args(&id)}))
                    .send()
                    .await;
                let outcome = rest_outcome(sent).await;
                load.ledger.write(id, kind, started, outcome);
                tokio::time::sleep(Duration::from_millis(30)).await;
            }
        });
        self.workers.lock().unwrap().push(worker);
    }

    /// A stateless (2026-07-28) `tools/call` on `/mcp` of `tool` with `{"text": id}`, until stopped.
    pub fn stateless(self: &Arc<Self>, kind: &'static str, tool: String) {
        let load = self.clone();
        let worker = tokio::spawn(async move {
            for n in 0.. {
                if load.stop.is_cancelled() {
                    break;
                }
                let id = Self::id(kind, n);
                let started = Instant::now();
                let body = json!({
                    "jsonrpc": "2.0", "id": n, "method": "tools/call",
                    "params": {"name": tool, "arguments": {"text": id}, "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": {},
                        "io.modelcontextprotocol/clientInfo": {"name": "chaos", "version": "1"},
                    }},
                });
                let sent = load
                    .client
                    .post(format!("{}/mcp", load.base))
                    .bearer_auth(&load.alice)
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-protocol-version", "2026-07-28")
                    .header("mcp-method", "tools/call")
                    .header("mcp-name", &tool)
                    .json(&body)
                    .send()
                    .await;
                let outcome = mcp_outcome(sent).await;
                load.ledger.write(id, kind, started, outcome);
                tokio::time::sleep(Duration::from_millis(30)).await;
            }
        });
        self.workers.lock().unwrap().push(worker);
    }

    /// A `/mcp` session of the 2025-11-25 era calling `tool` with `{"text": id}`, until stopped;
    /// a session refused (404) is initialised again, as the specification asks of a client.
    pub fn session(self: &Arc<Self>, kind: &'static str, tool: String) {
        let load = self.clone();
        let worker = tokio::spawn(async move {
            let mut session: Option<String> = None;
            for n in 0.. {
                if load.stop.is_cancelled() {
                    break;
                }
                let Some(id_header) = session.clone() else {
                    session = load.initialize().await;
                    if session.is_none() {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                    continue;
                };
                let id = Self::id(kind, n);
                let started = Instant::now();
                let sent = load
                    .client
                    .post(format!("{}/mcp", load.base))
                    .bearer_auth(&load.alice)
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-protocol-version", "2025-11-25")
                    .header("mcp-session-id", &id_header)
                    .json(&json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                        "params": {"name": tool, "arguments": {"text": id}}}))
                    .send()
                    .await;
                let outcome = mcp_outcome(sent).await;
                if matches!(outcome.0, Outcome::Refused { status: 404, .. }) {
                    session = None;
                }
                load.ledger.write(id, kind, started, outcome);
                tokio::time::sleep(Duration::from_millis(30)).await;
            }
        });
        self.workers.lock().unwrap().push(worker);
    }

    pub async fn initialize(&self) -> Option<String> {
        let resp = self
            .client
            .post(format!("{}/mcp", self.base))
            .bearer_auth(&self.alice)
            .header("accept", "application/json, text/event-stream")
            .json(
                &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "chaos", "version": "1"}}}),
            )
            .send()
            .await
            .ok()?;
        let session = resp
            .headers()
            .get("mcp-session-id")?
            .to_str()
            .ok()?
            .to_owned();
        let _ = resp.text().await;
        self.client
            .post(format!("{}/mcp", self.base))
            .bearer_auth(&self.alice)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", &session)
            .json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .send()
            .await
            .ok()?;
        Some(session)
    }

    /// Registers a server (an HTTP one at `url`) and a policy naming it every `every`, until
    /// stopped; what was acknowledged (201) goes to `acked`.
    pub fn configure(
        self: &Arc<Self>,
        url: String,
        every: Duration,
        acked: Arc<Mutex<Vec<String>>>,
    ) {
        let load = self.clone();
        let worker = tokio::spawn(async move {
            for n in 0.. {
                if load.stop.is_cancelled() {
                    break;
                }
                let id = Self::id("cfg", n);
                let started = Instant::now();
                let sent = load
                    .client
                    .post(format!("{}/v1/servers", load.base))
                    .bearer_auth(&load.admin)
                    .json(&json!({"config": {"server_id": id, "transport": "http", "url": url}}))
                    .send()
                    .await;
                let outcome = rest_outcome(sent).await;
                if matches!(outcome.0, Outcome::Ok) {
                    acked.lock().unwrap().push(format!("/v1/servers/{id}"));
                }
                load.ledger
                    .write(id.clone(), "config-server", started, outcome);
                let started = Instant::now();
                let sent = load
                    .client
                    .put(format!("{}/v1/policies/{id}", load.base))
                    .bearer_auth(&load.admin)
                    .json(&json!({"match": {"subs": ["bob"]}, "deny": {"tools": [format!("{id}__echo")]}}))
                    .send()
                    .await;
                let outcome = rest_outcome(sent).await;
                if matches!(outcome.0, Outcome::Ok) {
                    acked.lock().unwrap().push(format!("policy {id}"));
                }
                load.ledger.write(id, "config-policy", started, outcome);
                tokio::time::sleep(every).await;
            }
        });
        self.workers.lock().unwrap().push(worker);
    }
}

/// What the agent's event stream saw: pushes of resource updates, resumes and losses.
#[derive(Default)]
pub struct StreamSeen {
    pub updates: std::collections::HashSet<String>,
    /// The marks of the touches whose updates arrived (each touch marks its own).
    pub marks: std::collections::HashSet<String>,
    /// When each update first arrived.
    pub update_times: Vec<Instant>,
    pub resumes: u32,
    pub lost: Vec<Value>,
    pub first_open: bool,
    /// The replica serving the stream now.
    pub replica: String,
}

/// Keeps alice's `/v1/events` open through the proxy, resuming with `Last-Event-ID` whenever it
/// ends, until stopped.
pub fn follow_events(
    base: String,
    token: String,
    stop: CancellationToken,
) -> Arc<Mutex<StreamSeen>> {
    let seen = Arc::new(Mutex::new(StreamSeen::default()));
    let out = seen.clone();
    tokio::spawn(async move {
        let client = reqwest::Client::new();
        let mut last: Option<String> = None;
        while !stop.is_cancelled() {
            let mut request = client.get(format!("{base}/v1/events")).bearer_auth(&token);
            if let Some(id) = &last {
                request = request.header("Last-Event-ID", id);
            }
            let resp = match request.send().await {
                Ok(resp) if resp.status() == StatusCode::OK => resp,
                _ => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            {
                let mut seen = seen.lock().unwrap();
                seen.replica = served_by(&resp);
                match seen.first_open {
                    true => seen.resumes += 1,
                    false => seen.first_open = true,
                }
            }
            let mut stream = EventStream::from_response(resp);
            loop {
                let message = tokio::select! {
                    m = stream.next(Duration::from_secs(3600)) => m,
                    () = stop.cancelled() => None,
                };
                let Some(message) = message else { break };
                if let Some(id) = &message.id {
                    last = Some(id.clone());
                }
                let mut seen = seen.lock().unwrap();
                if is_push(&message, "bridge/events_lost") || message.event.contains("events_lost")
                {
                    seen.lost.push(message.data.clone());
                } else if is_push(&message, "notifications/resources/updated") {
                    if let Some(mark) = message.data["params"]["_meta"]["mark"].as_str() {
                        seen.marks.insert(mark.to_owned());
                    }
                    if seen.updates.insert(message.id.clone().unwrap_or_default()) {
                        seen.update_times.push(Instant::now());
                    }
                }
            }
        }
    });
    out
}
