//! JWT bearer authentication: HS256 with a shared secret (configured, or generated into the data
//! dir on first start), or RS256/ES256/EdDSA with a public key. `sub` is the agent id; a `roles`
//! claim containing `admin` grants admin rights. Tokens never reach the log.

use std::path::{Path, PathBuf};

use axum::extract::Request;
use axum::http::header::AUTHORIZATION;
use axum::response::{IntoResponse, Response};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use secrecy::ExposeSecret;
use serde::{Deserialize, Serialize};

use crate::a2e::ErrorCode;
use crate::caller::{Caller, Identity};
use crate::config::Config;
use crate::http::error::ApiError;

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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    aud: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    roles: Vec<String>,
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
    #[error("tokens can only be minted with a shared secret, not with a public key")]
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
    decoding: DecodingKey,
    encoding: Option<EncodingKey>,
    validation: Validation,
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

impl Auth {
    pub fn from_config(config: &Config) -> Result<Self, AuthError> {
        let (decoding, encoding, algorithm) = match &config.jwt_public_key {
            Some(path) => {
                let (key, alg) = read_public_key(path)?;
                (key, None, alg)
            }
            None => {
                let secret = match &config.jwt_secret {
                    Some(secret) => secret.expose_secret().as_bytes().to_vec(),
                    None => load_or_generate_secret(&config.data_dir)?,
                };
                (
                    DecodingKey::from_secret(&secret)?,
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
            decoding,
            encoding,
            validation,
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
        if config.jwt_public_key.is_some() {
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

    /// The agent a token stands for, or why not (the reason is for the log, never the caller).
    pub fn verify(&self, token: &str) -> Result<Caller, jsonwebtoken::errors::Error> {
        self.verify_at(token, jsonwebtoken::get_current_timestamp())
    }

    fn verify_at(&self, token: &str, now: u64) -> Result<Caller, jsonwebtoken::errors::Error> {
        let expired = || jsonwebtoken::errors::ErrorKind::ExpiredSignature.into();
        let mut verified = self.verified.lock().unwrap_or_else(|e| e.into_inner());
        match verified.get(token) {
            Some((agent, last)) if now <= *last => return Ok(agent.clone()),
            Some(_) => {
                verified.remove(token);
                return Err(expired());
            }
            None => {}
        }
        drop(verified);
        let data = jsonwebtoken::decode::<Claims>(token, &self.decoding, &self.validation)?;
        let claims = data.claims;
        if claims.sub.is_empty() {
            return Err(jsonwebtoken::errors::ErrorKind::MissingRequiredClaim("sub".into()).into());
        }
        let agent = Caller::from(Identity {
            admin: claims.roles.iter().any(|r| r == "admin"),
            id: claims.sub,
            roles: claims.roles,
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
        if caller.admin && !roles.iter().any(|r| r == "admin") {
            roles.push("admin".into());
        }
        let claims = Claims {
            sub: caller.id.clone(),
            exp: now + ttl.as_secs(),
            iat: Some(now),
            iss: self.issuer.clone(),
            aud: self.audience.clone(),
            roles,
            other: caller.claims.clone(),
        };
        Ok(jsonwebtoken::encode(
            &Header::new(Algorithm::HS256),
            &claims,
            key,
        )?)
    }
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
    pub fn caller_of(&self, req: &Request) -> Result<Caller, Box<Response>> {
        let token = req
            .headers()
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            // The scheme is case-insensitive (RFC 9110 §11.1).
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim());
        match token.map(|t| self.verify(t)) {
            Some(Ok(agent)) => Ok(agent),
            Some(Err(reason)) => {
                tracing::info!(%reason, "token refused");
                Err(Box::new(self.unauthorized(req, true)))
            }
            None => Err(Box::new(self.unauthorized(req, false))),
        }
    }
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
    fn unauthorized(&self, req: &Request, token_given: bool) -> Response {
        let message = match token_given {
            true => {
                "the bearer token was refused: send `Authorization: Bearer <JWT>` with a JWT this \
                 bridge accepts (signed with its key, not expired; `mcp-bridge token` mints one)"
            }
            false => {
                "a bearer token is required: send `Authorization: Bearer <JWT>` with a JWT this \
                 bridge accepts (`mcp-bridge token` mints one)"
            }
        };
        let metadata = format!(
            "{}{}",
            base_url(self.public_url.as_deref(), req.headers()),
            resource_metadata_path(req.uri().path())
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
mod tests {
    use super::*;

    fn auth(secret: &str) -> Auth {
        let config = Config {
            jwt_secret: Some(secret.to_owned().into()),
            ..Config::default()
        };
        Auth::from_config(&config).unwrap()
    }

    #[test]
    fn minted_tokens_verify() {
        let auth = auth("s3cret");
        let token = auth
            .mint("alice", true, std::time::Duration::from_secs(60))
            .unwrap();
        assert_eq!(auth.verify(&token).unwrap(), Caller::new("alice", true));
        let token = auth
            .mint("bob", false, std::time::Duration::from_secs(60))
            .unwrap();
        assert!(!auth.verify(&token).unwrap().admin);
    }

    #[test]
    fn a_remembered_token_still_expires() {
        let auth = auth("s3cret");
        let token = auth
            .mint("alice", false, std::time::Duration::from_secs(60))
            .unwrap();
        let now = jsonwebtoken::get_current_timestamp();
        assert_eq!(auth.verify_at(&token, now).unwrap().id, "alice");
        // Served from the cache now, up to the last second the token is valid in.
        let last = now + 60 + auth.validation.leeway;
        assert_eq!(auth.verify_at(&token, last - 1).unwrap().id, "alice");
        let error = auth.verify_at(&token, last + 1).unwrap_err();
        assert_eq!(
            error.kind(),
            &jsonwebtoken::errors::ErrorKind::ExpiredSignature
        );
        // A token that fails verification is never remembered.
        let forged = format!("{}x", &token[..token.len() - 1]);
        assert!(auth.verify_at(&forged, now).is_err());
        assert!(auth.verify_at(&forged, now).is_err());
    }

    #[test]
    fn a_foreign_signature_is_refused() {
        let token = auth("other")
            .mint("alice", true, std::time::Duration::from_secs(60))
            .unwrap();
        assert!(auth("s3cret").verify(&token).is_err());
    }

    // A key pair made for these tests only.
    const ED_PRIVATE: &str = "-----BEGIN PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIAS+UlTADFbWF/Ggvxdea/jWY4W46XkVxq3VKPqwkxtf
-----END PRIVATE KEY-----
";
    const ED_PUBLIC: &str = "-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEAJe8ZOx75l2FCFVsnL+NQCJ9nt9EPVO7JyAYdHXelHgE=
-----END PUBLIC KEY-----
";

    fn sign(alg: Algorithm, key: &EncodingKey, claims: serde_json::Value) -> String {
        jsonwebtoken::encode(&Header::new(alg), &claims, key).unwrap()
    }

    #[test]
    fn a_public_key_accepts_its_own_algorithm_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("jwt.pub");
        std::fs::write(&path, ED_PUBLIC).unwrap();
        let auth = Auth::from_config(&Config {
            jwt_public_key: Some(path),
            jwt_issuer: Some("https://issuer.example".into()),
            jwt_audience: Some("mcp-bridge".into()),
            ..Config::default()
        })
        .unwrap();
        let exp = jsonwebtoken::get_current_timestamp() + 600;
        let private = EncodingKey::from_ed_pem(ED_PRIVATE.as_bytes()).unwrap();
        let claims = serde_json::json!({
            "sub": "alice", "exp": exp, "iss": "https://issuer.example", "aud": "mcp-bridge"
        });
        assert_eq!(
            auth.verify(&sign(Algorithm::EdDSA, &private, claims.clone()))
                .unwrap()
                .id,
            "alice"
        );
        // Algorithm confusion: an HS256 token keyed with the public key's own bytes.
        let confused = EncodingKey::from_secret(ED_PUBLIC.as_bytes()).unwrap();
        assert!(
            auth.verify(&sign(Algorithm::HS256, &confused, claims.clone()))
                .is_err()
        );
        // Wrong or missing issuer and audience.
        for (field, value) in [
            ("iss", Some("https://other.example")),
            ("iss", None),
            ("aud", Some("someone-else")),
            ("aud", None),
        ] {
            let mut claims = claims.clone();
            match value {
                Some(value) => claims[field] = value.into(),
                None => {
                    claims.as_object_mut().unwrap().remove(field);
                }
            }
            assert!(
                auth.verify(&sign(Algorithm::EdDSA, &private, claims))
                    .is_err(),
                "{field} = {value:?}"
            );
        }
        // Only the holder of the private key mints.
        assert!(
            auth.mint("alice", false, std::time::Duration::from_secs(60))
                .is_err()
        );
    }

    #[test]
    fn the_generated_secret_is_private_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let first = load_or_generate_secret(dir.path()).unwrap();
        let second = load_or_generate_secret(dir.path()).unwrap();
        assert_eq!(first, second);
        assert_eq!(first.len(), 64);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(SECRET_FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }
}
