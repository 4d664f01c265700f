//! Tasks: tool calls that run asynchronously and durably. A task is created at once (the caller
//! gets its id), its call runs in the background, each status change is a `bridge/task_status`
//! event on the agent's stream, and the record with its result lives in the store until its
//! `ttl` has passed. A call the bridge was running when it stopped ends `failed` ("interrupted
//! by restart") when it starts again: never silently lost.
//!
//! A call on a server that runs MCP tasks (2025-11-25) runs as a task there: this bridge polls
//! it (`follow`) and, after a restart, polls it again, so it finishes normally. Cancelling such a
//! task cancels it upstream. A task is cancelled by whichever replica the agent asks; the replica
//! running it stops its call within `SWEEP_EVERY`.
//!
//! Across replicas every task reaches a final state. A replica killed and not back (its row in
//! `replicas` lapsed, see registry/balance.rs) has its running tasks taken over by a live one at
//! its next sweep (`take_over`; the row is moved conditionally, so one replica wins each): a task
//! its server runs is polled from there, and a replica that cannot reach the server because
//! another holds it hands the task to that holder (`hand_over`), which polls it from its next
//! sweep. A call the dead replica made itself may have run upstream, and the bridge keeps no
//! record of whether it did, so it is never made again: it ends `failed` ([`ORPHANED`],
//! `mcp_server_unavailable`, retryable). One still queued there ended `failed` as not run
//! ([`ORPHANED_QUEUED`]): its arguments are not stored, so it cannot be made later. A replica
//! back (same id) before its row lapsed ends its own calls itself (`restore`, [`INTERRUPTED`]).
//!
//! Each task's call takes a slot of its agent's concurrency (`Slots`) while it runs, and waits
//! `working` ("queued") while there is none; an agent has at most `TaskLimits::live` tasks that
//! have not finished, and at most `TaskLimits::result_bytes` of stored results (the oldest
//! finished results are dropped first to make room for a new one).
//!
//! States (MCP's names): `working` ⇄ `input_required` (the server asked the agent something)
//! → `completed` (any result, also `is_error`), `failed` (the call's error) or `cancelled`.
//! A final status never changes: the store writes a final status only over a running one.

use std::collections::HashMap;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use rmcp::model::CallToolResult;
use serde_json::json;
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;

use crate::a2e::{
    self, ErrorCode, Message, NotificationMethod, Response, ServerPush, TaskInfo, TaskStatus,
    ToolCallRequest, ToolCallResponse,
};
use crate::caller::Caller;
use crate::hub::{AgentChannel, Answer, Hub, Recipient, ServerRequest};
use crate::registry::{self, TaskStart};
use crate::store::{Store, StoreError, StoredTask};
use crate::tools::{Scope, Tools};
use crate::upstream::CallOrigin;

mod inputs;

pub use inputs::InputRequest;
use inputs::InputWait;

/// Why a bridge-run call ended when the bridge stopped during it.
pub const INTERRUPTED: &str = "interrupted by restart";
/// Why a bridge-run call ended when the replica running it stopped (killed) during it and
/// another replica took its task over.
pub const ORPHANED: &str = "the replica running this call stopped during it; the call may have \
    run (it is not made again): check before making it again";
/// Why a task ended whose call had not started (it was queued) when its replica stopped.
pub const ORPHANED_QUEUED: &str = "the replica that was to run this call stopped before starting \
    it; the call did not run: make it again";
/// How often expired tasks are deleted (a read never shows one past its time meanwhile).
const SWEEP_EVERY: Duration = Duration::from_secs(2);
/// The poll interval a bridge-run task suggests.
const POLL_INTERVAL_MS: i64 = 1_000;
/// The bounds of how often an upstream task is polled, whatever its server suggests (ms).
const UPSTREAM_POLL_MS: (u64, u64) = (100, 5_000);

/// How often a queued task looks for a free slot.
const QUEUE_POLL: Duration = Duration::from_millis(50);
/// The status message of a task waiting for a slot.
pub const QUEUED: &str = "queued: the agent has as many calls running as MCP_BRIDGE_AGENT_CONCURRENCY lets its tasks run";
/// The status message of a finished task whose result was dropped for newer ones.
pub const EVICTED: &str = "its result was dropped to make room for newer ones \
    (MCP_BRIDGE_AGENT_TASK_RESULT_BYTES)";
/// Tasks in one page of a listing, unless asked otherwise, and at most.
pub const PAGE: (usize, usize) = (100, 1000);

/// Where a task takes a slot of its agent's concurrency (the front end's per-agent limit,
/// `MCP_BRIDGE_AGENT_CONCURRENCY`), so its call counts against it as a request would.
pub trait Slots: Send + Sync {
    /// A slot of `agent`'s, held until the returned value is dropped; `None` while every slot
    /// tasks may take is taken.
    fn take(&self, agent: &str) -> Option<Box<dyn Send + Sync>>;
}

