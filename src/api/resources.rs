//! `/v1/resources`: resources and templates across servers, reads routed by URI, and
//! subscriptions (`mcp/resource/*`).

use axum::Extension;
use axum::extract::State;
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::responses::{
    BodyErrors, Conflict, NotFound, StoreUnavailable, UnprocessableContent, UpstreamErrors,
};
use super::{Reply, ok, request};
use crate::a2e::{
    ResourceListRequest, ResourceListResponse, ResourceReadRequest, ResourceReadResponse,
    ResourceSubscribeRequest, ResourceSubscribeResponse, ResourceTemplatesRequest,
    ResourceTemplatesResponse, ResourceUnsubscribeRequest, ResourceUnsubscribeResponse, Response,
};
use crate::access::Kind;
use crate::caller::Caller;
use crate::http::error::{A2eJson, A2eQuery, ApiError, Failure};
use crate::http::state::AppState;
use crate::registry;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_resources))
        .routes(routes!(list_templates))
        .routes(routes!(read_resource))
        .routes(routes!(subscribe_resource))
        .routes(routes!(unsubscribe_resource))
}

/// A page of a merged listing.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// Only this server's entries.
    #[serde(default)]
    pub server_id: String,
    /// `next_cursor` of the previous page.
    #[serde(default)]
    pub cursor: String,
    /// The A2E request id, echoed as `req_id`.
    pub id: Option<String>,
}

/// Resources of every ready server, merged and paged (mcp/resource/list).
#[utoipa::path(get, path = "/v1/resources", tag = "resources", params(PageQuery), security(("bearer" = [])),
    responses(
        (status = 200, description = "A page of the resources of every ready server (or of `server_id`)", body = ResourceListResponse),
        UpstreamErrors, (status = 404, response = NotFound), (status = 422, response = UnprocessableContent)))]
async fn list_resources(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    A2eQuery(query): A2eQuery<PageQuery>,
) -> Result<Reply<ResourceListResponse>, Failure> {
    let mut req: ResourceListRequest = request(query.id);
    req.server_id = query.server_id;
    req.cursor = query.cursor;
    list(&state, &agent, req).await
}

pub async fn list(
    state: &AppState,
    agent: &Caller,
    req: ResourceListRequest,
) -> Result<Reply<ResourceListResponse>, Failure> {
    let listed = state
        .tools
        .resources(agent, &req.server_id, &req.cursor)
        .await
        .map_err(|e| ApiError::from(e).answering::<ResourceListResponse>(&req.id))?
        .listed(registry::resource_model);
    let mut resp = ResourceListResponse::answering(&req.id);
    resp.resources = listed.items;
    resp.next_cursor = listed.next;
    resp.skipped_servers = listed.skipped;
    Ok(ok(resp))
}

/// Resource templates of every ready server, merged and paged (mcp/resource/templates).
#[utoipa::path(get, path = "/v1/resources/templates", tag = "resources", params(PageQuery), security(("bearer" = [])),
    responses(
        (status = 200, description = "A page of the resource templates of every ready server (or of `server_id`)", body = ResourceTemplatesResponse),
        UpstreamErrors, (status = 404, response = NotFound), (status = 422, response = UnprocessableContent)))]
async fn list_templates(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    A2eQuery(query): A2eQuery<PageQuery>,
) -> Result<Reply<ResourceTemplatesResponse>, Failure> {
    let mut req: ResourceTemplatesRequest = request(query.id);
    req.server_id = query.server_id;
    req.cursor = query.cursor;
    templates(&state, &agent, req).await
}

pub async fn templates(
    state: &AppState,
    agent: &Caller,
    req: ResourceTemplatesRequest,
) -> Result<Reply<ResourceTemplatesResponse>, Failure> {
    let listed = state
        .tools
        .templates(agent, &req.server_id, &req.cursor)
        .await
        .map_err(|e| ApiError::from(e).answering::<ResourceTemplatesResponse>(&req.id))?
        .listed(registry::template_model);
    let mut resp = ResourceTemplatesResponse::answering(&req.id);
    resp.resource_templates = listed.items;
    resp.next_cursor = listed.next;
    resp.skipped_servers = listed.skipped;
    Ok(ok(resp))
}

