//! `/healthz` (the process answers) and `/readyz` (the store answers, or has not answered for
//! less than one lease; NATS too across replicas; stored servers have been restored). Both public.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::http::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(healthz))
        .routes(routes!(readyz))
        .routes(routes!(metrics))
        // Only `/readyz` reads it: an Extension keeps it out of the state every handler shares.
        .layer(Extension(Arc::new(StoreOutage::default())))
}

/// Longest a readiness probe waits for the store's answer: a load balancer probes often and
/// gives up quickly, and a database that takes longer than this does not answer for it.
const PING_BOUND: Duration = Duration::from_secs(1);

/// Since when the store has not answered `/readyz` (None while it answers).
///
/// A database outage hits every replica at once: were each to turn unready at the first failed
/// ping, a load balancer would take them all out, although calls to servers already connected
/// go on without the database. So the store counts against readiness only once it has been
/// silent for a whole lease (`MCP_BRIDGE_LEASE_SECS`), the time after which a replica lets its
/// servers go anyway.
#[derive(Default)]
struct StoreOutage(std::sync::Mutex<Option<Instant>>);

impl StoreOutage {
    /// How long the store has been silent, counting this failed ping (`None`: it answered).
    fn observe(&self, answered: bool) -> Option<Duration> {
        let mut since = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match answered {
            true => *since = None,
            false => return Some(since.get_or_insert_with(Instant::now).elapsed()),
        }
        None
    }
}

#[derive(Serialize, ToSchema)]
struct Health {
    /// `ok`, or what is not ready yet.
    status: String,
}

/// Liveness: the process is up.
#[utoipa::path(get, path = "/healthz", tag = "health", responses((status = 200, description = "The process is up: `{\"status\": \"ok\"}`", body = Health)))]
async fn healthz() -> Json<Health> {
    Json(Health {
        status: "ok".into(),
    })
}

/// Readiness: every stored server has been handed to its supervisor, NATS is connected (across
/// replicas), and the store answers or has been silent for less than one lease.
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "health",
    responses(
        (status = 200, description = "Ready: `{\"status\": \"ok\"}`", body = Health),
        (status = 503, description = "Not ready yet: `status` says what it waits for", body = Health)
    )
)]
async fn readyz(
    State(state): State<AppState>,
    Extension(outage): Extension<Arc<StoreOutage>>,
) -> (StatusCode, Json<Health>) {
    let unready = |why: &str| {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(Health { status: why.into() }),
        )
    };
    if !state.restored.load(Ordering::Acquire) {
        return unready("restoring stored servers");
    }
    let ping = match tokio::time::timeout(PING_BOUND, state.store.ping()).await {
        Ok(answer) => answer.map_err(|e| e.to_string()),
        Err(_) => Err(format!("no answer within {PING_BOUND:?}")),
    };
    if let Err(error) = &ping {
        tracing::warn!(%error, "store does not answer");
    }
    let silent = outage.observe(ping.is_ok());
    let grace = Duration::from_secs(state.config.lease_secs);
    if silent.is_some_and(|silent| silent >= grace) {
        return unready("store unavailable");
    }
    if state.hub.bus().is_some_and(|bus| !bus.connected()) {
        return unready("NATS unavailable");
    }
    let status = match silent {
        None => "ok".to_owned(),
        Some(silent) => format!(
            "ok; store unavailable for {}s, unready after {}s",
            silent.as_secs(),
            grace.as_secs()
        ),
    };
    (StatusCode::OK, Json(Health { status }))
}

/// Prometheus metrics (names prefixed `mcp_bridge_`).
#[utoipa::path(get, path = "/metrics", tag = "health",
    responses((status = 200, description = "Prometheus text exposition", content_type = "text/plain", body = String)))]
async fn metrics(
    State(state): State<AppState>,
) -> ([(axum::http::HeaderName, &'static str); 1], String) {
    let text = state.metrics.render(&state.registry, &state.hub);
    (
        [(
            axum::http::header::CONTENT_TYPE,
            crate::metrics::CONTENT_TYPE,
        )],
        text,
    )
}
