//! `/v1/policies` (changed by admins): who sees which tools, resources and prompts.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::responses::{BodyErrors, Conflict, Forbidden, NotFound, StoreUnavailable};
use crate::a2e::{NamedPolicy, Policy, PolicyList};
use crate::caller::Caller;
use crate::http::error::{ApiError, JsonObject};
use crate::http::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_policies))
        .routes(routes!(put_policy, delete_policy))
}

/// Every access policy (those of the config file too) and the access default.
#[utoipa::path(get, path = "/v1/policies", tag = "access", security(("bearer" = [])),
    responses((status = 200, description = "The policies, by name", body = PolicyList), (status = 403, response = Forbidden)))]
async fn list_policies(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
) -> Result<Json<PolicyList>, ApiError> {
    if !agent.admin {
        return Err(ApiError::new(
            crate::a2e::ErrorCode::Forbidden,
            "policies are for agents with the admin role",
        ));
    }
    let access = state.tools.access();
    Ok(Json(PolicyList {
        policies: access.policies(),
        access_default: access.default().as_str().to_owned(),
    }))
}

/// Create or replace a policy (admins). It applies to the callers its `match` names (every
/// criterion given must hold); `allow` globs narrow what they see, `deny` globs hide (deny
/// wins). Tools and prompts match by namespaced name (`github__*`), resources by URI. In force
/// at once, on every replica within 2 s.
#[utoipa::path(put, path = "/v1/policies/{name}", tag = "access", params(("name" = String, Path, description = "1 to 64 of `[A-Za-z0-9._-]`")),
    request_body = Policy, security(("bearer" = [])),
    responses(
        (status = 200, description = "The policy is replaced", body = NamedPolicy),
        (status = 201, description = "The policy is created", body = NamedPolicy), BodyErrors,
        (status = 403, response = Forbidden), (status = 409, response = Conflict),
        (status = 503, response = StoreUnavailable)))]
async fn put_policy(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    Path(name): Path<String>,
    JsonObject(policy): JsonObject<Policy>,
) -> Result<(StatusCode, Json<NamedPolicy>), ApiError> {
    let (named, created) = state
        .tools
        .access()
        .put_policy(&agent, &name, policy)
        .await?;
    tell_sessions(&state);
    let status = match created {
        true => StatusCode::CREATED,
        false => StatusCode::OK,
    };
    Ok((status, Json(named)))
}

/// Remove a policy (admins).
#[utoipa::path(delete, path = "/v1/policies/{name}", tag = "access", params(("name" = String, Path)), security(("bearer" = [])),
    responses(
        (status = 204, description = "The policy is removed"), (status = 403, response = Forbidden),
        (status = 404, response = NotFound), (status = 409, response = Conflict),
        (status = 503, response = StoreUnavailable)))]
async fn delete_policy(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    state.tools.access().delete_policy(&agent, &name).await?;
    tell_sessions(&state);
    Ok(StatusCode::NO_CONTENT)
}

/// What callers see may have changed: `/mcp` sessions are told to list again.
pub(super) fn tell_sessions(state: &AppState) {
    use crate::a2e::NotificationMethod as Method;
    for method in [
        Method::ToolsListChanged,
        Method::ResourcesListChanged,
        Method::PromptsListChanged,
    ] {
        state
            .hub
            .to_mcp_clients("", method.as_str(), serde_json::json!({}));
    }
}