/// What one agent's tasks may hold.
#[derive(Clone, Default)]
pub struct TaskLimits {
    /// The agents' concurrency; none: tasks run at once.
    pub slots: Option<Arc<dyn Slots>>,
    /// Tasks not finished per agent (`MCP_BRIDGE_AGENT_TASKS`); 0: no limit.
    pub live: usize,
    /// Bytes of stored results per agent (`MCP_BRIDGE_AGENT_TASK_RESULT_BYTES`); 0: no limit.
    pub result_bytes: usize,
    /// How long a replica's row in `replicas` lasts (`MCP_BRIDGE_LEASE_SECS`): the grace
    /// before tasks are taken over.
    pub lease: Duration,
}

/// What went wrong with a task request.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    /// No such task, or another agent's, or expired.
    #[error("no task \"{0}\"")]
    NotFound(String),
    #[error("{0}")]
    Invalid(String),
    /// The task has already finished (cancelling it again changes nothing).
    #[error("task \"{task_id}\" has already finished ({})", status.as_str())]
    Finished { task_id: String, status: TaskStatus },
    /// The agent has as many unfinished tasks as it may.
    #[error("{0}")]
    TooMany(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl TaskError {
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::NotFound(_) => ErrorCode::NotFound,
            Self::Invalid(_) => ErrorCode::InvalidRequest,
            Self::Finished { .. } => ErrorCode::Conflict,
            Self::TooMany(_) => ErrorCode::RateLimited,
            Self::Store(error) => error.code(),
        }
    }
}

/// A task and, once it has finished, what it finished with.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub task: TaskInfo,
    /// `completed`: the tool call response.
    pub response: Option<ToolCallResponse>,
    /// `failed`: the error the call answered with.
    pub error: Option<(ErrorCode, String)>,
}

/// Runs and keeps the tasks of every agent.
pub struct Tasks {
    tools: Arc<Tools>,
    store: Store,
    hub: Arc<Hub>,
    /// This replica: the bridge that runs a task writes its name on it.
    replica: String,
    /// The calls this bridge runs or polls, by task id.
    running: Mutex<HashMap<String, Running>>,
    limits: TaskLimits,
    /// Held while a result is made room for and stored, so two ends cannot share the room.
    room: tokio::sync::Mutex<()>,
    /// Set once the servers are restored (`resume`): from then on this replica takes over the
    /// tasks of replicas that are gone, and polls the ones handed to it.
    resumed: AtomicBool,
    /// The tasks whose server requests are kept for their client to poll ([`Asks::Polled`]),
    /// with the requests that wait for an answer, by task id.
    polled: Mutex<HashMap<String, Vec<InputWait>>>,
}

/// Where the requests a task's server makes during its call (sampling, elicitation) go.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Asks {
    /// To the agent's event stream, answered over REST (`/v1/elicitation/responses`, ...).
    #[default]
    Channel,
    /// Kept on the task for its MCP client, which polls them (`tasks/get` `inputRequests`)
    /// and answers them (`tasks/update`): the 2026-07-28 tasks extension on `/mcp`. Held by
    /// the replica running the call, and with replicas in the task's row too, so that any
    /// replica shows and takes them (`inputs.rs`); not kept over a restart, as the server's
    /// request is lost with its connection then anyway.
    Polled,
}

impl Tasks {
    pub fn new(
        tools: Arc<Tools>,
        store: Store,
        hub: Arc<Hub>,
        replica: String,
        limits: TaskLimits,
    ) -> Arc<Self> {
        Arc::new(Self {
            tools,
            store,
            hub,
            replica,
            running: Mutex::default(),
            limits,
            room: tokio::sync::Mutex::default(),
            resumed: AtomicBool::new(false),
            polled: Mutex::default(),
        })
    }

    /// Creates a task for `req` (which has `task`) and starts its call; answers at once.
    pub async fn start(
        self: &Arc<Self>,
        caller: &Caller,
        req: ToolCallRequest,
    ) -> Result<TaskInfo, TaskError> {
        self.start_with(caller, req, Asks::Channel).await
    }

