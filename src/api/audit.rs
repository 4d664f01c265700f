//! `GET /v1/audit` (admins only): who registered, changed or removed which server or A2A
//! agent, and when, newest first.

use axum::extract::State;
use axum::{Extension, Json};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::responses::{Forbidden, StoreUnavailable, UnprocessableContent};
use crate::a2e::ErrorCode;
use crate::caller::Caller;
use crate::http::error::{A2eQuery, ApiError};
use crate::http::state::AppState;
use crate::store::AuditEntry;

/// Entries on one page unless `limit` says otherwise.
const DEFAULT_LIMIT: u32 = 100;
const MAX_LIMIT: u32 = 1000;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_audit))
}

#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditQuery {
    /// Only entries older than this id: `next_cursor` of the previous page.
    #[param(minimum = 1)]
    pub before: Option<i64>,
    /// At most this many entries (1 to 1000; 100 when absent).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<u32>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AuditListResponse {
    /// Newest first.
    pub entries: Vec<AuditEntry>,
    /// `before` for the next page; absent on the last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<i64>,
}

/// The audit log: every registration, change and removal of a server or an A2A agent, by
/// whom and when (newest first, in pages).
#[utoipa::path(get, path = "/v1/audit", tag = "audit", params(AuditQuery), security(("bearer" = [])),
    responses(
        (status = 200, description = "A page of the audit log, newest first", body = AuditListResponse),
        (status = 403, response = Forbidden), (status = 422, response = UnprocessableContent),
        (status = 503, response = StoreUnavailable)))]
async fn list_audit(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    A2eQuery(query): A2eQuery<AuditQuery>,
) -> Result<Json<AuditListResponse>, ApiError> {
    if !agent.admin {
        return Err(ApiError::new(
            ErrorCode::Forbidden,
            "the audit log is for agents with the admin role",
        ));
    }
    let limit = query.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(ApiError::invalid(format!(
            "`limit` must be between 1 and {MAX_LIMIT}"
        )));
    }
    let entries = state
        .store
        .audit(query.before, limit)
        .await
        .map_err(ApiError::from)?;
    let next_cursor = if entries.len() == limit as usize {
        entries.last().map(|e| e.id)
    } else {
        None
    };
    Ok(Json(AuditListResponse {
        entries,
        next_cursor,
    }))
}
