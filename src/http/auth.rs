//! JWT bearer authentication: HS256 with a shared secret (configured, or generated into the data
//! dir on first start), RS256/ES256/EdDSA with a public key, or an identity provider's keys
//! (`jwks.rs`). `sub` is the agent id; the roles are read from `MCP_BRIDGE_JWT_ROLES_CLAIM`
//! (`roles` by default), and `MCP_BRIDGE_JWT_ADMIN_ROLE` among them grants admin rights. Tokens
//! never reach the log.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::extract::Request;
use axum::http::header::AUTHORIZATION;
use axum::http::{HeaderMap, Uri};
use axum::response::{IntoResponse, Response};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use secrecy::ExposeSecret;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::a2e::ErrorCode;
use crate::caller::{Caller, Identity};
use crate::config::Config;
use crate::guard::Guard;
use crate::http::error::ApiError;
use crate::http::jwks::{Jwks, Source};

/// The file in the data dir that holds the generated HS256 secret.
pub const SECRET_FILE: &str = "jwt_secret";

#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    sub: String,
    exp: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    iat: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    iss: Option<String>,
    /// One audience or a list of them (jsonwebtoken checks it; this only carries it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    aud: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    roles: Option<Value>,
    /// Every other claim, for access policies.
    #[serde(flatten, default, skip_serializing_if = "serde_json::Map::is_empty")]
    other: serde_json::Map<String, serde_json::Value>,
}

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("cannot read the JWT public key {path}: {source}")]
    ReadKey {
        path: String,
        source: std::io::Error,
    },
    #[error("the JWT public key {0} is not an RSA, EC (P-256) or Ed25519 public key in PEM form")]
    BadKey(String),
    #[error("cannot keep the generated JWT secret in {path}: {source}")]
    Secret {
        path: String,
        source: std::io::Error,
    },
    #[error(
        "tokens can only be minted with a shared secret, not with a public key or an identity \
         provider's keys"
    )]
    CannotMint,
    #[error(
        "no signing secret in {path}: the service writes one there on its first start, and a \
         token signed with any other is refused. Run this command with the service's \
         configuration (the same MCP_BRIDGE_CONFIG, MCP_BRIDGE_DATA_DIR, or working directory), \
         or give both the same MCP_BRIDGE_JWT_SECRET"
    )]
    NoSecret { path: String },
    #[error("JWT key error: {0}")]
    Jwt(#[from] jsonwebtoken::errors::Error),
}

/// How many verified tokens are remembered (a full cache is emptied, not grown).
const VERIFIED_CAPACITY: usize = 4096;

/// Verifies bearer tokens, and mints them when the key is a shared secret.
pub struct Auth {
    /// Tokens that passed verification, with the agent and the last second they are valid in:
    /// an agent sends the same token on every call, and checking its signature again costs far
    /// more than the lookup. Expiry is still checked on every use.
    verified: std::sync::Mutex<foldhash::HashMap<String, (Caller, u64)>>,
    keys: Keys,
    encoding: Option<EncodingKey>,
    /// What a token must hold (for an identity provider's keys, the algorithm is set per token).
    validation: Validation,
    /// The dotted path of the claim that holds the roles.
    roles_claim: Vec<String>,
    admin_role: String,
    issuer: Option<String>,
    audience: Option<String>,
    /// `MCP_BRIDGE_PUBLIC_URL`, for the metadata a 401 points to.
    public_url: Option<String>,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auth")
            .field("algorithms", &self.validation.algorithms)
            .finish_non_exhaustive()
    }
}

/// What tokens are verified with.
enum Keys {
    /// A shared secret or a public key, of the algorithm the validation names.
    Static(DecodingKey),
    /// An identity provider's, each of its own algorithms.
    Provider(Arc<Jwks>),
}

