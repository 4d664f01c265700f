//! The four agent-bridge tools (`agent_list`, `agent_info`, `agent_send`, `agent_query`), as the
//! seed specifies them: an unknown agent is a tool error (`isError`), not a protocol error.

use serde_json::{Map, Value, json};

use super::{A2a, A2aError, Origin};

pub const NAMES: [&str; 4] = ["agent_list", "agent_info", "agent_send", "agent_query"];
const DEFAULT_TIMEOUT: u64 = 60;
const MAX_TIMEOUT: u64 = 300;
/// What `agent_query` can do with one of the caller's tasks without naming a method.
const ACTIONS: [&str; 3] = ["get", "cancel", "subscribe"];

/// The tools' names, descriptions and input schemas.
pub fn definitions() -> Vec<(&'static str, &'static str, Value)> {
    let timeout = json!({"type": "integer", "minimum": 1, "maximum": MAX_TIMEOUT, "default": DEFAULT_TIMEOUT,
        "description": "How long to wait for the agent, in seconds"});
    vec![
        (
            "agent_list",
            "List the registered A2A agents, optionally only those with one of the given skill tags.",
            json!({"type": "object", "properties": {"skill_tags": {"type": "array", "items": {"type": "string"}}}}),
        ),
        (
            "agent_info",
            "Get an A2A agent's card: name, description, version, URL and skills.",
            json!({"type": "object", "properties": {"agent_id": {"type": "string"}}, "required": ["agent_id"]}),
        ),
        (
            "agent_send",
            "Send a message to an A2A agent and (by default) wait for its reply. When the agent streams, its status and artifact updates arrive meanwhile as `bridge/a2a_update` events on the caller's event stream.",
            json!({"type": "object", "properties": {
            "agent_id": {"type": "string"},
            "message": {"type": "string"},
            "blocking": {"type": "boolean", "default": true, "description": "false: return the task id at once"},
            "timeout_seconds": timeout,
            "context_id": {"type": "string", "description": "Continue this conversation"}
         }, "required": ["agent_id", "message"]}),
        ),
        (
            "agent_query",
            "Forward a JSON-RPC method (e.g. GetTask) to an A2A agent, or act on one of your tasks there: `action` get (GetTask), cancel (CancelTask) or subscribe (SubscribeToTask: follow it again after a dropped stream, its updates as `bridge/a2a_update` events until it is over).",
            json!({"type": "object", "properties": {
            "agent_id": {"type": "string"},
            "method": {"type": "string", "description": "A JSON-RPC method (A2A 1.0 or 0.3 name); not with `action`"},
            "params": {"type": "object"},
            "action": {"type": "string", "enum": ACTIONS, "description": "Instead of `method`: get, cancel or subscribe to the task `task_id`"},
            "task_id": {"type": "string", "description": "The task an `action` is about"},
            "timeout_seconds": timeout
         }, "required": ["agent_id"]}),
        ),
    ]
}

/// A tool's outcome: its text and whether it is an error.
pub struct Outcome {
    pub text: String,
    pub is_error: bool,
}

impl Outcome {
    fn ok(value: &Value) -> Self {
        Self {
            text: value.to_string(),
            is_error: false,
        }
    }
    fn error(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: true,
        }
    }
}

fn text<'a>(arguments: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    arguments
        .get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

fn timeout(arguments: &Map<String, Value>) -> Result<u64, Outcome> {
    match arguments.get("timeout_seconds") {
        None | Some(Value::Null) => Ok(DEFAULT_TIMEOUT),
        Some(v) => match v.as_u64() {
            Some(t) if (1..=MAX_TIMEOUT).contains(&t) => Ok(t),
            _ => Err(Outcome::error(format!(
                "timeout_seconds must be a whole number from 1 to {MAX_TIMEOUT}"
            ))),
        },
    }
}

/// Runs one of the tools for `origin` (the JWT `sub`, whose tasks and contexts are its own,
/// and the id of its call).
pub async fn call(
    a2a: &A2a,
    origin: Origin<'_>,
    name: &str,
    arguments: Map<String, Value>,
) -> Outcome {
    match run(a2a, origin, name, &arguments).await {
        Ok(outcome) | Err(outcome) => outcome,
    }
}

