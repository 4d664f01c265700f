//! MCP tasks on an upstream, in both eras.
//!
//! - 2025-11-25: a `tools/call` augmented with `task`, then `tasks/get`, `tasks/result` and
//!   `tasks/cancel`. rmcp models the later tasks extension instead, so these go out as custom
//!   requests and their answers are read from JSON (leniently: an answer rmcp parsed into one of
//!   its own types is read back from its JSON). Whether a server runs tasks is asked once per
//!   connection, on the first task: a `tasks/get` for an id that cannot exist. A server with
//!   tasks answers "not found" (-32602); one without answers "method not found" (-32601). rmcp
//!   drops the `tasks` capability from the initialize result, or the capability would say so.
//!   Even then a call is task-augmented only for a tool whose `execution.taskSupport` is
//!   `"optional"` or `"required"` (absent is `"forbidden"`), as the server's last `tools/list`
//!   says (read raw, `decode.rs` [`TaskTools`](super::decode::TaskTools)): the TypeScript SDK
//!   runs a forbidden tool's augmented call and only then fails it, so the tool would have run
//!   once for nothing and could not safely be called again.
//! - 2026-07-28 (stateless): the tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`),
//!   when `server/discover` declares it. The call declares the extension in its own client
//!   capabilities and may be answered with a task handle; `tasks/get` polls it and carries its
//!   result, error or the input it waits for, which the caller gives and `tasks/update` sends
//!   (there is no `tasks/result`: the wait is a poll, so no stream is held for the task's length).
//!   The server decides for each call whether it becomes a task; tools declare nothing of it,
//!   so the extension is declared on the call of any tool.

use std::collections::HashSet;
use std::time::Duration;

use rmcp::ClientHandler;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelTaskParams, ClientRequest,
    CustomRequest, DetailedTask, GetTaskParams, JsonObject, RequestMetaObject, ServerResult,
    TASKS_EXTENSION_ID, TaskPayload, UpdateTaskParams,
};
use serde_json::{Value, json};

use super::{CallError, CallOrigin, Connection};
use crate::a2e::{McpVersion, TaskMethod};

/// How often a 2026-07-28 task is polled when its server does not say (ms).
const POLL_DEFAULT_MS: u64 = 500;
/// The longest a 2026-07-28 task's poll waits, whatever its server asks (ms).
const POLL_MOST_MS: u64 = 5_000;

/// JSON-RPC "method not found": the server has no tasks, or runs this tool only in the call.
pub const METHOD_NOT_FOUND: i32 = -32601;

/// A task as the upstream reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct UpstreamTask {
    pub task_id: String,
    /// `working`, `input_required`, `completed`, `failed` or `cancelled`.
    pub status: String,
    pub status_message: String,
    /// How often the server asks to be polled (ms), when it says.
    pub poll_interval: Option<u64>,
}

impl UpstreamTask {
    /// Whether the task has ended (`completed`, `failed` or `cancelled`).
    pub fn is_final(&self) -> bool {
        matches!(self.status.as_str(), "completed" | "failed" | "cancelled")
    }

    /// The task in a result: its fields at the top level (`tasks/get`, `tasks/cancel`) or
    /// under `task` (`tools/call`).
    fn from_json(value: &Value) -> Option<Self> {
        let task = value.get("task").filter(|t| t.is_object()).unwrap_or(value);
        let text = |key: &str| task.get(key).and_then(Value::as_str).map(str::to_owned);
        Some(Self {
            task_id: text("taskId")?,
            status: text("status")?,
            status_message: text("statusMessage").unwrap_or_default(),
            poll_interval: task
                .get("pollInterval")
                .or_else(|| task.get("pollIntervalMs"))
                .and_then(Value::as_u64),
        })
    }

    /// A 2026-07-28 task (tasks extension).
    fn from_extension(task: &rmcp::model::Task) -> Self {
        let status = serde_json::to_value(task.status)
            .ok()
            .and_then(|s| s.as_str().map(str::to_owned))
            .unwrap_or_default();
        Self {
            task_id: task.task_id.clone(),
            status,
            status_message: task.status_message.clone().unwrap_or_default(),
            poll_interval: task.poll_interval_ms,
        }
    }
}

/// What a task-augmented call started.
#[derive(Debug)]
pub enum Started {
    /// The server runs it as a task.
    Task(UpstreamTask),
    /// The server answered it in the call (a tool it does not run as a task).
    Done(CallToolResult),
    /// Nothing ran: the server asked for input before it would start (2026-07-28), so the
    /// call is to be made plainly, where that input is given.
    Plain,
}

