//! OAuth 2.1 to upstream servers, as MCP authorization defines it (2025-11-25, and the
//! 2025-03-26 endpoint fallback). rmcp's `auth` module does the mechanics: discovery (RFC 9728
//! from `WWW-Authenticate`, then the well-known paths; RFC 8414, then OpenID discovery, then the
//! 2025-03-26 defaults), dynamic registration (RFC 7591), PKCE S256, `state`, the `resource`
//! indicator (RFC 8707), scope selection with `offline_access` only where offered, and refresh
//! (before expiry, and once on a 401). This module gives it the address guard for every request
//! it makes, keeps each grant's registration and tokens sealed in the store, picks how to
//! register (pre-registered, client ID metadata document, dynamic: in that order), and does the
//! client credentials grant.

use std::sync::Arc;
use std::time::Duration;

use oauth2::TokenResponse;
use rmcp::transport::CredentialStore;
use rmcp::transport::auth::WWWAuthenticateParams;
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, ClientCredentialsConfig,
    OAuthClientConfig, OAuthHttpClient, OAuthHttpClientError, OAuthHttpClientFuture,
    OAuthHttpRedirectPolicy, OAuthHttpRequest, StoredCredentials,
};
use serde::{Deserialize, Serialize};

use crate::a2e::{McpServerConfig, OAuthConfig, OAuthGrant, TokenEndpointAuth};
use crate::guard::Guard;
use crate::store::Store;

mod jwt;
mod link;
pub use link::LinkFlow;

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
/// How long one request to an authorization server may take.
const HTTP_TIMEOUT: Duration = Duration::from_secs(30);
/// Redirects followed where the flow allows them (discovery), each one checked by the guard.
const MAX_REDIRECTS: usize = 5;

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

/// How the vault's store errors start when the database does not answer: rmcp carries them as
/// text only, and this tells them apart again (see `From<AuthError>`).
const STORE_AWAY: &str = "[store unavailable] ";

