//! `GET /v1/roots` and `PUT /v1/roots`: the filesystem roots an agent exposes to the servers it
//! owns; a change tells those servers (`notifications/roots/list_changed`).

use axum::Extension;
use axum::extract::State;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::responses::{BodyErrors, StoreUnavailable};
use super::servers::IdQuery;
use super::{Reply, ok, request};
use crate::a2e::{
    McpRoot, Response, RootsGetRequest, RootsGetResponse, RootsSetRequest, RootsSetResponse,
};
use crate::caller::Caller;
use crate::http::error::{A2eJson, A2eQuery, ApiError, Failure};
use crate::http::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(get_roots, set_roots))
}

/// Roots are `file://` URIs (MCP), each given once.
pub fn check_roots(roots: &[McpRoot]) -> Result<(), ApiError> {
    let mut seen = std::collections::HashSet::new();
    for root in roots {
        if !root.uri.starts_with("file://") {
            return Err(ApiError::invalid(format!(
                "root \"{}\" is not a file:// URI",
                root.uri
            )));
        }
        if !seen.insert(&root.uri) {
            return Err(ApiError::invalid(format!(
                "root \"{}\" is given twice",
                root.uri
            )));
        }
    }
    Ok(())
}

/// The roots this agent exposes.
#[utoipa::path(get, path = "/v1/roots", tag = "events", params(IdQuery), security(("bearer" = [])),
    responses(
        (status = 200, description = "The roots this agent exposes", body = RootsGetResponse),
        (status = 503, response = StoreUnavailable)))]
async fn get_roots(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    A2eQuery(query): A2eQuery<IdQuery>,
) -> Result<Reply<RootsGetResponse>, Failure> {
    get(&state, &agent, request(query.id)).await
}

pub async fn get(
    state: &AppState,
    agent: &Caller,
    req: RootsGetRequest,
) -> Result<Reply<RootsGetResponse>, Failure> {
    let roots = state
        .store
        .roots(&agent.id)
        .await
        .map_err(|e| ApiError::from(e).answering::<RootsGetResponse>(&req.id))?;
    let mut resp = RootsGetResponse::answering(&req.id);
    resp.roots = roots;
    Ok(ok(resp))
}

/// Replace the roots this agent exposes; the servers it owns are told they changed.
#[utoipa::path(put, path = "/v1/roots", tag = "events", request_body = RootsSetRequest, security(("bearer" = [])),
    responses(
        (status = 200, description = "The roots are stored and the agent's servers told", body = RootsSetResponse),
        BodyErrors, (status = 503, response = StoreUnavailable)))]
async fn set_roots(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    A2eJson(req): A2eJson<RootsSetRequest>,
) -> Result<Reply<RootsSetResponse>, Failure> {
    set(&state, &agent, req).await
}

pub async fn set(
    state: &AppState,
    agent: &Caller,
    req: RootsSetRequest,
) -> Result<Reply<RootsSetResponse>, Failure> {
    check_roots(&req.roots).map_err(|e| e.answering::<RootsSetResponse>(&req.id))?;
    state
        .store
        .set_roots(&agent.id, &req.roots)
        .await
        .map_err(|e| ApiError::from(e).answering::<RootsSetResponse>(&req.id))?;
    for entry in state.registry.entries() {
        if entry.owner == agent.id
            && let Some(conn) = entry.connection()
        {
            conn.roots_changed().await;
        }
    }
    let mut resp = RootsSetResponse::answering(&req.id);
    resp.ok = true;
    resp.roots = req.roots;
    Ok(ok(resp))
}
