//! The harness's MCP clients: rmcp's over Streamable HTTP, a session opened by hand (for the
//! raw client), and a client of the bridge on one kept-alive connection.

use std::sync::Arc;

use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::ECHO_ARGS;

pub(crate) async fn mcp_client(
    url: &str,
    token: Option<&str>,
) -> Arc<RunningService<RoleClient, ()>> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    Arc::new(().serve(transport).await.expect("an MCP session"))
}

/// An MCP session opened by hand: its id and the protocol version the server chose.
pub(crate) struct McpSession {
    pub(crate) id: String,
    pub(crate) version: String,
}

impl McpSession {
    /// `initialize` (asking for 2025-11-25), then `notifications/initialized`, at `url`.
    pub(crate) async fn open(
        client: &reqwest::Client,
        url: &str,
        token: Option<&str>,
    ) -> McpSession {
        let post = |body: Value, session: Option<&McpSession>| {
            let mut request = client
                .post(url)
                .header("accept", "application/json, text/event-stream")
                .json(&body);
            if let Some(token) = token {
                request = request.bearer_auth(token);
            }
            if let Some(session) = session {
                request = request
                    .header("mcp-session-id", &session.id)
                    .header("mcp-protocol-version", &session.version);
            }
            request.send()
        };
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"}}});
        let resp = post(init, None).await.expect("initialize");
        let id = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .expect("a session id")
            .to_owned();
        let text = resp.text().await.expect("the initialize answer");
        // A JSON body, or an event stream whose `data:` line holds it.
        let version = text
            .lines()
            .map(|line| line.strip_prefix("data:").unwrap_or(line))
            .filter_map(|json| serde_json::from_str::<Value>(json).ok())
            .find_map(|answer| Some(answer["result"]["protocolVersion"].as_str()?.to_owned()))
            .unwrap_or_else(|| panic!("no protocol version in the initialize answer: {text}"));
        let session = McpSession { id, version };
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let resp = post(initialized, Some(&session)).await;
        resp.expect("initialized")
            .bytes()
            .await
            .expect("the initialized answer");
        session
    }
}

/// A client of the bridge on one kept-alive connection: `POST /v1/tools/call`, or `/mcp`
/// `tools/call` in a 2025-11-25 session, both read to the end and checked.
pub(crate) struct KeptAlive {
    client: reqwest::Client,
    url: String,
    token: String,
    body: Value,
    session: Option<String>,
}

impl KeptAlive {
    pub(crate) fn rest(base: &str, token: &str, name: &str) -> Self {
        KeptAlive {
            client: reqwest::Client::new(),
            url: format!("{base}/v1/tools/call"),
            token: token.to_owned(),
            body: json!({ "name": name, "arguments": serde_json::from_str::<Value>(ECHO_ARGS).unwrap() }),
            session: None,
        }
    }

    pub(crate) async fn mcp(base: &str, token: &str, name: &str) -> Self {
        let client = reqwest::Client::new();
        let url = format!("{base}/mcp");
        let session = McpSession::open(&client, &url, Some(token)).await;
        let arguments: Value = serde_json::from_str(ECHO_ARGS).unwrap();
        KeptAlive {
            body: json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": name, "arguments": arguments}}),
            client,
            url,
            token: token.to_owned(),
            session: Some(session.id),
        }
    }

    pub(crate) async fn call(&self) -> Result<(), String> {
        let mut request = self
            .client
            .post(&self.url)
            .bearer_auth(&self.token)
            .json(&self.body);
        // `/mcp` wants both; on REST, text/event-stream would ask for the call streamed.
        if let Some(session) = &self.session {
            request = request
                .header("accept", "application/json, text/event-stream")
                .header("mcp-session-id", session);
        }
        let resp = request.send().await.map_err(|e| e.to_string())?;
        let status = resp.status();
        let text = resp.text().await.map_err(|e| e.to_string())?;
        match status.is_success() && text.contains("hello from the benchmark") {
            true => Ok(()),
            false => Err(format!("{status}: {text}")),
        }
    }
}