/// A store error of the vault as rmcp carries it.
fn vault_error(error: crate::store::StoreError) -> AuthError {
    match error {
        crate::store::StoreError::Unavailable(_) => {
            AuthError::CredentialStoreError(format!("{STORE_AWAY}{error}"))
        }
        other => AuthError::CredentialStoreError(other.to_string()),
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

/// A grant's tokens in the store (sealed), cached for the calls that read them.
struct Vault {
    store: Store,
    key: GrantKey,
    cache: tokio::sync::RwLock<Option<Option<StoredCredentials>>>,
    /// For a link's flow: whether the server it was made for is still the one registered
    /// (tokens are never stored for a server that was removed or changed meanwhile).
    binding: std::sync::OnceLock<Binding>,
}

/// Whether a link's server is still the one it was made for.
pub type Binding = Arc<dyn Fn() -> bool + Send + Sync>;

impl Vault {
    fn new(store: Store, key: GrantKey) -> Self {
        Self {
            store,
            key,
            cache: tokio::sync::RwLock::new(None),
            binding: std::sync::OnceLock::new(),
        }
    }

    async fn read(&self) -> Result<Option<StoredCredentials>, AuthError> {
        if let Some(cached) = self.cache.read().await.as_ref() {
            return Ok(cached.clone());
        }
        let grant = self
            .store
            .oauth_grant(&self.key.server_id, &self.key.agent)
            .await
            .map_err(vault_error)?;
        let credentials = match grant.and_then(|g| g.credentials) {
            Some(json) => Some(serde_json::from_str(&json).map_err(|e| {
                AuthError::CredentialStoreError(unreadable("stored credentials", &e))
            })?),
            None => None,
        };
        *self.cache.write().await = Some(credentials.clone());
        Ok(credentials)
    }

    async fn write(&self, credentials: Option<StoredCredentials>) -> Result<(), AuthError> {
        if self.binding.get().is_some_and(|still| !still()) {
            return Err(AuthError::CredentialStoreError(LINK_STALE.into()));
        }
        let json = match &credentials {
            Some(c) => Some(
                serde_json::to_string(c)
                    .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?,
            ),
            None => None,
        };
        let saved = self
            .store
            .save_oauth_credentials(&self.key.server_id, &self.key.agent, json.as_deref())
            .await;
        match saved {
            // Being registered (the client credentials grant connects before the server is
            // stored): kept for this connection only; the next one gets a token again.
            Ok(()) | Err(crate::store::StoreError::NotFound) => {}
            Err(e) => return Err(vault_error(e)),
        }
        *self.cache.write().await = Some(credentials);
        Ok(())
    }
}

/// The vault as rmcp's manager holds it.
#[derive(Clone)]
struct Shared(Arc<Vault>);

impl std::ops::Deref for Shared {
    type Target = Vault;
    fn deref(&self) -> &Vault {
        &self.0
    }
}

#[async_trait::async_trait]
impl CredentialStore for Shared {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.read().await
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.write(Some(credentials)).await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.write(None).await
    }
}

/// Every request rmcp's OAuth client makes, through clients of the address guard: names resolve
/// to allowed addresses only, literal addresses and each redirect are checked.
#[derive(Clone)]
struct GuardedHttp {
    guard: Guard,
    follow: reqwest::Client,
    stop: reqwest::Client,
    /// What the last refused request was, in words (never the answer's body): what an error
    /// of the flow says.
    failure: Arc<std::sync::Mutex<Option<String>>>,
}

impl GuardedHttp {
    fn new(guard: Guard) -> Result<Self, OAuthError> {
        let build = |follow: bool| {
            let policy = reqwest::redirect::Policy::custom(move |attempt| {
                if !follow {
                    return attempt.stop();
                }
                if attempt.previous().len() > MAX_REDIRECTS {
                    return attempt.error(format!("more than {MAX_REDIRECTS} redirects"));
                }
                match guard.check_url(attempt.url()) {
                    Ok(()) => attempt.follow(),
                    Err(why) => attempt.error(why),
                }
            });
            guard
                .http_client(false)
                .redirect(policy)
                .timeout(HTTP_TIMEOUT)
                .build()
                .map_err(|e| OAuthError::Failed(format!("cannot make an HTTP client: {e}")))
        };
        Ok(Self {
            guard,
            follow: build(true)?,
            stop: build(false)?,
            failure: Arc::default(),
        })
    }
}

/// The most of an authorization server's answer read.
const MAX_ANSWER_BYTES: usize = 1024 * 1024;

impl GuardedHttp {
    /// Sends `request`, following redirects only with `follow`; the answer read whole. A failed
    /// answer's body is logged (at debug, redacted) and replaced by its OAuth error code alone:
    /// an authorization server's words (or a metadata service's answer) never reach an error
    /// that agents read.
    async fn send(
        &self,
        request: oauth2::HttpRequest,
        follow: bool,
    ) -> Result<oauth2::HttpResponse, OAuthHttpClientError> {
        let client = if follow { &self.follow } else { &self.stop };
        let asked = what_is_asked(&request);
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let request = reqwest::Request::try_from(with_client_id(request))?;
        // Literal addresses: the resolver of the client checks names, and each redirect is
        // checked by its policy; an IP literal reaches neither.
        if let Err(why) = self.guard.check_url(request.url()) {
            self.fail(format!("{asked} is refused: {why}"));
            return Err(why.into());
        }
        let url = crate::a2e::redact_url(request.url().as_str());
        let mut response = match client.execute(request).await {
            Ok(response) => response,
            Err(error) => {
                self.fail(format!(
                    "{asked} ({url}) was not reached: {}",
                    describe(&error)
                ));
                return Err(error.into());
            }
        };
        let status = response.status();
        let mut answer = oauth2::http::Response::builder().status(status);
        let failed = status.is_client_error() || status.is_server_error();
        for (name, value) in response.headers() {
            let about_body = name == reqwest::header::CONTENT_LENGTH
                || name == reqwest::header::CONTENT_ENCODING
                || name == reqwest::header::TRANSFER_ENCODING;
            if !(failed && about_body) {
                answer = answer.header(name, value);
            }
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await? {
            if body.len() + chunk.len() > MAX_ANSWER_BYTES {
                return Err(format!("an answer larger than {MAX_ANSWER_BYTES} bytes").into());
            }
            body.extend_from_slice(&chunk);
        }
        if failed {
            let code = oauth_error_code(&body);
            tracing::debug!(%url, %status, body = %redacted_body(&body), "an OAuth request failed");
            let code_words = code.as_deref().map(|c| format!(" {c}")).unwrap_or_default();
            self.fail(format!(
                "{asked} ({url}) answered {}{code_words}",
                status.as_u16()
            ));
            body = match code {
                Some(code) => serde_json::json!({ "error": code })
                    .to_string()
                    .into_bytes(),
                None => Vec::new(),
            };
        }
        Ok(answer.body(body)?)
    }

    fn fail(&self, what: String) {
        *self.failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(what);
    }

    /// `error` of a step of the flow made over this client, in words: what the authorization
    /// server answered when it refused a request.
    fn explain(&self, error: AuthError) -> OAuthError {
        let failure = self
            .failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        match (OAuthError::from(error), failure) {
            (OAuthError::NeedsAuthorization, _) => OAuthError::NeedsAuthorization,
            (_, Some(failure)) => OAuthError::Failed(failure),
            (other, None) => other,
        }
    }
}

/// What a request of the flow asks for, in words, for errors.
fn what_is_asked(request: &oauth2::HttpRequest) -> &'static str {
    if request.method() == oauth2::http::Method::GET {
        return "the authorization metadata request";
    }
    let form = url::form_urlencoded::parse(request.body());
    match form.into_iter().find(|(k, _)| k == "grant_type") {
        Some((_, grant)) if grant == "refresh_token" => "the token refresh",
        Some(_) => "the token endpoint",
        None => "the registration endpoint",
    }
}

/// The OAuth error code (RFC 6749 §5.2, RFC 7591 §3.2.2) of a failed answer, when it has one
/// that looks like a code: a short token of letters, digits and `_.-`.
fn oauth_error_code(body: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(body).ok()?;
    let code = value.get("error")?.as_str()?;
    let plain = !code.is_empty()
        && code.len() <= 64
        && code
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
    plain.then(|| code.to_owned())
}

/// A failed answer's body for the debug log: at most 512 characters, URLs' secrets hidden,
/// and in JSON the values of fields that may carry secrets.
fn redacted_body(body: &[u8]) -> String {
    let text = match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(mut value) => {
            hide_secret_fields(&mut value);
            value.to_string()
        }
        Err(_) => String::from_utf8_lossy(body).into_owned(),
    };
    let text: String = text.chars().take(512).collect();
    crate::a2e::redact_text(&text, &[])
}