impl Connection {
    /// Whether a call of `tool` may be made a task on the server: on 2026-07-28, when it offers
    /// the tasks extension; before, when its listing offers `tool` as a task and it runs tasks
    /// (asked once per connection; see the module's note).
    pub async fn runs_as_task(&self, tool: &str, timeout: Duration) -> bool {
        if self.stateless() {
            return self.capabilities.supports_tasks();
        }
        if !self.task_tools.offers(tool) {
            return false;
        }
        let probe = async {
            let answer = self
                .custom(
                    TaskMethod::Get.as_str(),
                    json!({"taskId": "mcp-bridge-probe"}),
                    timeout,
                )
                .await;
            let runs = match &answer {
                Ok(_) => true,
                Err(CallError::Rejected { code, .. }) => *code != METHOD_NOT_FOUND,
                Err(_) => false,
            };
            tracing::debug!(runs, "asked whether the server runs tasks");
            // A lost connection or a timeout says nothing: asked again next time.
            match answer {
                Ok(_) | Err(CallError::Rejected { .. }) => Ok(runs),
                Err(error) => Err(error),
            }
        };
        self.runs_tasks
            .get_or_try_init(|| probe)
            .await
            .copied()
            .unwrap_or(false)
    }

    /// Calls a tool as a task kept `ttl` ms by the server.
    pub async fn call_tool_as_task(
        &self,
        params: CallToolRequestParams,
        ttl: u64,
        timeout: Duration,
    ) -> Result<Started, CallError> {
        if self.stateless() {
            return self.call_tool_in_extension(params, timeout).await;
        }
        let mut params = serde_json::to_value(&params)
            .map_err(|e| CallError::Protocol(format!("cannot encode the call: {e}")))?;
        params["task"] = json!({ "ttl": ttl });
        let answer = self.custom("tools/call", params, timeout).await?;
        if let Some(task) = UpstreamTask::from_json(&answer) {
            return Ok(Started::Task(task));
        }
        serde_json::from_value(answer)
            .map(Started::Done)
            .map_err(|_| {
                CallError::Protocol("the server answered a task-augmented call with neither".into())
            })
    }

    /// `tasks/get`: the task's status now.
    pub async fn task_status(
        &self,
        task_id: &str,
        timeout: Duration,
    ) -> Result<UpstreamTask, CallError> {
        if self.stateless() {
            let got = self.get_task(task_id, timeout).await?;
            return Ok(UpstreamTask::from_extension(&got.task));
        }
        let answer = self
            .custom(
                TaskMethod::Get.as_str(),
                json!({ "taskId": task_id }),
                timeout,
            )
            .await?;
        UpstreamTask::from_json(&answer)
            .ok_or_else(|| CallError::Protocol("tasks/get answered no task".into()))
    }

    /// `tasks/result`: waits (up to `timeout`) until the task has ended and answers its tool
    /// result, or the error it failed with. What the server asks meanwhile (the input a task
    /// waits for) goes to `origin`, as during a call.
    pub async fn task_result(
        &self,
        task_id: &str,
        timeout: Duration,
        origin: CallOrigin,
    ) -> Result<CallToolResult, CallError> {
        if self.stateless() {
            return self.poll_to_end(task_id, timeout, &origin).await;
        }
        let request = ClientRequest::CustomRequest(CustomRequest::new(
            TaskMethod::Result.as_str(),
            Some(json!({ "taskId": task_id })),
        ));
        let call = async {
            let mut options = rmcp::service::PeerRequestOptions::no_options();
            options.timeout = Some(timeout);
            let handle = self
                .client
                .peer()
                .send_request_with_option(request, options)
                .await?;
            let _tracked = self
                .calls
                .track(handle.id.clone(), &handle.progress_token, origin);
            handle.await_response().await
        };
        let answer = self.run(timeout + Duration::from_secs(1), call).await?;
        let answer = serde_json::to_value(answer)
            .map_err(|e| CallError::Protocol(format!("cannot read the task's result: {e}")))?;
        serde_json::from_value(answer)
            .map_err(|_| CallError::Protocol("tasks/result answered no tool result".into()))
    }

    /// `tasks/cancel`: asks the server to stop the task.
    pub async fn cancel_task(&self, task_id: &str, timeout: Duration) -> Result<(), CallError> {
        if self.stateless() {
            let cancel = self
                .client
                .peer()
                .cancel_task(CancelTaskParams::new(task_id));
            return self.run(timeout, cancel).await;
        }
        self.custom(
            TaskMethod::Cancel.as_str(),
            json!({ "taskId": task_id }),
            timeout,
        )
        .await
        .map(drop)
    }

    fn stateless(&self) -> bool {
        self.mcp_version == McpVersion::V2026_07_28.as_str()
    }

    /// A `tools/call` that declares the tasks extension (2026-07-28): a task handle, a result,
    /// or a request for input first.
    async fn call_tool_in_extension(
        &self,
        params: CallToolRequestParams,
        timeout: Duration,
    ) -> Result<Started, CallError> {
        // The bridge's own capabilities (what rmcp sends on every request), with the extension.
        let mut capabilities = self.client.service().get_info().capabilities;
        capabilities
            .extensions
            .get_or_insert_default()
            .insert(TASKS_EXTENSION_ID.to_owned(), JsonObject::new());
        let mut meta = RequestMetaObject::default();
        meta.set_client_capabilities(capabilities);
        let mut options = rmcp::service::PeerRequestOptions::no_options();
        options.timeout = Some(timeout);
        options.meta = Some(meta);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let call = async {
            self.client
                .peer()
                .send_request_with_option(request, options)
                .await?
                .await_response()
                .await
        };
        match self.run(timeout + Duration::from_secs(1), call).await? {
            ServerResult::CreateTaskResult(created) => {
                Ok(Started::Task(UpstreamTask::from_extension(&created.task)))
            }
            ServerResult::CallToolResult(result) => Ok(Started::Done(result)),
            ServerResult::InputRequiredResult(_) => Ok(Started::Plain),
            _ => Err(CallError::Protocol(
                "the server answered a task-augmented call with something else".into(),
            )),
        }
    }

