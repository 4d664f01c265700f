//! A server's OAuth client for one grant: the manager rmcp's client works with, how the bridge
//! registers, the authorization code flow's start, and the client credentials grant.

use std::sync::Arc;

use oauth2::TokenResponse;
use rmcp::transport::auth::{
    AuthorizationManager, AuthorizationMetadata, ClientCredentialsConfig, OAuthClientConfig,
    StoredCredentials,
};

use super::guarded::GuardedHttp;
use super::vault::{Binding, Shared, Vault};
use super::{
    CLIENT_NAME, GrantKey, OAuthError, Registration, Settings, insufficient_scope, jwt, link,
    now_secs, unreadable,
};
use crate::a2e::{McpServerConfig, OAuthConfig, OAuthGrant, TokenEndpointAuth};
use crate::guard::Guard;
use crate::store::Store;

/// A server's OAuth client for one grant: what connecting, authorizing and refreshing share.
pub struct Client {
    pub(super) config: OAuthConfig,
    pub(super) url: String,
    pub(super) settings: Arc<Settings>,
    pub(super) guard: Guard,
    store: Store,
    pub(super) vault: Arc<Vault>,
    /// A digest of the server's `url` and `auth`: what a link's flow must have been made for.
    pub(super) server: String,
    /// The `id_jag` grant of a `per_agent` server: the calling agent's own bearer token, its
    /// identity assertion (`id_jag.rs`).
    pub(super) assertion: std::sync::OnceLock<secrecy::SecretString>,
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
            assertion: std::sync::OnceLock::new(),
        }
    }

    /// The `id_jag` grant of a `per_agent` server: `token`, the calling agent's own bearer
    /// token, is the identity assertion its ID-JAG is asked with.
    pub fn assert_as(&self, token: &str) {
        let _ = self.assertion.set(token.to_owned().into());
    }

    pub fn key(&self) -> &GrantKey {
        &self.vault.key
    }

    /// A fresh manager for the server's URL whose every request (discovery, registration,
    /// token, refresh, and each redirect) goes through the guard, with this grant's tokens.
    /// (rmcp's own client with private addresses allowed would apply rmcp's address policy,
    /// not the bridge's, and a `reqwest` client given to it checks no IP literal.)
    pub(super) async fn manager(
        &self,
    ) -> Result<(AuthorizationManager, Arc<GuardedHttp>), OAuthError> {
        let http = Arc::new(GuardedHttp::new(self.guard)?);
        let mut manager =
            AuthorizationManager::new_with_oauth_http_client(&*self.url, http.clone())
                .await
                .map_err(OAuthError::from)?;
        manager.set_credential_store(Shared(self.vault.clone()));
        Ok((manager, http))
    }

    pub(super) async fn registration(&self) -> Result<Option<Registration>, OAuthError> {
        let key = self.key();
        let grant = self.store.oauth_grant(&key.server_id, &key.agent).await?;
        match grant.and_then(|g| g.client) {
            Some(json) => serde_json::from_str(&json)
                .map(Some)
                .map_err(|e| OAuthError::Failed(unreadable("a stored registration", &e))),
            None => Ok(None),
        }
    }

    pub(super) async fn save_registration(
        &self,
        registration: &Registration,
    ) -> Result<(), OAuthError> {
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
    pub(super) fn client_config(&self, registration: &Registration) -> OAuthClientConfig {
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
        if self.config.grant_type == OAuthGrant::IdJag {
            return self.id_jag().await.map(Some);
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
        if self.config.grant_type == OAuthGrant::IdJag {
            return Err(OAuthError::Failed(
                "the server uses enterprise-managed authorization (ID-JAG): the identity \
                 provider decides, there is nothing for a person to authorize here"
                    .into(),
            ));
        }
        let (mut manager, http) = self.manager().await?;
        let resolved = super::discovery::resolve(&manager, &http, &self.url, challenge).await?;
        let metadata = self.pinned(resolved);
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