    /// [`Tasks::start`], with the server's requests during the call going where `asks` says.
    pub async fn start_with(
        self: &Arc<Self>,
        caller: &Caller,
        mut req: ToolCallRequest,
        asks: Asks,
    ) -> Result<TaskInfo, TaskError> {
        let params = req.task.take().unwrap_or_default();
        if !(a2e::MIN_TASK_TTL_MS..=a2e::MAX_TASK_TTL_MS).contains(&params.ttl) {
            return Err(TaskError::Invalid(format!(
                "`task.ttl` is {} ms; it must be {} to {} (1 s to 24 h)",
                params.ttl,
                a2e::MIN_TASK_TTL_MS,
                a2e::MAX_TASK_TTL_MS
            )));
        }
        self.check_live(caller).await?;
        let now = a2e::now();
        let task = StoredTask {
            task_id: a2e::new_id(),
            agent_id: caller.id.clone(),
            req_id: req.id.clone(),
            name: req.name.clone(),
            server_id: self.server_of(&req.name),
            status: TaskStatus::Working.as_str().to_owned(),
            replica: self.replica.clone(),
            ttl_ms: params.ttl as i64,
            poll_interval_ms: POLL_INTERVAL_MS,
            created_at: now,
            updated_at: now,
            expires_at: now + params.ttl as f64 / 1000.0,
            ..Default::default()
        };
        self.store.insert_task(&task).await?;
        self.announce(&task);
        let tasks = self.clone();
        let caller = caller.clone();
        let record = task.clone();
        if asks == Asks::Polled {
            self.polled_lock().insert(task.task_id.clone(), Vec::new());
        }
        // Registered before it can finish, so a quick call does not leave its handle behind.
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        let handle = tokio::spawn(async move {
            let task_id = record.task_id.clone();
            tasks.clone().run(caller, record, req).await;
            tasks.polled_lock().remove(&task_id);
        });
        running.insert(task.task_id.clone(), Running::new(handle.abort_handle()));
        Ok(info(&task))
    }

    /// Refuses a new task of an agent with `live` tasks that have not finished.
    async fn check_live(&self, caller: &Caller) -> Result<(), TaskError> {
        let most = self.limits.live;
        if most == 0 {
            return Ok(());
        }
        let live = self.store.running_task_count(&caller.id).await?.max(0) as usize;
        if live < most {
            return Ok(());
        }
        Err(TaskError::TooMany(format!(
            "agent \"{}\" has {live} tasks that have not finished, the most one agent may have \
             (MCP_BRIDGE_AGENT_TASKS={most}); retry once some have finished, or cancel some",
            caller.id
        )))
    }

    /// A slot of the task's agent's concurrency, once there is one; meanwhile the task is
    /// `working` with the message [`QUEUED`]. None when tasks take no slots.
    async fn slot(&self, task: &mut StoredTask) -> Option<Box<dyn Send + Sync>> {
        let slots = self.limits.slots.as_ref()?;
        let mut queued = false;
        loop {
            if let Some(held) = slots.take(&task.agent_id) {
                if queued {
                    task.status_message.clear();
                    self.update(task).await;
                }
                return Some(held);
            }
            if !queued {
                queued = true;
                task.status_message = QUEUED.to_owned();
                self.update(task).await;
            }
            tokio::time::sleep(QUEUE_POLL).await;
        }
    }

    /// The server a catalogue name stands for, when it is one (for the record and events).
    fn server_of(&self, name: &str) -> String {
        self.tools
            .resolve(name)
            .map(|(server_id, _)| server_id)
            .unwrap_or_default()
    }

    /// Runs a task's call to its end and stores what it ended with: as a task of its server
    /// when the server runs tasks (then polled), else as a call the bridge makes.
    async fn run(self: Arc<Self>, caller: Caller, mut task: StoredTask, req: ToolCallRequest) {
        // Held until the call ends (polled on its server included).
        let _slot = self.slot(&mut task).await;
        let origin = TaskOrigin::new(&self, &task);
        let recipient: CallOrigin = origin.clone();
        let started = self
            .tools
            .start_task(
                &caller,
                Scope::of(&req.toolset),
                &req.name,
                &req.arguments,
                task.ttl_ms as u64,
                &recipient,
            )
            .await;
        let called = match started {
            Ok(TaskStart::Upstream {
                server_id,
                tool,
                task: upstream,
            }) => {
                task.server_id = server_id;
                task.tool = tool;
                task.upstream_task_id = Some(upstream.task_id.clone());
                task.poll_interval_ms = poll_interval(upstream.poll_interval) as i64;
                task.status_message = upstream.status_message.clone();
                // Before the first await: a cancel from here on also cancels it upstream.
                self.following(&task);
                self.update(&mut task).await;
                origin.replace(&task);
                return self.follow(task, origin).await;
            }
            Ok(TaskStart::Done { server_id, result }) => Ok((server_id, result)),
            Ok(TaskStart::Bridge) => self.call(&caller, &req, recipient).await,
            Err(error) => Err(error),
        };
        self.end(task, called).await;
    }

    /// The call a task stands for, made by the bridge.
    async fn call(
        &self,
        caller: &Caller,
        req: &ToolCallRequest,
        origin: CallOrigin,
    ) -> Result<(String, CallToolResult), registry::Error> {
        self.tools
            .call(
                caller,
                Scope::of(&req.toolset),
                &req.name,
                req.arguments.clone(),
                req.timeout,
                origin,
            )
            .await
    }

