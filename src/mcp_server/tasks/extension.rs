//! The 2026-07-28 tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`) on `/mcp`, for
//! stateless clients that declare it: their `tools/call` is answered at once with a task
//! handle (`resultType: "task"`), `tasks/get` polls it (with `inputRequests` while its server
//! asks something), `tasks/update` answers those and `tasks/cancel` cancels it. rmcp routes
//! these requests (it checks that the client declared the extension); they run on the agent's
//! own tasks (`crate::tasks`), the store `GET /v1/tasks` shows, so a restart of the bridge
//! loses none of them.

use rmcp::ErrorData;
#[allow(deprecated)]
use rmcp::model::CreateMessageRequest;
use rmcp::model::{
    CreateTaskResult, DetailedTask, ElicitRequest, InputRequest, InputRequests, InputResponses,
    JsonObject, Task, TaskPayload, TaskStatus as McpStatus,
};
use serde_json::{Map, Value};

use super::methods::{finished, iso8601, task_error, task_request};
use crate::a2e::{self, TaskInfo, TaskStatus};
use crate::caller::Caller;
use crate::http::state::AppState;
use crate::hub::AskKind;
use crate::mcp_server::ScopePath;
use crate::tasks::Asks;

/// Starts a `tools/call` as a task, its server's requests kept for the client to poll; the
/// handle. `None`: the tool is answered plainly (a deferred path's search or description).
pub async fn start(
    state: &AppState,
    agent: &Caller,
    scope: &ScopePath,
    name: &str,
    arguments: Map<String, Value>,
) -> Result<Option<CreateTaskResult>, ErrorData> {
    if matches!(scope, ScopePath::Deferred) && name != crate::tools::META_CALL {
        return Ok(None);
    }
    let ttl = a2e::DEFAULT_TASK_TTL_MS;
    let req = task_request(state, agent, scope, name.to_owned(), arguments, ttl)?;
    let task = state
        .tasks
        .start_with(agent, req, Asks::Polled)
        .await
        .map_err(task_error)?;
    Ok(Some(CreateTaskResult::new(task_of(&task))))
}

/// `tasks/get`: the task with what it finished with, or the requests it waits on.
pub async fn get(
    state: &AppState,
    agent: &Caller,
    task_id: &str,
) -> Result<DetailedTask, ErrorData> {
    let outcome = state
        .tasks
        .outcome(agent, task_id)
        .await
        .map_err(task_error)?;
    let task = task_of(&outcome.task);
    let payload = match outcome.task.status {
        TaskStatus::Working => TaskPayload::Working,
        TaskStatus::InputRequired => {
            let asked = state
                .tasks
                .input_requests(agent, task_id)
                .await
                .map_err(task_error)?;
            let mut input_requests = InputRequests::new();
            for request in asked {
                input_requests.insert(request.key, input_request(request.kind, request.params)?);
            }
            // Between its status and its request being kept, or asked of the agent's
            // event stream: nothing for this client to answer.
            // A call held for a person's approval waits on nobody this client can answer,
            // but its status is still `input_required`.
            let held = outcome.task.status_message.starts_with(crate::tasks::HELD);
            match input_requests.is_empty() && !held {
                true => TaskPayload::Working,
                false => TaskPayload::InputRequired { input_requests },
            }
        }
        TaskStatus::Cancelled => TaskPayload::Cancelled,
        TaskStatus::Completed | TaskStatus::Failed => match finished(outcome) {
            Ok(result) => TaskPayload::Completed {
                result: object(result),
            },
            Err(error) => TaskPayload::Failed {
                error: object(serde_json::to_value(error).unwrap_or_default()),
            },
        },
    };
    Ok(DetailedTask::new(task, payload))
}

/// `tasks/update`: the client's answers to the requests its task waits on.
pub async fn update(
    state: &AppState,
    agent: &Caller,
    task_id: &str,
    answers: InputResponses,
) -> Result<(), ErrorData> {
    state
        .tasks
        .answer_inputs(agent, task_id, answers)
        .await
        .map_err(task_error)
}

/// `tasks/cancel`: stops the task's call; a task that has ended already is left as it is.
pub async fn cancel(state: &AppState, agent: &Caller, task_id: &str) -> Result<(), ErrorData> {
    state
        .tasks
        .cancel(agent, task_id)
        .await
        .map(|_| ())
        .map_err(task_error)
}

/// A task as the extension shows it.
fn task_of(task: &TaskInfo) -> Task {
    let status = match task.status {
        TaskStatus::Working => McpStatus::Working,
        TaskStatus::InputRequired => McpStatus::InputRequired,
        TaskStatus::Completed => McpStatus::Completed,
        TaskStatus::Failed => McpStatus::Failed,
        TaskStatus::Cancelled => McpStatus::Cancelled,
    };
    let mut shown = Task::new(
        task.task_id.clone(),
        status,
        iso8601(task.created_at),
        iso8601(task.updated_at),
    )
    .with_ttl_ms(task.ttl)
    .with_poll_interval_ms(task.poll_interval);
    if !task.status_message.is_empty() {
        shown = shown.with_status_message(task.status_message.clone());
    }
    shown
}

/// A server's request as the client is asked it.
#[allow(deprecated)] // Sampling is deprecated for 2026-07-28; servers still ask for it.
fn input_request(kind: AskKind, params: Value) -> Result<InputRequest, ErrorData> {
    let bad = |e: serde_json::Error| {
        ErrorData::internal_error(format!("the server's request cannot be shown: {e}"), None)
    };
    Ok(match kind {
        AskKind::Sampling => InputRequest::CreateMessage(CreateMessageRequest::new(
            serde_json::from_value(params).map_err(bad)?,
        )),
        AskKind::Elicitation => InputRequest::Elicitation(ElicitRequest::new(
            serde_json::from_value(params).map_err(bad)?,
        )),
    })
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}
