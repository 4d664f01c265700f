//! Tool calls an upstream runs as MCP tasks: started as a task when the server runs tasks, then
//! polled, their results fetched and cancelled on the connection the agent's calls use.

use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use serde_json::{Map, Value};

use super::{Error, Registry, ServerEntry, call_bound, catalogue};
use crate::a2e::TaskMethod;
use crate::upstream::tasks::{METHOD_NOT_FOUND, Started, UpstreamTask};
use crate::upstream::{CallError, CallOrigin, Connection};

/// How a call asked for as a task was started.
#[derive(Debug)]
pub enum TaskStart {
    /// The server runs it as a task, to be polled.
    Upstream {
        server_id: String,
        tool: String,
        task: UpstreamTask,
    },
    /// The server answered at once (a tool it does not run as a task).
    Done {
        server_id: String,
        result: CallToolResult,
    },
    /// Not started: the server runs no tasks or not this tool's, or is held by another
    /// replica. The bridge runs the call itself.
    Bridge,
}

impl Registry {
    /// Calls the catalogue tool `name` as a task the server keeps `ttl` ms, when its server
    /// runs tasks and offers this tool's as one.
    pub async fn start_task(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
        ttl: u64,
        origin: &CallOrigin,
    ) -> Result<TaskStart, Error> {
        let (entry, tool) = self.route_tool(name)?;
        // Forwarded calls are run by the bridge: the holder may change while a task runs.
        if entry.held_elsewhere().is_some() {
            return Ok(TaskStart::Bridge);
        }
        let agent = origin.agent_id();
        let conn = entry.connection_for(agent).await?;
        if !catalogue::contains(&entry, &tool) {
            return Err(Error::ToolNotFound(name.to_owned()));
        }
        let bound = call_bound(&entry.config(), None);
        // A tool its server does not offer as a task (2025-11-25 `execution.taskSupport`) is
        // never task-augmented: a server may run such a call and fail it only after.
        if !conn.runs_as_task(&tool, bound).await {
            return Ok(TaskStart::Bridge);
        }
        let params = CallToolRequestParams::new(tool.clone()).with_arguments(arguments.clone());
        let started = conn.call_tool_as_task(params, ttl, bound).await;
        let server_id = entry.id.clone();
        match started {
            Ok(Started::Task(task)) => Ok(TaskStart::Upstream {
                server_id,
                tool,
                task,
            }),
            Ok(Started::Done(result)) => {
                entry.authorized_call(agent);
                Ok(TaskStart::Done { server_id, result })
            }
            Ok(Started::Plain) => Ok(TaskStart::Bridge),
            // The tool runs only in the call: nothing ran yet.
            Err(CallError::Rejected {
                code: METHOD_NOT_FOUND,
                ..
            }) => Ok(TaskStart::Bridge),
            Err(error) => Err(fail(&entry, agent, name, error).await),
        }
    }

    /// The upstream task's status now.
    pub async fn task_status(
        &self,
        agent: &str,
        server_id: &str,
        task_id: &str,
    ) -> Result<UpstreamTask, Error> {
        let (entry, conn) = self.task_connection(agent, server_id).await?;
        let bound = call_bound(&entry.config(), None);
        match conn.task_status(task_id, bound).await {
            Ok(task) => Ok(task),
            Err(error) => Err(fail(&entry, agent, TaskMethod::Get.as_str(), error).await),
        }
    }

    /// The upstream task's result, once it has ended (waits up to `wait`); what the server asks
    /// meanwhile goes to `origin`.
    pub async fn task_result(
        &self,
        server_id: &str,
        task_id: &str,
        wait: Duration,
        origin: CallOrigin,
    ) -> Result<CallToolResult, Error> {
        let agent = origin.agent_id().to_owned();
        let (entry, conn) = self.task_connection(&agent, server_id).await?;
        match conn.task_result(task_id, wait, origin).await {
            Ok(result) => {
                entry.authorized_call(&agent);
                Ok(result)
            }
            Err(error) => Err(fail(&entry, &agent, TaskMethod::Result.as_str(), error).await),
        }
    }

    /// Asks the server to stop the upstream task.
    pub async fn cancel_task(
        &self,
        agent: &str,
        server_id: &str,
        task_id: &str,
    ) -> Result<(), Error> {
        let (entry, conn) = self.task_connection(agent, server_id).await?;
        let bound = call_bound(&entry.config(), None);
        match conn.cancel_task(task_id, bound).await {
            Ok(()) => Ok(()),
            Err(error) => Err(fail(&entry, agent, TaskMethod::Cancel.as_str(), error).await),
        }
    }

    /// The other replica holding `server_id`, when one does (its tasks are polled there).
    pub fn held_by_other(&self, server_id: &str) -> Option<String> {
        self.get(server_id).ok()?.held_elsewhere()
    }

    async fn task_connection(
        &self,
        agent: &str,
        server_id: &str,
    ) -> Result<(std::sync::Arc<ServerEntry>, std::sync::Arc<Connection>), Error> {
        let entry = self.get(server_id)?;
        let conn = entry.connection_for(agent).await?;
        Ok((entry, conn))
    }
}

/// The registry error of a failed task request.
async fn fail(entry: &ServerEntry, agent: &str, what: &str, error: CallError) -> Error {
    match error {
        CallError::AuthRequired(challenge) => entry.reauthorize(agent, &challenge).await,
        error => Error::Upstream {
            what: format!("{what} on \"{}\"", entry.id),
            error,
        },
    }
}