    /// Stores what a task's call ended with, and forgets it as running.
    async fn end(
        &self,
        mut task: StoredTask,
        called: Result<(String, CallToolResult), registry::Error>,
    ) {
        match called {
            Ok((server_id, result)) => {
                task.server_id = server_id;
                let response = response_of(&task, result);
                task.status = TaskStatus::Completed.as_str().to_owned();
                task.result = serde_json::to_string(&response).ok();
            }
            Err(error) => {
                let (code, message) = error_of(&error);
                task.status = TaskStatus::Failed.as_str().to_owned();
                task.status_message = message;
                task.error_code = Some(code.as_str().to_owned());
            }
        }
        // Forgotten first: stopping it now would only cancel what has ended.
        self.forget(&task.task_id);
        let _room = self.room.lock().await;
        self.make_room(&mut task).await;
        self.finish(&mut task).await;
    }

    /// Keeps the agent's stored results within `result_bytes`: a result larger than all of it
    /// fails the task (`payload_too_large`), else the oldest finished results are dropped
    /// until the new one fits (their tasks stay, saying so). Dropping old results rather than
    /// refusing the new one: the new one is the one its agent is waiting for, and its call
    /// has already run.
    async fn make_room(&self, task: &mut StoredTask) {
        let most = self.limits.result_bytes;
        let Some(size) = task.result.as_ref().map(String::len) else {
            return;
        };
        if most == 0 {
            return;
        }
        if size > most {
            task.result = None;
            task.status = TaskStatus::Failed.as_str().to_owned();
            task.error_code = Some(ErrorCode::PayloadTooLarge.as_str().to_owned());
            task.status_message = format!(
                "the call's result ({size} bytes) is larger than an agent's room for task results \
                 (MCP_BRIDGE_AGENT_TASK_RESULT_BYTES={most}); make the call without `task`"
            );
            return;
        }
        let stored = match self.store.task_results(&task.agent_id, a2e::now()).await {
            Ok(stored) => stored,
            Err(error) => {
                tracing::warn!(task_id = %task.task_id, %error, "cannot read the stored results");
                return;
            }
        };
        let mut total = size + stored.iter().map(|(_, n)| n.max(&0)).sum::<i64>() as usize;
        for (task_id, n) in stored {
            if total <= most {
                break;
            }
            match self.store.evict_task_result(&task_id, EVICTED).await {
                Ok(()) => total = total.saturating_sub(n.max(0) as usize),
                Err(error) => tracing::warn!(%task_id, %error, "cannot drop a task's result"),
            }
            tracing::info!(%task_id, agent_id = %task.agent_id, "task result dropped for room");
        }
    }

    /// Polls a task its server runs until it ends, then fetches and stores its result. A server
    /// that cannot be reached now (down, reconnecting, after a restart) is polled again until the
    /// task expires; the sweeper then ends it.
    async fn follow(self: Arc<Self>, mut task: StoredTask, origin: Arc<TaskOrigin>) {
        let registry = self.tools.registry().clone();
        let Some(upstream_id) = task.upstream_task_id.clone() else {
            return;
        };
        let recipient: CallOrigin = origin.clone();
        loop {
            let left = task.expires_at - a2e::now();
            if left <= 0.0 {
                return;
            }
            let polled = registry
                .task_status(&task.agent_id, &task.server_id, &upstream_id)
                .await;
            match polled {
                Ok(upstream) => {
                    if let Some(every) = upstream.poll_interval {
                        task.poll_interval_ms = poll_interval(Some(every)) as i64;
                    }
                    if upstream.status == TaskStatus::Cancelled.as_str() {
                        task.status = upstream.status;
                        task.status_message = match upstream.status_message.is_empty() {
                            true => "cancelled by the server".to_owned(),
                            false => upstream.status_message,
                        };
                        self.forget(&task.task_id);
                        self.finish(&mut task).await;
                        return;
                    }
                    if upstream.is_final() || upstream.status == "input_required" {
                        // Waits for the end, answering what the server asks meanwhile.
                        let wait = Duration::from_secs_f64(left);
                        let result = registry
                            .task_result(&task.server_id, &upstream_id, wait, recipient.clone())
                            .await;
                        match result {
                            Err(error) if transient(&error) => {
                                if self.hand_over(&task).await {
                                    return;
                                }
                            }
                            result => {
                                let server_id = task.server_id.clone();
                                let called = result.map(|result| (server_id, result));
                                return self.end(task, called).await;
                            }
                        }
                    } else if upstream.status_message != task.status_message {
                        task.status_message = upstream.status_message;
                        self.update(&mut task).await;
                    }
                }
                Err(error) if transient(&error) => {
                    tracing::debug!(task_id = %task.task_id, %error, "cannot poll a task now");
                    if self.hand_over(&task).await {
                        return;
                    }
                }
                Err(error) => return self.end(task, Err(error)).await,
            }
            tokio::time::sleep(Duration::from_millis(task.poll_interval_ms.max(0) as u64)).await;
        }
    }

