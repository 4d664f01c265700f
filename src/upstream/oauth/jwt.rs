//! The client credentials grant with `private_key_jwt` (RFC 7523 §2.2): the client proves who it
//! is with an assertion signed by its private key. The token request is the `oauth2` crate's; the
//! assertion is signed with `jsonwebtoken` (rmcp's own version of this needs a second crypto
//! library, aws-lc, which the bridge does not otherwise build).

use oauth2::basic::BasicClient;
use oauth2::{ClientId, Scope, TokenUrl};
use rmcp::transport::auth::{AuthorizationMetadata, OAuthTokenResponse};

use super::OAuthError;
use super::guarded::GuardedHttp;
use super::now_secs;

const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
/// How long an assertion is good for.
const ASSERTION_SECS: u64 = 300;

/// The assertion for `client_id` to the authorization server of `metadata`: issuer and subject
/// the client, audience the server's issuer (its token endpoint when it names none).
fn assertion(
    metadata: &AuthorizationMetadata,
    client_id: &str,
    pem: &str,
) -> Result<String, OAuthError> {
    // Read as the config check reads it: surrounding blank lines are not part of the key.
    let pem = pem.trim();
    let (key, algorithm) = match jsonwebtoken::EncodingKey::from_rsa_pem(pem.as_bytes()) {
        Ok(key) => (key, jsonwebtoken::Algorithm::RS256),
        Err(_) => match jsonwebtoken::EncodingKey::from_ec_pem(pem.as_bytes()) {
            Ok(key) => (key, jsonwebtoken::Algorithm::ES256),
            Err(_) => {
                return Err(OAuthError::Failed(
                    "`auth.private_key` is not an RSA or EC private key in PEM".into(),
                ));
            }
        },
    };
    let audience = metadata
        .issuer
        .clone()
        .unwrap_or_else(|| metadata.token_endpoint.clone());
    let now = now_secs();
    let claims = serde_json::json!({
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": now,
        "exp": now + ASSERTION_SECS,
        "jti": uuid::Uuid::new_v4().to_string(),
    });
    jsonwebtoken::encode(&jsonwebtoken::Header::new(algorithm), &claims, &key)
        .map_err(|e| OAuthError::Failed(format!("cannot sign the client assertion: {e}")))
}

/// A token for `client_id` by the client credentials grant, authenticated with `pem`.
pub(super) async fn exchange(
    http: &GuardedHttp,
    metadata: &AuthorizationMetadata,
    client_id: &str,
    pem: &str,
    scopes: &[String],
    resource: Option<&str>,
) -> Result<OAuthTokenResponse, OAuthError> {
    let token_url = TokenUrl::new(metadata.token_endpoint.clone())
        .map_err(|e| OAuthError::Failed(format!("the token endpoint: {e}")))?;
    let client = BasicClient::new(ClientId::new(client_id.to_owned())).set_token_uri(token_url);
    let assertion = assertion(metadata, client_id, pem)?;
    let mut request = client
        .exchange_client_credentials()
        .add_extra_param("client_assertion_type", ASSERTION_TYPE)
        .add_extra_param("client_assertion", assertion)
        .add_scopes(scopes.iter().cloned().map(Scope::new));
    if let Some(resource) = resource {
        request = request.add_extra_param("resource", resource);
    }
    // Each request's future owns its client: one borrowing it would not be `Send` for every
    // lifetime, as the `oauth2` crate's closure client needs.
    let send = |request: oauth2::HttpRequest| {
        let http = http.clone();
        async move { http.send(request, false).await.map_err(Sent) }
    };
    let token = request.request_async(&send).await.map_err(|e| {
        let failure = http
            .failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let why = failure.unwrap_or_else(|| super::describe(&e));
        OAuthError::Failed(format!("the client credentials grant failed: {why}"))
    })?;
    // The same standard fields, in the type rmcp keeps.
    serde_json::to_value(&token)
        .and_then(serde_json::from_value)
        .map_err(|e| OAuthError::Failed(format!("the token answer: {e}")))
}

/// The guarded client's error, as the `oauth2` crate wants one.
#[derive(Debug)]
struct Sent(rmcp::transport::auth::OAuthHttpClientError);

impl std::fmt::Display for Sent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for Sent {}
