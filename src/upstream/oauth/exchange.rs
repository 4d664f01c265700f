//! OAuth 2.0 token exchange (RFC 8693) for a server whose `auth.grant_type` is `token_exchange`:
//! the calling agent's own access token (the subject token) is exchanged at the server's
//! authorization server for an access token for that server alone, which names the agent (`sub`)
//! and, as the authorization server decides, the bridge as the actor (`act.sub`).
//!
//! The `oauth2` crate (5.x) has no token exchange request and rmcp's only covers the enterprise
//! ID-JAG profile, so the request is a form POST made here, sent through the same guarded client
//! as every other OAuth request (address guard, bounded answer, a refusal reduced to its OAuth
//! error code). Neither token is ever logged, nor put in an error.

use std::sync::Mutex;

use rmcp::transport::auth::AuthorizationManager;
use secrecy::SecretString;

use super::guarded::GuardedHttp;
use super::{OAuthError, now_secs};
use crate::a2e::{OAuthConfig, TokenEndpointAuth};
use crate::guard::Guard;

const GRANT: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ACCESS_TOKEN: &str = "urn:ietf:params:oauth:token-type:access_token";
/// How long a token is taken to live when the answer says nothing of it (no `expires_in`, not a
/// JWT with an `exp`).
const DEFAULT_LIFETIME: u64 = 60;

/// The OAuth error codes that say the subject token (the agent's grant) is refused, not that the
/// bridge is misconfigured: a person or the agent must act, and asking again cannot help.
const REFUSALS: &[&str] = &[
    "invalid_grant",
    "invalid_token",
    "access_denied",
    "unauthorized_client",
    "invalid_target",
];

/// A token the exchange gave.
pub struct Exchanged {
    pub access_token: SecretString,
    /// Seconds since the epoch.
    pub expires_at: u64,
}

/// Why an exchange gave no token.
#[derive(Debug, thiserror::Error)]
pub enum ExchangeError {
    /// The authorization server refused the agent's token (its OAuth error code).
    #[error("the authorization server refused to exchange the agent's token ({0})")]
    Refused(String),
    #[error("the token exchange failed: {0}")]
    Failed(String),
}

impl From<OAuthError> for ExchangeError {
    fn from(error: OAuthError) -> Self {
        Self::Failed(error.to_string())
    }
}

/// One server's token exchanges: its settings, and its token endpoint once found.
pub struct Exchanger {
    config: OAuthConfig,
    url: String,
    guard: Guard,
    endpoint: Mutex<Option<String>>,
}

impl Exchanger {
    /// For the server at `url` with these `auth` settings.
    pub fn new(config: &OAuthConfig, url: &str, guard: Guard) -> Self {
        Self {
            config: config.clone(),
            url: url.to_owned(),
            guard,
            endpoint: Mutex::new(config.token_endpoint.clone()),
        }
    }

    /// Exchanges `subject` (the agent's access token) for a token for this server.
    pub async fn exchange(&self, subject: &str) -> Result<Exchanged, ExchangeError> {
        let http = GuardedHttp::new(self.guard)?;
        let endpoint = self.token_endpoint(&http).await?;
        let request = self.request(&endpoint, subject)?;
        let answer = http.send(request, false).await.map_err(|_| {
            ExchangeError::Failed(self.failure(&http, "the token endpoint was not reached"))
        })?;
        let body: serde_json::Value = serde_json::from_slice(answer.body()).unwrap_or_default();
        if !answer.status().is_success() {
            return Err(match body.get("error").and_then(|e| e.as_str()) {
                Some(code) if REFUSALS.contains(&code) => ExchangeError::Refused(code.to_owned()),
                _ => ExchangeError::Failed(self.failure(&http, "the token endpoint refused")),
            });
        }
        let token = body
            .get("access_token")
            .and_then(|t| t.as_str())
            .filter(|t| !t.is_empty())
            .ok_or_else(|| ExchangeError::Failed("the answer has no `access_token`".into()))?;
        let expires_at = match body.get("expires_in").and_then(|e| e.as_u64()) {
            // The server's figure, within a day (a larger one would keep a revoked grant's
            // token, or overflow).
            Some(seconds) => now_secs().saturating_add(seconds.min(86_400)),
            None => jwt_expiry(token)
                .unwrap_or(now_secs() + DEFAULT_LIFETIME)
                .min(now_secs().saturating_add(86_400)),
        };
        Ok(Exchanged {
            access_token: SecretString::from(token.to_owned()),
            expires_at,
        })
    }

    /// What the guarded client noted of its last refused request, or `otherwise`.
    fn failure(&self, http: &GuardedHttp, otherwise: &str) -> String {
        let noted = http
            .failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        noted.unwrap_or_else(|| otherwise.to_owned())
    }

    /// The configured token endpoint, else the one discovery finds (RFC 9728 from the server,
    /// then RFC 8414 or OpenID discovery), found once.
    async fn token_endpoint(&self, http: &GuardedHttp) -> Result<String, ExchangeError> {
        if let Some(known) = self
            .endpoint
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
        {
            return Ok(known);
        }
        let manager = AuthorizationManager::new_with_oauth_http_client(
            &*self.url,
            std::sync::Arc::new(http.clone()),
        )
        .await
        .map_err(OAuthError::from)?;
        let found = manager
            .resolve_metadata()
            .await
            .map_err(|e| http.explain(e))?
            .metadata
            .token_endpoint;
        *self.endpoint.lock().unwrap_or_else(|e| e.into_inner()) = Some(found.clone());
        Ok(found)
    }

