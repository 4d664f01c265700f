//! Why a server could not be connected ([`ConnectError`]) and what went wrong with a call on a
//! live connection ([`CallError`]), each with the A2E code it answers with and its text redacted.

use std::time::Duration;

use rmcp::model::ErrorCode;
use rmcp::service::ServiceError;
use tokio_util::sync::CancellationToken;

use super::{explain, limit};
use crate::a2e::{self, McpServerConfig};

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
    /// The server wants an OAuth token the bridge does not have (or can no longer refresh): a
    /// person must authorize. The 401's `WWW-Authenticate`, when it answered one.
    #[error("the server needs an OAuth authorization")]
    AuthRequired(Option<String>),
    /// The OAuth client failed (discovery, the token endpoint, the store).
    #[error("OAuth: {0}")]
    OAuth(String),
    /// The bridge's own database does not answer (its OAuth tokens live there).
    #[error("OAuth: {0}")]
    StoreUnavailable(String),
}

impl ConnectError {
    /// A failed start of a stdio server, with what it wrote to stderr.
    pub(super) fn with_tail(self, tail: String) -> Self {
        match self {
            Self::Initialize(why, _) => Self::Initialize(why, tail),
            Self::Timeout(bound, _) => Self::Timeout(bound, tail),
            other => other,
        }
    }

    /// The A2E error code this error answers with.
    pub fn code(&self) -> a2e::ErrorCode {
        match self {
            Self::Timeout(..) => a2e::ErrorCode::Timeout,
            Self::Spawn { .. } | Self::Initialize(..) => a2e::ErrorCode::McpTransportError,
            Self::List(_) => a2e::ErrorCode::McpProtocolError,
            Self::Config(_) => a2e::ErrorCode::InvalidRequest,
            Self::AuthRequired(_) => a2e::ErrorCode::McpAuthRequired,
            Self::OAuth(_) => a2e::ErrorCode::McpTransportError,
            Self::StoreUnavailable(_) => a2e::ErrorCode::McpServerUnavailable,
        }
    }

    /// The same error with a failed connection said in words (see `explain.rs`).
    pub(super) fn in_words(self, config: &McpServerConfig) -> Self {
        match self {
            Self::Initialize(why, stderr) => {
                Self::Initialize(explain::in_words(&why, config), stderr)
            }
            other => other,
        }
    }

    /// The same error with `config`'s secrets hidden in its text (see `a2e::redact_text`).
    pub(super) fn redacted(self, config: &McpServerConfig) -> Self {
        let secrets = config.secret_values();
        let hide = |text: String| crate::a2e::redact_text(&text, &secrets);
        match self {
            Self::Spawn {
                command,
                source,
                stderr,
            } => Self::Spawn {
                command: hide(command),
                source: std::io::Error::new(source.kind(), hide(source.to_string())),
                stderr: hide(stderr),
            },
            Self::Timeout(bound, stderr) => Self::Timeout(bound, hide(stderr)),
            Self::Initialize(why, stderr) => Self::Initialize(hide(why), hide(stderr)),
            Self::List(why) => Self::List(hide(why)),
            Self::Config(why) => Self::Config(hide(why)),
            Self::OAuth(why) => Self::OAuth(hide(why)),
            other @ (Self::AuthRequired(_) | Self::StoreUnavailable(_)) => other,
        }
    }

    /// The last stderr lines of a stdio server the error carries (empty when none).
    pub fn stderr_tail(&self) -> &str {
        match self {
            Self::Spawn { stderr, .. } | Self::Timeout(_, stderr) | Self::Initialize(_, stderr) => {
                stderr
            }
            Self::List(_)
            | Self::Config(_)
            | Self::AuthRequired(_)
            | Self::OAuth(_)
            | Self::StoreUnavailable(_) => "",
        }
    }

    /// The sentence without the stderr tail (for agents other than the server's owner).
    pub fn without_tail(&self) -> String {
        let text = self.to_string();
        text.strip_suffix(self.stderr_tail())
            .map(str::to_owned)
            .unwrap_or(text)
    }
}

