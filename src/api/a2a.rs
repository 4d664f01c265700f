//! `/v1/a2a/agents`: the A2A agents the agent-bridge tools reach (register by card URL, list by
//! skill tag, get, refresh the card, unregister), and the A2A tasks callers started through them
//! (cancel).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::responses::{
    BadGateway, BodyErrors, Conflict, Forbidden, GatewayTimeout, NotFound, NotImplemented,
    StoreUnavailable,
};
use super::servers::IdQuery;
use super::{Reply, ok, request};
use crate::a2e::{
    A2aGetRequest, A2aGetResponse, A2aListRequest, A2aListResponse, A2aRefreshRequest,
    A2aRefreshResponse, A2aRegisterRequest, A2aRegisterResponse, A2aTaskCancelRequest,
    A2aTaskCancelResponse, A2aUnregisterRequest, A2aUnregisterResponse, Response,
};
use crate::caller::Caller;
use crate::http::error::{A2eJson, A2eQuery, ApiError, Failure};
use crate::http::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_agents, register_agent))
        .routes(routes!(get_agent, unregister_agent))
        .routes(routes!(refresh_agent))
        .routes(routes!(cancel_agent_task))
}

/// How long cancelling a task waits for the agent.
const CANCEL_TIMEOUT_SECS: u64 = 30;

#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AgentsQuery {
    /// Only agents with one of these skill tags (comma-separated).
    #[serde(default)]
    pub skill_tags: String,
    /// The A2E request id, echoed as `req_id`.
    pub id: Option<String>,
}

/// Register an A2A agent by its URL: its card is fetched first, and nothing is kept if that fails.
#[utoipa::path(post, path = "/v1/a2a/agents", tag = "a2a", request_body = A2aRegisterRequest, security(("bearer" = [])),
    responses(
        (status = 201, description = "The agent is registered: its card was fetched and the agent kept", body = A2aRegisterResponse),
        BodyErrors, (status = 409, response = Conflict), (status = 501, response = NotImplemented),
        (status = 502, response = BadGateway), (status = 503, response = StoreUnavailable),
        (status = 504, response = GatewayTimeout)))]
async fn register_agent(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    A2eJson(req): A2eJson<A2aRegisterRequest>,
) -> Result<Reply<A2aRegisterResponse>, Failure> {
    register(&state, &agent, req).await
}

pub async fn register(
    state: &AppState,
    caller: &Caller,
    req: A2aRegisterRequest,
) -> Result<Reply<A2aRegisterResponse>, Failure> {
    let agent = state
        .a2a
        .register(caller, &req.agent_id, &req.url, req.headers)
        .await
        .map_err(|e| ApiError::from(e).answering::<A2aRegisterResponse>(&req.id))?;
    let mut resp = A2aRegisterResponse::answering(&req.id);
    resp.ok = true;
    resp.agent = Some(agent.model_for(caller));
    Ok((StatusCode::CREATED, Json(resp)))
}

/// The registered A2A agents.
#[utoipa::path(get, path = "/v1/a2a/agents", tag = "a2a", params(AgentsQuery), security(("bearer" = [])),
    responses(
        (status = 200, description = "The registered A2A agents", body = A2aListResponse),
        (status = 501, response = NotImplemented)))]
async fn list_agents(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    A2eQuery(query): A2eQuery<AgentsQuery>,
) -> Result<Reply<A2aListResponse>, Failure> {
    let mut req: A2aListRequest = request(query.id);
    req.skill_tags = query
        .skill_tags
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect();
    list(&state, &agent, req).await
}

pub async fn list(
    state: &AppState,
    caller: &Caller,
    req: A2aListRequest,
) -> Result<Reply<A2aListResponse>, Failure> {
    if !state.a2a.enabled() {
        return Err(
            ApiError::from(crate::a2a::A2aError::Disabled).answering::<A2aListResponse>(&req.id)
        );
    }
    let mut resp = A2aListResponse::answering(&req.id);
    resp.agents = state
        .a2a
        .list(&req.skill_tags)
        .iter()
        .map(|a| a.model_for(caller))
        .collect();
    Ok(ok(resp))
}

/// One A2A agent with its card.
#[utoipa::path(get, path = "/v1/a2a/agents/{agent_id}", tag = "a2a", params(("agent_id" = String, Path), IdQuery),
    security(("bearer" = [])),
    responses((status = 200, description = "The agent", body = A2aGetResponse), (status = 404, response = NotFound)))]
async fn get_agent(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    Path(agent_id): Path<String>,
    A2eQuery(query): A2eQuery<IdQuery>,
) -> Result<Reply<A2aGetResponse>, Failure> {
    let mut req: A2aGetRequest = request(query.id);
    req.agent_id = agent_id;
    get(&state, &agent, req).await
}

pub async fn get(
    state: &AppState,
    caller: &Caller,
    req: A2aGetRequest,
) -> Result<Reply<A2aGetResponse>, Failure> {
    let agent = state
        .a2a
        .get(&req.agent_id)
        .map_err(|e| ApiError::from(e).answering::<A2aGetResponse>(&req.id))?;
    let mut resp = A2aGetResponse::answering(&req.id);
    resp.agent = agent.model_for(caller);
    Ok(ok(resp))
}