impl Auth {
    pub fn from_config(config: &Config) -> Result<Self, AuthError> {
        let provider = match (&config.jwt_jwks_url, &config.jwt_issuer) {
            (Some(url), _) => Some(Source::Url(url.clone())),
            (None, Some(issuer)) if config.jwt_discovery => Some(Source::Discovery {
                issuer: issuer.clone(),
            }),
            _ => None,
        };
        let (keys, encoding, algorithm) = match (provider, &config.jwt_public_key) {
            // An operator's own provider, often on a private network: only the addresses no
            // provider has (link-local, cloud metadata) are refused.
            (Some(source), _) => (
                Keys::Provider(Arc::new(Jwks::new(source, Guard::new(true)))),
                None,
                Algorithm::RS256,
            ),
            (None, Some(path)) => {
                let (key, alg) = read_public_key(path)?;
                (Keys::Static(key), None, alg)
            }
            (None, None) => {
                let secret = match &config.jwt_secret {
                    Some(secret) => secret.expose_secret().as_bytes().to_vec(),
                    None => load_or_generate_secret(&config.data_dir)?,
                };
                (
                    Keys::Static(DecodingKey::from_secret(&secret)?),
                    Some(EncodingKey::from_secret(&secret)?),
                    Algorithm::HS256,
                )
            }
        };
        let mut validation = Validation::new(algorithm);
        validation.leeway = config.jwt_leeway_secs;
        validation.validate_nbf = true;
        let mut required = vec!["exp", "sub"];
        validation.validate_aud = config.jwt_audience.is_some();
        if let Some(aud) = &config.jwt_audience {
            validation.set_audience(&[aud]);
            required.push("aud");
        }
        if let Some(iss) = &config.jwt_issuer {
            validation.set_issuer(&[iss]);
            required.push("iss");
        }
        validation.set_required_spec_claims(&required);
        Ok(Self {
            verified: Default::default(),
            keys,
            encoding,
            validation,
            roles_claim: config
                .jwt_roles_claim
                .split('.')
                .map(str::to_owned)
                .collect(),
            admin_role: config.jwt_admin_role.clone(),
            issuer: config.jwt_issuer.clone(),
            audience: config.jwt_audience.clone(),
            public_url: config.public_url.clone(),
        })
    }

    /// The key the service verifies with, for minting outside it (`mcp-bridge token`,
    /// `import`): read as the service reads it, but never generated, since a secret made here
    /// is one the service never sees. With it, the file it was read from (None when the secret
    /// is configured).
    pub fn for_minting(config: &Config) -> Result<(Self, Option<PathBuf>), AuthError> {
        if config.jwt_public_key.is_some() || config.jwt_jwks_url.is_some() || config.jwt_discovery
        {
            return Err(AuthError::CannotMint);
        }
        if config.jwt_secret.is_some() {
            return Ok((Self::from_config(config)?, None));
        }
        let path = config.data_dir.join(SECRET_FILE);
        let path = std::path::absolute(&path).unwrap_or(path);
        let shown = path.display().to_string();
        match std::fs::read_to_string(&path) {
            Ok(text) if !text.trim().is_empty() => {}
            Ok(_) => return Err(AuthError::NoSecret { path: shown }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(AuthError::NoSecret { path: shown });
            }
            Err(source) => {
                return Err(AuthError::Secret {
                    path: shown,
                    source,
                });
            }
        }
        Ok((Self::from_config(config)?, Some(path)))
    }

    /// Fetches an identity provider's keys, if tokens are verified with them: at start, so
    /// that the first call does not wait for them. A provider that is down is logged, and asked
    /// again by the first token that comes.
    pub async fn prefetch(&self) {
        if let Keys::Provider(jwks) = &self.keys
            && let Err(error) = jwks.fetch().await
        {
            tracing::error!(%error, "cannot fetch the identity provider's keys: tokens are refused until it answers");
        }
    }

    /// The agent a token stands for, or why not (the reason is for the log, never the caller).
    pub async fn verify(&self, token: &str) -> Result<Caller, jsonwebtoken::errors::Error> {
        self.verify_at(token, jsonwebtoken::get_current_timestamp())
            .await
    }