    /// Hands a task polled here to the replica that holds its server now, when another one
    /// does (this one cannot reach the server: a server's tasks are polled on its connection);
    /// whether it did. That replica polls it from its next sweep.
    async fn hand_over(&self, task: &StoredTask) -> bool {
        let registry = self.tools.registry();
        let Some(holder) = registry.held_by_other(&task.server_id) else {
            return false;
        };
        match self
            .store
            .move_task(&task.task_id, &self.replica, &holder)
            .await
        {
            Ok(true) => {
                tracing::info!(task_id = %task.task_id, %holder, "a task handed to its server's holder");
                self.forget(&task.task_id);
                true
            }
            Ok(false) => false,
            Err(error) => {
                tracing::warn!(task_id = %task.task_id, %error, "cannot hand a task over");
                false
            }
        }
    }

    /// Records that the task's call runs on its server, so stopping it cancels it there.
    fn following(&self, task: &StoredTask) {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(run) = running.get_mut(&task.task_id) {
            run.upstream = task.upstream_task_id.clone().map(|id| Upstream {
                agent_id: task.agent_id.clone(),
                server_id: task.server_id.clone(),
                task_id: id,
            });
        }
    }

    fn forget(&self, task_id: &str) {
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(task_id);
    }

    /// Stores a final status (unless the task finished otherwise meanwhile) and announces it.
    async fn finish(&self, task: &mut StoredTask) -> bool {
        task.updated_at = a2e::now();
        match self.store.finish_task(task).await {
            Ok(true) => {
                self.announce(task);
                true
            }
            Ok(false) => false,
            Err(error) => {
                tracing::error!(task_id = %task.task_id, %error, "cannot store a task's end");
                false
            }
        }
    }

    /// Stores a running task's new status and announces it.
    async fn update(&self, task: &mut StoredTask) {
        task.updated_at = a2e::now();
        match self.store.update_task(task).await {
            Ok(true) => self.announce(task),
            Ok(false) => {}
            Err(error) => tracing::error!(task_id = %task.task_id, %error, "cannot store a task"),
        }
    }

    /// `bridge/task_status` to the task's agent.
    fn announce(&self, task: &StoredTask) {
        let push = ServerPush {
            server_id: task.server_id.clone(),
            method: NotificationMethod::TaskStatus.as_str().to_owned(),
            params: serde_json::to_value(info(task)).unwrap_or_else(|_| json!({})),
            req_id: Some(task.req_id.clone()),
            ..Default::default()
        };
        self.hub.publish(&task.agent_id, ServerPush::TYPE, &push);
    }

    /// The caller's task `task_id`: another agent's is as unknown as a missing one.
    async fn own(&self, caller: &Caller, task_id: &str) -> Result<StoredTask, TaskError> {
        match self.store.task(task_id, a2e::now()).await? {
            Some(task) if task.agent_id == caller.id => Ok(task),
            _ => Err(TaskError::NotFound(task_id.to_owned())),
        }
    }

    /// A page of the caller's tasks, oldest first, from `cursor` (a `next_cursor` given
    /// before; empty: the first page), at most `limit` (default and most: [`PAGE`]); the
    /// cursor of the next page, empty on the last.
    pub async fn list(
        &self,
        caller: &Caller,
        cursor: &str,
        limit: Option<usize>,
    ) -> Result<(Vec<TaskInfo>, String), TaskError> {
        let (default, most) = PAGE;
        let limit = limit.unwrap_or(default);
        if !(1..=most).contains(&limit) {
            return Err(TaskError::Invalid(format!(
                "`limit` is {limit}; it must be 1 to {most}"
            )));
        }
        let after = match cursor {
            "" => None,
            text => Some(read_cursor(text).ok_or_else(|| {
                TaskError::Invalid(format!(
                    "`cursor` \"{text}\" is not a cursor this service gave out"
                ))
            })?),
        };
        let after = after.as_ref().map(|(at, id)| (*at, id.as_str()));
        let mut tasks = self
            .store
            .tasks_page(&caller.id, a2e::now(), after, limit + 1)
            .await?;
        let next = match tasks.len() > limit {
            true => {
                tasks.truncate(limit);
                let last = &tasks[limit - 1];
                cursor_after(last.created_at, &last.task_id)
            }
            false => String::new(),
        };
        Ok((tasks.iter().map(info).collect(), next))
    }

    /// One of the caller's tasks.
    pub async fn get(&self, caller: &Caller, task_id: &str) -> Result<TaskInfo, TaskError> {
        Ok(info(&self.own(caller, task_id).await?))
    }