    async fn get_task(&self, task_id: &str, timeout: Duration) -> Result<DetailedTask, CallError> {
        let get = self.client.peer().get_task(GetTaskParams::new(task_id));
        Ok(self.run(timeout, get).await?.task)
    }

    /// Polls a 2026-07-28 task until it ends (at most `timeout`): its result, or the error it
    /// failed with. The input it waits for is asked of `origin`, each request once, and sent
    /// with `tasks/update`.
    async fn poll_to_end(
        &self,
        task_id: &str,
        timeout: Duration,
        origin: &CallOrigin,
    ) -> Result<CallToolResult, CallError> {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut answered = HashSet::new();
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                return Err(CallError::Timeout(timeout));
            }
            let got = self.get_task(task_id, left).await?;
            let every = got.task.poll_interval_ms.unwrap_or(POLL_DEFAULT_MS);
            match got.payload {
                TaskPayload::Completed { result } => {
                    return serde_json::from_value(Value::Object(result)).map_err(|e| {
                        CallError::Protocol(format!("the task's result is no tool result: {e}"))
                    });
                }
                TaskPayload::Failed { error } => return Err(failed(&error)),
                TaskPayload::Cancelled => {
                    return Err(CallError::Rejected {
                        code: rmcp::model::ErrorCode::INTERNAL_ERROR.0,
                        message: "the server cancelled the task".into(),
                    });
                }
                TaskPayload::InputRequired { mut input_requests } => {
                    // A request already answered may be shown again until the server has read
                    // the answer (`tasks/update` is acknowledged before it is applied).
                    input_requests.retain(|key, _| !answered.contains(key));
                    if !input_requests.is_empty() {
                        let keys: Vec<String> = input_requests.keys().cloned().collect();
                        let responses =
                            Box::pin(self.answer_inputs(input_requests, origin)).await?;
                        let update = UpdateTaskParams::new(task_id, responses);
                        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                        self.run(left, self.client.peer().update_task(update))
                            .await?;
                        answered.extend(keys);
                        continue;
                    }
                }
                _ => {}
            }
            let pause = Duration::from_millis(every.clamp(1, POLL_MOST_MS));
            tokio::time::sleep(
                pause.min(deadline.saturating_duration_since(tokio::time::Instant::now())),
            )
            .await;
        }
    }

    /// One custom request; its answer as JSON, whatever type rmcp read it as.
    async fn custom(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, CallError> {
        let request = ClientRequest::CustomRequest(CustomRequest::new(method, Some(params)));
        let mut options = rmcp::service::PeerRequestOptions::no_options();
        options.timeout = Some(timeout);
        let call = async {
            self.client
                .peer()
                .send_request_with_option(request, options)
                .await?
                .await_response()
                .await
        };
        let answer = self.run(timeout + Duration::from_secs(1), call).await?;
        serde_json::to_value(answer)
            .map_err(|e| CallError::Protocol(format!("cannot read the answer to {method}: {e}")))
    }
}

/// The error a 2026-07-28 task failed with (a JSON-RPC error object).
fn failed(error: &JsonObject) -> CallError {
    CallError::Rejected {
        code: error
            .get("code")
            .and_then(Value::as_i64)
            .and_then(|c| i32::try_from(c).ok())
            .unwrap_or(rmcp::model::ErrorCode::INTERNAL_ERROR.0),
        message: error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("the task failed")
            .to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_is_read_from_a_create_result_and_from_a_get_result() {
        let created = json!({"task": {"taskId": "t1", "status": "working", "ttl": 60000,
            "pollInterval": 500, "createdAt": "2026-12-01T10:00:10Z", "lastUpdatedAt": "x"}});
        let task = UpstreamTask::from_json(&created).unwrap();
        assert_eq!(task.task_id, "t1");
        assert_eq!(task.poll_interval, Some(500));
        assert!(!task.is_final());
        let got = json!({"taskId": "t1", "status": "completed", "statusMessage": "ok",
            "pollIntervalMs": 250});
        let task = UpstreamTask::from_json(&got).unwrap();
        assert_eq!(task.status_message, "ok");
        assert_eq!(task.poll_interval, Some(250));
        assert!(task.is_final());
        // A plain tool result is no task.
        let result = json!({"content": [{"type": "text", "text": "3"}], "isError": false});
        assert!(UpstreamTask::from_json(&result).is_none());
    }
}
