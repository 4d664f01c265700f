//! `POST /v1/a2e`: any implemented A2E request message as it is on the wire, answered with its
//! response message, exactly as its own REST route would answer it.

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::responses::{BodyErrors, Conflict, Forbidden, NotFound, UpstreamErrors};
use super::{Reply, a2a, answers, calls, prompts, resources, roots, servers, tasks, tools};
use crate::a2e::{self, Message};
use crate::caller::Caller;
use crate::http::error::{A2eJson, ApiError, Failure};
use crate::http::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(a2e_message))
}

/// The wire message: its `type` picks the operation.
#[derive(Debug, serde::Deserialize, utoipa::ToSchema)]
pub struct Envelope {
    /// An A2E request type, e.g. `mcp/server/list/req` or `tool/call/req`.
    #[serde(rename = "type")]
    #[schema(min_length = 1)]
    pub kind: String,
    #[serde(flatten)]
    #[schema(value_type = HashMap<String, Value>)]
    pub fields: serde_json::Map<String, Value>,
}

impl Message for Envelope {
    const TYPE: &'static str = "";
    fn kind(&self) -> &str {
        &self.kind
    }
    fn id(&self) -> &str {
        self.fields
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
    fn set_id(&mut self, id: String) {
        self.fields.insert("id".into(), Value::String(id));
    }
    fn check_type(&self) -> Result<(), String> {
        Ok(())
    }
}

/// Send any A2E request message (`mcp/server/*`, `mcp/resource/*`, `mcp/prompt/*`,
/// `mcp/completion/req`, `tool/list/req`, `tool/call/req`); the answer is its response message
/// with the status its REST route would give.
#[utoipa::path(post, path = "/v1/a2e", tag = "a2e", request_body = Envelope, security(("bearer" = [])),
    responses(
        (status = 200, description = "The response message", body = HashMap<String, Value>),
        (status = 201, description = "The response message of a registration", body = HashMap<String, Value>),
        BodyErrors, UpstreamErrors, (status = 403, response = Forbidden), (status = 404, response = NotFound),
        (status = 409, response = Conflict)))]