    async fn verify_at(
        &self,
        token: &str,
        now: u64,
    ) -> Result<Caller, jsonwebtoken::errors::Error> {
        let expired = || jsonwebtoken::errors::ErrorKind::ExpiredSignature.into();
        {
            let mut verified = self.verified.lock().unwrap_or_else(|e| e.into_inner());
            match verified.get(token) {
                Some((agent, last)) if now <= *last => return Ok(agent.clone()),
                Some(_) => {
                    verified.remove(token);
                    return Err(expired());
                }
                None => {}
            }
        }
        let data = match &self.keys {
            Keys::Static(key) => jsonwebtoken::decode::<Claims>(token, key, &self.validation)?,
            Keys::Provider(jwks) => {
                let header = jsonwebtoken::decode_header(token)?;
                // No key of a published set is a shared secret: an HMAC token is refused
                // without asking the provider for keys.
                if matches!(
                    header.alg,
                    Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512
                ) {
                    return Err(jsonwebtoken::errors::ErrorKind::InvalidAlgorithm.into());
                }
                let (key, algorithms) = jwks
                    .key_for(header.kid.as_deref(), header.alg)
                    .await
                    .ok_or(jsonwebtoken::errors::ErrorKind::InvalidSignature)?;
                if !algorithms.contains(&header.alg) {
                    return Err(jsonwebtoken::errors::ErrorKind::InvalidAlgorithm.into());
                }
                let mut validation = self.validation.clone();
                validation.algorithms = vec![header.alg];
                jsonwebtoken::decode::<Claims>(token, &key, &validation)?
            }
        };
        let claims = data.claims;
        if claims.sub.is_empty() {
            return Err(jsonwebtoken::errors::ErrorKind::MissingRequiredClaim("sub".into()).into());
        }
        let roles = self.roles_of(&claims);
        let agent = Caller::from(Identity {
            admin: roles.contains(&self.admin_role),
            id: claims.sub,
            roles,
            claims: claims.other,
        });
        // Valid while `exp` is not older than the leeway, as jsonwebtoken decides.
        let last = claims.exp.saturating_add(self.validation.leeway);
        if now > last {
            return Err(expired());
        }
        let mut verified = self.verified.lock().unwrap_or_else(|e| e.into_inner());
        if verified.len() >= VERIFIED_CAPACITY {
            verified.retain(|_, (_, last)| now <= *last);
            if verified.len() >= VERIFIED_CAPACITY {
                verified.clear();
            }
        }
        verified.insert(token.to_owned(), (agent.clone(), last));
        Ok(agent)
    }

    /// The roles at the configured claim path: an array of strings, or one string of roles
    /// separated by spaces (as `scope` is); none when the path leads nowhere.
    fn roles_of(&self, claims: &Claims) -> Vec<String> {
        let (first, rest) = self
            .roles_claim
            .split_first()
            .expect("a validated claim path has a name");
        let top = match first.as_str() {
            "roles" => claims.roles.as_ref(),
            name => claims.other.get(name),
        };
        let found = rest
            .iter()
            .try_fold(top, |at, name| Some(at?.get(name.as_str())));
        match found.flatten() {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            Some(Value::String(roles)) => roles.split_whitespace().map(str::to_owned).collect(),
            _ => Vec::new(),
        }
    }

    /// A token for `sub`, valid for `ttl`.
    pub fn mint(
        &self,
        sub: &str,
        admin: bool,
        ttl: std::time::Duration,
    ) -> Result<String, AuthError> {
        self.mint_for(&Caller::new(sub, admin), ttl)
    }

    /// A token for `caller` (its id, roles and other claims), valid for `ttl`.
    pub fn mint_for(&self, caller: &Caller, ttl: std::time::Duration) -> Result<String, AuthError> {
        let key = self.encoding.as_ref().ok_or(AuthError::CannotMint)?;
        let now = jsonwebtoken::get_current_timestamp();
        let mut roles = caller.roles.clone();
        if caller.admin && !roles.contains(&self.admin_role) {
            roles.push(self.admin_role.clone());
        }
        let mut claims = Claims {
            sub: caller.id.clone(),
            exp: now + ttl.as_secs(),
            iat: Some(now),
            iss: self.issuer.clone(),
            aud: self.audience.clone().map(Value::from),
            roles: None,
            other: caller.claims.clone(),
        };
        // Where verifying reads them (`MCP_BRIDGE_JWT_ROLES_CLAIM`), so a minted token keeps its
        // roles and its admin right whatever the path.
        match self.roles_claim.as_slice() {
            [only] if only == "roles" => claims.roles = Some(roles.into()),
            path => put_at(&mut claims.other, path, roles.into()),
        }
        Ok(jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &claims,
            key,
        )?)
    }
}

