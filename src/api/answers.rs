//! The agent's answers to what servers asked of it: `POST /v1/sampling/responses`,
//! `/v1/roots/responses` and `/v1/elicitation/responses`. Each answers 202; a request that went
//! to another agent or no longer waits is 404, a second answer 409.

use axum::extract::State;
use axum::http::StatusCode;
use axum::{Extension, Json};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::Reply;
use super::responses::{BodyErrors, Conflict, NotFound, ServiceUnavailable};
use crate::a2e::{
    ElicitAck, ElicitRequest, ElicitResponse, ErrorCode, Message, Response, RootsAck,
    RootsListRequest, RootsListResponse, SamplingAck, SamplingRequest, SamplingResponse,
};
use crate::caller::Caller;
use crate::http::error::{A2eJson, ApiError, Failure};
use crate::http::state::AppState;
use crate::hub::AnswerError;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(sampling_response))
        .routes(routes!(roots_response))
        .routes(routes!(elicitation_response))
}

/// Hands an answer to the request `req_id` of `kind` that went to `agent`.
async fn deliver<Ack: Response + serde::Serialize>(
    state: &AppState,
    agent: &Caller,
    kind: &'static str,
    req_id: &str,
    answer: serde_json::Value,
    set_ok: impl FnOnce(&mut Ack),
) -> Result<Reply<Ack>, Failure> {
    state
        .hub
        .answer(&agent.id, kind, req_id, answer)
        .await
        .map_err(|e| {
            let code = match e {
                AnswerError::NotFound(_) => ErrorCode::NotFound,
                AnswerError::AlreadyAnswered(_) => ErrorCode::Conflict,
                AnswerError::Unreachable(..) => ErrorCode::McpServerUnavailable,
            };
            ApiError::new(code, e.to_string()).answering::<Ack>(req_id)
        })?;
    let mut ack = Ack::answering(req_id);
    set_ok(&mut ack);
    Ok((StatusCode::ACCEPTED, Json(ack)))
}

/// Answer a sampling request (mcp/sample/resp); an `error` refuses it.
#[utoipa::path(post, path = "/v1/sampling/responses", tag = "events", request_body = SamplingResponse,
    security(("bearer" = [])),
    responses(
        (status = 202, description = "The answer was taken and passed to the server", body = SamplingAck), BodyErrors,
        (status = 404, response = NotFound), (status = 409, response = Conflict),
        (status = 503, response = ServiceUnavailable)))]
async fn sampling_response(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    A2eJson(resp): A2eJson<SamplingResponse>,
) -> Result<Reply<SamplingAck>, Failure> {
    answer_sampling(&state, &agent, resp).await
}

pub async fn answer_sampling(
    state: &AppState,
    agent: &Caller,
    resp: SamplingResponse,
) -> Result<Reply<SamplingAck>, Failure> {
    let answer = serde_json::to_value(&resp).unwrap_or_default();
    if resp.error.is_empty()
        && let Err(e) = crate::upstream::sampling_result(answer.clone())
    {
        return Err(ApiError::invalid(format!(
            "the answer is not a sampling result: {}",
            e.message
        ))
        .answering::<SamplingAck>(&resp.req_id));
    }
    deliver(
        state,
        agent,
        SamplingRequest::TYPE,
        &resp.req_id,
        answer,
        |a: &mut SamplingAck| a.ok = true,
    )
    .await
}

/// Answer a roots request (mcp/root/list/resp).
#[utoipa::path(post, path = "/v1/roots/responses", tag = "events", request_body = RootsListResponse,
    security(("bearer" = [])),
    responses(
        (status = 202, description = "The answer was taken and passed to the server", body = RootsAck), BodyErrors,
        (status = 404, response = NotFound), (status = 409, response = Conflict),
        (status = 503, response = ServiceUnavailable)))]
async fn roots_response(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    A2eJson(resp): A2eJson<RootsListResponse>,
) -> Result<Reply<RootsAck>, Failure> {
    answer_roots(&state, &agent, resp).await
}

pub async fn answer_roots(
    state: &AppState,
    agent: &Caller,
    resp: RootsListResponse,
) -> Result<Reply<RootsAck>, Failure> {
    super::roots::check_roots(&resp.roots).map_err(|e| e.answering::<RootsAck>(&resp.req_id))?;
    let answer = serde_json::to_value(&resp).unwrap_or_default();
    deliver(
        state,
        agent,
        RootsListRequest::TYPE,
        &resp.req_id,
        answer,
        |a: &mut RootsAck| a.ok = true,
    )
    .await
}

/// Answer an elicitation request (mcp/elicit/resp): `accept` with `content`, `decline` or `cancel`.
#[utoipa::path(post, path = "/v1/elicitation/responses", tag = "events", request_body = ElicitResponse,
    security(("bearer" = [])),
    responses(
        (status = 202, description = "The answer was taken and passed to the server", body = ElicitAck), BodyErrors,
        (status = 404, response = NotFound), (status = 409, response = Conflict),
        (status = 503, response = ServiceUnavailable)))]
async fn elicitation_response(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    A2eJson(resp): A2eJson<ElicitResponse>,
) -> Result<Reply<ElicitAck>, Failure> {
    answer_elicitation(&state, &agent, resp).await
}

pub async fn answer_elicitation(
    state: &AppState,
    agent: &Caller,
    resp: ElicitResponse,
) -> Result<Reply<ElicitAck>, Failure> {
    // A value outside the set was refused when the body was read.
    if resp.action.is_none() {
        return Err(
            ApiError::invalid("`action` is missing: accept, decline or cancel")
                .answering::<ElicitAck>(&resp.req_id),
        );
    }
    if resp.content.as_ref().is_some_and(|c| !c.is_object()) {
        return Err(
            ApiError::invalid("`content` must be an object").answering::<ElicitAck>(&resp.req_id)
        );
    }
    let answer = serde_json::to_value(&resp).unwrap_or_default();
    deliver(
        state,
        agent,
        ElicitRequest::TYPE,
        &resp.req_id,
        answer,
        |a: &mut ElicitAck| a.ok = true,
    )
    .await
}
