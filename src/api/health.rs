//! `/healthz` (the process answers) and `/readyz` (the store answers, NATS too across replicas,
//! and stored servers have been restored). Both public.

use std::sync::atomic::Ordering;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
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

/// Readiness: the store answers and every stored server has been handed to its supervisor.
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "health",
    responses(
        (status = 200, description = "Ready: `{\"status\": \"ok\"}`", body = Health),
        (status = 503, description = "Not ready yet: `status` says what it waits for", body = Health)
    )
)]
async fn readyz(State(state): State<AppState>) -> (StatusCode, Json<Health>) {
    let unready = |why: &str| {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(Health { status: why.into() }),
        )
    };
    if !state.restored.load(Ordering::Acquire) {
        return unready("restoring stored servers");
    }
    if let Err(error) = state.store.ping().await {
        tracing::warn!(%error, "store does not answer");
        return unready("store unavailable");
    }
    if state.hub.bus().is_some_and(|bus| !bus.connected()) {
        return unready("NATS unavailable");
    }
    (
        StatusCode::OK,
        Json(Health {
            status: "ok".into(),
        }),
    )
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
