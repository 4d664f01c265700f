//! A grant's tokens, sealed in the store and cached, as rmcp's OAuth client keeps credentials
//! (its `CredentialStore`).

use std::sync::Arc;

use rmcp::transport::CredentialStore;
use rmcp::transport::auth::{AuthError, StoredCredentials};

use super::{GrantKey, LINK_STALE, unreadable};
use crate::store::Store;

/// How the vault's store errors start when the database does not answer: rmcp carries them as
/// text only, and this tells them apart again (see `From<AuthError>`).
pub(super) const STORE_AWAY: &str = "[store unavailable] ";

/// A store error of the vault as rmcp carries it.
fn vault_error(error: crate::store::StoreError) -> AuthError {
    match error {
        crate::store::StoreError::Unavailable(_) => {
            AuthError::CredentialStoreError(format!("{STORE_AWAY}{error}"))
        }
        other => AuthError::CredentialStoreError(other.to_string()),
    }
}

/// A grant's tokens in the store (sealed), cached for the calls that read them.
pub(super) struct Vault {
    store: Store,
    pub(super) key: GrantKey,
    cache: tokio::sync::RwLock<Option<Option<StoredCredentials>>>,
    /// For a link's flow: whether the server it was made for is still the one registered
    /// (tokens are never stored for a server that was removed or changed meanwhile).
    pub(super) binding: std::sync::OnceLock<Binding>,
}

/// Whether a link's server is still the one it was made for.
pub type Binding = Arc<dyn Fn() -> bool + Send + Sync>;

impl Vault {
    pub(super) fn new(store: Store, key: GrantKey) -> Self {
        Self {
            store,
            key,
            cache: tokio::sync::RwLock::new(None),
            binding: std::sync::OnceLock::new(),
        }
    }

    pub(super) async fn read(&self) -> Result<Option<StoredCredentials>, AuthError> {
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

    pub(super) async fn write(
        &self,
        credentials: Option<StoredCredentials>,
    ) -> Result<(), AuthError> {
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
pub(super) struct Shared(pub(super) Arc<Vault>);

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
