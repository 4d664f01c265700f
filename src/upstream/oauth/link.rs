//! An authorization link's flow as the store keeps it, so the person's callback completes on any
//! replica: the PKCE verifier and `state` rmcp made, the client registration the link was made
//! with, the redirect URI and `resource` it asked with, and which server it was made for. The
//! replica that gets the callback builds a manager from it and exchanges the code.

use std::sync::{Arc, Mutex};

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, StateStore, StoredAuthorizationState,
};
use serde::{Deserialize, Serialize};

use super::guarded::GuardedHttp;
use super::vault::Shared;
use super::{Client, OAuthError, Registration};

/// What finishing a link needs (secret: the verifier, the client's secret).
#[derive(Serialize, Deserialize)]
pub(super) struct Flow {
    state: StoredAuthorizationState,
    registration: Registration,
    /// The `redirect_uri` of the authorization request: the token request repeats it.
    redirect_uri: String,
    /// The `resource` of the authorization request (RFC 8707): the token request repeats it.
    resource: String,
    /// The server it was made for: a digest of its `url` and `auth` then.
    server: String,
}

impl Flow {
    /// The flow of a link made with `registration`, whose authorization URL is `url`.
    pub(super) fn new(
        client: &Client,
        state: StoredAuthorizationState,
        registration: Registration,
        url: &str,
    ) -> Self {
        let resource = url::Url::parse(url)
            .ok()
            .and_then(|u| {
                u.query_pairs()
                    .find(|(k, _)| k == "resource")
                    .map(|(_, v)| v.into_owned())
            })
            .unwrap_or_else(|| client.url.clone());
        Self {
            state,
            registration,
            redirect_uri: client.settings.redirect_uri.clone(),
            resource,
            server: client.server.clone(),
        }
    }
}

/// A digest of what a link's flow depends on in a server's config: its `url` and `auth`.
pub(super) fn server_digest(url: &str, auth: Option<&crate::a2e::OAuthConfig>) -> String {
    let both = serde_json::to_vec(&(url, auth)).unwrap_or_default();
    hex::encode(ring::digest::digest(&ring::digest::SHA256, &both))
}

/// The state rmcp saves while making an authorization URL, caught to be kept with the link;
/// and, to finish one, the state of that link given back.
#[derive(Clone, Default)]
pub(super) struct Caught(Arc<Mutex<Option<StoredAuthorizationState>>>);

impl Caught {
    pub(super) fn take(&self) -> Option<StoredAuthorizationState> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

#[async_trait::async_trait]
impl StateStore for Caught {
    async fn save(&self, _: &str, state: StoredAuthorizationState) -> Result<(), AuthError> {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(state);
        Ok(())
    }

    async fn load(&self, csrf_token: &str) -> Result<Option<StoredAuthorizationState>, AuthError> {
        let held = self.0.lock().unwrap_or_else(|e| e.into_inner());
        Ok(held.clone().filter(|s| s.csrf_token == csrf_token))
    }

    async fn delete(&self, _: &str) -> Result<(), AuthError> {
        self.take();
        Ok(())
    }
}

impl Client {
    /// The flow a link's `flow` (as kept) says, when this client's server is still the one the
    /// link was made for; `None` when it is not (removed, or its `url` or `auth` changed).
    pub fn made_this(&self, flow: &str) -> Result<Option<LinkFlow>, OAuthError> {
        let flow: Flow = serde_json::from_str(flow).map_err(|e| {
            OAuthError::Failed(super::unreadable("a stored authorization link", &e))
        })?;
        Ok((flow.server == self.server).then_some(LinkFlow(flow)))
    }

    /// Finishes `flow` with the code the authorization server sent back: exchanges it (with
    /// the PKCE verifier) and keeps the tokens, and the registration they were given to.
    pub async fn finish(
        &self,
        flow: LinkFlow,
        code: &str,
        issuer: Option<&str>,
    ) -> Result<(), OAuthError> {
        let LinkFlow(flow) = flow;
        let mut http = GuardedHttp::new(self.guard)?;
        // The token request repeats the authorization request's `resource` to the letter.
        http.published = Some(flow.resource.clone());
        let http = Arc::new(http);
        // Made for the link's `resource`, which the token request repeats (rmcp sends the
        // resource it discovered, else the manager's URL).
        let base = url::Url::parse(&flow.resource)
            .map(String::from)
            .unwrap_or_else(|_| self.url.clone());
        let mut manager = AuthorizationManager::new_with_oauth_http_client(&*base, http.clone())
            .await
            .map_err(OAuthError::from)?;
        manager.set_credential_store(Shared(self.vault.clone()));
        manager.set_metadata(flow.registration.metadata.clone());
        // The redirect URI its authorization request named, which the token request repeats.
        let mut config = self.client_config(&flow.registration);
        config.redirect_uri = flow.redirect_uri;
        manager.configure_client(config)?;
        let registration = flow.registration.clone();
        let csrf = flow.state.csrf_token.clone();
        let caught = Caught::default();
        *caught.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(flow.state);
        manager.set_state_store(caught);
        manager
            .exchange_code_for_token_with_issuer(code, &csrf, issuer)
            .await
            .map_err(|e| http.explain(e))?;
        // Another link of the grant (made on another replica) may have registered since: the
        // tokens refresh with the client they were given to.
        self.save_registration(&registration).await
    }
}

/// A link's flow, opened for the server it was made for.
pub struct LinkFlow(Flow);

/// Says nothing of what it holds.
impl std::fmt::Debug for LinkFlow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LinkFlow")
    }
}
