//! A server's refusal that asks for an OAuth authorization, as the error it is: the same reading
//! for every transport that connects (`connect.rs` for Streamable HTTP, `sse.rs`, `ws.rs`).

use super::{ConnectError, oauth};

/// A 401 (or 403) answer to an sse or ws connection that asks for a bearer token.
pub fn refused_for_authorization(
    status: reqwest::StatusCode,
    headers: &reqwest::header::HeaderMap,
) -> Option<ConnectError> {
    if status != reqwest::StatusCode::UNAUTHORIZED && status != reqwest::StatusCode::FORBIDDEN {
        return None;
    }
    let challenge = headers
        .get(reqwest::header::WWW_AUTHENTICATE)?
        .to_str()
        .ok()?;
    needs_authorization(Some(challenge.to_owned()))
}

/// A 401 asking for a bearer token, or a 403 asking for more scope, as the error it is.
pub fn needs_authorization(challenge: Option<String>) -> Option<ConnectError> {
    let challenge = challenge?;
    oauth::is_bearer_challenge(&challenge).then_some(ConnectError::AuthRequired(Some(challenge)))
}
