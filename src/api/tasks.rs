//! `/v1/tasks`: the caller's asynchronous tool calls (created by `POST /v1/tools/call` with
//! `task`): their status, their result once done, and cancelling them.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use serde::Deserialize;
use serde_json::Value;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::responses::{
    BadGateway, Conflict, GatewayTimeout, NotFound, ServiceUnavailable, StoreUnavailable,
    UnprocessableContent,
};
use super::servers::IdQuery;
use super::{Reply, ok, request};
use crate::a2e::{
    Response, TaskCancelRequest, TaskCancelResponse, TaskCreateResponse, TaskGetRequest,
    TaskGetResponse, TaskInfo, TaskListRequest, TaskListResponse, TaskResultRequest, TaskStatus,
    ToolCallRequest, ToolCallResponse,
};
use crate::caller::Caller;
use crate::http::error::{A2eQuery, ApiError, Failure};
use crate::http::state::AppState;
use crate::tasks::TaskError;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_tasks))
        .routes(routes!(get_task, cancel_task))
        .routes(routes!(task_result))
}

impl From<TaskError> for ApiError {
    fn from(error: TaskError) -> Self {
        match error {
            TaskError::Store(error) => error.into(),
            other => Self::new(other.code(), other.to_string()),
        }
    }
}

/// Starts `req` (which has `task`) as a task: 202 with the task.
pub async fn start(
    state: &AppState,
    agent: &Caller,
    req: ToolCallRequest,
) -> Result<Reply<TaskCreateResponse>, Failure> {
    let id = req.id.clone();
    state
        .tools
        .check_call_request(&req)
        .map_err(|e| ApiError::from(e).answering::<TaskCreateResponse>(&id))?;
    let task = state
        .tasks
        .start(agent, req)
        .await
        .map_err(|e| ApiError::from(e).answering::<TaskCreateResponse>(&id))?;
    let mut resp = TaskCreateResponse::answering(&id);
    resp.task_id = task.task_id.clone();
    resp.status = task.status;
    resp.task = task;
    Ok((StatusCode::ACCEPTED, Json(resp)))
}

/// A page of the tasks list.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TaskPageQuery {
    /// `next_cursor` of the previous page.
    #[serde(default)]
    pub cursor: String,
    /// Most tasks in the page: 1 to 1000, 100 when absent.
    pub limit: Option<u32>,
    /// The A2E request id, echoed as `req_id`.
    pub id: Option<String>,
}

/// A page of the caller's tasks that have not expired, oldest first (task/list).
#[utoipa::path(get, path = "/v1/tasks", tag = "tasks", params(TaskPageQuery), security(("bearer" = [])),
    responses(
        (status = 200, description = "A page of the caller's tasks", body = TaskListResponse),
        (status = 422, response = UnprocessableContent), (status = 503, response = StoreUnavailable)))]
async fn list_tasks(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    A2eQuery(query): A2eQuery<TaskPageQuery>,
) -> Result<Reply<TaskListResponse>, Failure> {
    let mut req: TaskListRequest = request(query.id);
    req.cursor = query.cursor;
    req.limit = query.limit;
    list(&state, &agent, req).await
}

pub async fn list(
    state: &AppState,
    agent: &Caller,
    req: TaskListRequest,
) -> Result<Reply<TaskListResponse>, Failure> {
    let mut resp = TaskListResponse::answering(&req.id);
    let limit = req.limit.map(|l| l as usize);
    (resp.tasks, resp.next_cursor) = state
        .tasks
        .list(agent, &req.cursor, limit)
        .await
        .map_err(|e| ApiError::from(e).answering::<TaskListResponse>(&req.id))?;
    Ok(ok(resp))
}

/// One of the caller's tasks (task/get). Another agent's task, or one past its `ttl`, is 404.
#[utoipa::path(get, path = "/v1/tasks/{task_id}", tag = "tasks",
    params(("task_id" = String, Path), IdQuery), security(("bearer" = [])),
    responses(
        (status = 200, description = "The task", body = TaskGetResponse), (status = 404, response = NotFound),
        (status = 503, response = StoreUnavailable)))]
async fn get_task(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    Path(task_id): Path<String>,
    A2eQuery(query): A2eQuery<IdQuery>,
) -> Result<Reply<TaskGetResponse>, Failure> {
    let mut req: TaskGetRequest = request(query.id);
    req.task_id = task_id;
    get(&state, &agent, req).await
}

pub async fn get(
    state: &AppState,
    agent: &Caller,
    req: TaskGetRequest,
) -> Result<Reply<TaskGetResponse>, Failure> {
    let task = state
        .tasks
        .get(agent, &req.task_id)
        .await
        .map_err(|e| ApiError::from(e).answering::<TaskGetResponse>(&req.id))?;
    Ok(ok(task_response(&req.id, task)))
}

