//! `/v1/servers`: register, list, get, change, reconnect and unregister MCP servers
//! (`mcp/server/*`).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::responses::{
    BadGateway, BodyErrors, Conflict, Forbidden, GatewayTimeout, NotFound, NotImplemented,
    StoreUnavailable, UnprocessableContent,
};
use super::{Reply, ok, request};
use crate::a2e::{
    McpServerStatus, Response, ServerGetRequest, ServerGetResponse, ServerImportRequest,
    ServerImportResponse, ServerListRequest, ServerListResponse, ServerReconnectRequest,
    ServerReconnectResponse, ServerRegisterRequest, ServerRegisterResponse,
    ServerUnregisterRequest, ServerUnregisterResponse, ServerUpdateRequest, ServerUpdateResponse,
    ToolApproveRequest, ToolApproveResponse,
};
use crate::caller::Caller;
use crate::http::error::{A2eJson, A2eQuery, ApiError, Failure};
use crate::http::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_servers, register_server))
        .routes(routes!(get_server, update_server, unregister_server))
        .routes(routes!(reconnect_server))
        .routes(routes!(approve_server_tool))
        .routes(routes!(import_servers))
}

/// Register the servers of a Claude Desktop / Claude Code / Cursor / Cline (`mcpServers`) or VS
/// Code (`servers`) configuration as it is: each key becomes a `server_id`, and the answer says per
/// server what happened (a bad entry does not stop the others). A server already registered
/// under the same id with another config is replaced only with `replace: true`; `disabled`
/// entries are `skipped`; an entry with an editor variable (`${input:…}`, `${workspaceFolder}`)
/// fails naming it; `timeout` is honoured (seconds for Cline, milliseconds for Claude Code);
/// `envFile` is read for admins only.
#[utoipa::path(post, path = "/v1/servers/import", tag = "servers", request_body = ServerImportRequest,
    security(("bearer" = [])),
    responses((status = 200, description = "What happened to each server of the file", body = ServerImportResponse), BodyErrors))]
async fn import_servers(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    A2eJson(req): A2eJson<ServerImportRequest>,
) -> Result<Reply<ServerImportResponse>, Failure> {
    import(&state, &agent, req).await
}

pub async fn import(
    state: &AppState,
    agent: &Caller,
    req: ServerImportRequest,
) -> Result<Reply<ServerImportResponse>, Failure> {
    let document = serde_json::json!({ "mcpServers": req.mcp_servers, "servers": req.servers });
    let mut resp = ServerImportResponse::answering(&req.id);
    let entries = crate::import::entries(&document);
    resp.results = crate::import::apply(&state.registry, agent, entries, req.replace).await;
    Ok(ok(resp))
}

/// The request id a GET, DELETE or bodiless POST takes as `?id=`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct IdQuery {
    /// The A2E request id, echoed as `req_id` (a UUID when absent).
    pub id: Option<String>,
}

#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Only servers with this status: `connecting`, `ready`, `error`, `disconnected` or
    /// `auth_required`.
    #[serde(default, with = "crate::a2e::empty_is_none")]
    #[param(value_type = String, pattern = "^(|connecting|ready|error|disconnected|auth_required)$")]
    pub status_filter: Option<McpServerStatus>,
    /// The A2E request id, echoed as `req_id`.
    pub id: Option<String>,
}

/// List registered servers (mcp/server/list).
#[utoipa::path(get, path = "/v1/servers", tag = "servers", params(ListQuery),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The registered servers and their status", body = ServerListResponse),
        (status = 422, response = UnprocessableContent)))]
async fn list_servers(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    A2eQuery(query): A2eQuery<ListQuery>,
) -> Result<Reply<ServerListResponse>, Failure> {
    let mut req: ServerListRequest = request(query.id);
    req.status_filter = query.status_filter;
    list(&state, &agent, req).await
}

pub async fn list(
    state: &AppState,
    agent: &Caller,
    req: ServerListRequest,
) -> Result<Reply<ServerListResponse>, Failure> {
    let mut resp = ServerListResponse::answering(&req.id);
    resp.servers = state
        .registry
        .entries()
        .iter()
        .map(|entry| entry.info_for(agent))
        .filter(|info| req.status_filter.is_none_or(|status| info.status == status))
        .collect();
    Ok(ok(resp))
}

