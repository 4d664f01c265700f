//! Agents' tokens signed by an identity provider: the provider's public keys, published as a JWK
//! Set (RFC 7517) at `MCP_BRIDGE_JWT_JWKS_URL` or at the `jwks_uri` of the issuer's OpenID
//! Connect discovery document (`MCP_BRIDGE_JWT_DISCOVERY`).
//!
//! The keys are fetched at start, in the background (a provider that is down then is asked again),
//! kept for their `Cache-Control: max-age` and fetched again in the background once that is
//! over. A token signed with a key not among them (the provider rotated its keys) has them
//! fetched again at once, at most once every [`MIN_REFETCH`] however many such tokens come: a
//! token that comes sooner waits for that fetch rather than failing, so a rotation fails no call.
//! Every fetch goes through the address guard, as every other request the bridge makes does.
//!
//! Each key verifies only the algorithms of its type (its `alg` alone when it names one): an
//! RSA key never verifies an HMAC token made with its own bytes, and a symmetric key in the set
//! is ignored.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;
use tokio::time::Instant;

use crate::guard::Guard;

/// How long keys are kept when the provider says nothing of it, and the bounds of what it may say.
const DEFAULT_MAX_AGE: Duration = Duration::from_secs(300);
const MAX_AGE_BOUNDS: (Duration, Duration) = (Duration::from_secs(30), Duration::from_secs(86_400));
/// The least time between two fetches made for an unknown key.
pub const MIN_REFETCH: Duration = Duration::from_secs(5);
/// How long one fetch (discovery and keys) may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// The most of a JWKS or discovery document read.
const MAX_DOCUMENT: usize = 1 << 20;

/// Where the keys are published.
#[derive(Debug, Clone)]
pub enum Source {
    /// A JWKS URL.
    Url(String),
    /// The `jwks_uri` of this issuer's `/.well-known/openid-configuration`.
    Discovery { issuer: String },
}

/// One key of the set, with the algorithms it may verify.
struct Key {
    decoding: DecodingKey,
    algorithms: Vec<Algorithm>,
}

/// The keys as last fetched, in the order the set lists them (a token naming no key gets the
/// first of its algorithm, always the same one), each with its `kid` if it has one.
#[derive(Default)]
struct Keys {
    listed: Vec<(Option<String>, Key)>,
    /// When they are to be fetched again.
    stale_at: Option<Instant>,
}

/// Why the keys could not be fetched.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("cannot fetch {url}: {reason}")]
    Http { url: String, reason: String },
    #[error("{url} is not {what}: {reason}")]
    Document {
        url: String,
        what: &'static str,
        reason: String,
    },
}

/// An identity provider's keys.
pub struct Jwks {
    source: Source,
    client: reqwest::Client,
    keys: RwLock<Keys>,
    /// Held by the one fetch under way; holds when the last fetch was started.
    fetching: tokio::sync::Mutex<Option<Instant>>,
}

impl std::fmt::Debug for Jwks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Jwks")
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

impl Jwks {
    /// Keys to be fetched from `source`, through `guard`; none fetched yet.
    pub fn new(source: Source, guard: Guard) -> Self {
        let client = guard
            .http_client(true)
            .timeout(FETCH_TIMEOUT)
            .build()
            // Only a TLS back end that cannot start fails here, and then no client would.
            .expect("the guarded HTTP client builds");
        Self {
            source,
            client,
            keys: RwLock::default(),
            fetching: tokio::sync::Mutex::new(None),
        }
    }

    /// The key `kid` names (when the token names none, the first key of the set verifying
    /// `alg`), fetching the set again if it is not among those held; `None` when
    /// the provider has no such key.
    pub async fn key_for(
        self: &Arc<Self>,
        kid: Option<&str>,
        alg: Algorithm,
    ) -> Option<(DecodingKey, Vec<Algorithm>)> {
        if let Some(found) = self.held(kid, alg) {
            self.refresh_if_stale();
            return Some(found);
        }
        self.refetch_for_unknown().await;
        self.held(kid, alg)
    }

    fn held(&self, kid: Option<&str>, alg: Algorithm) -> Option<(DecodingKey, Vec<Algorithm>)> {
        let keys = self.keys.read().unwrap_or_else(|e| e.into_inner());
        let (_, key) = keys.listed.iter().find(|(id, key)| match kid {
            Some(kid) => id.as_deref() == Some(kid),
            None => key.algorithms.contains(&alg),
        })?;
        Some((key.decoding.clone(), key.algorithms.clone()))
    }

    /// Fetches the keys now; what was held is kept when the fetch fails.
    pub async fn fetch(&self) -> Result<usize, FetchError> {
        let mut fetching = self.fetching.lock().await;
        *fetching = Some(Instant::now());
        self.fetch_held().await
    }

