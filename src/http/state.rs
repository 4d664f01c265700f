//! The state every handler shares: one cloneable value, with sub-states taken by `FromRef`.

use std::sync::Arc;

use axum::extract::FromRef;

use crate::config::Config;
use crate::http::auth::Auth;
use crate::hub::Hub;
use crate::registry::Registry;
use crate::store::Store;

/// Cloned for every request, and several times over by the layers around each route: one
/// reference count to bump, not one per part.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

impl AppState {
    pub fn new(shared: Shared) -> Self {
        Self(Arc::new(shared))
    }
}

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// What every handler shares, behind [`AppState`].
pub struct Shared {
    pub config: Arc<Config>,
    pub auth: Arc<Auth>,
    pub store: Store,
    pub registry: Arc<Registry>,
    pub hub: Arc<Hub>,
    pub a2a: Arc<crate::a2a::A2a>,
    pub metrics: Arc<crate::metrics::Metrics>,
    pub limits: Arc<crate::http::limits::Limits>,
    /// Where every tool call goes.
    pub tools: Arc<crate::tools::Tools>,
    /// Tool calls run as tasks.
    pub tasks: Arc<crate::tasks::Tasks>,
    /// Set once every stored server has been handed to its supervisor.
    pub restored: Arc<std::sync::atomic::AtomicBool>,
}

impl FromRef<AppState> for Arc<Auth> {
    fn from_ref(state: &AppState) -> Self {
        state.auth.clone()
    }
}