/// Register and connect a server (mcp/server/register). A stdio server needs the admin role.
/// Nothing is stored unless the server connects and lists its tools.
#[utoipa::path(post, path = "/v1/servers", tag = "servers", request_body = ServerRegisterRequest,
    security(("bearer" = [])),
    responses(
        (status = 201, description = "The server is connected, its tools listed, and its config stored", body = ServerRegisterResponse),
        BodyErrors, (status = 403, response = Forbidden), (status = 409, response = Conflict),
        (status = 501, response = NotImplemented), (status = 502, response = BadGateway),
        (status = 503, response = StoreUnavailable), (status = 504, response = GatewayTimeout)))]
async fn register_server(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    A2eJson(req): A2eJson<ServerRegisterRequest>,
) -> Result<Reply<ServerRegisterResponse>, Failure> {
    register(&state, &agent, req).await
}

pub async fn register(
    state: &AppState,
    agent: &Caller,
    req: ServerRegisterRequest,
) -> Result<Reply<ServerRegisterResponse>, Failure> {
    let info = state
        .registry
        .register(agent, req.config)
        .await
        .map_err(|e| ApiError::from(e).answering::<ServerRegisterResponse>(&req.id))?;
    let mut resp = ServerRegisterResponse::answering(&req.id);
    resp.ok = true;
    resp.server = Some(info);
    Ok((StatusCode::CREATED, Json(resp)))
}

/// One server with its config, secret values shown as `***` (mcp/server/get).
#[utoipa::path(get, path = "/v1/servers/{server_id}", tag = "servers",
    params(("server_id" = String, Path), IdQuery), security(("bearer" = [])),
    responses(
        (status = 200, description = "The server and its config (secret values shown as `***`)", body = ServerGetResponse),
        (status = 404, response = NotFound)))]
async fn get_server(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    Path(server_id): Path<String>,
    A2eQuery(query): A2eQuery<IdQuery>,
) -> Result<Reply<ServerGetResponse>, Failure> {
    let mut req: ServerGetRequest = request(query.id);
    req.server_id = server_id;
    get(&state, &agent, req).await
}

pub async fn get(
    state: &AppState,
    agent: &Caller,
    req: ServerGetRequest,
) -> Result<Reply<ServerGetResponse>, Failure> {
    let entry = state
        .registry
        .get(&req.server_id)
        .map_err(|e| ApiError::from(e).answering::<ServerGetResponse>(&req.id))?;
    let mut resp = ServerGetResponse::answering(&req.id);
    resp.server = entry.info_for(agent);
    resp.config = entry.config().redacted();
    Ok(ok(resp))
}

/// Change a server's config (mcp/server/update): allow lists, timeouts, headers, … A secret value
/// sent as `***` keeps the stored one. Reconnects when the change concerns the connection.
#[utoipa::path(patch, path = "/v1/servers/{server_id}", tag = "servers",
    params(("server_id" = String, Path)), request_body = ServerUpdateRequest, security(("bearer" = [])),
    responses(
        (status = 200, description = "The server after the change", body = ServerUpdateResponse), BodyErrors,
        (status = 403, response = Forbidden), (status = 404, response = NotFound),
        (status = 503, response = StoreUnavailable)))]
async fn update_server(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    Path(server_id): Path<String>,
    A2eJson(mut req): A2eJson<ServerUpdateRequest>,
) -> Result<Reply<ServerUpdateResponse>, Failure> {
    if !req.server_id.is_empty() && req.server_id != server_id {
        return Err(
            ApiError::invalid("`server_id` in the body differs from the one in the path")
                .answering::<ServerUpdateResponse>(&req.id),
        );
    }
    req.server_id = server_id;
    update(&state, &agent, req).await
}

pub async fn update(
    state: &AppState,
    agent: &Caller,
    req: ServerUpdateRequest,
) -> Result<Reply<ServerUpdateResponse>, Failure> {
    let id = req.id.clone();
    let entry = state
        .registry
        .update(agent, req)
        .await
        .map_err(|e| ApiError::from(e).answering::<ServerUpdateResponse>(&id))?;
    let mut resp = ServerUpdateResponse::answering(&id);
    resp.ok = true;
    resp.server = entry.info_for(agent);
    resp.config = entry.config().redacted();
    Ok(ok(resp))
}