fn task_response(req_id: &str, task: TaskInfo) -> TaskGetResponse {
    let mut resp = TaskGetResponse::answering(req_id);
    resp.task_id = task.task_id.clone();
    resp.status = task.status;
    resp.task = task;
    resp
}

/// The task's result (task/result): once `completed`, the `tool/call/resp` the call made (200,
/// `is_error: true` included); while `working` or `input_required`, 202 with the task; once
/// `failed`, the error the call failed with, with its status (a call the bridge was running when
/// it restarted: 503 `mcp_server_unavailable`, "interrupted by restart"); once `cancelled`, 409.
#[utoipa::path(get, path = "/v1/tasks/{task_id}/result", tag = "tasks",
    params(("task_id" = String, Path), IdQuery), security(("bearer" = [])),
    responses(
        (status = 200, description = "The call's result", body = ToolCallResponse),
        (status = 202, description = "The task has not finished yet", body = TaskGetResponse),
        (status = 404, response = NotFound), (status = 409, response = Conflict),
        (status = 422, response = UnprocessableContent), (status = 502, response = BadGateway),
        (status = 503, response = ServiceUnavailable), (status = 504, response = GatewayTimeout)))]
async fn task_result(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    Path(task_id): Path<String>,
    A2eQuery(query): A2eQuery<IdQuery>,
) -> Result<Reply<Value>, Failure> {
    let mut req: TaskResultRequest = request(query.id);
    req.task_id = task_id;
    result(&state, &agent, req).await
}

pub async fn result(
    state: &AppState,
    agent: &Caller,
    req: TaskResultRequest,
) -> Result<Reply<Value>, Failure> {
    let fail = |e: ApiError| e.answering::<ToolCallResponse>(&req.id);
    let outcome = state
        .tasks
        .outcome(agent, &req.task_id)
        .await
        .map_err(|e| fail(e.into()))?;
    match outcome.task.status {
        TaskStatus::Working | TaskStatus::InputRequired => Ok((
            StatusCode::ACCEPTED,
            Json(json(&task_response(&req.id, outcome.task))),
        )),
        TaskStatus::Completed => {
            // Dropped to make room for newer results (MCP_BRIDGE_AGENT_TASK_RESULT_BYTES).
            let gone = || {
                ApiError::new(
                    crate::a2e::ErrorCode::NotFound,
                    outcome.task.status_message.clone(),
                )
            };
            let mut resp = outcome.response.clone().ok_or_else(|| fail(gone()))?;
            resp.set_req_id(&req.id);
            Ok(ok(json(&resp)))
        }
        TaskStatus::Failed => {
            let (code, message) = outcome
                .error
                .unwrap_or((crate::a2e::ErrorCode::Internal, "the call failed".into()));
            Err(fail(ApiError::new(code, message)))
        }
        TaskStatus::Cancelled => Err(fail(ApiError::conflict(format!(
            "task \"{}\" was cancelled: it has no result",
            req.task_id
        )))),
    }
}

/// A response message as JSON (the result route answers one of two).
fn json(message: &impl serde::Serialize) -> Value {
    serde_json::to_value(message).unwrap_or_default()
}

/// Cancels one of the caller's running tasks (task/cancel): its call is stopped. A task that
/// has already finished (completed, failed, or cancelled before) is 409 `conflict` and stays
/// as it was, so cancelling twice answers 409 the second time.
#[utoipa::path(delete, path = "/v1/tasks/{task_id}", tag = "tasks",
    params(("task_id" = String, Path), IdQuery), security(("bearer" = [])),
    responses(
        (status = 200, description = "The task, now cancelled", body = TaskCancelResponse),
        (status = 404, response = NotFound), (status = 409, response = Conflict),
        (status = 503, response = StoreUnavailable)))]
async fn cancel_task(
    State(state): State<AppState>,
    Extension(agent): Extension<Caller>,
    Path(task_id): Path<String>,
    A2eQuery(query): A2eQuery<IdQuery>,
) -> Result<Reply<TaskCancelResponse>, Failure> {
    let mut req: TaskCancelRequest = request(query.id);
    req.task_id = task_id;
    cancel(&state, &agent, req).await
}

pub async fn cancel(
    state: &AppState,
    agent: &Caller,
    req: TaskCancelRequest,
) -> Result<Reply<TaskCancelResponse>, Failure> {
    let task = state
        .tasks
        .cancel(agent, &req.task_id)
        .await
        .map_err(|e| ApiError::from(e).answering::<TaskCancelResponse>(&req.id))?;
    let mut resp = TaskCancelResponse::answering(&req.id);
    resp.ok = true;
    resp.task_id = task.task_id.clone();
    resp.status = task.status;
    resp.task = task;
    Ok(ok(resp))
}