/// The code of the error a call ends with when its server's input-required result went to a
/// client that answers it itself (`hub::InputRounds`): the front end answers with that result.
pub const INPUT_HANDED_OVER: i32 = -32_090;

/// What went wrong with a call on a live connection.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("the connection to the server was lost during the call")]
    Lost,
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    #[error("the server refused the request: {message}")]
    Rejected { code: i32, message: String },
    /// 2026-07-28: the server needs a capability the client did not declare (-32021); what it
    /// needs, as `ClientCapabilities` (its error's `data.requiredCapabilities`).
    #[error("the server needs a client capability that was not declared: {0}")]
    MissingClientCapability(serde_json::Value),
    #[error("the transport failed: {0}")]
    Transport(String),
    #[error("the server answered something unexpected: {0}")]
    Protocol(String),
    /// The server's answer was over `max_message_bytes` (the sentence names the limit).
    #[error("{0}")]
    TooLarge(String),
    /// The server refused the call's token (401) or its scope (403 `insufficient_scope`): its
    /// `WWW-Authenticate` challenge.
    #[error("the server needs a further OAuth authorization")]
    AuthRequired(String),
}

impl CallError {
    /// The A2E error code this error answers with.
    pub fn code(&self) -> a2e::ErrorCode {
        match self {
            Self::Lost => a2e::ErrorCode::McpServerUnavailable,
            Self::Timeout(_) => a2e::ErrorCode::Timeout,
            // -32602: invalid params; -32601: method not found; -32002: resource not found.
            Self::Rejected { code: -32602, .. } => a2e::ErrorCode::InvalidRequest,
            Self::Rejected { code: -32601, .. } | Self::MissingClientCapability(_) => {
                a2e::ErrorCode::McpCapabilityMissing
            }
            Self::Rejected { code: -32002, .. } => a2e::ErrorCode::McpResourceNotFound,
            // An answer over max_message_bytes: the same call would get it again.
            Self::Rejected { .. } | Self::Protocol(_) | Self::TooLarge(_) => {
                a2e::ErrorCode::McpProtocolError
            }
            Self::Transport(_) => a2e::ErrorCode::McpTransportError,
            Self::AuthRequired(_) => a2e::ErrorCode::McpAuthRequired,
        }
    }

    /// The same error with `secrets` hidden in its text (see `a2e::redact_text`).
    pub(super) fn redacted(self, secrets: &[String]) -> Self {
        let hide = |text: String| crate::a2e::redact_text(&text, secrets);
        match self {
            Self::Rejected { code, message } => Self::Rejected {
                code,
                message: hide(message),
            },
            Self::Transport(why) => Self::Transport(hide(why)),
            Self::Protocol(why) => Self::Protocol(hide(why)),
            Self::TooLarge(why) => Self::TooLarge(hide(why)),
            other @ (Self::Lost
            | Self::Timeout(_)
            | Self::AuthRequired(_)
            | Self::MissingClientCapability(_)) => other,
        }
    }

    pub(super) fn from_service(error: ServiceError, lost: &CancellationToken) -> Self {
        match error {
            ServiceError::McpError(e) if e.code.0 == limit::MESSAGE_TOO_LARGE => {
                Self::TooLarge(e.message.into_owned())
            }
            ServiceError::McpError(e)
                if e.code == ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY =>
            {
                let required = e.data.as_ref().and_then(|d| d.get("requiredCapabilities"));
                Self::MissingClientCapability(
                    required.cloned().unwrap_or_else(|| serde_json::json!({})),
                )
            }
            ServiceError::McpError(e) => Self::Rejected {
                code: e.code.0,
                message: e.message.into_owned(),
            },
            ServiceError::TransportClosed => Self::Lost,
            ServiceError::TransportSend(_) if lost.is_cancelled() => Self::Lost,
            // Said without rmcp's type names (`Transport [mcp_bridge::…<rmcp::…>]`).
            ServiceError::TransportSend(e) => {
                Self::Transport(explain::without_type_names(&e.to_string()))
            }
            ServiceError::Timeout { timeout } => Self::Timeout(timeout),
            other => Self::Protocol(other.to_string()),
        }
    }
}
