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
//!
//! | module | what it owns |
//! |---|---|
//! | `run` | starting a task and running its call; its end stored within the agent's room |
//! | `follow` | polling a task its server runs, or handing it to the server's holder |
//! | `running` | the calls this replica runs or polls, and stopping them |
//! | `sweep` | the sweeper and take-overs across replicas; restore and resume after a start |
//! | `record` | status changes stored and announced; what the API shows of a task |
//! | `query` | an agent's own tasks listed, read and cancelled |
//! | `origin` | the recipient of a task's call (`input_required` while the agent is asked) |
//! | `inputs` | the input a polled task waits on (the 2026-07-28 tasks extension) |
//! | `traced` | a task in a trace: its creation's stored, its run, resume and queue spans |
//! | `approvals` | calls held for a person's approval, decided once, expired by the sweeper |

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::a2e::{ErrorCode, TaskInfo, TaskStatus, ToolCallResponse};
use crate::hub::Hub;
use crate::store::{Store, StoreError};
use crate::tools::Tools;

mod approvals;
mod follow;
mod inputs;
mod origin;
mod query;
mod record;
mod run;
mod running;
mod sweep;
mod traced;

pub use approvals::HELD;
pub use inputs::InputRequest;
use inputs::InputWait;
pub use record::info;
use running::Running;

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
    /// Not the agent's to do (deciding on a held call it is no approver of).
    #[error("{0}")]
    Forbidden(String),
    /// Too late, or not the first (a held call decided already, or past its time).
    #[error("{0}")]
    Conflict(String),
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
            Self::Forbidden(_) => ErrorCode::Forbidden,
            Self::Conflict(_) => ErrorCode::Conflict,
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
}
