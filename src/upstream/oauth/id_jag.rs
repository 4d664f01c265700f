//! Enterprise-managed authorization (the MCP extension of SEP-990, "cross-app access"): no
//! person and no browser. The bridge exchanges an identity assertion (an ID token of the
//! enterprise's identity provider) at that provider for an ID-JAG (RFC 8693 token exchange,
//! `requested_token_type` `urn:ietf:params:oauth:token-type:id-jag`, `audience` the server's
//! authorization server, `resource` the server), then presents the ID-JAG to the server's
//! authorization server as a JWT bearer grant (RFC 7523) for an access token.
//!
//! rmcp's `enterprise` module (feature `auth-enterprise-managed`) makes both requests and checks
//! the ID-JAG's bindings (issuer, audience, client, resource, scope, lifetime); this module gives
//! it the guarded HTTP client, the discovered authorization server, the configured clients and
//! the assertion, and keeps the access token in the grant's vault like any other.
//!
//! Whose assertion: `auth.identity_assertion` (one identity for every caller), or one handed to
//! the grant's client with [`Client::assert_as`]: the way in for a `per_agent` server's, the
//! calling agent's own bearer token (which the configuration check refuses until the registry
//! keeps the agents' verified tokens for their connections). Neither is logged, shown, audited
//! or stored by this module.

use oauth2::ClientSecret;
use rmcp::transport::auth::enterprise::{
    EmaAuthorizationServer, EmaClientAuthentication, EmaError, EmaExchangeRequest, EmaExchangeStage,
};
use rmcp::transport::auth::{AuthorizationManager, AuthorizationMetadata, StoredCredentials};
use secrecy::ExposeSecret;

use super::{Client, OAuthError, Registration, now_secs};
use crate::a2e::{IdentityProvider, TokenEndpointAuth};

impl Client {
    /// A manager with this grant's access token: the one kept while it is valid, else a new one
    /// from a fresh ID-JAG.
    pub(super) async fn id_jag(&self) -> Result<AuthorizationManager, OAuthError> {
        let (mut manager, http) = self.manager().await?;
        let metadata = match self.registration().await? {
            Some(known) => known.metadata,
            None => {
                let metadata = super::discovery::resolve(&manager, &http, &self.url, None).await?;
                self.save_registration(&Registration {
                    client_id: self.config.client_id.clone().unwrap_or_default(),
                    client_secret: None,
                    metadata: metadata.clone(),
                })
                .await?;
                metadata
            }
        };
        manager.set_metadata(metadata.clone());
        if manager.get_access_token().await.is_ok() {
            return Ok(manager);
        }
        let idp = self.config.idp.as_ref().ok_or_else(|| {
            OAuthError::Failed("`auth.grant_type` id_jag needs `auth.idp`".into())
        })?;
        let assertion = match (&self.config.identity_assertion, self.assertion.get()) {
            (Some(configured), _) => configured.clone(),
            (None, Some(agent)) => agent.expose_secret().to_owned(),
            (None, None) => {
                return Err(OAuthError::Failed(
                    "there is no identity assertion to ask an ID-JAG with: set \
                     `auth.identity_assertion`"
                        .into(),
                ));
            }
        };
        let issuer = metadata.issuer.clone().ok_or_else(|| {
            OAuthError::Failed(
                "the server's authorization server publishes no `issuer`, which an ID-JAG's \
                 audience must be"
                    .into(),
            )
        })?;
        let client_id = self.config.client_id.clone().unwrap_or_default();
        let resource_as =
            EmaAuthorizationServer::new(issuer, metadata.token_endpoint.clone(), client_id.clone())
                .with_client_authentication(self.as_authentication(&metadata));
        let request = EmaExchangeRequest::new_with_id_token(
            provider(idp),
            resource_as,
            &self.url,
            &assertion,
        )
        .with_scopes(self.config.scopes.iter().cloned());
        let jag = request
            .exchange_id_jag(&*http)
            .await
            .map_err(|e| refused(&http, e))?;
        let token = jag.exchange(&*http).await.map_err(|e| refused(&http, e))?;
        let mut scopes: Vec<String> = token.scopes.iter().cloned().collect();
        scopes.sort();
        // The same standard fields, in the type rmcp keeps.
        let answer = serde_json::json!({
            "access_token": token.access_token.secret(),
            "token_type": "bearer",
            "expires_in": token.expires_in.map(|d| d.as_secs()),
            "scope": (!scopes.is_empty()).then(|| scopes.join(" ")),
        });
        let answer = serde_json::from_value(answer)
            .map_err(|e| OAuthError::Failed(format!("the token answer: {e}")))?;
        let credentials = StoredCredentials::new(client_id, Some(answer), scopes, Some(now_secs()));
        self.vault.write(Some(credentials)).await?;
        Ok(manager)
    }

