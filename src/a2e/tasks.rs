//! Wire types of tasks: tool calls run asynchronously (`POST /v1/tools/call` with `task`),
//! their status as MCP names it, and the `task/*` messages of `/v1/tasks`.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::{a2e_message, a2e_response};

/// Fewest milliseconds a task is kept.
pub const MIN_TASK_TTL_MS: u64 = 1_000;
/// Most milliseconds a task is kept (24 hours).
pub const MAX_TASK_TTL_MS: u64 = 86_400_000;
/// Milliseconds a task is kept when its `ttl` is not given (one hour).
pub const DEFAULT_TASK_TTL_MS: u64 = 3_600_000;

/// `task` of a tool call: run the call as a task, answer 202 at once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct TaskParams {
    /// Milliseconds from its creation that the task and its result are kept (whatever its
    /// status then): 1000 (1 s) to 86400000 (24 h). After that it is gone (404).
    #[schema(minimum = 1000, maximum = 86400000, default = 3600000)]
    pub ttl: u64,
}

impl Default for TaskParams {
    fn default() -> Self {
        Self {
            ttl: DEFAULT_TASK_TTL_MS,
        }
    }
}

/// A task's status, as MCP names it. `completed`, `failed` and `cancelled` are final.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    #[default]
    Working,
    /// The server asked for input (sampling, elicitation): answer it on the event stream.
    InputRequired,
    Completed,
    Failed,
    Cancelled,
}

impl TaskStatus {
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Working => "working",
            Self::InputRequired => "input_required",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    /// The status named `name`; none for another name.
    pub fn parse(name: &str) -> Option<Self> {
        [
            Self::Working,
            Self::InputRequired,
            Self::Completed,
            Self::Failed,
            Self::Cancelled,
        ]
        .into_iter()
        .find(|s| s.as_str() == name)
    }

    /// Whether the task has finished for good.
    pub fn is_final(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }
}

/// A task: where its call runs and how far it is.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ToSchema)]
#[serde(default)]
pub struct TaskInfo {
    pub task_id: String,
    pub status: TaskStatus,
    /// Why it is in its status (a failure's reason: "interrupted by restart" for a call the
    /// bridge was running when it stopped).
    pub status_message: String,
    /// The tool, as the call named it.
    pub name: String,
    /// The server running the call (empty until known, and for an agent-bridge tool).
    pub server_id: String,
    /// The A2E `id` of the `tool/call/req` that created the task (the `req_id` of its
    /// progress and status events).
    pub call_id: String,
    /// Whether the upstream server runs the call as an MCP task (it would survive a restart
    /// of the bridge); false while the bridge runs it, as it does every call for now.
    pub upstream: bool,
    /// Milliseconds the task is kept from its creation.
    pub ttl: u64,
    /// Milliseconds between polls that make sense (events say the same sooner).
    pub poll_interval: u64,
    /// Seconds since the Unix epoch.
    pub created_at: f64,
    pub updated_at: f64,
    /// When the task and its result are deleted.
    pub expires_at: f64,
}

a2e_response! {
    /// The answer (202) to a `tool/call/req` with `task`: the task that now runs the call.
    TaskCreateResponse = "task/create/resp" {
        task_id: String,
        status: TaskStatus,
        task: TaskInfo,
    }
}

a2e_message! {
    /// task/list/req: a page of the caller's tasks.
    TaskListRequest = "task/list/req" {
        /// `next_cursor` of the previous page.
        cursor: String,
        /// Most tasks in the page: 1 to 1000, 100 when absent.
        #[serde(skip_serializing_if = "Option::is_none")]
        limit: Option<u32>,
    }
}

a2e_response! {
    /// task/list/resp: a page of the caller's tasks that have not expired, oldest first.
    TaskListResponse = "task/list/resp" {
        tasks: Vec<TaskInfo>,
        /// The cursor of the next page; empty on the last.
        next_cursor: String,
    }
}

a2e_message! {
    /// task/get/req: one of the caller's tasks.
    TaskGetRequest = "task/get/req" {
        task_id: String,
    }
}

a2e_response! {
    /// task/get/resp: the task (also the 202 of `task/result/req` while it runs).
    TaskGetResponse = "task/get/resp" {
        task_id: String,
        status: TaskStatus,
        task: TaskInfo,
    }
}

a2e_message! {
    /// task/result/req: the task's result once done (a `tool/call/resp`).
    TaskResultRequest = "task/result/req" {
        task_id: String,
    }
}

a2e_message! {
    /// task/cancel/req: cancel a task that is still running.
    TaskCancelRequest = "task/cancel/req" {
        task_id: String,
    }
}

a2e_response! {
    /// task/cancel/resp: the task, now `cancelled`.
    TaskCancelResponse = "task/cancel/resp" {
        ok: bool,
        task_id: String,
        status: TaskStatus,
        task: TaskInfo,
    }
}
