//! `/v1/toolsets` (changed by admins): virtual servers, each a chosen part of the catalogue
//! renamed and re-described, served at `/mcp/toolsets/{name}` and `GET /v1/tools?toolset=`.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::policies::tell_sessions;
use super::responses::{BodyErrors, Conflict, Forbidden, NotFound, StoreUnavailable};
use crate::a2e::{ErrorCode, NamedToolset, Toolset, ToolsetList};
use crate::caller::Caller;
use crate::http::error::{ApiError, JsonObject};
use crate::http::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_toolsets))
        .routes(routes!(get_toolset, put_toolset, delete_toolset))
}

/// Every toolset (those of the config file too).
#[utoipa::path(get, path = "/v1/toolsets", tag = "access", security(("bearer" = [])),
    responses((status = 200, description = "The toolsets, by name", body = ToolsetList)))]
async fn list_toolsets(State(state): State<AppState>) -> Json<ToolsetList> {
    Json(ToolsetList {
        toolsets: state.tools.access().toolsets(),
    })
}

/// A toolset's definition (its tools: `GET /v1/tools?toolset={name}`).
#[utoipa::path(get, path = "/v1/toolsets/{name}", tag = "access", params(("name" = String, Path)), security(("bearer" = [])),
    responses((status = 200, description = "The toolset", body = NamedToolset), (status = 404, response = NotFound)))]
async fn get_toolset(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<NamedToolset>, ApiError> {
    state
        .tools
        .access()
        .toolset(&name)
        .map(Json)
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::NotFound,
                format!("no toolset \"{name}\" is defined"),
            )
        })
}

/// Create or replace a toolset (admins): `tools` globs on catalogue names pick its members,
/// `rename` and `descriptions` change how it shows them, `deferred` shows only the meta-tools
/// `search_tools`, `describe_tool` and `call_tool`. Each caller still sees only what its
/// policies allow.
#[utoipa::path(put, path = "/v1/toolsets/{name}", tag = "access", params(("name" = String, Path, description = "1 to 64 of `[A-Za-z0-9._-]`")),
    request_body = Toolset, security(("bearer" = [])),
    responses(
        (status = 200, description = "The toolset is replaced", body = NamedToolset),
        (status = 201, description = "The toolset is created", body = NamedToolset), BodyErrors,
        (status = 403, response = Forbidden), (status = 409, response = Conflict),
        (status = 503, response = StoreUnavailable)))]
async fn put_toolset(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    Path(name): Path<String>,
    JsonObject(toolset): JsonObject<Toolset>,
) -> Result<(StatusCode, Json<NamedToolset>), ApiError> {
    let (named, created) = state
        .tools
        .access()
        .put_toolset(&agent, &name, toolset)
        .await?;
    tell_sessions(&state);
    let status = match created {
        true => StatusCode::CREATED,
        false => StatusCode::OK,
    };
    Ok((status, Json(named)))
}

/// Remove a toolset (admins).
#[utoipa::path(delete, path = "/v1/toolsets/{name}", tag = "access", params(("name" = String, Path)), security(("bearer" = [])),
    responses(
        (status = 204, description = "The toolset is removed"), (status = 403, response = Forbidden),
        (status = 404, response = NotFound), (status = 409, response = Conflict),
        (status = 503, response = StoreUnavailable)))]
async fn delete_toolset(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    state.tools.access().delete_toolset(&agent, &name).await?;
    tell_sessions(&state);
    Ok(StatusCode::NO_CONTENT)
}