fn hide_secret_fields(value: &mut serde_json::Value) {
    const SECRET: &[&str] = &["token", "secret", "password", "code", "assertion", "key"];
    match value {
        serde_json::Value::Object(map) => {
            for (name, field) in map.iter_mut() {
                let name = name.to_ascii_lowercase();
                if SECRET.iter().any(|s| name.contains(s)) && !field.is_null() {
                    *field = serde_json::Value::String("***".into());
                } else {
                    hide_secret_fields(field);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(hide_secret_fields),
        _ => {}
    }
}

/// A token request authenticated with HTTP Basic, with the client's `client_id` in its body too.
/// The `oauth2` crate leaves it out there (RFC 6749 §4.1.3 asks for it only from clients that do
/// not authenticate), and authorization servers built on the Python MCP SDK refuse a request
/// without it; it is an identifier, not a second authentication, so others take it as well.
fn with_client_id(mut request: oauth2::HttpRequest) -> oauth2::HttpRequest {
    use base64::Engine;
    let header = |name| {
        request
            .headers()
            .get(name)
            .and_then(|v: &oauth2::http::HeaderValue| v.to_str().ok())
            .map(str::to_owned)
    };
    let form = header(oauth2::http::header::CONTENT_TYPE)
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    let basic = header(oauth2::http::header::AUTHORIZATION)
        .and_then(|v| v.strip_prefix("Basic ").map(str::to_owned));
    let (true, Some(basic)) = (
        form && request.method() == oauth2::http::Method::POST,
        basic,
    ) else {
        return request;
    };
    if url::form_urlencoded::parse(request.body()).any(|(key, _)| key == "client_id") {
        return request;
    }
    let id = base64::engine::general_purpose::STANDARD
        .decode(basic.trim())
        .ok()
        .and_then(|pair| String::from_utf8(pair).ok())
        .and_then(|pair| pair.split_once(':').map(|(id, _)| id.to_owned()));
    // RFC 6749 §2.3.1: the id in the header is form-encoded.
    let Some(id) = id.and_then(|id| {
        url::form_urlencoded::parse(format!("id={id}").as_bytes())
            .next()
            .map(|(_, v)| v.into_owned())
    }) else {
        return request;
    };
    let pair = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("client_id", &id)
        .finish();
    let body = request.body_mut();
    if !body.is_empty() {
        body.push(b'&');
    }
    body.extend_from_slice(pair.as_bytes());
    request
}

impl OAuthHttpClient for GuardedHttp {
    fn execute(&self, request: OAuthHttpRequest) -> OAuthHttpClientFuture<'_> {
        let follow = !matches!(request.redirect_policy, OAuthHttpRedirectPolicy::Stop);
        Box::pin(self.send(request.request, follow))
    }
}

/// A server's OAuth client for one grant: what connecting, authorizing and refreshing share.
pub struct Client {
    config: OAuthConfig,
    url: String,
    settings: Arc<Settings>,
    guard: Guard,
    store: Store,
    vault: Arc<Vault>,
    /// A digest of the server's `url` and `auth`: what a link's flow must have been made for.
    server: String,
}

/// An authorization waiting for the person to approve it: its link, and what finishing needs
/// (`flow`, as the store keeps it until the person comes back).
pub struct Pending {
    pub key: GrantKey,
    pub authorization_url: String,
    pub state: String,
    /// JSON, secret (the PKCE verifier, the client's secret): kept sealed, never logged.
    pub flow: String,
}

/// Why a link's flow stores nothing.
pub const LINK_STALE: &str = "this authorization link is no longer valid: its server was removed, \
     registered again or had its `url` or `auth` changed after the link was made";

impl Client {
    /// Binds this client's flows to its server: `still` says whether the server is the one a
    /// link was made for; once it is not, the tokens of the flow are not stored.
    pub fn bind(&self, still: Binding) {
        let _ = self.vault.binding.set(still);
    }
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pending")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// The OAuth client of `config` for the grant `key`. A server without `auth` gets the
    /// default: authorization code with discovery.
    pub fn new(
        config: &McpServerConfig,
        key: GrantKey,
        settings: Arc<Settings>,
        guard: Guard,
        store: Store,
    ) -> Self {
        Self {
            // Without `auth`: authorization code with discovery and dynamic registration.
            config: config.auth.clone().unwrap_or_default(),
            url: config.url.clone(),
            settings,
            guard,
            vault: Arc::new(Vault::new(store.clone(), key)),
            store,
            server: link::server_digest(&config.url, config.auth.as_ref()),
        }
    }

    pub fn key(&self) -> &GrantKey {
        &self.vault.key
    }

    /// A fresh manager for the server's URL whose every request (discovery, registration,
    /// token, refresh, and each redirect) goes through the guard, with this grant's tokens.
    /// (rmcp's own client with private addresses allowed would apply rmcp's address policy,
    /// not the bridge's, and a `reqwest` client given to it checks no IP literal.)
    async fn manager(&self) -> Result<(AuthorizationManager, Arc<GuardedHttp>), OAuthError> {
        let http = Arc::new(GuardedHttp::new(self.guard)?);
        let mut manager =
            AuthorizationManager::new_with_oauth_http_client(&*self.url, http.clone())
                .await
                .map_err(OAuthError::from)?;
        manager.set_credential_store(Shared(self.vault.clone()));
        Ok((manager, http))
    }

    async fn registration(&self) -> Result<Option<Registration>, OAuthError> {
        let key = self.key();
        let grant = self.store.oauth_grant(&key.server_id, &key.agent).await?;
        match grant.and_then(|g| g.client) {
            Some(json) => serde_json::from_str(&json)
                .map(Some)
                .map_err(|e| OAuthError::Failed(unreadable("a stored registration", &e))),
            None => Ok(None),
        }
    }

    async fn save_registration(&self, registration: &Registration) -> Result<(), OAuthError> {
        let json =
            serde_json::to_string(registration).map_err(|e| OAuthError::Failed(e.to_string()))?;
        let key = self.key();
        match self
            .store
            .save_oauth_client(&key.server_id, &key.agent, Some(&json))
            .await
        {
            // Being registered: found again on the next connection.
            Ok(()) | Err(crate::store::StoreError::NotFound) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Whether every scope a `403 insufficient_scope` challenge names was granted already (then
    /// asking again cannot help).
    pub async fn holds_scope(&self, challenge: &str) -> bool {
        let Some(wanted) = insufficient_scope(challenge, &self.url) else {
            return false;
        };
        let granted = match self.vault.read().await {
            Ok(Some(stored)) => stored.granted_scopes,
            _ => return false,
        };
        let mut wanted = wanted.split_whitespace().peekable();
        wanted.peek().is_some() && wanted.all(|scope| granted.iter().any(|g| g == scope))
    }

    fn config_is_explicit(&self) -> bool {
        self.config.client_id.is_some() || self.config.grant_type == OAuthGrant::ClientCredentials
    }

    /// The client config rmcp uses with `registration`, honouring a configured token endpoint
    /// authentication method.
    fn client_config(&self, registration: &Registration) -> OAuthClientConfig {
        let secret = match self.config.token_endpoint_auth_method {
            Some(TokenEndpointAuth::None) => None,
            _ => registration.client_secret.clone(),
        };
        let mut config = OAuthClientConfig::new(
            registration.client_id.clone(),
            self.settings.redirect_uri.clone(),
        );
        if let Some(secret) = secret {
            config = config.with_client_secret(secret);
        }
        config
    }

    /// `metadata`, with the configured token endpoint authentication method the only one it
    /// offers (rmcp picks among what the metadata lists).
    fn pinned(&self, mut metadata: AuthorizationMetadata) -> AuthorizationMetadata {
        let method = match self.config.token_endpoint_auth_method {
            Some(TokenEndpointAuth::ClientSecretBasic) => "client_secret_basic",
            Some(TokenEndpointAuth::ClientSecretPost) => "client_secret_post",
            _ => return metadata,
        };
        metadata.additional_fields.insert(
            "token_endpoint_auth_methods_supported".into(),
            serde_json::json!([method]),
        );
        metadata
    }

    /// A manager ready to give this grant's access token (refreshing it when due);
    /// `NeedsAuthorization` when it has none to give; `None` for a grant never authorized nor
    /// configured (a server not known to want OAuth). The client credentials grant gets a token
    /// here when it has none, or one that expired.
    pub async fn authorized(&self) -> Result<Option<AuthorizationManager>, OAuthError> {
        if self.config.grant_type == OAuthGrant::ClientCredentials {
            return self.client_credentials().await.map(Some);
        }
        let Some(registration) = self.registration().await? else {
            return match self.config_is_explicit() {
                true => Err(OAuthError::NeedsAuthorization),
                false => Ok(None),
            };
        };
        let (mut manager, http) = self.manager().await?;
        manager.set_metadata(self.pinned(registration.metadata.clone()));
        manager.configure_client(self.client_config(&registration))?;
        // Fails when there is no token, or it expired and cannot be refreshed.
        manager
            .get_access_token()
            .await
            .map_err(|e| http.explain(e))?;
        Ok(Some(manager))
    }

    /// Starts an authorization code flow: discovery (from `challenge`, the 401's or 403's
    /// `WWW-Authenticate`, when there is one), registration when the grant has none, and the
    /// link for the person, with PKCE, `state` and `resource`. `more_scope` asks for the scopes
    /// a `403 insufficient_scope` named on top of those granted (step-up).
    pub async fn begin(
        &self,
        challenge: Option<&str>,
        more_scope: Option<&str>,
    ) -> Result<Pending, OAuthError> {
        if self.config.grant_type == OAuthGrant::ClientCredentials {
            return Err(OAuthError::Failed(
                "the server uses the client credentials grant: there is nothing for a person \
                 to authorize"
                    .into(),
            ));
        }
        let (mut manager, http) = self.manager().await?;
        let resolved = manager
            .resolve_metadata_from_challenge(challenge)
            .await
            .map_err(|e| http.explain(e))?;
        let metadata = self.pinned(resolved.metadata);
        manager.set_metadata(metadata.clone());

        let mut scopes = if !self.config.scopes.is_empty() {
            self.config.scopes.clone()
        } else {
            manager.select_initial_scopes(&[]).await
        };
        if let Some(more) = more_scope {
            if let Ok(Some(stored)) = self.vault.read().await {
                scopes.extend(stored.granted_scopes);
            }
            scopes.extend(more.split_whitespace().map(str::to_owned));
        }
        scopes = dedup(scopes);
        offer_offline_access(&metadata, &mut scopes);
        let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();

        let registration = self
            .register(&mut manager, &http, &metadata, &scope_refs)
            .await?;
        self.save_registration(&registration).await?;
        manager.configure_client(self.client_config(&registration))?;
        // The verifier rmcp makes is caught to be kept in the store with the link.
        let caught = link::Caught::default();
        manager.set_state_store(caught.clone());
        let url = manager
            .get_authorization_url(&scope_refs)
            .await
            .map_err(|e| http.explain(e))?;
        let made = caught
            .take()
            .ok_or_else(|| OAuthError::Failed("the authorization URL has no verifier".into()))?;
        let state = url::Url::parse(&url)
            .ok()
            .and_then(|u| {
                u.query_pairs()
                    .find(|(k, _)| k == "state")
                    .map(|(_, v)| v.into_owned())
            })
            .ok_or_else(|| OAuthError::Failed("the authorization URL has no state".into()))?;
        let flow = link::Flow::new(self, made, registration, &url);
        let flow = serde_json::to_string(&flow).map_err(|e| OAuthError::Failed(e.to_string()))?;
        Ok(Pending {
            key: self.key().clone(),
            authorization_url: url,
            state,
            flow,
        })
    }

    /// How the bridge is known to the authorization server: the configured client, a client ID
    /// metadata document (when the server takes them and the bridge's public URL is https), the
    /// registration it made before with this same server, or a new dynamic registration.
    async fn register(
        &self,
        manager: &mut AuthorizationManager,
        http: &GuardedHttp,
        metadata: &AuthorizationMetadata,
        scopes: &[&str],
    ) -> Result<Registration, OAuthError> {
        let registration = |client_id: String, client_secret: Option<String>| Registration {
            client_id,
            client_secret,
            metadata: metadata.clone(),
        };
        if let Some(client_id) = &self.config.client_id {
            return Ok(registration(
                client_id.clone(),
                self.config.client_secret.clone(),
            ));
        }
        let takes_documents = metadata
            .additional_fields
            .get("client_id_metadata_document_supported")
            .and_then(|v| v.as_bool())
            .unwrap_or(false);
        if takes_documents && let Some(url) = &self.settings.client_metadata_url {
            return Ok(registration(url.clone(), None));
        }
        if let Some(known) = self.registration().await?
            && known.metadata.token_endpoint == metadata.token_endpoint
            && known.metadata.authorization_endpoint == metadata.authorization_endpoint
            && self.settings.client_metadata_url.as_ref() != Some(&known.client_id)
        {
            return Ok(registration(known.client_id, known.client_secret));
        }
        if metadata.registration_endpoint.is_none() {
            return Err(OAuthError::Failed(
                "the authorization server offers no dynamic registration and takes no client ID \
                 metadata document: register mcp-bridge with it by hand (redirect URI "
                    .to_owned()
                    + &self.settings.redirect_uri
                    + ") and set `auth.client_id` (and `auth.client_secret`)",
            ));
        }
        let made = manager
            .register_client(CLIENT_NAME, &self.settings.redirect_uri, scopes)
            .await
            .map_err(|e| http.explain(e))?;
        Ok(registration(made.client_id, made.client_secret))
    }

    /// The client credentials grant: a token from the configured client's secret, or a signed
    /// assertion (`private_key_jwt`, RFC 7523), whenever the stored one is missing or expired.
    async fn client_credentials(&self) -> Result<AuthorizationManager, OAuthError> {
        let (mut manager, http) = self.manager().await?;
        let metadata = match self.registration().await? {
            Some(known) => known.metadata,
            None => {
                let resolved = manager
                    .resolve_metadata()
                    .await
                    .map_err(|e| http.explain(e))?;
                let metadata = self.pinned(resolved.metadata);
                let client_id = self.config.client_id.clone().unwrap_or_default();
                self.save_registration(&Registration {
                    client_id,
                    client_secret: None,
                    metadata: metadata.clone(),
                })
                .await?;
                metadata
            }
        };
        manager.set_metadata(self.pinned(metadata.clone()));
        if manager.get_access_token().await.is_ok() {
            return Ok(manager);
        }
        let client_id = self.config.client_id.clone().unwrap_or_default();
        let resource = Some(self.url.clone());
        let scopes = self.config.scopes.clone();
        if let Some(key) = &self.config.private_key {
            let token = jwt::exchange(
                &http,
                &metadata,
                &client_id,
                key,
                &scopes,
                resource.as_deref(),
            )
            .await?;
            let granted = token
                .scopes()
                .map(|s| s.iter().map(|s| s.to_string()).collect())
                .unwrap_or_default();
            self.vault
                .write(Some(StoredCredentials::new(
                    client_id,
                    Some(token),
                    granted,
                    Some(now_secs()),
                )))
                .await?;
        } else {
            let credentials = ClientCredentialsConfig::ClientSecret {
                client_id,
                client_secret: self.config.client_secret.clone().unwrap_or_default(),
                scopes,
                resource,
            };
            manager.configure_client_credentials(&credentials)?;
            manager
                .exchange_client_credentials(&credentials)
                .await
                .map_err(|e| http.explain(e))?;
        }
        Ok(manager)
    }
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

fn dedup(scopes: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    scopes
        .into_iter()
        .filter(|s| !s.is_empty() && seen.insert(s.clone()))
        .collect()
}

/// Adds `offline_access` (for a refresh token) when the authorization server lists it.
fn offer_offline_access(metadata: &AuthorizationMetadata, scopes: &mut Vec<String>) {
    let offered = metadata
        .scopes_supported
        .as_ref()
        .is_some_and(|s| s.iter().any(|s| s == "offline_access"));
    if offered && !scopes.is_empty() && !scopes.iter().any(|s| s == "offline_access") {
        scopes.push("offline_access".into());
    }
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
    fn offline_access_only_where_offered_and_scopes_once() {
        let mut metadata = AuthorizationMetadata::default();
        let mut scopes = dedup(vec!["a".into(), "b".into(), "a".into(), String::new()]);
        assert_eq!(scopes, ["a", "b"]);
        offer_offline_access(&metadata, &mut scopes);
        assert_eq!(scopes, ["a", "b"]);
        metadata.scopes_supported = Some(vec!["a".into(), "offline_access".into()]);
        offer_offline_access(&metadata, &mut scopes);
        assert_eq!(scopes, ["a", "b", "offline_access"]);
        // No scope named at all: none is added (the request then names no scope).
        let mut none = Vec::new();
        offer_offline_access(&metadata, &mut none);
        assert!(none.is_empty());
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

    fn token_request(authorization: Option<&str>, body: &str) -> oauth2::HttpRequest {
        let mut request = oauth2::http::Request::builder()
            .method(oauth2::http::Method::POST)
            .uri("https://as.example/token")
            .header(
                oauth2::http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            );
        if let Some(value) = authorization {
            request = request.header(oauth2::http::header::AUTHORIZATION, value);
        }
        request.body(body.as_bytes().to_vec()).unwrap()
    }

    #[test]
    fn a_basic_authenticated_token_request_names_its_client_in_the_body_too() {
        use base64::Engine;
        let basic = base64::engine::general_purpose::STANDARD.encode("my%20client:s3cret");
        let request = token_request(Some(&format!("Basic {basic}")), "grant_type=refresh_token");
        let body = String::from_utf8(with_client_id(request).into_body()).unwrap();
        assert_eq!(body, "grant_type=refresh_token&client_id=my+client");
        // Already named, or not Basic: left alone.
        let named = token_request(Some(&format!("Basic {basic}")), "client_id=x");
        assert_eq!(with_client_id(named).into_body(), b"client_id=x");
        let post = token_request(None, "client_id=x&client_secret=y");
        assert_eq!(
            with_client_id(post).into_body(),
            b"client_id=x&client_secret=y"
        );
    }
}
