//! The rmcp `ClientHandler` of every upstream connection: what mcp-bridge tells servers about
//! itself, and where their notifications go (to the server's supervisor).

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient};
use tokio::sync::mpsc::UnboundedSender;

/// A notification a server sent that its supervisor acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpstreamEvent {
    ToolsChanged,
    ResourcesChanged,
    PromptsChanged,
}

pub struct BridgeClient {
    server_id: String,
    events: UnboundedSender<UpstreamEvent>,
}

impl BridgeClient {
    pub fn new(server_id: String, events: UnboundedSender<UpstreamEvent>) -> Self {
        Self { server_id, events }
    }

    fn notify(&self, event: UpstreamEvent) {
        tracing::debug!(server_id = %self.server_id, ?event, "catalogue changed upstream");
        // The supervisor is gone only while the server is being removed: nothing to tell.
        let _ = self.events.send(event);
    }
}

impl ClientHandler for BridgeClient {
    fn get_info(&self) -> ClientConfig {
        // 2025-11-25 with the initialize handshake: rmcp's default (2026-07-28) has no
        // `initialize` and older servers would not answer it.
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("mcp-bridge", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.notify(UpstreamEvent::ToolsChanged);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.notify(UpstreamEvent::ResourcesChanged);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.notify(UpstreamEvent::PromptsChanged);
    }
}
