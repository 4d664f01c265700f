//! `/v1/approvals`: the calls a policy holds for a person, listed for their approvers, and an
//! approver's decision on one (approve runs it once with the arguments held; deny fails it).

use axum::extract::{Path, State};
use axum::{Extension, Json};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::responses::{BodyErrors, Conflict, Forbidden, NotFound, StoreUnavailable};
use crate::a2e::{ApprovalDecided, ApprovalDecision, ApprovalList};
use crate::caller::Caller;
use crate::http::error::{ApiError, JsonObject};
use crate::http::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_approvals))
        .routes(routes!(decide))
}

/// The held calls the caller may decide on (it is one of their policy's `approvers`), oldest
/// first: each with its caller, tool, exact arguments and their `args_sha256`. Empty for an
/// agent that approves nothing.
#[utoipa::path(get, path = "/v1/approvals", tag = "access", security(("bearer" = [])),
    responses(
        (status = 200, description = "The held calls waiting for this approver", body = ApprovalList),
        (status = 503, response = StoreUnavailable)))]
async fn list_approvals(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
) -> Result<Json<ApprovalList>, ApiError> {
    let approvals = state.tasks.approvals(&agent).await?;
    Ok(Json(ApprovalList { approvals }))
}

/// Decide on a held call (its policy's approvers). `approve` makes the call exactly once, with
/// exactly the arguments held, as its caller: the answer is its task, now `working`, whose
/// result the caller reads on `/v1/tasks/{task_id}`. `deny` ends the task `failed` with
/// `forbidden` and the reason. Only the first decision counts: a second one, one naming other
/// arguments (`args_sha256`), or one after the call's time ran out or its caller cancelled it
/// is 409 and runs nothing. An agent cannot approve its own call (403), even as an approver.
#[utoipa::path(post, path = "/v1/approvals/{task_id}", tag = "access",
    params(("task_id" = String, Path, description = "The held call's task")),
    request_body = ApprovalDecision, security(("bearer" = [])),
    responses(
        (status = 200, description = "Decided: the caller's task", body = ApprovalDecided), BodyErrors,
        (status = 403, response = Forbidden), (status = 404, response = NotFound),
        (status = 409, response = Conflict), (status = 503, response = StoreUnavailable)))]
async fn decide(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    Path(task_id): Path<String>,
    JsonObject(decision): JsonObject<ApprovalDecision>,
) -> Result<Json<ApprovalDecided>, ApiError> {
    let task = state.tasks.decide(&agent, &task_id, &decision).await?;
    Ok(Json(ApprovalDecided {
        task_id,
        decision: decision.decision,
        task,
    }))
}