    /// One of the caller's tasks with what it finished with.
    pub async fn outcome(&self, caller: &Caller, task_id: &str) -> Result<Outcome, TaskError> {
        let task = self.own(caller, task_id).await?;
        let response = task
            .result
            .as_deref()
            .and_then(|json| serde_json::from_str(json).ok());
        let error = task.error_code.as_deref().map(|code| {
            let code = serde_json::from_value(json!(code)).unwrap_or(ErrorCode::Internal);
            (code, task.status_message.clone())
        });
        Ok(Outcome {
            task: info(&task),
            response,
            error,
        })
    }

    /// Cancels one of the caller's running tasks; a finished one is `Finished` (409), and
    /// nothing changes.
    pub async fn cancel(&self, caller: &Caller, task_id: &str) -> Result<TaskInfo, TaskError> {
        let mut task = self.own(caller, task_id).await?;
        task.status = TaskStatus::Cancelled.as_str().to_owned();
        task.status_message = "cancelled by the agent".to_owned();
        if !self.finish(&mut task).await {
            let now = self.own(caller, task_id).await?;
            return Err(TaskError::Finished {
                task_id: task_id.to_owned(),
                status: status_of(&now.status),
            });
        }
        // Here at once; another replica running it stops within SWEEP_EVERY (`stop_ended`).
        self.stop_running(task_id);
        self.polled_lock().remove(task_id);
        Ok(info(&task))
    }

    /// Stops the call of a task this bridge runs or polls, if it still does: a bridge-run call
    /// is dropped (which tells its server), a server's task is cancelled there.
    fn stop_running(&self, task_id: &str) {
        let run = self
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(task_id);
        let Some(run) = run else {
            return;
        };
        run.abort.abort();
        if let Some(upstream) = run.upstream {
            let registry = self.tools.registry().clone();
            tokio::spawn(async move {
                let Upstream {
                    agent_id,
                    server_id,
                    task_id,
                } = upstream;
                if let Err(error) = registry.cancel_task(&agent_id, &server_id, &task_id).await {
                    tracing::warn!(%server_id, %task_id, %error, "cannot cancel a task upstream");
                }
            });
        }
    }

    /// Stops the calls this replica runs for tasks that ended elsewhere (cancelled through
    /// another replica), and stops polling the tasks whose row names another replica now
    /// (taken over, handed on): those are polled there, so they are not cancelled upstream.
    async fn stop_ended(&self) -> Result<(), StoreError> {
        let ids: Vec<String> = {
            let running = self.running.lock().unwrap_or_else(|e| e.into_inner());
            running.keys().cloned().collect()
        };
        if ids.is_empty() {
            return Ok(());
        }
        let still = self.store.running_tasks(&self.replica).await?;
        let still: std::collections::HashSet<&str> =
            still.iter().map(|t| t.task_id.as_str()).collect();
        for id in ids.iter().filter(|id| !still.contains(id.as_str())) {
            let elsewhere = self
                .store
                .task(id, a2e::now())
                .await?
                .filter(|task| {
                    [TaskStatus::Working, TaskStatus::InputRequired]
                        .iter()
                        .any(|status| task.status == status.as_str())
                })
                .is_some_and(|task| task.replica != self.replica);
            match elsewhere {
                true => self.stop_following(id),
                // Ended by this replica meanwhile: its handle is gone already.
                false => self.stop_running(id),
            }
        }
        Ok(())
    }

    /// Stops polling a task its row no longer names this replica for, leaving it running on
    /// its server for the replica that polls it now.
    fn stop_following(&self, task_id: &str) {
        let run = self
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(task_id);
        if let Some(run) = run {
            run.abort.abort();
            tracing::info!(%task_id, "stopped polling a task another replica polls now");
        }
    }

    /// After a start, once the servers are restored: the tasks this replica was polling on
    /// their servers are polled again, and finish normally.
    pub async fn resume(self: &Arc<Self>) -> Result<usize, StoreError> {
        // The servers are restored: from the next sweep on, tasks are taken over and handed
        // here (what this read misses, the sweep polls).
        self.resumed.store(true, Ordering::Release);
        let upstream: Vec<_> = self
            .store
            .running_tasks(&self.replica)
            .await?
            .into_iter()
            .filter(|task| task.upstream_task_id.is_some())
            .collect();
        for task in &upstream {
            tracing::info!(task_id = %task.task_id, server_id = %task.server_id, "polling a task again");
            self.poll_here(task);
        }
        Ok(upstream.len())
    }

    /// Polls a task its server runs from this replica, unless this replica already does.
    fn poll_here(self: &Arc<Self>, task: &StoredTask) {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        if running.contains_key(&task.task_id) {
            return;
        }
        let origin = TaskOrigin::new(self, task);
        let tasks = self.clone();
        let record = task.clone();
        let handle = tokio::spawn(async move { tasks.follow(record, origin).await });
        running.insert(task.task_id.clone(), Running::new(handle.abort_handle()));
        drop(running);
        self.following(task);
    }