    async fn fetch_held(&self) -> Result<usize, FetchError> {
        let url = match &self.source {
            Source::Url(url) => url.clone(),
            Source::Discovery { issuer } => self.discover(issuer).await?,
        };
        let (document, max_age) = self.get_json(&url, "a JWK Set").await?;
        let keys = parse_set(&document).map_err(|reason| FetchError::Document {
            url: url.clone(),
            what: "a JWK Set",
            reason,
        })?;
        let count = keys.listed.len();
        let mut held = self.keys.write().unwrap_or_else(|e| e.into_inner());
        *held = Keys {
            stale_at: Some(Instant::now() + max_age),
            ..keys
        };
        tracing::info!(%url, keys = count, ?max_age, "the identity provider's keys fetched");
        Ok(count)
    }

    /// A token named a key not held: fetches the set again, unless it was fetched less than
    /// [`MIN_REFETCH`] ago, in which case this waits until then and fetches it (once for all
    /// the tokens waiting).
    async fn refetch_for_unknown(&self) {
        let asked = Instant::now();
        let mut fetching = self.fetching.lock().await;
        if let Some(last) = *fetching {
            if last >= asked {
                // Fetched while this waited for the lock: that is the fetch it wanted.
                return;
            }
            tokio::time::sleep_until(last + MIN_REFETCH).await;
        }
        *fetching = Some(Instant::now());
        if let Err(error) = self.fetch_held().await {
            tracing::warn!(%error, "cannot fetch the identity provider's keys");
        }
    }

    /// Starts a fetch in the background once the keys' lifetime is over (one at a time; the
    /// keys held go on verifying meanwhile).
    fn refresh_if_stale(self: &Arc<Self>) {
        let now = Instant::now();
        let fresh = |keys: &Keys| keys.stale_at.is_some_and(|at| now < at);
        if fresh(&self.keys.read().unwrap_or_else(|e| e.into_inner())) {
            return;
        }
        {
            let mut keys = self.keys.write().unwrap_or_else(|e| e.into_inner());
            if fresh(&keys) {
                return;
            }
            // Pushed on, so that the tokens verified meanwhile start no other fetch.
            keys.stale_at = Some(now + MIN_REFETCH);
        }
        let this = self.clone();
        tokio::spawn(async move {
            if let Err(error) = this.fetch().await {
                tracing::warn!(%error, "cannot fetch the identity provider's keys again");
            }
        });
    }

    /// The URL of the JWKS, read from the issuer's discovery document (whose `issuer` must be
    /// the one configured, as OpenID Connect Discovery 1.0 §4.3 says).
    async fn discover(&self, issuer: &str) -> Result<String, FetchError> {
        let url = format!(
            "{}/.well-known/openid-configuration",
            issuer.trim_end_matches('/')
        );
        let what = "an OpenID Connect discovery document";
        let (document, _) = self.get_json(&url, what).await?;
        let invalid = |reason: String| FetchError::Document {
            url: url.clone(),
            what,
            reason,
        };
        let named = document.get("issuer").and_then(Value::as_str);
        if named != Some(issuer) {
            return Err(invalid(format!(
                "its issuer is {named:?}, not the configured \"{issuer}\""
            )));
        }
        document
            .get("jwks_uri")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| invalid("it names no jwks_uri".into()))
    }

    /// A JSON document, and how long it may be kept (its `Cache-Control: max-age`, bounded).
    async fn get_json(
        &self,
        url: &str,
        what: &'static str,
    ) -> Result<(Value, Duration), FetchError> {
        let failed = |reason: String| FetchError::Http {
            url: url.to_owned(),
            reason,
        };
        let mut response = self
            .client
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| failed(e.to_string()))?;
        if !response.status().is_success() {
            return Err(failed(format!("answered {}", response.status())));
        }
        let max_age = max_age(response.headers()).unwrap_or(DEFAULT_MAX_AGE);
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| failed(e.to_string()))? {
            body.extend_from_slice(&chunk);
            if body.len() > MAX_DOCUMENT {
                return Err(failed(format!("more than {MAX_DOCUMENT} bytes")));
            }
        }
        let document = serde_json::from_slice(&body).map_err(|e| FetchError::Document {
            url: url.to_owned(),
            what,
            reason: e.to_string(),
        })?;
        Ok((document, max_age.clamp(MAX_AGE_BOUNDS.0, MAX_AGE_BOUNDS.1)))
    }
}

/// `max-age` of a `Cache-Control` header; `None` without one (or with `no-store`/`no-cache`,
/// which leave the default).
fn max_age(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let value = headers.get(reqwest::header::CACHE_CONTROL)?.to_str().ok()?;
    value.split(',').find_map(|directive| {
        let (name, seconds) = directive.trim().split_once('=')?;
        match name.trim().eq_ignore_ascii_case("max-age") {
            true => seconds.trim().parse().ok().map(Duration::from_secs),
            false => None,
        }
    })
}