/// Disconnect and remove a server (mcp/server/unregister): its owner or an admin only.
#[utoipa::path(delete, path = "/v1/servers/{server_id}", tag = "servers",
    params(("server_id" = String, Path), IdQuery), security(("bearer" = [])),
    responses(
        (status = 200, description = "The server is disconnected and removed", body = ServerUnregisterResponse),
        (status = 403, response = Forbidden), (status = 404, response = NotFound),
        (status = 503, response = StoreUnavailable)))]
async fn unregister_server(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    Path(server_id): Path<String>,
    A2eQuery(query): A2eQuery<IdQuery>,
) -> Result<Reply<ServerUnregisterResponse>, Failure> {
    let mut req: ServerUnregisterRequest = request(query.id);
    req.server_id = server_id;
    unregister(&state, &agent, req).await
}

pub async fn unregister(
    state: &AppState,
    agent: &Caller,
    req: ServerUnregisterRequest,
) -> Result<Reply<ServerUnregisterResponse>, Failure> {
    state
        .registry
        .unregister(agent, &req.server_id)
        .await
        .map_err(|e| ApiError::from(e).answering::<ServerUnregisterResponse>(&req.id))?;
    let mut resp = ServerUnregisterResponse::answering(&req.id);
    resp.ok = true;
    resp.server_id = req.server_id;
    Ok(ok(resp))
}

/// Drop the connection and connect again now (mcp/server/reconnect); answers once the attempt
/// has finished (bounded by the server's connect timeout).
#[utoipa::path(post, path = "/v1/servers/{server_id}/reconnect", tag = "servers",
    params(("server_id" = String, Path), IdQuery), security(("bearer" = [])),
    responses(
        (status = 200, description = "The server after the reconnect attempt", body = ServerReconnectResponse),
        (status = 403, response = Forbidden), (status = 404, response = NotFound)))]
async fn reconnect_server(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    Path(server_id): Path<String>,
    A2eQuery(query): A2eQuery<IdQuery>,
) -> Result<Reply<ServerReconnectResponse>, Failure> {
    let mut req: ServerReconnectRequest = request(query.id);
    req.server_id = server_id;
    reconnect(&state, &agent, req).await
}

pub async fn reconnect(
    state: &AppState,
    agent: &Caller,
    req: ServerReconnectRequest,
) -> Result<Reply<ServerReconnectResponse>, Failure> {
    let entry = state
        .registry
        .reconnect(agent, &req.server_id)
        .await
        .map_err(|e| ApiError::from(e).answering::<ServerReconnectResponse>(&req.id))?;
    let mut resp = ServerReconnectResponse::answering(&req.id);
    resp.server = entry.info_for(agent);
    resp.ok = resp.server.status == McpServerStatus::Ready;
    Ok(ok(resp))
}

/// Approve the current definition of a tool that changed since it was pinned (tool pinning,
/// `MCP_BRIDGE_TOOL_PINNING`): it is pinned, and under `quarantine` the tool is listed and
/// callable again. The server's owner or an admin only. Idempotent: when nothing is pending the
/// answer is the same 200 with `approved: false`.
#[utoipa::path(post, path = "/v1/servers/{server_id}/tools/{tool}/approve", tag = "servers",
    params(("server_id" = String, Path), ("tool" = String, Path, description = "The upstream tool name (or its catalogue name)"), IdQuery),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The tool as the catalogue shows it now", body = ToolApproveResponse),
        (status = 403, response = Forbidden), (status = 404, response = NotFound),
        (status = 503, response = StoreUnavailable)))]
async fn approve_server_tool(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    Path((server_id, tool)): Path<(String, String)>,
    A2eQuery(query): A2eQuery<IdQuery>,
) -> Result<Reply<ToolApproveResponse>, Failure> {
    let mut req: ToolApproveRequest = request(query.id);
    req.server_id = server_id;
    req.tool = tool;
    approve_tool(&state, &agent, req).await
}

pub async fn approve_tool(
    state: &AppState,
    agent: &Caller,
    req: ToolApproveRequest,
) -> Result<Reply<ToolApproveResponse>, Failure> {
    let (tool, approved) = state
        .registry
        .approve_tool(agent, &req.server_id, &req.tool)
        .await
        .map_err(|e| ApiError::from(e).answering::<ToolApproveResponse>(&req.id))?;
    let mut resp = ToolApproveResponse::answering(&req.id);
    resp.ok = true;
    resp.tool = tool;
    resp.approved = approved;
    Ok(ok(resp))
}
