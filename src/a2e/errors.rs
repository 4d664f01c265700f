//! Error codes: the nine `MCPErrorCode`s of the seed and the generic ones of the REST contract,
//! and the shape of an error answer.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// The `code` of an error answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    McpServerNotFound,
    McpServerUnavailable,
    McpToolNotFound,
    McpResourceNotFound,
    McpPromptNotFound,
    McpTransportError,
    McpProtocolError,
    McpSamplingRefused,
    McpCapabilityMissing,
    /// An upstream needs an OAuth authorization the caller has not given; the answer carries
    /// the `authorization_url` to open.
    McpAuthRequired,
    InvalidRequest,
    Unauthorized,
    Forbidden,
    /// An interceptor (a hook of the config file) refused the call, read or get; `error` says
    /// which hook and why.
    DeniedByHook,
    NotFound,
    Conflict,
    /// The call was cancelled by its caller (`DELETE /v1/calls/{id}`) before it answered.
    Cancelled,
    Timeout,
    PayloadTooLarge,
    RateLimited,
    Internal,
}

impl ErrorCode {
    /// Whether the same request may succeed if sent again later.
    pub fn retryable(self) -> bool {
        matches!(
            self,
            Self::McpServerUnavailable
                | Self::McpTransportError
                | Self::Timeout
                | Self::RateLimited
        )
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::McpServerNotFound => "mcp_server_not_found",
            Self::McpServerUnavailable => "mcp_server_unavailable",
            Self::McpToolNotFound => "mcp_tool_not_found",
            Self::McpResourceNotFound => "mcp_resource_not_found",
            Self::McpPromptNotFound => "mcp_prompt_not_found",
            Self::McpTransportError => "mcp_transport_error",
            Self::McpProtocolError => "mcp_protocol_error",
            Self::McpSamplingRefused => "mcp_sampling_refused",
            Self::McpCapabilityMissing => "mcp_capability_missing",
            Self::McpAuthRequired => "mcp_auth_required",
            Self::InvalidRequest => "invalid_request",
            Self::Unauthorized => "unauthorized",
            Self::Forbidden => "forbidden",
            Self::DeniedByHook => "denied_by_hook",
            Self::NotFound => "not_found",
            Self::Conflict => "conflict",
            Self::Cancelled => "cancelled",
            Self::Timeout => "timeout",
            Self::PayloadTooLarge => "payload_too_large",
            Self::RateLimited => "rate_limited",
            Self::Internal => "internal",
        }
    }
}

/// An error answer: the endpoint's response message (`type` `"error"` when the route has none or
/// the request could not be read) with `error`, `code` and `retryable`, and `ok: false` where the
/// response message has `ok`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ErrorBody {
    #[serde(rename = "type")]
    pub kind: String,
    pub id: String,
    pub version: String,
    pub ts: f64,
    /// The request's `id`; empty when the body could not be read.
    pub req_id: String,
    /// Present (and false) where the response message has `ok`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
    /// A human sentence saying what went wrong.
    pub error: String,
    pub code: ErrorCode,
    pub retryable: bool,
    /// With `mcp_auth_required`: open it in a browser and approve, then call again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_url: Option<String>,
}

/// The sentence a caller gets for an internal error: its details go to the log only, under a
/// reference the sentence gives.
pub fn internal_error(error: impl std::fmt::Display) -> String {
    let reference = super::new_id();
    tracing::error!(%reference, %error, "internal error");
    format!("internal error (reference {reference})")
}
