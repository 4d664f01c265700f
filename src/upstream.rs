//! Connections to MCP servers: one rmcp client per server over its transport (stdio, Streamable
//! HTTP), a watch on the transport so a dead connection is noticed at once, and the supervisor
//! that keeps each server connected.

mod handler;
mod http;
mod stdio;
pub mod supervisor;
mod watched;

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, Prompt, Resource, Tool};
use rmcp::service::{RunningService, ServiceError};
use rmcp::{RoleClient, ServiceExt};
use tokio_util::sync::CancellationToken;

use crate::a2e::{McpServerConfig, McpTransport};
pub use handler::{BridgeClient, UpstreamEvent};
pub use stdio::StderrTail;
use watched::Watched;

/// How long a stopped connection may take to close its transport (and stop its child).
const CLOSE_GRACE: Duration = Duration::from_secs(10);

/// Why a server could not be connected.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("cannot start `{command}`: {source}{stderr}")]
    Spawn {
        command: String,
        source: std::io::Error,
        stderr: String,
    },
    #[error("no answer to initialize within {0:?}{1}")]
    Timeout(Duration, String),
    #[error("initialize failed: {0}{1}")]
    Initialize(String, String),
    #[error("listing its tools failed: {0}")]
    List(String),
    #[error("{0}")]
    Config(String),
    #[error("the `{0}` transport is not supported yet")]
    Unsupported(&'static str),
}

/// A live connection to one MCP server.
pub struct Connection {
    client: RunningService<RoleClient, BridgeClient>,
    /// Fired when the transport ends (the server went away) or is being closed.
    lost: CancellationToken,
    /// Fired once the transport has closed (and a stdio child has exited).
    closed: CancellationToken,
    pub stderr: Option<Arc<StderrTail>>,
    pub mcp_version: String,
    pub server_name: String,
    pub server_version: String,
    pub connected_at: f64,
}

/// A new connection with the server's catalogue as first listed.
pub struct Established {
    pub conn: Arc<Connection>,
    pub tools: Vec<Tool>,
    pub resources: Vec<Resource>,
    pub prompts: Vec<Prompt>,
}

impl Connection {
    /// Resolves when the connection has been lost or is closing.
    pub async fn lost(&self) {
        self.lost.cancelled().await
    }

    pub fn is_lost(&self) -> bool {
        self.lost.is_cancelled()
    }

    /// Stops the connection and waits (bounded) until the transport has closed.
    pub async fn shutdown(&self) {
        self.client.cancellation_token().cancel();
        if tokio::time::timeout(CLOSE_GRACE, self.closed.cancelled())
            .await
            .is_err()
        {
            tracing::warn!("connection did not close within {CLOSE_GRACE:?}");
        }
    }

    /// Calls a tool, failing at once if the connection drops meanwhile.
    pub async fn call_tool(
        &self,
        params: CallToolRequestParams,
        timeout: Duration,
    ) -> Result<CallToolResult, CallError> {
        tokio::select! {
            biased;
            _ = self.lost.cancelled() => Err(CallError::Lost),
            result = tokio::time::timeout(timeout, self.client.call_tool(params)) => match result {
                Ok(Ok(result)) => Ok(result),
                Ok(Err(error)) => Err(CallError::from_service(error, &self.lost)),
                Err(_) => Err(CallError::Timeout(timeout)),
            },
        }
    }

    /// Lists everything the server offers that its capabilities announce.
    pub async fn list_all(&self) -> Result<(Vec<Tool>, Vec<Resource>, Vec<Prompt>), ServiceError> {
        let caps = self
            .client
            .peer_info()
            .map(|info| info.capabilities.clone());
        let has = |f: fn(&rmcp::model::ServerCapabilities) -> bool| caps.as_ref().is_some_and(f);
        let tools = if has(|c| c.tools.is_some()) {
            self.client.list_all_tools().await?
        } else {
            Vec::new()
        };
        let resources = if has(|c| c.resources.is_some()) {
            self.client.list_all_resources().await?
        } else {
            Vec::new()
        };
        let prompts = if has(|c| c.prompts.is_some()) {
            self.client.list_all_prompts().await?
        } else {
            Vec::new()
        };
        Ok((tools, resources, prompts))
    }
}

