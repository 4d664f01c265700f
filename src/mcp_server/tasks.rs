//! MCP tasks as 2025-11-25 defines them on `/mcp`: the `tasks` capability in the initialize
//! result, task-augmented `tools/call` (`params.task`), `tasks/get`, `tasks/result`,
//! `tasks/list` and `tasks/cancel`. They are the agent's own tasks (`crate::tasks`), the same
//! `GET /v1/tasks` shows.
//!
//! Answered here, in front of rmcp, because rmcp 3.11 speaks only the later tasks extension
//! (SEP-2663): its `ServerCapabilities` has no `tasks` field, its `CallToolRequestParams` drops
//! `task`, its `tasks/get` and `tasks/cancel` have other shapes and need the client to declare
//! the extension, and it has no `tasks/result` nor `tasks/list`. Only requests of a 2025-11-25
//! session (one with `Mcp-Session-Id`) are taken (`dispatch.rs` picks them out); every other
//! request reaches rmcp unchanged. Here: what declares them (rewriting rmcp's answers to
//! `initialize` and `tools/list`); `methods.rs` answers them.

pub(super) mod extension;
mod methods;

use serde_json::{Value, json};

use crate::a2e::McpVersion;
pub(super) use methods::{Rpc, answer, held};

/// The first protocol version with tasks.
pub(super) const TASKS_SINCE: McpVersion = McpVersion::V2025_11_25;

/// A `tools/list` result whose tools say they can run as tasks (`execution.taskSupport`:
/// "optional"): every tool of the catalogue and of a toolset, and on a deferred path only
/// `call_tool` (which runs the tool it names). None for another message.
pub(super) fn with_task_support(message: &str, deferred: bool) -> Option<String> {
    let mut message: Value = serde_json::from_str(message).ok()?;
    let tools = message
        .get_mut("result")?
        .get_mut("tools")?
        .as_array_mut()?;
    for tool in tools {
        let Some(tool) = tool.as_object_mut() else {
            continue;
        };
        let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
        if deferred && name != crate::tools::META_CALL {
            continue;
        }
        tool.insert("execution".to_owned(), json!({ "taskSupport": "optional" }));
    }
    Some(message.to_string())
}

/// An initialize result with `capabilities.tasks`; none for another message, or an older
/// protocol version (it has no tasks).
pub(super) fn with_tasks(message: &str) -> Option<String> {
    let mut message: Value = serde_json::from_str(message).ok()?;
    let result = message.get_mut("result")?;
    let version = result.get("protocolVersion")?.as_str()?;
    if !TASKS_SINCE.reached_by(version) {
        return None;
    }
    result.get_mut("capabilities")?.as_object_mut()?.insert(
        "tasks".to_owned(),
        json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } }),
    );
    Some(message.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_tools_say_they_run_as_tasks() {
        let listing = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
            {"name": "search_tools", "inputSchema": {}}, {"name": "call_tool", "inputSchema": {}}
        ]}})
        .to_string();
        let shown: Value =
            serde_json::from_str(&with_task_support(&listing, false).unwrap()).unwrap();
        for tool in shown["result"]["tools"].as_array().unwrap() {
            assert_eq!(
                tool["execution"],
                json!({"taskSupport": "optional"}),
                "{tool}"
            );
        }
        let deferred: Value =
            serde_json::from_str(&with_task_support(&listing, true).unwrap()).unwrap();
        assert!(deferred["result"]["tools"][0].get("execution").is_none());
        assert_eq!(
            deferred["result"]["tools"][1]["execution"]["taskSupport"],
            "optional"
        );
        assert!(with_task_support(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#, false).is_none());
    }

    #[test]
    fn tasks_are_declared_from_2025_11_25() {
        let answer = |version: &str| {
            json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": version,
                "capabilities": {"tools": {}}, "serverInfo": {"name": "b", "version": "1"}}})
            .to_string()
        };
        let declared: Value =
            serde_json::from_str(&with_tasks(&answer("2025-11-25")).unwrap()).unwrap();
        assert_eq!(
            declared["result"]["capabilities"]["tasks"],
            json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}})
        );
        assert_eq!(declared["result"]["capabilities"]["tools"], json!({}));
        assert!(with_tasks(&answer("2025-06-18")).is_none());
        assert!(with_tasks(r#"{"jsonrpc":"2.0","method":"notifications/x"}"#).is_none());
    }
}