async fn run(
    a2a: &A2a,
    origin: Origin<'_>,
    name: &str,
    arguments: &Map<String, Value>,
) -> Result<Outcome, Outcome> {
    if name == "agent_list" {
        let tags: Vec<String> = arguments
            .get("skill_tags")
            .and_then(|v| serde_json::from_value(v.clone()).ok())
            .unwrap_or_default();
        let summaries: Vec<Value> = a2a.list(&tags).iter().map(|a| a.summary()).collect();
        return Ok(Outcome::ok(&Value::Array(summaries)));
    }
    let agent_id =
        text(arguments, "agent_id").ok_or_else(|| Outcome::error("agent_id is required"))?;
    let agent = a2a
        .get(agent_id)
        .map_err(|_| Outcome::error(format!("Agent '{agent_id}' not found")))?;
    let reply = match name {
        "agent_info" => return Ok(Outcome::ok(&agent.info_json())),
        "agent_send" => {
            let message =
                text(arguments, "message").ok_or_else(|| Outcome::error("message is required"))?;
            let blocking = arguments
                .get("blocking")
                .and_then(Value::as_bool)
                .unwrap_or(true);
            a2a.send(
                origin,
                &agent,
                message,
                blocking,
                text(arguments, "context_id"),
                timeout(arguments)?,
            )
            .await
        }
        "agent_query" => query(a2a, origin, &agent, arguments).await?,
        other => return Err(Outcome::error(format!("Unknown tool: {other}"))),
    };
    match reply {
        Ok(result) => Ok(Outcome::ok(&result)),
        Err(A2aError::Rpc(error)) => Err(Outcome::error(format!(
            "the agent answered an error: {error}"
        ))),
        Err(error) => Err(Outcome::error(error.to_string())),
    }
}

/// `agent_query`: a method forwarded, or an `action` on one of the caller's tasks.
async fn query(
    a2a: &A2a,
    origin: Origin<'_>,
    agent: &super::A2aAgent,
    arguments: &Map<String, Value>,
) -> Result<Result<Value, A2aError>, Outcome> {
    let timeout = timeout(arguments)?;
    let Some(action) = arguments.get("action").filter(|v| !v.is_null()) else {
        let method = text(arguments, "method")
            .ok_or_else(|| Outcome::error("method (or action) is required"))?;
        let params = arguments
            .get("params")
            .cloned()
            .unwrap_or_else(|| json!({}));
        return Ok(a2a.query(origin, agent, method, params, timeout).await);
    };
    let action = action
        .as_str()
        .filter(|a| ACTIONS.contains(a))
        .ok_or_else(|| Outcome::error(format!("action must be one of {}", ACTIONS.join(", "))))?;
    if arguments.get("method").is_some_and(|m| !m.is_null()) {
        return Err(Outcome::error("give either method or action, not both"));
    }
    let task_id = text(arguments, "task_id")
        .ok_or_else(|| Outcome::error(format!("task_id is required with action {action}")))?;
    Ok(match action {
        "get" => a2a.get_task(origin.agent_id, agent, task_id, timeout).await,
        "cancel" => {
            a2a.cancel_task(origin.agent_id, agent, task_id, timeout)
                .await
        }
        _ => a2a.subscribe(origin, agent, task_id, timeout).await,
    })
}

/// The tools as catalogue entries (`source: "a2a"`).
pub fn catalogue() -> Vec<crate::a2e::ToolInfo> {
    definitions()
        .into_iter()
        .map(|(name, description, schema)| crate::a2e::ToolInfo {
            name: name.to_owned(),
            source: crate::a2e::ToolSource::A2a,
            description: description.to_owned(),
            input_schema: schema,
            ..Default::default()
        })
        .collect()
}

/// The tools as MCP tools.
pub fn mcp_tools() -> Vec<rmcp::model::Tool> {
    definitions()
        .into_iter()
        .map(|(name, description, schema)| {
            let schema = match schema {
                Value::Object(map) => map,
                _ => Map::new(),
            };
            rmcp::model::Tool::new(name, description, std::sync::Arc::new(schema))
        })
        .collect()
}

/// Whether `name` is one of the tools.
pub fn is_bridge_tool(name: &str) -> bool {
    NAMES.contains(&name)
}