/// What went wrong with a call on a live connection.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("the connection to the server was lost during the call")]
    Lost,
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    #[error("the server refused the request: {message}")]
    Rejected { code: i32, message: String },
    #[error("the transport failed: {0}")]
    Transport(String),
    #[error("the server answered something unexpected: {0}")]
    Protocol(String),
}

impl CallError {
    fn from_service(error: ServiceError, lost: &CancellationToken) -> Self {
        match error {
            ServiceError::McpError(e) => Self::Rejected {
                code: e.code.0,
                message: e.message.into_owned(),
            },
            ServiceError::TransportClosed => Self::Lost,
            ServiceError::TransportSend(_) if lost.is_cancelled() => Self::Lost,
            ServiceError::TransportSend(e) => Self::Transport(e.to_string()),
            ServiceError::Timeout { timeout } => Self::Timeout(timeout),
            other => Self::Protocol(other.to_string()),
        }
    }
}

/// Connects to the server `config` describes, initialises within `config.connect_bound()` and
/// lists its catalogue. `events` receives the server's notifications.
pub async fn connect(
    config: &McpServerConfig,
    events: tokio::sync::mpsc::UnboundedSender<UpstreamEvent>,
) -> Result<Established, ConnectError> {
    let bound = config.connect_bound();
    let handler = BridgeClient::new(config.server_id.clone(), events);
    let lost = CancellationToken::new();
    let closed = CancellationToken::new();
    let (client, stderr) = match config.transport {
        McpTransport::Stdio => {
            let (transport, stderr) = stdio::spawn(config)?;
            let watched = Watched::new(transport, lost.clone(), closed.clone());
            match tokio::time::timeout(bound, handler.serve(watched)).await {
                Ok(Ok(client)) => (client, Some(stderr)),
                Ok(Err(e)) => {
                    let tail = stderr.settled_tail().await;
                    return Err(ConnectError::Initialize(e.to_string(), tail));
                }
                Err(_) => return Err(ConnectError::Timeout(bound, stderr.settled_tail().await)),
            }
        }
        McpTransport::Http => {
            let transport = http::transport(config)?;
            let watched = Watched::new(transport, lost.clone(), closed.clone());
            match tokio::time::timeout(bound, handler.serve(watched)).await {
                Ok(Ok(client)) => (client, None),
                Ok(Err(e)) => return Err(ConnectError::Initialize(e.to_string(), String::new())),
                Err(_) => return Err(ConnectError::Timeout(bound, String::new())),
            }
        }
        other => return Err(ConnectError::Unsupported(other.as_str())),
    };
    // A stale list served from the cache while a server is down would hide the outage.
    client
        .set_response_cache_config(rmcp::ClientCacheConfig::disabled())
        .await;
    let info = client.peer_info();
    let implementation = info.as_ref().and_then(|i| i.server_info.clone());
    let conn = Arc::new(Connection {
        mcp_version: info
            .as_ref()
            .map(|i| i.protocol_version.to_string())
            .unwrap_or_default(),
        server_name: implementation
            .as_ref()
            .map(|i| i.name.clone())
            .unwrap_or_default(),
        server_version: implementation.map(|i| i.version).unwrap_or_default(),
        connected_at: crate::a2e::now(),
        client,
        lost,
        closed,
        stderr,
    });
    match tokio::time::timeout(bound, conn.list_all()).await {
        Ok(Ok((tools, resources, prompts))) => Ok(Established {
            conn,
            tools,
            resources,
            prompts,
        }),
        Ok(Err(e)) => {
            conn.shutdown().await;
            Err(ConnectError::List(e.to_string()))
        }
        Err(_) => {
            conn.shutdown().await;
            Err(ConnectError::List(format!("no answer within {bound:?}")))
        }
    }
}
