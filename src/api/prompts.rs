//! `/v1/prompts` (`mcp/prompt/list`, `mcp/prompt/get`) and `/v1/completions` (`mcp/completion`).

use axum::Extension;
use axum::extract::State;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::resources::PageQuery;
use super::responses::{BodyErrors, Conflict, NotFound, UnprocessableContent, UpstreamErrors};
use super::{Reply, ok, request};
use crate::a2e::{
    CompletionRequest, CompletionResponse, PromptGetRequest, PromptGetResponse, PromptListRequest,
    PromptListResponse, Response,
};
use crate::access::Kind;
use crate::caller::Caller;
use crate::http::error::{A2eJson, A2eQuery, ApiError, Failure};
use crate::http::state::AppState;
use crate::registry::{self, prompt_messages};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_prompts))
        .routes(routes!(get_prompt))
        .routes(routes!(complete_argument))
}

/// Prompts of every ready server, merged and paged (mcp/prompt/list).
#[utoipa::path(get, path = "/v1/prompts", tag = "prompts", params(PageQuery), security(("bearer" = [])),
    responses(
        (status = 200, description = "A page of the prompts of every ready server (or of `server_id`)", body = PromptListResponse),
        UpstreamErrors, (status = 404, response = NotFound), (status = 422, response = UnprocessableContent)))]
async fn list_prompts(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    A2eQuery(query): A2eQuery<PageQuery>,
) -> Result<Reply<PromptListResponse>, Failure> {
    let mut req: PromptListRequest = request(query.id);
    req.server_id = query.server_id;
    req.cursor = query.cursor;
    list(&state, &agent, req).await
}

pub async fn list(
    state: &AppState,
    agent: &Caller,
    req: PromptListRequest,
) -> Result<Reply<PromptListResponse>, Failure> {
    let listed = state
        .tools
        .prompts(agent, &req.server_id, &req.cursor)
        .await
        .map_err(|e| ApiError::from(e).answering::<PromptListResponse>(&req.id))?
        .listed(registry::prompt_model);
    let mut resp = PromptListResponse::answering(&req.id);
    resp.prompts = listed.items;
    resp.next_cursor = listed.next;
    resp.skipped_servers = listed.skipped;
    Ok(ok(resp))
}

/// Render a prompt (mcp/prompt/get). A name several servers offer needs `server_id`.
#[utoipa::path(post, path = "/v1/prompts/get", tag = "prompts", request_body = PromptGetRequest, security(("bearer" = [])),
    responses(
        (status = 200, description = "The rendered prompt: its messages", body = PromptGetResponse), BodyErrors,
        UpstreamErrors, (status = 404, response = NotFound), (status = 409, response = Conflict)))]
async fn get_prompt(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    A2eJson(req): A2eJson<PromptGetRequest>,
) -> Result<Reply<PromptGetResponse>, Failure> {
    get(&state, &agent, req).await
}

pub async fn get(
    state: &AppState,
    agent: &Caller,
    req: PromptGetRequest,
) -> Result<Reply<PromptGetResponse>, Failure> {
    let fail =
        |e: crate::registry::Error| ApiError::from(e).answering::<PromptGetResponse>(&req.id);
    let target = state
        .tools
        .resolve_item(agent, Kind::Prompt, &req.server_id, &req.name)
        .await
        .map_err(fail)?;
    let (server_id, result) = state
        .tools
        .get_prompt(agent, &target, req.arguments, None)
        .await
        .map_err(fail)?;
    let mut resp = PromptGetResponse::answering(&req.id);
    resp.server_id = server_id;
    resp.messages = prompt_messages(&result);
    resp.description = result.description.unwrap_or_default();
    Ok(ok(resp))
}

/// Suggest values for a prompt or resource-template argument (completion/complete).
#[utoipa::path(post, path = "/v1/completions", tag = "prompts", request_body = CompletionRequest, security(("bearer" = [])),
    responses(
        (status = 200, description = "The suggested values", body = CompletionResponse), BodyErrors, UpstreamErrors,
        (status = 404, response = NotFound), (status = 409, response = Conflict)))]
async fn complete_argument(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    A2eJson(req): A2eJson<CompletionRequest>,
) -> Result<Reply<CompletionResponse>, Failure> {
    complete(&state, &agent, req).await
}

pub async fn complete(
    state: &AppState,
    agent: &Caller,
    req: CompletionRequest,
) -> Result<Reply<CompletionResponse>, Failure> {
    let fail =
        |e: crate::registry::Error| ApiError::from(e).answering::<CompletionResponse>(&req.id);
    let (route, reference) = state
        .tools
        .resolve_reference(agent, &req.server_id, &req.reference)
        .await
        .map_err(fail)?;
    let (server_id, result) = state
        .registry
        .complete(&agent.id, &route, reference, req.argument, req.context)
        .await
        .map_err(|e| ApiError::from(e).answering::<CompletionResponse>(&req.id))?;
    let mut resp = CompletionResponse::answering(&req.id);
    resp.server_id = server_id;
    resp.values = result.completion.values;
    resp.total = result.completion.total.map(u64::from);
    resp.has_more = result.completion.has_more.unwrap_or(false);
    Ok(ok(resp))
}
