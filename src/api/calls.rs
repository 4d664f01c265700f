//! `DELETE /v1/calls/{id}`: an agent cancels its own tool call in flight, named by the A2E `id`
//! of its tool/call/req; the server is sent `notifications/cancelled`.

use axum::Extension;
use axum::extract::{Path, State};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::responses::NotFound;
use super::servers::IdQuery;
use super::{Reply, ok, request};
use crate::a2e::{ErrorCode, Response, ToolCallCancelRequest, ToolCallCancelResponse};
use crate::caller::Caller;
use crate::http::error::{A2eQuery, ApiError, Failure};
use crate::http::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(cancel_call))
}

/// Cancel a tool call in flight (tool/call/cancel), by the `id` of its `POST /v1/tools/call`
/// (or `/v1/a2e` `tool/call/req`): the server is sent `notifications/cancelled` at once, the
/// call's own request answers 409 `cancelled`, and the call is not retried. Only the agent that
/// made the call can cancel it; an unknown id, another agent's call, a call that has already
/// ended and one cancelled already are all 404 `not_found` (there is no call of the caller's to
/// cancel), and nothing changes.
#[utoipa::path(delete, path = "/v1/calls/{call_id}", tag = "tools",
    params(("call_id" = String, Path, description = "The `id` of the tool/call/req to cancel"), IdQuery),
    security(("bearer" = [])),
    responses(
        (status = 200, description = "The call was cancelled", body = ToolCallCancelResponse),
        (status = 404, response = NotFound)))]
async fn cancel_call(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    Path(call_id): Path<String>,
    A2eQuery(query): A2eQuery<IdQuery>,
) -> Result<Reply<ToolCallCancelResponse>, Failure> {
    let mut req: ToolCallCancelRequest = request(query.id);
    req.call_id = call_id;
    cancel(&state, &agent, req).await
}

pub async fn cancel(
    state: &AppState,
    agent: &Caller,
    req: ToolCallCancelRequest,
) -> Result<Reply<ToolCallCancelResponse>, Failure> {
    if !state.tools.cancel_call(agent, &req.call_id).await {
        let message = format!(
            "no call \"{}\" of yours is in flight: the id is unknown, or the call has ended or \
             was cancelled already",
            req.call_id
        );
        return Err(ApiError::new(ErrorCode::NotFound, message)
            .answering::<ToolCallCancelResponse>(&req.id));
    }
    let mut resp = ToolCallCancelResponse::answering(&req.id);
    resp.ok = true;
    resp.call_id = req.call_id;
    Ok(ok(resp))
}
