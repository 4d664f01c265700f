//! What goes wrong with an A2A agent or a call to it, and the A2E error code each answers with
//! (an HTTP+JSON agent's `google.rpc.Status` mapped by its status).

use std::time::Duration;

use serde_json::Value;

use super::rest;
use crate::a2e::ErrorCode;
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum A2aError {
    #[error("{0}")]
    Invalid(String),
    #[error("the A2A agent bridge is turned off (MCP_BRIDGE_A2A_ENABLED)")]
    Disabled,
    #[error("no A2A agent \"{0}\" is registered")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("the agent cannot be reached: {0}")]
    Unreachable(String),
    #[error("the agent answered something that is not A2A: {0}")]
    Protocol(String),
    #[error("{0}")]
    Rpc(Value),
    /// An HTTP+JSON agent's error: its `google.rpc.Status` (`code`, `status`, `message`,
    /// `details`).
    #[error("{}", rest::describe(.0))]
    Status(Value),
    #[error("the agent did not answer within {0:?}")]
    Timeout(Duration),
    /// A task unknown to the agent, or started by another caller: the same to the caller.
    #[error("agent \"{agent_id}\" has no task \"{task_id}\" started by you")]
    TaskNotFound { agent_id: String, task_id: String },
    /// A streamed task still running when the caller's timeout passed.
    #[error(
        "task \"{task_id}\" did not finish within {after:?}; it goes on at the agent: follow it with agent_query action \"subscribe\", or cancel it"
    )]
    StillRunning { task_id: String, after: Duration },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl A2aError {
    /// The A2E error code this error answers with.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Invalid(_) => ErrorCode::InvalidRequest,
            Self::Disabled => ErrorCode::McpCapabilityMissing,
            Self::NotFound(_) | Self::TaskNotFound { .. } => ErrorCode::NotFound,
            Self::Conflict(_) => ErrorCode::Conflict,
            Self::Forbidden(_) => ErrorCode::Forbidden,
            Self::Unreachable(_) => ErrorCode::McpTransportError,
            Self::Protocol(_) | Self::Rpc(_) => ErrorCode::McpProtocolError,
            Self::Timeout(_) | Self::StillRunning { .. } => ErrorCode::Timeout,
            Self::Status(status) => {
                match status.get("status").and_then(Value::as_str).unwrap_or("") {
                    "NOT_FOUND" => ErrorCode::NotFound,
                    "INVALID_ARGUMENT" | "OUT_OF_RANGE" => ErrorCode::InvalidRequest,
                    "FAILED_PRECONDITION" | "ALREADY_EXISTS" | "ABORTED" => ErrorCode::Conflict,
                    "PERMISSION_DENIED" | "UNAUTHENTICATED" => ErrorCode::Forbidden,
                    "RESOURCE_EXHAUSTED" => ErrorCode::RateLimited,
                    "DEADLINE_EXCEEDED" => ErrorCode::Timeout,
                    "UNAVAILABLE" => ErrorCode::McpTransportError,
                    "UNIMPLEMENTED" => ErrorCode::McpCapabilityMissing,
                    _ => ErrorCode::McpProtocolError,
                }
            }
            Self::Store(error) => error.code(),
        }
    }

    /// The A2A reason of an agent's error, in either binding: `TASK_NOT_FOUND` for JSON-RPC
    /// code -32001 or an HTTP+JSON `ErrorInfo` with that reason, and so on.
    pub(super) fn reason(&self) -> Option<&str> {
        match self {
            Self::Rpc(error) => match error.get("code").and_then(Value::as_i64)? {
                -32001 => Some("TASK_NOT_FOUND"),
                -32002 => Some("TASK_NOT_CANCELABLE"),
                _ => None,
            },
            Self::Status(status) => rest::reason(status),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use serde_json::json;

    #[test]
    fn http_json_errors_answer_with_their_status() {
        let status = |s: &str, reason: &str| {
            A2aError::Status(
                json!({"code": 400, "status": s, "message": "m", "details": [
                {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason}]}),
            )
        };
        let not_found = status("NOT_FOUND", "TASK_NOT_FOUND");
        assert_eq!(not_found.code(), ErrorCode::NotFound);
        assert_eq!(not_found.reason(), Some("TASK_NOT_FOUND"));
        assert_eq!(
            status("INVALID_ARGUMENT", "INVALID_PARAMS").code(),
            ErrorCode::InvalidRequest
        );
        let not_cancelable = status("FAILED_PRECONDITION", "TASK_NOT_CANCELABLE");
        assert_eq!(not_cancelable.code(), ErrorCode::Conflict);
        assert_eq!(not_cancelable.reason(), Some("TASK_NOT_CANCELABLE"));
        assert_eq!(status("UNAUTHENTICATED", "").code(), ErrorCode::Forbidden);
        assert_eq!(status("INTERNAL", "").code(), ErrorCode::McpProtocolError);
        assert_eq!(
            A2aError::Rpc(json!({"code": -32001})).reason(),
            Some("TASK_NOT_FOUND")
        );
        assert!(status("NOT_FOUND", "").to_string().ends_with(": m"));
    }
}
