//! OAuth 2.1 to upstream servers, as MCP authorization defines it (2025-11-25, and the
//! 2025-03-26 endpoint fallback). rmcp's `auth` module does the mechanics: discovery (RFC 9728
//! from `WWW-Authenticate`, then the well-known paths; RFC 8414, then OpenID discovery, then the
//! 2025-03-26 defaults), dynamic registration (RFC 7591), PKCE S256, `state`, the `resource`
//! indicator (RFC 8707), scope selection with `offline_access` only where offered, and refresh
//! (before expiry, and once on a 401). This module gives it the address guard for every request
//! it makes, keeps each grant's registration and tokens sealed in the store, picks how to
//! register (pre-registered, client ID metadata document, dynamic: in that order), and does the
//! client credentials grant.
//!
//! Its parts: `client.rs` (a grant's client and its flows), `guarded.rs` (the HTTP of every
//! flow), `vault.rs` (a grant's tokens), `link.rs` (an authorization link's flow), `jwt.rs`
//! (`private_key_jwt`), `exchange.rs` (token exchange, RFC 8693), `id_jag.rs` (enterprise-managed
//! authorization), `discovery.rs` (the 2025-03-26 revision's discovery, for the one case rmcp
//! refuses).

use rmcp::transport::auth::{AuthError, AuthorizationMetadata, WWWAuthenticateParams};
use serde::{Deserialize, Serialize};

use vault::STORE_AWAY;

mod client;
mod discovery;
mod exchange;
mod guarded;
mod id_jag;
mod jwt;
mod link;
mod vault;
pub use client::{Client, LINK_STALE, Pending};
pub use exchange::{ExchangeError, Exchanged, Exchanger};
pub use link::LinkFlow;
pub use vault::Binding;

/// Where the bridge is reached by browsers and authorization servers, for one flow.
#[derive(Debug, Clone)]
pub struct Settings {
    /// `{public}/oauth/callback`.
    pub redirect_uri: String,
    /// `{public}/oauth/client-metadata.json`, when the public URL is https (a client ID
    /// metadata document must be served over https).
    pub client_metadata_url: Option<String>,
    /// `{public}/oauth/client-metadata.json`: where the bridge serves the document.
    served_at: String,
}

impl Settings {
    /// For a bridge reached at `public_url`; `client_metadata_url` names a client ID metadata
    /// document hosted elsewhere (by default the bridge's own, when `public_url` is https).
    pub fn new(public_url: &str, client_metadata_url: Option<&str>) -> Self {
        let public = public_url.trim_end_matches('/');
        let served_at = format!("{public}{CLIENT_METADATA_PATH}");
        let own = public.starts_with("https://").then(|| served_at.clone());
        Self {
            redirect_uri: format!("{public}/oauth/callback"),
            client_metadata_url: client_metadata_url.map(str::to_owned).or(own),
            served_at,
        }
    }

    /// The client ID metadata document the bridge serves (SEP-991), naming its redirect URI;
    /// its `client_id` is where it is used from (a copy hosted elsewhere, or this one).
    pub fn client_metadata(&self) -> serde_json::Value {
        let client_id = self.client_metadata_url.as_ref().unwrap_or(&self.served_at);
        serde_json::json!({
            "client_id": client_id,
            "client_name": CLIENT_NAME,
            "redirect_uris": [self.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            "application_type": "web",
        })
    }
}

/// Where the client ID metadata document is served.
pub const CLIENT_METADATA_PATH: &str = "/oauth/client-metadata.json";
/// The name the bridge registers under.
const CLIENT_NAME: &str = "mcp-bridge";

/// One grant: the server's shared one (`agent` empty) or a `per_agent` server's for one agent.
#[derive(Debug, Clone)]
pub struct GrantKey {
    pub server_id: String,
    pub agent: String,
}

/// Why a grant cannot give a token.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    /// A person must authorize (again): there is no token, or it can no longer be refreshed.
    #[error("the server needs an OAuth authorization")]
    NeedsAuthorization,
    #[error("{0}")]
    Failed(String),
    /// The bridge's own database does not answer (worth trying again shortly).
    #[error("{0}")]
    StoreUnavailable(String),
}

impl From<crate::store::StoreError> for OAuthError {
    fn from(error: crate::store::StoreError) -> Self {
        match error {
            crate::store::StoreError::Unavailable(_) => Self::StoreUnavailable(error.to_string()),
            other => Self::Failed(other.to_string()),
        }
    }
}

impl From<AuthError> for OAuthError {
    fn from(error: AuthError) -> Self {
        match error {
            AuthError::AuthorizationRequired | AuthError::TokenRefreshRejected(_) => {
                Self::NeedsAuthorization
            }
            AuthError::CredentialStoreError(text) if text.starts_with(STORE_AWAY) => {
                Self::StoreUnavailable(text[STORE_AWAY.len()..].to_owned())
            }
            other => Self::Failed(describe(&other)),
        }
    }
}

