//! The methods the bridge acts on or sends, named once: MCP's notifications and the bridge's
//! `bridge/*` pushes (an upstream may send others; those stay plain strings), and the requests
//! of MCP tasks.

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
    /// The bridge's: a call waits for a person's approval (`params` its Approval); sent to
    /// the agents whose roles the policy names as approvers.
    ApprovalRequired,
}

impl NotificationMethod {
    pub const ALL: [Self; 13] = [
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
        Self::ApprovalRequired,
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
            Self::ApprovalRequired => "bridge/approval_required",
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

/// A request of MCP tasks as 2025-11-25 defines them: `/mcp` answers them for its sessions, and
/// the bridge sends them to a server that runs a call as a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaskMethod {
    Get,
    /// Waits for the task to end and answers its result.
    Result,
    List,
    Cancel,
}

impl TaskMethod {
    pub const ALL: [Self; 4] = [Self::Get, Self::Result, Self::List, Self::Cancel];

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Get => "tasks/get",
            Self::Result => "tasks/result",
            Self::List => "tasks/list",
            Self::Cancel => "tasks/cancel",
        }
    }

    /// The method named `method`; none for any other.
    pub fn parse(method: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == method)
    }
}

impl fmt::Display for TaskMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::{NotificationMethod, TaskMethod};

    #[test]
    fn every_method_parses_back() {
        for method in NotificationMethod::ALL {
            assert_eq!(NotificationMethod::parse(method.as_str()), Some(method));
        }
        assert_eq!(NotificationMethod::parse("notifications/custom"), None);
        for method in TaskMethod::ALL {
            assert_eq!(TaskMethod::parse(method.as_str()), Some(method));
        }
        assert_eq!(TaskMethod::parse("tasks/update"), None);
        for method in NotificationMethod::ALL {
            assert_eq!(
                method.is_list_changed(),
                method.as_str().ends_with("/list_changed"),
                "{method}"
            );
        }
    }
}