    /// Takes over the running tasks of replicas that are gone (killed: their row in `replicas`
    /// lapsed), one replica each: a task its server runs is polled here (and handed to the
    /// server's holder if that is another replica); a call the gone replica ran itself ends
    /// `failed` ([`ORPHANED`], retryable), never made again, as it may have run; one still
    /// queued there ends `failed` ([`ORPHANED_QUEUED`]), its arguments are not kept to make it.
    /// Then polls the tasks handed to this replica.
    async fn take_over(self: &Arc<Self>) -> Result<(), StoreError> {
        for mut task in self
            .store
            .orphaned_tasks(&self.replica, self.limits.lease)
            .await?
        {
            let gone = task.replica.clone();
            if !self
                .store
                .move_task(&task.task_id, &gone, &self.replica)
                .await?
            {
                continue;
            }
            task.replica = self.replica.clone();
            tracing::warn!(task_id = %task.task_id, replica = %gone, "took over a task of a replica that is gone");
            if task.upstream_task_id.is_some() {
                continue;
            }
            task.status_message = match task.status_message == QUEUED {
                true => ORPHANED_QUEUED.to_owned(),
                false => ORPHANED.to_owned(),
            };
            task.status = TaskStatus::Failed.as_str().to_owned();
            task.error_code = Some(ErrorCode::McpServerUnavailable.as_str().to_owned());
            self.finish(&mut task).await;
        }
        // Known before the store is read: a task that ends here meanwhile is not polled again.
        let known: HashSet<String> = {
            let running = self.running.lock().unwrap_or_else(|e| e.into_inner());
            running.keys().cloned().collect()
        };
        let mine = self.store.running_tasks(&self.replica).await?;
        for task in mine {
            if task.upstream_task_id.is_some() && !known.contains(&task.task_id) {
                tracing::info!(task_id = %task.task_id, server_id = %task.server_id, "polling a task handed to this replica");
                self.poll_here(&task);
            }
        }
        Ok(())
    }

    /// After a start, before the first request: every call this replica was running itself
    /// ends `failed` ("interrupted by restart"). The tasks it polled are `resume`d.
    pub async fn restore(&self) -> Result<usize, StoreError> {
        let stale = self.store.running_tasks(&self.replica).await?;
        let stale = stale.into_iter().filter(|t| t.upstream_task_id.is_none());
        let mut ended = 0;
        for mut task in stale {
            task.status = TaskStatus::Failed.as_str().to_owned();
            task.status_message = INTERRUPTED.to_owned();
            task.error_code = Some(ErrorCode::McpServerUnavailable.as_str().to_owned());
            if self.finish(&mut task).await {
                ended += 1;
            }
        }
        if ended > 0 {
            tracing::warn!(ended, "tasks the bridge was running when it stopped failed");
        }
        Ok(ended)
    }

    /// Deletes expired tasks (and stops their calls) until `shutdown`.
    pub fn spawn_sweeper(self: &Arc<Self>, shutdown: CancellationToken) {
        let tasks = self.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(SWEEP_EVERY);
            loop {
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = tick.tick() => {}
                }
                match tasks.store.expire_tasks(a2e::now()).await {
                    Ok(gone) => {
                        for (task_id, _) in gone {
                            tasks.stop_running(&task_id);
                        }
                    }
                    Err(error) => tracing::warn!(%error, "cannot delete expired tasks"),
                }
                if let Err(error) = tasks.stop_ended().await {
                    tracing::warn!(%error, "cannot read which tasks ended");
                }
                if tasks.resumed.load(Ordering::Acquire)
                    && let Err(error) = tasks.take_over().await
                {
                    tracing::warn!(%error, "cannot take over the tasks of replicas that are gone");
                }
            }
        });
    }
}

/// The recipient of a task's call: the agent's channel, with the task `input_required` while
/// the agent is asked something.
struct TaskOrigin {
    channel: AgentChannel,
    tasks: Arc<Tasks>,
    task: Mutex<StoredTask>,
}

impl std::fmt::Debug for TaskOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskOrigin")
            .field("channel", &self.channel)
            .finish()
    }
}

impl TaskOrigin {
    fn new(tasks: &Arc<Tasks>, task: &StoredTask) -> Arc<Self> {
        Arc::new(Self {
            channel: AgentChannel::new(
                tasks.hub.clone(),
                task.agent_id.clone(),
                task.req_id.clone(),
            ),
            tasks: tasks.clone(),
            task: Mutex::new(task.clone()),
        })
    }

    /// The record its status changes start from, once it changed.
    fn replace(&self, task: &StoredTask) {
        *self.task.lock().unwrap_or_else(|e| e.into_inner()) = task.clone();
    }

    fn task_id(&self) -> String {
        let task = self.task.lock().unwrap_or_else(|e| e.into_inner());
        task.task_id.clone()
    }