/// The signing keys of a JWK Set; keys of other uses, of no type this verifies, or that do not
/// parse are left out (and logged), not a reason to refuse the others.
fn parse_set(document: &Value) -> Result<Keys, String> {
    let listed = document
        .get("keys")
        .and_then(Value::as_array)
        .ok_or("it has no \"keys\" array")?;
    let mut keys = Keys::default();
    for listed in listed {
        let jwk: Jwk = match serde_json::from_value(listed.clone()) {
            Ok(jwk) => jwk,
            Err(error) => {
                tracing::warn!(%error, "a key of the identity provider's set does not parse: left out");
                continue;
            }
        };
        if let Some(key) = key_of(&jwk) {
            keys.listed.push((jwk.common.key_id, key));
        }
    }
    Ok(keys)
}

/// The key `jwk` is and what it verifies, if it is a signing key of a type this verifies.
fn key_of(jwk: &Jwk) -> Option<Key> {
    if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
        return None;
    }
    let by_type: &[Algorithm] = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => &[
            Algorithm::RS256,
            Algorithm::RS384,
            Algorithm::RS512,
            Algorithm::PS256,
            Algorithm::PS384,
            Algorithm::PS512,
        ],
        AlgorithmParameters::EllipticCurve(ec) => match ec.curve {
            EllipticCurve::P256 => &[Algorithm::ES256],
            EllipticCurve::P384 => &[Algorithm::ES384],
            _ => return None,
        },
        AlgorithmParameters::OctetKeyPair(okp) if okp.curve == EllipticCurve::Ed25519 => {
            &[Algorithm::EdDSA]
        }
        // A shared secret has no place in a published set, and nothing else is verified here.
        _ => return None,
    };
    let algorithms: Vec<Algorithm> = match jwk.common.key_algorithm {
        None => by_type.to_vec(),
        Some(named) => match named.to_string().parse::<Algorithm>() {
            Ok(alg) if by_type.contains(&alg) => vec![alg],
            _ => return None,
        },
    };
    let decoding = DecodingKey::from_jwk(jwk).ok()?;
    Some(Key {
        decoding,
        algorithms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An RSA public key's components (which are not checked until a signature is).
    fn rsa(extra: Value) -> Value {
        let mut key = json!({
            "kty": "RSA",
            "e": "AQAB",
            "n": "sjn1kCi3ds8akrHmiMbjt5QSA5K80RgxIp0xJKykXTlqUOSW45nOixNsYzVuDvYE_BHSmtjjUMkNPbHz9xW0PNPTQNychMRIvKYYRBBRrqcNjzlGNfkZJJzarhylTZkOcg1Pmq2U57QPtusjGakeC2NnZ6XQqG7Ik9YoQvCz31F3EXM--DRatgdx8bqe9fQ578iboUHpJ9Wq7Vt9Tu2WhcLRiDspSVQ0q3R3mDqv7e1d6SaB2lgx0wm3JHmRpl9ENKk6Bs6bBjLgp9Gk7iG1C7DNSi9xHdSgT1Bi2vr5oT5ub6XqxcO1k5yX2Q6uRDSg4yxWnxHZC6m4AJ-O1Y2YRQw"
        });
        key.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        key
    }

    #[test]
    fn each_key_verifies_the_algorithms_of_its_type_only() {
        let set = json!({"keys": [
            rsa(json!({"kid": "any-rsa"})),
            rsa(json!({"kid": "ps", "alg": "PS256"})),
            // Named for an algorithm of another type: left out.
            rsa(json!({"kid": "confused", "alg": "ES256"})),
            // For encryption: left out.
            rsa(json!({"kid": "enc", "use": "enc"})),
            // A shared secret: never taken from a published set.
            {"kty": "oct", "kid": "secret", "k": "c2VjcmV0"},
            {"kty": "OKP", "crv": "Ed25519", "x": "Je8ZOx75l2FCFVsnL-NQCJ9nt9EPVO7JyAYdHXelHgE"},
            // Not a key at all.
            {"kty": "nonsense"},
        ]});
        let keys = parse_set(&set).unwrap();
        let ids: Vec<Option<&str>> = keys.listed.iter().map(|(id, _)| id.as_deref()).collect();
        assert_eq!(ids, [Some("any-rsa"), Some("ps"), None]);
        let algorithms = |at: usize| &keys.listed[at].1.algorithms;
        assert!(algorithms(0).contains(&Algorithm::RS256));
        assert!(!algorithms(0).contains(&Algorithm::HS256));
        assert_eq!(algorithms(1), &[Algorithm::PS256]);
        assert_eq!(algorithms(2), &[Algorithm::EdDSA]);
        assert!(parse_set(&json!({"no": "keys"})).is_err());
    }

    #[test]
    fn the_lifetime_is_the_max_age_the_provider_gives() {
        let headers = |value: &str| {
            let mut headers = reqwest::header::HeaderMap::new();
            headers.insert(reqwest::header::CACHE_CONTROL, value.parse().unwrap());
            headers
        };
        assert_eq!(
            max_age(&headers("public, max-age=600")),
            Some(Duration::from_secs(600))
        );
        assert_eq!(
            max_age(&headers("MAX-AGE = 60, must-revalidate")),
            Some(Duration::from_secs(60))
        );
        assert_eq!(max_age(&headers("no-store")), None);
        assert_eq!(max_age(&reqwest::header::HeaderMap::new()), None);
    }
}