/// Puts `value` at the dotted `path` in `claims`, making the objects on the way (replacing what
/// is not an object).
fn put_at(claims: &mut serde_json::Map<String, Value>, path: &[String], value: Value) {
    let Some((last, on_the_way)) = path.split_last() else {
        return;
    };
    let mut at = claims;
    for name in on_the_way {
        let next = at
            .entry(name.clone())
            .or_insert_with(|| Value::Object(Default::default()));
        if !next.is_object() {
            *next = Value::Object(Default::default());
        }
        at = next.as_object_mut().expect("made an object just above");
    }
    at.insert(last.clone(), value);
}

fn read_public_key(path: &Path) -> Result<(DecodingKey, Algorithm), AuthError> {
    let pem = std::fs::read(path).map_err(|source| AuthError::ReadKey {
        path: path.display().to_string(),
        source,
    })?;
    if let Ok(key) = DecodingKey::from_rsa_pem(&pem) {
        return Ok((key, Algorithm::RS256));
    }
    if let Ok(key) = DecodingKey::from_ec_pem(&pem) {
        return Ok((key, Algorithm::ES256));
    }
    if let Ok(key) = DecodingKey::from_ed_pem(&pem) {
        return Ok((key, Algorithm::EdDSA));
    }
    Err(AuthError::BadKey(path.display().to_string()))
}

/// Reads the secret kept in the data dir, generating it (mode 0600) on first use.
fn load_or_generate_secret(data_dir: &Path) -> Result<Vec<u8>, AuthError> {
    let path = data_dir.join(SECRET_FILE);
    crate::keyfile::load_or_generate(&path)
        .map(|(secret, _)| secret.into_bytes())
        .map_err(|source| AuthError::Secret {
            path: path.display().to_string(),
            source,
        })
}

/// The most of a refused request's body read so its connection can be reused.
const DRAIN_LIMIT: usize = 64 * 1024;
/// How long a refused request's body is waited for.
const DRAIN_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// Reads what is left of a refused request's body before answering it: hyper only keeps a
/// connection whose request it read to the end, and otherwise closes it after an answer that
/// said nothing of closing, so a client that sent its body in a second write (httpx does) and
/// reuses the connection met "disconnected without a response". A body too large or too slow is
/// not waited for: the answer then says `Connection: close`.
pub async fn keep_alive_after(mut refused: Response, req: Request) -> Response {
    let read = tokio::time::timeout(
        DRAIN_WAIT,
        axum::body::to_bytes(req.into_body(), DRAIN_LIMIT),
    )
    .await;
    if !matches!(read, Ok(Ok(_))) {
        refused.headers_mut().insert(
            axum::http::header::CONNECTION,
            axum::http::HeaderValue::from_static("close"),
        );
    }
    refused
}

impl Auth {
    /// The agent a request's bearer token stands for, or the 401 to answer it with.
    /// (The request's headers and URI, not the request: its body is not `Sync`, so a borrow of
    /// it could not be held across the wait for an identity provider's keys.)
    /// In an `authorize` span when spans are exported (the scheme and outcome, never the token).
    pub async fn caller_of(&self, headers: &HeaderMap, uri: &Uri) -> Result<Caller, Box<Response>> {
        if !crate::telemetry::exporting() {
            return self.check(headers, uri).await;
        }
        use tracing::Instrument as _;
        let keys = match self.keys {
            Keys::Static(_) => "key",
            Keys::Provider(_) => "identity_provider",
        };
        let span = tracing::info_span!(
            target: crate::telemetry::SPANS,
            "authorize",
            mcp_bridge.auth.scheme = "bearer",
            mcp_bridge.auth.keys = keys,
            mcp_bridge.authorize.outcome = tracing::field::Empty,
            mcp_bridge.agent.id = tracing::field::Empty,
        );
        // Boxed, as the other rare paths: a request's future is moved whole at every layer.
        let checked = Box::pin(self.check(headers, uri).instrument(span.clone())).await;
        match &checked {
            Ok(agent) => {
                span.record("mcp_bridge.authorize.outcome", "allowed");
                span.record("mcp_bridge.agent.id", agent.id.as_str());
            }
            Err(_) => {
                span.record("mcp_bridge.authorize.outcome", "denied");
                let message = match bearer(headers) {
                    Some(_) => "the bearer token was refused",
                    None => "no bearer token",
                };
                crate::telemetry::failed(&span, ErrorCode::Unauthorized.as_str(), message);
            }
        }
        checked
    }