/// Fetch an agent's card again: its registrant or an admin.
#[utoipa::path(post, path = "/v1/a2a/agents/{agent_id}/refresh", tag = "a2a", params(("agent_id" = String, Path), IdQuery),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The agent with its card fetched again", body = A2aRefreshResponse),
        (status = 403, response = Forbidden), (status = 404, response = NotFound), (status = 502, response = BadGateway),
        (status = 503, response = StoreUnavailable), (status = 504, response = GatewayTimeout)))]
async fn refresh_agent(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    Path(agent_id): Path<String>,
    A2eQuery(query): A2eQuery<IdQuery>,
) -> Result<Reply<A2aRefreshResponse>, Failure> {
    let mut req: A2aRefreshRequest = request(query.id);
    req.agent_id = agent_id;
    refresh(&state, &agent, req).await
}

pub async fn refresh(
    state: &AppState,
    caller: &Caller,
    req: A2aRefreshRequest,
) -> Result<Reply<A2aRefreshResponse>, Failure> {
    let agent = state
        .a2a
        .refresh(caller, &req.agent_id)
        .await
        .map_err(|e| ApiError::from(e).answering::<A2aRefreshResponse>(&req.id))?;
    let mut resp = A2aRefreshResponse::answering(&req.id);
    resp.ok = true;
    resp.agent = agent.model_for(caller);
    Ok(ok(resp))
}

/// Forget an A2A agent: its registrant or an admin.
#[utoipa::path(delete, path = "/v1/a2a/agents/{agent_id}", tag = "a2a", params(("agent_id" = String, Path), IdQuery),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The agent is removed", body = A2aUnregisterResponse),
        (status = 403, response = Forbidden), (status = 404, response = NotFound),
        (status = 503, response = StoreUnavailable)))]
async fn unregister_agent(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    Path(agent_id): Path<String>,
    A2eQuery(query): A2eQuery<IdQuery>,
) -> Result<Reply<A2aUnregisterResponse>, Failure> {
    let mut req: A2aUnregisterRequest = request(query.id);
    req.agent_id = agent_id;
    unregister(&state, &agent, req).await
}

pub async fn unregister(
    state: &AppState,
    caller: &Caller,
    req: A2aUnregisterRequest,
) -> Result<Reply<A2aUnregisterResponse>, Failure> {
    state
        .a2a
        .unregister(caller, &req.agent_id)
        .await
        .map_err(|e| ApiError::from(e).answering::<A2aUnregisterResponse>(&req.id))?;
    let mut resp = A2aUnregisterResponse::answering(&req.id);
    resp.ok = true;
    resp.agent_id = req.agent_id;
    Ok(ok(resp))
}

/// Cancel an A2A task: only the agent whose call started it (through `agent_send` or
/// `agent_query`) may. A task unknown to the agent or started by another caller is 404 alike;
/// a task that is over already (completed, failed, rejected, cancelled) is 409. A streaming
/// `agent_send` waiting on the task then ends with the cancelled task.
#[utoipa::path(post, path = "/v1/a2a/agents/{agent_id}/tasks/{task_id}/cancel", tag = "a2a",
    params(("agent_id" = String, Path), ("task_id" = String, Path), IdQuery), security(("bearer" = [])),
    responses(
        (status = 200, description = "The task, cancelled", body = A2aTaskCancelResponse),
        (status = 404, response = NotFound), (status = 409, response = Conflict),
        (status = 501, response = NotImplemented), (status = 502, response = BadGateway),
        (status = 503, response = StoreUnavailable), (status = 504, response = GatewayTimeout)))]
async fn cancel_agent_task(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    Path((agent_id, task_id)): Path<(String, String)>,
    A2eQuery(query): A2eQuery<IdQuery>,
) -> Result<Reply<A2aTaskCancelResponse>, Failure> {
    let mut req: A2aTaskCancelRequest = request(query.id);
    req.agent_id = agent_id;
    req.task_id = task_id;
    cancel_task(&state, &agent, req).await
}

pub async fn cancel_task(
    state: &AppState,
    caller: &Caller,
    req: A2aTaskCancelRequest,
) -> Result<Reply<A2aTaskCancelResponse>, Failure> {
    let fail =
        |e: crate::a2a::A2aError| ApiError::from(e).answering::<A2aTaskCancelResponse>(&req.id);
    if !state.a2a.enabled() {
        return Err(fail(crate::a2a::A2aError::Disabled));
    }
    let agent = state.a2a.get(&req.agent_id).map_err(fail)?;
    let task = state
        .a2a
        .cancel_task(&caller.id, &agent, &req.task_id, CANCEL_TIMEOUT_SECS)
        .await
        .map_err(fail)?;
    let mut resp = A2aTaskCancelResponse::answering(&req.id);
    resp.ok = true;
    resp.agent_id = req.agent_id;
    resp.task_id = req.task_id;
    resp.task = task;
    Ok(ok(resp))
}