    /// The token request: the grant, the subject token, what the token is for, and the client's
    /// authentication as configured (HTTP Basic by default when there is a secret).
    fn request(&self, endpoint: &str, subject: &str) -> Result<oauth2::HttpRequest, ExchangeError> {
        let config = &self.config;
        let client_id = config.client_id.clone().unwrap_or_default();
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        form.append_pair("grant_type", GRANT)
            .append_pair("subject_token", subject)
            .append_pair("subject_token_type", ACCESS_TOKEN)
            .append_pair("requested_token_type", ACCESS_TOKEN);
        match (&config.resource, &config.audience) {
            (Some(resource), _) => {
                form.append_pair("resource", resource);
            }
            (None, None) => {
                form.append_pair("resource", &self.url);
            }
            (None, Some(_)) => {}
        }
        if let Some(audience) = &config.audience {
            form.append_pair("audience", audience);
        }
        if !config.scopes.is_empty() {
            form.append_pair("scope", &config.scopes.join(" "));
        }
        let basic = match (&config.client_secret, config.token_endpoint_auth_method) {
            (Some(secret), None | Some(TokenEndpointAuth::ClientSecretBasic)) => {
                Some(basic_credentials(&client_id, secret))
            }
            (Some(secret), Some(TokenEndpointAuth::ClientSecretPost)) => {
                form.append_pair("client_id", &client_id)
                    .append_pair("client_secret", secret);
                None
            }
            _ => {
                form.append_pair("client_id", &client_id);
                None
            }
        };
        let mut request = oauth2::http::Request::builder()
            .method(oauth2::http::Method::POST)
            .uri(endpoint)
            .header(
                oauth2::http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(oauth2::http::header::ACCEPT, "application/json");
        if let Some(basic) = basic {
            request = request.header(oauth2::http::header::AUTHORIZATION, basic);
        }
        request
            .body(form.finish().into_bytes())
            .map_err(|_| ExchangeError::Failed("the token endpoint is not a valid URL".into()))
    }
}

/// `Basic` credentials as RFC 6749 §2.3.1 makes them: each part form-encoded first.
fn basic_credentials(client_id: &str, secret: &str) -> String {
    use base64::Engine;
    let encode =
        |part: &str| url::form_urlencoded::byte_serialize(part.as_bytes()).collect::<String>();
    let pair = format!("{}:{}", encode(client_id), encode(secret));
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(pair)
    )
}

/// The `exp` of a JWT, read without checking it (only to know when to exchange again).
fn jwt_expiry(token: &str) -> Option<u64> {
    use base64::Engine;
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()?
        .get("exp")?
        .as_u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchanger(auth: serde_json::Value) -> Exchanger {
        let config: OAuthConfig = serde_json::from_value(auth).unwrap();
        Exchanger::new(&config, "http://127.0.0.1:9/mcp", Guard::new(true))
    }

    fn form_of(request: &oauth2::HttpRequest) -> Vec<(String, String)> {
        url::form_urlencoded::parse(request.body())
            .into_owned()
            .collect()
    }

    #[test]
    fn the_request_names_the_subject_the_resource_and_the_client() {
        let made = exchanger(serde_json::json!({
            "type": "oauth2", "grant_type": "token_exchange", "client_id": "my bridge",
            "client_secret": "s3cret", "scopes": ["a", "b"]
        }));
        let request = made.request("http://127.0.0.1:9/token", "SUBJECT").unwrap();
        let form = form_of(&request);
        let value = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(value("grant_type"), Some(GRANT));
        assert_eq!(value("subject_token"), Some("SUBJECT"));
        assert_eq!(value("subject_token_type"), Some(ACCESS_TOKEN));
        assert_eq!(value("resource"), Some("http://127.0.0.1:9/mcp"));
        assert_eq!(value("scope"), Some("a b"));
        assert_eq!(value("client_secret"), None);
        let basic = request.headers()[oauth2::http::header::AUTHORIZATION]
            .to_str()
            .unwrap();
        // "my+bridge:s3cret", as RFC 6749 §2.3.1 encodes it.
        assert_eq!(basic, "Basic bXkrYnJpZGdlOnMzY3JldA==");

        // An audience alone names no resource; the secret in the body when asked.
        let made = exchanger(serde_json::json!({
            "type": "oauth2", "grant_type": "token_exchange", "client_id": "c",
            "client_secret": "s", "audience": "files",
            "token_endpoint_auth_method": "client_secret_post"
        }));
        let request = made.request("http://127.0.0.1:9/token", "T").unwrap();
        let form = form_of(&request);
        let value = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(value("resource"), None);
        assert_eq!(value("audience"), Some("files"));
        assert_eq!(value("client_secret"), Some("s"));
        assert!(
            !request
                .headers()
                .contains_key(oauth2::http::header::AUTHORIZATION)
        );
    }

    #[test]
    fn a_jwts_expiry_is_read_without_its_signature() {
        use base64::Engine;
        let part = |v: serde_json::Value| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
        };
        let token = format!(
            "{}.{}.sig",
            part(serde_json::json!({"alg": "RS256"})),
            part(serde_json::json!({"exp": 1234}))
        );
        assert_eq!(jwt_expiry(&token), Some(1234));
        assert_eq!(jwt_expiry("opaque"), None);
    }
}