async fn a2e_message(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    A2eJson(envelope): A2eJson<Envelope>,
) -> Response {
    let kind = envelope.kind.clone();
    let mut fields = envelope.fields;
    fields.insert("type".into(), Value::String(kind.clone()));
    let mut body = Value::Object(fields);
    // As on the message's own route: a `null` field is an absent one.
    a2e::drop_nulls(&kind, &mut body);
    let (s, a) = (&state, &agent);
    match kind.as_str() {
        a2e::ServerListRequest::TYPE => run(body, |r| servers::list(s, a, r)).await,
        a2e::ServerRegisterRequest::TYPE => run(body, |r| servers::register(s, a, r)).await,
        a2e::ServerUnregisterRequest::TYPE => run(body, |r| servers::unregister(s, a, r)).await,
        a2e::ServerGetRequest::TYPE => run(body, |r| servers::get(s, a, r)).await,
        a2e::ServerUpdateRequest::TYPE => run(body, |r| servers::update(s, a, r)).await,
        a2e::ServerReconnectRequest::TYPE => run(body, |r| servers::reconnect(s, a, r)).await,
        a2e::ServerImportRequest::TYPE => run(body, |r| servers::import(s, a, r)).await,
        a2e::ToolApproveRequest::TYPE => run(body, |r| servers::approve_tool(s, a, r)).await,
        a2e::ToolListRequest::TYPE => run(body, |r| tools::list(s, a, r)).await,
        a2e::ToolCallRequest::TYPE
            if body.get("task").is_some_and(|t| !t.is_null()) || held_call(s, a, &body) =>
        {
            run(body, |r| tasks::start(s, a, r)).await
        }
        a2e::ToolCallRequest::TYPE => run(body, |r| tools::call(s, a, r)).await,
        a2e::ToolCallCancelRequest::TYPE => run(body, |r| calls::cancel(s, a, r)).await,
        a2e::TaskListRequest::TYPE => run(body, |r| tasks::list(s, a, r)).await,
        a2e::TaskGetRequest::TYPE => run(body, |r| tasks::get(s, a, r)).await,
        a2e::TaskResultRequest::TYPE => run(body, |r| tasks::result(s, a, r)).await,
        a2e::TaskCancelRequest::TYPE => run(body, |r| tasks::cancel(s, a, r)).await,
        a2e::ResourceListRequest::TYPE => run(body, |r| resources::list(s, a, r)).await,
        a2e::ResourceTemplatesRequest::TYPE => run(body, |r| resources::templates(s, a, r)).await,
        a2e::ResourceReadRequest::TYPE => run(body, |r| resources::read(s, a, r)).await,
        a2e::ResourceSubscribeRequest::TYPE => run(body, |r| resources::subscribe(s, a, r)).await,
        a2e::ResourceUnsubscribeRequest::TYPE => {
            run(body, |r| resources::unsubscribe(s, a, r)).await
        }
        a2e::PromptListRequest::TYPE => run(body, |r| prompts::list(s, a, r)).await,
        a2e::PromptGetRequest::TYPE => run(body, |r| prompts::get(s, a, r)).await,
        a2e::CompletionRequest::TYPE => run(body, |r| prompts::complete(s, a, r)).await,
        a2e::SamplingResponse::TYPE => run(body, |r| answers::answer_sampling(s, a, r)).await,
        a2e::RootsListResponse::TYPE => run(body, |r| answers::answer_roots(s, a, r)).await,
        a2e::ElicitResponse::TYPE => run(body, |r| answers::answer_elicitation(s, a, r)).await,
        a2e::RootsGetRequest::TYPE => run(body, |r| roots::get(s, a, r)).await,
        a2e::RootsSetRequest::TYPE => run(body, |r| roots::set(s, a, r)).await,
        a2e::A2aRegisterRequest::TYPE => run(body, |r| a2a::register(s, a, r)).await,
        a2e::A2aListRequest::TYPE => run(body, |r| a2a::list(s, a, r)).await,
        a2e::A2aGetRequest::TYPE => run(body, |r| a2a::get(s, a, r)).await,
        a2e::A2aRefreshRequest::TYPE => run(body, |r| a2a::refresh(s, a, r)).await,
        a2e::A2aUnregisterRequest::TYPE => run(body, |r| a2a::unregister(s, a, r)).await,
        a2e::A2aTaskCancelRequest::TYPE => run(body, |r| a2a::cancel_task(s, a, r)).await,
        "" => ApiError::invalid("the message has no `type`").into_response(),
        other => ApiError::invalid(format!(
            "\"{other}\" is not an A2E request message this service implements"
        ))
        .into_response(),
    }
}

/// Whether the `tool/call/req` in `body` is one a policy holds for approval (a task then).
fn held_call(state: &AppState, agent: &Caller, body: &Value) -> bool {
    let text = |field: &str| body.get(field).and_then(Value::as_str).unwrap_or_default();
    tools::held(state, agent, text("toolset"), text("name"))
}

/// Parses `body` as `Req` and answers with what `op` makes of it.
async fn run<Req, Resp, F, Fut>(body: Value, op: F) -> Response
where
    Req: DeserializeOwned + Message,
    Resp: Serialize,
    F: FnOnce(Req) -> Fut,
    Fut: Future<Output = Result<Reply<Resp>, Failure>>,
{
    let req: Req = match serde_json::from_value(body) {
        Ok(req) => req,
        Err(error) => {
            return ApiError::invalid(format!("the message is not a valid {}: {error}", Req::TYPE))
                .into_response();
        }
    };
    match op(req).await {
        Ok((status, Json(resp))) => (status, Json(resp)).into_response(),
        Err(failure) => failure.into_response(),
    }
}