/// Read a resource (mcp/resource/read): from `server_id`, or from the server that lists the URI
/// or has a template producing it.
#[utoipa::path(post, path = "/v1/resources/read", tag = "resources", request_body = ResourceReadRequest,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The resource's contents", body = ResourceReadResponse), BodyErrors, UpstreamErrors,
        (status = 404, response = NotFound), (status = 409, response = Conflict)))]
async fn read_resource(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    A2eJson(req): A2eJson<ResourceReadRequest>,
) -> Result<Reply<ResourceReadResponse>, Failure> {
    read(&state, &agent, req).await
}

pub async fn read(
    state: &AppState,
    agent: &Caller,
    req: ResourceReadRequest,
) -> Result<Reply<ResourceReadResponse>, Failure> {
    let fail =
        |e: crate::registry::Error| ApiError::from(e).answering::<ResourceReadResponse>(&req.id);
    let target = state
        .tools
        .resolve_item(agent, Kind::Resource, &req.server_id, &req.uri)
        .await
        .map_err(fail)?;
    let (server_id, result) = state
        .tools
        .read_resource(agent, &target)
        .await
        .map_err(fail)?;
    let mut resp = ResourceReadResponse::answering(&req.id);
    resp.contents = crate::registry::Registry::resource_contents(&server_id, result);
    resp.server_id = server_id;
    Ok(ok(resp))
}

/// Follow a resource's changes (mcp/resource/subscribe). Kept per agent and restored after a
/// reconnect or a restart.
#[utoipa::path(post, path = "/v1/resources/subscribe", tag = "resources", request_body = ResourceSubscribeRequest,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The agent is subscribed; updates come on its event stream", body = ResourceSubscribeResponse),
        BodyErrors, UpstreamErrors, (status = 404, response = NotFound), (status = 409, response = Conflict)))]
async fn subscribe_resource(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    A2eJson(req): A2eJson<ResourceSubscribeRequest>,
) -> Result<Reply<ResourceSubscribeResponse>, Failure> {
    subscribe(&state, &agent, req).await
}

pub async fn subscribe(
    state: &AppState,
    agent: &Caller,
    req: ResourceSubscribeRequest,
) -> Result<Reply<ResourceSubscribeResponse>, Failure> {
    let fail = |e: crate::registry::Error| {
        ApiError::from(e).answering::<ResourceSubscribeResponse>(&req.id)
    };
    let target = state
        .tools
        .resolve_item(agent, Kind::Resource, &req.server_id, &req.uri)
        .await
        .map_err(fail)?;
    let server_id = state
        .registry
        .subscribe(&agent.id, &target.server_id, &target.item)
        .await
        .map_err(fail)?;
    let mut resp = ResourceSubscribeResponse::answering(&req.id);
    resp.ok = true;
    resp.server_id = server_id;
    Ok(ok(resp))
}

/// Stop following a resource (mcp/resource/unsubscribe).
#[utoipa::path(post, path = "/v1/resources/unsubscribe", tag = "resources", request_body = ResourceUnsubscribeRequest,
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The agent's subscription is ended", body = ResourceUnsubscribeResponse),
        BodyErrors, (status = 404, response = NotFound), (status = 409, response = Conflict),
        (status = 503, response = StoreUnavailable)))]
async fn unsubscribe_resource(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    A2eJson(req): A2eJson<ResourceUnsubscribeRequest>,
) -> Result<Reply<ResourceUnsubscribeResponse>, Failure> {
    unsubscribe(&state, &agent, req).await
}

pub async fn unsubscribe(
    state: &AppState,
    agent: &Caller,
    req: ResourceUnsubscribeRequest,
) -> Result<Reply<ResourceUnsubscribeResponse>, Failure> {
    let server_id = state
        .registry
        .unsubscribe(&agent.id, &req.server_id, &req.uri)
        .await
        .map_err(|e| ApiError::from(e).answering::<ResourceUnsubscribeResponse>(&req.id))?;
    let mut resp = ResourceUnsubscribeResponse::answering(&req.id);
    resp.ok = true;
    resp.server_id = server_id;
    Ok(ok(resp))
}