/// Why stored JSON of a grant or link (tokens, a client secret, a PKCE verifier) cannot be
/// read, without serde's own text, which can quote the value it choked on.
fn unreadable(what: &str, error: &serde_json::Error) -> String {
    format!(
        "{what} cannot be read ({:?} error at line {}, column {})",
        error.classify(),
        error.line(),
        error.column()
    )
}

/// An error of rmcp's OAuth client as a sentence, with its sources.
/// Seconds since the epoch, now (token lifetimes and assertions).
fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

fn describe(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        let more = inner.to_string();
        if !text.contains(&more) {
            text = format!("{text}: {more}");
        }
        source = inner.source();
    }
    text
}

/// How the bridge is registered with a server's authorization server, and what that server
/// published: kept (sealed) so a restart needs no discovery and no new registration.
#[derive(Clone, Serialize, Deserialize)]
struct Registration {
    client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_secret: Option<String>,
    metadata: AuthorizationMetadata,
}

/// The `scope` a `403 insufficient_scope` challenge asks for, if it is one.
pub fn insufficient_scope(challenge: &str, url: &str) -> Option<String> {
    let base = url::Url::parse(url).ok()?;
    let params = WWWAuthenticateParams::parse(challenge, &base);
    params
        .is_insufficient_scope()
        .then(|| params.scope.unwrap_or_default())
}

/// Whether a 401's `WWW-Authenticate` asks for a bearer token (RFC 6750).
pub fn is_bearer_challenge(challenge: &str) -> bool {
    challenge
        .trim_start()
        .get(..6)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case("bearer"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use crate::a2e::McpServerConfig;
    use crate::guard::Guard;
    use crate::store::Store;

    #[tokio::test]
    async fn an_unreadable_stored_link_is_never_quoted() {
        let store = Store::open("sqlite::memory:").await.unwrap();
        let config: McpServerConfig = serde_json::from_value(serde_json::json!({
            "server_id": "s", "transport": "http", "url": "http://127.0.0.1:9/mcp"
        }))
        .unwrap();
        let key = GrantKey {
            server_id: "s".into(),
            agent: String::new(),
        };
        let settings = Arc::new(Settings::new("http://127.0.0.1:8080/", None));
        let client = Client::new(&config, key, settings, Guard::new(true), store);
        for stored in [
            r#""pkce-verifier-SECRET""#,
            r#"{"state": {"pkce_verifier": 7, "csrf_token": "x"}, "server": "pkce-verifier-SECRET"}"#,
            r#"{"server": {"pkce-verifier-SECRET": 1}}"#,
        ] {
            let Err(error) = client.made_this(stored) else {
                panic!("{stored} read as a flow");
            };
            let error = error.to_string();
            assert!(!error.contains("SECRET"), "{error}");
            assert!(error.contains("a stored authorization link"), "{error}");
        }
    }

    #[test]
    fn challenges_are_read_as_rfc_6750_says() {
        assert!(is_bearer_challenge(
            r#"Bearer resource_metadata="https://x/y""#
        ));
        assert!(is_bearer_challenge("bearer"));
        assert!(!is_bearer_challenge(r#"Basic realm="x""#));
        let url = "https://mcp.example.com/mcp";
        let more = r#"Bearer error="insufficient_scope", scope="files:read files:write""#;
        assert_eq!(
            insufficient_scope(more, url).as_deref(),
            Some("files:read files:write")
        );
        assert_eq!(
            insufficient_scope(r#"Bearer error="invalid_token""#, url),
            None
        );
    }

    #[test]
    fn the_redirect_uri_and_the_metadata_document_follow_the_public_url() {
        let plain = Settings::new("http://127.0.0.1:8080/", None);
        assert_eq!(plain.redirect_uri, "http://127.0.0.1:8080/oauth/callback");
        assert_eq!(plain.client_metadata_url, None);
        let public = Settings::new("https://gw.example.com", None);
        assert_eq!(
            public.client_metadata_url.as_deref(),
            Some("https://gw.example.com/oauth/client-metadata.json")
        );
        let hosted = Settings::new(
            "https://gw.example.com",
            Some("https://docs.example/c.json"),
        );
        assert_eq!(
            hosted.client_metadata_url.as_deref(),
            Some("https://docs.example/c.json")
        );
        let document = public.client_metadata();
        assert_eq!(
            document["client_id"],
            "https://gw.example.com/oauth/client-metadata.json"
        );
        assert_eq!(
            document["redirect_uris"][0],
            "https://gw.example.com/oauth/callback"
        );
    }
}