    /// How the bridge authenticates at the server's authorization server: the configured
    /// method, else HTTP Basic with a secret (post when the server offers only that), else as a
    /// public client.
    fn as_authentication(&self, metadata: &AuthorizationMetadata) -> EmaClientAuthentication {
        let Some(secret) = self.config.client_secret.clone() else {
            return EmaClientAuthentication::None;
        };
        let secret = ClientSecret::new(secret);
        let offered = metadata
            .additional_fields
            .get("token_endpoint_auth_methods_supported")
            .and_then(|v| v.as_array())
            .map(|methods| {
                methods
                    .iter()
                    .filter_map(|m| m.as_str())
                    .collect::<Vec<_>>()
            });
        let post_only = offered.is_some_and(|methods| {
            methods.contains(&"client_secret_post") && !methods.contains(&"client_secret_basic")
        });
        match self.config.token_endpoint_auth_method {
            Some(TokenEndpointAuth::ClientSecretPost) => {
                EmaClientAuthentication::ClientSecretPost(secret)
            }
            Some(TokenEndpointAuth::None) => EmaClientAuthentication::None,
            None if post_only => EmaClientAuthentication::ClientSecretPost(secret),
            _ => EmaClientAuthentication::ClientSecretBasic(secret),
        }
    }
}

/// The identity provider as rmcp's exchange takes it.
fn provider(idp: &IdentityProvider) -> EmaAuthorizationServer {
    let server = EmaAuthorizationServer::new(
        idp.issuer.clone(),
        idp.token_endpoint.clone(),
        idp.client_id.clone(),
    );
    match &idp.client_secret {
        Some(secret) => server.with_client_authentication(
            EmaClientAuthentication::ClientSecretBasic(ClientSecret::new(secret.clone())),
        ),
        None => server,
    }
}

/// A failed step, in words: which party refused and why (its OAuth error code, never its
/// words, which the guarded client only logs redacted). A refused assertion or ID-JAG
/// (`invalid_grant`) is the caller's identity no longer being good here.
fn refused(http: &super::guarded::GuardedHttp, error: EmaError) -> OAuthError {
    let failure = http
        .failure
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take();
    let party = |stage: &EmaExchangeStage| match stage {
        EmaExchangeStage::IdentityProvider => "the identity provider",
        _ => "the server's authorization server",
    };
    let what = match &error {
        EmaError::InvalidGrant(stage) => format!(
            "{} refused the grant (invalid_grant): the identity assertion or the ID-JAG is not \
             (or no longer) accepted",
            party(stage)
        ),
        EmaError::InvalidResponse { stage, message } => {
            format!(
                "{} answered an unusable ID-JAG grant: {message}",
                party(stage)
            )
        }
        EmaError::RequestFailed(stage) | EmaError::OAuthRejected { stage, .. } => match failure {
            Some(failure) => format!("{}: {failure}", party(stage)),
            None => format!("{}: {error}", party(stage)),
        },
        other => other.to_string(),
    };
    OAuthError::Failed(format!("the ID-JAG grant failed: {what}"))
}
