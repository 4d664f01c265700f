//! The notification methods the bridge acts on or sends, named once: MCP's own, and the
//! bridge's `bridge/*` pushes. An upstream may send others; those stay plain strings.

use std::fmt;

/// A notification method (`method` of an MCP notification, of a `mcp/server/push`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NotificationMethod {
    ToolsListChanged,
    ResourcesListChanged,
    PromptsListChanged,
    ResourcesUpdated,
    Progress,
    /// A log message.
    Message,
    Cancelled,
    /// The bridge's: a server's status changed (`params` its MCPServerInfo).
    ServerStatus,
    /// The bridge's: the replay buffer no longer holds what a reconnecting stream asked for.
    EventsLost,
    /// The bridge's: a server needs a person to authorize it (`params`:
    /// `{server_id, authorization_url}`).
    AuthRequired,
    /// The bridge's: a pinned tool definition changed (`params`: `{server_id, tool, name,
    /// changed, old, new, pinning, quarantined}`); sent to the server's owner.
    ToolChanged,
    /// The bridge's: a task's status changed (`params` its TaskInfo); sent to its agent.
    TaskStatus,
}

impl NotificationMethod {
    pub const ALL: [Self; 12] = [
        Self::ToolsListChanged,
        Self::ResourcesListChanged,
        Self::PromptsListChanged,
        Self::ResourcesUpdated,
        Self::Progress,
        Self::Message,
        Self::Cancelled,
        Self::ServerStatus,
        Self::EventsLost,
        Self::AuthRequired,
        Self::ToolChanged,
        Self::TaskStatus,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::ToolsListChanged => "notifications/tools/list_changed",
            Self::ResourcesListChanged => "notifications/resources/list_changed",
            Self::PromptsListChanged => "notifications/prompts/list_changed",
            Self::ResourcesUpdated => "notifications/resources/updated",
            Self::Progress => "notifications/progress",
            Self::Message => "notifications/message",
            Self::Cancelled => "notifications/cancelled",
            Self::ServerStatus => "bridge/server_status",
            Self::EventsLost => "bridge/events_lost",
            Self::AuthRequired => "bridge/auth_required",
            Self::ToolChanged => "bridge/tool_changed",
            Self::TaskStatus => "bridge/task_status",
        }
    }

    /// The method named `method`; none for a method the bridge does not know.
    pub fn parse(method: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == method)
    }

    /// Whether it says that one of a server's lists changed.
    pub fn is_list_changed(self) -> bool {
        matches!(
            self,
            Self::ToolsListChanged | Self::ResourcesListChanged | Self::PromptsListChanged
        )
    }
}

impl fmt::Display for NotificationMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::NotificationMethod;

    #[test]
    fn every_method_parses_back() {
        for method in NotificationMethod::ALL {
            assert_eq!(NotificationMethod::parse(method.as_str()), Some(method));
        }
        assert_eq!(NotificationMethod::parse("notifications/custom"), None);
        for method in NotificationMethod::ALL {
            assert_eq!(
                method.is_list_changed(),
                method.as_str().ends_with("/list_changed"),
                "{method}"
            );
        }
    }
}
