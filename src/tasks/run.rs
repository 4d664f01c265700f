//! Starting a task and running its call: the checks on a new task (its `ttl`, the agent's live
//! tasks), the slot it waits for, the call made on its server or by the bridge, and its end
//! stored within the agent's room for results.

use std::sync::Arc;

use rmcp::model::CallToolResult;

use super::follow::poll_interval;
use super::origin::TaskOrigin;
use super::record::{error_of, info, response_of};
use super::running::Running;
use super::traced;
use super::{Asks, EVICTED, POLL_INTERVAL_MS, QUEUE_POLL, QUEUED, TaskError, Tasks};
use crate::a2e::{self, ErrorCode, TaskInfo, TaskStatus, ToolCallRequest};
use crate::caller::Caller;
use crate::registry::{self, TaskStart};
use crate::store::StoredTask;
use crate::tools::{CallRequest, Scope};

impl Tasks {
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
        if let Some(hold) = self
            .tools
            .hold_for(caller, Scope::of(&req.toolset), &req.name)
        {
            return self.hold(caller, req, params.ttl, hold).await;
        }
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
            trace: traced::stored(),
            ..Default::default()
        };
        self.store.insert_task(&task).await?;
        self.announce(&task);
        if asks == Asks::Polled {
            self.polled_lock().insert(task.task_id.clone(), Vec::new());
        }
        self.spawn_run(caller.clone(), task.clone(), req, false);
        Ok(info(&task))
    }

    /// Runs a stored task's call in the background (`approved`: a person approved it).
    pub(super) fn spawn_run(
        self: &Arc<Self>,
        caller: Caller,
        task: StoredTask,
        req: ToolCallRequest,
        approved: bool,
    ) {
        let tasks = self.clone();
        let task_id = task.task_id.clone();
        // Registered before it can finish, so a quick call does not leave its handle behind.
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        let span = traced::span(&task, false);
        let handle = traced::spawn(span, async move {
            let task_id = task.task_id.clone();
            tasks.clone().run(caller, task, req, approved).await;
            tasks.polled_lock().remove(&task_id);
        });
        running.insert(task_id, Running::new(handle.abort_handle()));
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
        // Its wait, when spans are exported: ended (dropped) once there is a slot.
        let mut _waited = None;
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
                _waited = traced::queue(task);
                task.status_message = QUEUED.to_owned();
                self.update(task).await;
            }
            tokio::time::sleep(QUEUE_POLL).await;
        }
    }

    /// The server a catalogue name stands for, when it is one (for the record and events).
    pub(super) fn server_of(&self, name: &str) -> String {
        self.tools
            .resolve(name)
            .map(|(server_id, _)| server_id)
            .unwrap_or_default()
    }

    /// Runs a task's call to its end and stores what it ended with: as a task of its server
    /// when the server runs tasks (then polled), else as a call the bridge makes.
    async fn run(
        self: Arc<Self>,
        caller: Caller,
        mut task: StoredTask,
        req: ToolCallRequest,
        approved: bool,
    ) {
        // Held until the call ends (polled on its server included).
        let _slot = self.slot(&mut task).await;
        let origin = TaskOrigin::new(&self, &task);
        let call = CallRequest {
            caller: &caller,
            scope: Scope::of(&req.toolset),
            name: &req.name,
            arguments: req.arguments,
            timeout: req.timeout,
            origin: origin.clone(),
            approved,
        };
        // An approved call is made as the plain call it was held as, by the bridge: a server
        // that declares tasks may still refuse a task of a tool that does not run as one
        // (server-everything's do), and the call must run once, now.
        let started = match approved {
            true => Ok(TaskStart::Bridge),
            false => self.tools.start_task(&call, task.ttl_ms as u64).await,
        };
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
            Ok(TaskStart::Bridge) => self.tools.call(call).await,
            Err(error) => Err(error),
        };
        self.end(task, called).await;
    }

    /// Stores what a task's call ended with, and forgets it as running.
    pub(super) async fn end(
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
                traced::failed(code.as_str(), &message);
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
}