    /// `caller_of`'s work.
    async fn check(&self, headers: &HeaderMap, uri: &Uri) -> Result<Caller, Box<Response>> {
        let Some(token) = bearer(headers) else {
            return Err(Box::new(self.unauthorized(headers, uri, false)));
        };
        match self.verify(token).await {
            Ok(agent) => Ok(agent),
            Err(reason) => {
                tracing::info!(%reason, "token refused");
                Err(Box::new(self.unauthorized(headers, uri, true)))
            }
        }
    }
}

/// The bearer token of a request's `Authorization` header.
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(' '))
        // The scheme is case-insensitive (RFC 9110 §11.1).
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
}

/// Where clients reach the bridge: `MCP_BRIDGE_PUBLIC_URL`, else the request's own `Host`.
pub fn base_url(public_url: Option<&str>, headers: &axum::http::HeaderMap) -> String {
    if let Some(public) = public_url {
        return public.to_owned();
    }
    let host = headers
        .get(axum::http::header::HOST)
        .and_then(|v| v.to_str().ok())
        .filter(|h| !h.is_empty() && !h.contains(['/', '"', ' ', '\\']))
        .unwrap_or("localhost");
    format!("http://{host}")
}

/// The path of the protected resource metadata (RFC 9728) that covers `path`: `/mcp` has its
/// own (the path-suffixed form MCP clients look for), the REST API the root one.
pub fn resource_metadata_path(path: &str) -> &'static str {
    if path == "/mcp" || path.starts_with("/mcp/") {
        "/.well-known/oauth-protected-resource/mcp"
    } else {
        "/.well-known/oauth-protected-resource"
    }
}

impl Auth {
    /// The 401: says a bearer JWT is expected, and points MCP clients (which look for OAuth
    /// metadata before anything else) at the resource metadata that says the same.
    fn unauthorized(&self, headers: &HeaderMap, uri: &Uri, token_given: bool) -> Response {
        let message = match (token_given, &self.keys) {
            (true, Keys::Static(_)) => {
                "the bearer token was refused: send `Authorization: Bearer <JWT>` with a JWT this \
                 bridge accepts (signed with its key, not expired; `mcp-bridge token` mints one)"
            }
            (false, Keys::Static(_)) => {
                "a bearer token is required: send `Authorization: Bearer <JWT>` with a JWT this \
                 bridge accepts (`mcp-bridge token` mints one)"
            }
            (true, Keys::Provider(_)) => {
                "the bearer token was refused: send `Authorization: Bearer <JWT>` with an access \
                 token of the bridge's identity provider (signed with one of its keys, for this \
                 audience, not expired)"
            }
            (false, Keys::Provider(_)) => {
                "a bearer token is required: send `Authorization: Bearer <JWT>` with an access \
                 token of the bridge's identity provider"
            }
        };
        let metadata = format!(
            "{}{}",
            base_url(self.public_url.as_deref(), headers),
            resource_metadata_path(uri.path())
        );
        // RFC 6750 §3: `invalid_token` when one was given; none when it was missing.
        let challenge = match token_given {
            true => format!(r#"Bearer error="invalid_token", resource_metadata="{metadata}""#),
            false => format!(r#"Bearer resource_metadata="{metadata}""#),
        };
        let mut resp = ApiError::new(ErrorCode::Unauthorized, message).into_response();
        if let Ok(value) = axum::http::HeaderValue::from_str(&challenge) {
            resp.headers_mut()
                .insert(axum::http::header::WWW_AUTHENTICATE, value);
        }
        resp
    }
}

#[cfg(test)]
mod tests;
