//! [`Error`]: why a registry operation failed, and the A2E error code each failure answers
//! with.

use crate::a2e::ErrorCode;
use crate::store::StoreError;
use crate::upstream::{CallError, ConnectError};

/// Why a registry operation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    Conflict(String),
    #[error("no server \"{0}\" is registered")]
    ServerNotFound(String),
    #[error("no tool \"{0}\" is in the catalogue")]
    ToolNotFound(String),
    #[error("server \"{0}\" is not connected; try again when its status is ready")]
    Unavailable(String),
    #[error("cannot connect to server \"{server_id}\": {error}")]
    Connect {
        server_id: String,
        error: ConnectError,
    },
    #[error("no resource \"{0}\" is available")]
    ResourceNotFound(String),
    #[error("no prompt \"{0}\" is available")]
    PromptNotFound(String),
    #[error("{0}")]
    NotFound(String),
    #[error("server \"{server_id}\" does not offer {what}")]
    CapabilityMissing {
        server_id: String,
        what: &'static str,
    },
    #[error("{what} failed: {error}")]
    Upstream { what: String, error: CallError },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{0}")]
    Internal(String),
    /// The call needs an OAuth authorization the caller has not given: the link to give it.
    #[error("{}", auth_required(server_id, authorization_url.is_some()))]
    AuthRequired {
        server_id: String,
        authorization_url: Option<String>,
    },
    /// The server, or its authorization server, refused the calling agent's identity (a token
    /// exchange refused, a token the server refused).
    #[error("{0}")]
    IdentityRefused(String),
    /// Talking to a server's authorization server failed.
    #[error("OAuth: {0}")]
    OAuth(String),
    /// The bridge's own database does not answer while OAuth needs it (worth trying again).
    #[error("OAuth: {0}")]
    OAuthStoreUnavailable(String),
    /// What the replica holding the server answered (across replicas).
    #[error("{1}")]
    Remote(ErrorCode, String),
    /// A hook refused the request (or failed, and fails closed): which, and the reason it gave.
    #[error("denied by hook \"{hook}\": {reason}")]
    DeniedByHook { hook: String, reason: String },
    /// The caller cancelled the call before it answered; the server was told.
    #[error("the call \"{0}\" was cancelled by its caller; the server was told to stop")]
    Cancelled(String),
}

impl Error {
    /// The A2E error code this error answers with.
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Invalid(_) => ErrorCode::InvalidRequest,
            Error::Forbidden(_) => ErrorCode::Forbidden,
            Error::Conflict(_) => ErrorCode::Conflict,
            Error::ServerNotFound(_) => ErrorCode::McpServerNotFound,
            Error::ToolNotFound(_) => ErrorCode::McpToolNotFound,
            Error::Unavailable(_) => ErrorCode::McpServerUnavailable,
            Error::Connect { error, .. } => error.code(),
            Error::ResourceNotFound(_) => ErrorCode::McpResourceNotFound,
            Error::PromptNotFound(_) => ErrorCode::McpPromptNotFound,
            Error::NotFound(_) => ErrorCode::NotFound,
            Error::CapabilityMissing { .. } => ErrorCode::McpCapabilityMissing,
            Error::Upstream { error, .. } => error.code(),
            Error::Store(error) => error.code(),
            Error::Internal(_) => ErrorCode::Internal,
            Error::AuthRequired { .. } | Error::IdentityRefused(_) => ErrorCode::McpAuthRequired,
            Error::OAuth(_) => ErrorCode::McpTransportError,
            Error::OAuthStoreUnavailable(_) => ErrorCode::McpServerUnavailable,
            Error::Remote(code, _) => *code,
            Error::Cancelled(_) => ErrorCode::Cancelled,
            Error::DeniedByHook { .. } => ErrorCode::DeniedByHook,
        }
    }
}

/// What an `AuthRequired` error says: what to do with its link, or who can give one.
fn auth_required(server_id: &str, has_link: bool) -> String {
    match has_link {
        true => format!(
            "server \"{server_id}\" needs an OAuth authorization first: open `authorization_url` \
             in a browser, approve, and call again"
        ),
        false => format!(
            "server \"{server_id}\" waits for an OAuth authorization by its owner or an admin \
             (POST /v1/servers/{server_id}/authorize)"
        ),
    }
}

impl Error {
    /// What a not-found error is about, for a sentence naming it.
    pub(super) fn subject(&self) -> String {
        match self {
            Error::ResourceNotFound(uri) => format!("resource \"{uri}\""),
            Error::PromptNotFound(name) => format!("prompt \"{name}\""),
            other => other.to_string(),
        }
    }
}