    async fn set(&self, status: TaskStatus, message: &str) {
        let mut task = self.task.lock().unwrap_or_else(|e| e.into_inner()).clone();
        task.status = status.as_str().to_owned();
        task.status_message = message.to_owned();
        self.tasks.update(&mut task).await;
    }
}

impl Recipient for TaskOrigin {
    fn agent_id(&self) -> &str {
        self.channel.agent_id()
    }

    fn call_id(&self) -> Option<String> {
        self.channel.call_id()
    }

    fn progress(&self, push: ServerPush) -> BoxFuture<'_, ()> {
        self.channel.progress(push)
    }

    fn ask(&self, request: ServerRequest) -> BoxFuture<'_, Result<Answer, String>> {
        Box::pin(async move {
            let asking = format!(
                "waiting for the agent's answer to {}",
                request.kind.a2e_type()
            );
            self.set(TaskStatus::InputRequired, &asking).await;
            let task_id = self.task_id();
            let answer = match self.tasks.ask_polled(&task_id, &request).await {
                Some(answer) => answer,
                None => self.channel.ask(request).await,
            };
            self.set(TaskStatus::Working, "").await;
            answer
        })
    }
}

/// A task this replica runs or polls.
struct Running {
    abort: AbortHandle,
    /// Where its server runs it, once it does.
    upstream: Option<Upstream>,
}

impl Running {
    fn new(abort: AbortHandle) -> Self {
        Self {
            abort,
            upstream: None,
        }
    }
}

/// A task its server runs.
struct Upstream {
    agent_id: String,
    server_id: String,
    task_id: String,
}

/// How often to poll a server's task: what it suggests, within bounds.
fn poll_interval(suggested: Option<u64>) -> u64 {
    let (least, most) = UPSTREAM_POLL_MS;
    suggested
        .unwrap_or(POLL_INTERVAL_MS as u64)
        .clamp(least, most)
}

/// Whether a failed poll may succeed later (the server is down or reconnecting).
fn transient(error: &registry::Error) -> bool {
    matches!(
        error.code(),
        ErrorCode::McpServerUnavailable | ErrorCode::McpTransportError | ErrorCode::Timeout
    )
}

/// A stored task as the API shows it.
pub fn info(task: &StoredTask) -> TaskInfo {
    TaskInfo {
        task_id: task.task_id.clone(),
        status: status_of(&task.status),
        status_message: task.status_message.clone(),
        name: task.name.clone(),
        server_id: task.server_id.clone(),
        call_id: task.req_id.clone(),
        upstream: task.upstream_task_id.is_some(),
        ttl: task.ttl_ms.max(0) as u64,
        poll_interval: task.poll_interval_ms.max(0) as u64,
        created_at: task.created_at,
        updated_at: task.updated_at,
        expires_at: task.expires_at,
    }
}

fn status_of(name: &str) -> TaskStatus {
    TaskStatus::parse(name).unwrap_or(TaskStatus::Failed)
}

/// The tool call response a finished call makes (as `POST /v1/tools/call` would answer).
fn response_of(task: &StoredTask, result: CallToolResult) -> ToolCallResponse {
    let mut resp = ToolCallResponse::answering(&task.req_id);
    resp.name = task.name.clone();
    resp.server_id = task.server_id.clone();
    resp.content = result.content;
    resp.structured_content = result.structured_content;
    resp.is_error = result.is_error.unwrap_or(false);
    resp
}

/// The code and sentence a failed call answers with (an internal error's details only in the
/// log, as for a blocking call).
fn error_of(error: &registry::Error) -> (ErrorCode, String) {
    match error.code() {
        ErrorCode::Internal => (ErrorCode::Internal, a2e::internal_error(error)),
        code => (code, error.to_string()),
    }
}

/// The cursor of the page after a task created at `at`: the time's exact bits, as serde_json
/// reads a float back to within a unit in the last place only, and a time read back larger
/// than the page's last one showed that task again on the next page.
fn cursor_after(at: f64, task_id: &str) -> String {
    hex::encode(serde_json::to_vec(&(at.to_bits(), task_id)).unwrap_or_default())
}

/// What [`cursor_after`] wrote, or `None` for anything else.
fn read_cursor(text: &str) -> Option<(f64, String)> {
    let bytes = hex::decode(text).ok()?;
    let (bits, id) = serde_json::from_slice::<(u64, String)>(&bytes).ok()?;
    Some((f64::from_bits(bits), id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_gives_back_the_exact_time() {
        // Times as `a2e::now()` makes them, over a spread wide enough to meet floats that
        // serde_json reads back a unit off.
        for i in 0..200_000u64 {
            let at = 1_796_000_000.0 + i as f64 * 0.000_123_456_7;
            let (back, id) = read_cursor(&cursor_after(at, "t-1")).unwrap();
            assert_eq!(back.to_bits(), at.to_bits(), "{at}");
            assert_eq!(id, "t-1");
        }
        assert_eq!(read_cursor("zz"), None);
    }
}
