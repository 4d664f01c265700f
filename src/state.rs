//! The state every handler shares: one cloneable value, with sub-states taken by `FromRef`.

use std::sync::Arc;

use axum::extract::FromRef;

use crate::auth::Auth;
use crate::config::Config;
use crate::hub::Hub;
use crate::registry::Registry;
use crate::store::Store;

#[derive(Clone)]
pub struct AppState {
    pub config: Arc<Config>,
    pub auth: Arc<Auth>,
    pub store: Store,
    pub registry: Arc<Registry>,
    pub hub: Arc<Hub>,
    pub a2a: Arc<crate::a2a::A2a>,
    pub metrics: Arc<crate::metrics::Metrics>,
    /// Set once every stored server has been handed to its supervisor.
    pub restored: Arc<std::sync::atomic::AtomicBool>,
}

impl FromRef<AppState> for Arc<Auth> {
    fn from_ref(state: &AppState) -> Self {
        state.auth.clone()
    }
}
