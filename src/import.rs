//! Import of the MCP server lists users already have: Claude Desktop and Cursor (`mcpServers`),
//! VS Code (`servers`), and the `servers` of the config file. Each key becomes a `server_id`;
//! a server already registered under it is replaced (upsert), and each entry's outcome is reported
//! without stopping the others.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::a2e::{ImportAction, ImportResult, McpServerConfig, McpTransport};
use crate::caller::Caller;
use crate::registry::{self, Registry};

/// The server configs a file describes, by key; an entry that cannot be read is an error.
pub fn entries(document: &Value) -> Vec<(String, Result<McpServerConfig, String>)> {
    let mut all = Vec::new();
    for key in ["mcpServers", "servers"] {
        if let Some(map) = document.get(key).and_then(Value::as_object) {
            all.extend(
                map.iter()
                    .map(|(id, entry)| (id.clone(), config_of(id, entry))),
            );
        }
    }
    all
}

fn strings(value: Option<&Value>) -> Result<BTreeMap<String, String>, String> {
    match value {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                other => Ok((k.clone(), other.to_string())),
            })
            .collect(),
        Some(_) => Err("must be an object of strings".into()),
    }
}

/// One entry: `command`/`args`/`env`/`cwd` for stdio, `url`/`type`/`headers` for the others.
fn config_of(id: &str, entry: &Value) -> Result<McpServerConfig, String> {
    let text = |k: &str| entry.get(k).and_then(Value::as_str).map(str::to_owned);
    let mut config = McpServerConfig {
        server_id: id.to_owned(),
        name: id.to_owned(),
        ..Default::default()
    };
    if let Some(command) = text("command") {
        config.transport = McpTransport::Stdio;
        config.cmd = vec![command];
        if let Some(args) = entry.get("args") {
            let args: Vec<String> = serde_json::from_value(args.clone())
                .map_err(|_| "`args` must be a list of strings".to_owned())?;
            config.cmd.extend(args);
        }
        config.env = strings(entry.get("env")).map_err(|e| format!("`env` {e}"))?;
        config.cwd = text("cwd").unwrap_or_default();
        return Ok(config);
    }
    let url = text("url").ok_or("an entry needs a `command` or a `url`")?;
    config.transport = match text("type").as_deref() {
        None | Some("http" | "streamable-http" | "streamableHttp" | "streamable_http") => {
            McpTransport::Http
        }
        Some("sse") => McpTransport::Sse,
        Some("ws" | "websocket") => McpTransport::Ws,
        Some(other) => return Err(format!("`type` \"{other}\" is not http, sse or ws")),
    };
    if url.starts_with("ws://") || url.starts_with("wss://") {
        config.transport = McpTransport::Ws;
    }
    config.url = url;
    config.headers = strings(entry.get("headers")).map_err(|e| format!("`headers` {e}"))?;
    Ok(config)
}

/// Registers (or replaces) each server as `agent` would one by one.
pub async fn apply(
    registry: &std::sync::Arc<Registry>,
    agent: &Caller,
    entries: Vec<(String, Result<McpServerConfig, String>)>,
) -> Vec<ImportResult> {
    let mut results = Vec::with_capacity(entries.len());
    for (server_id, config) in entries {
        let result = match config {
            Err(error) => ImportResult {
                server_id,
                action: ImportAction::Failed,
                error,
                ..Default::default()
            },
            Ok(config) => upsert(registry, agent, config).await,
        };
        results.push(result);
    }
    results
}

async fn upsert(
    registry: &std::sync::Arc<Registry>,
    agent: &Caller,
    config: McpServerConfig,
) -> ImportResult {
    let server_id = config.server_id.clone();
    let existing = registry.get(&server_id).ok();
    // Rights first: comparing a posted `env` or `headers` value with the stored one for anyone
    // else would tell them whether a guessed secret is right.
    if let Some(entry) = &existing
        && let Err(error) = registry.may_replace(agent, entry, &config)
    {
        return failed(server_id, error);
    }
    let existing = existing.map(|entry| entry.config());
    if existing.as_deref() == Some(&config) {
        return ImportResult {
            server_id,
            action: ImportAction::Unchanged,
            ok: true,
            ..Default::default()
        };
    }
    let action = if existing.is_some() {
        if let Err(error) = registry.unregister(agent, &server_id).await {
            return failed(server_id, error);
        }
        ImportAction::Replaced
    } else {
        ImportAction::Created
    };
    match registry.register(agent, config).await {
        Ok(info) => ImportResult {
            server_id,
            action,
            ok: true,
            server: Some(info),
            ..Default::default()
        },
        Err(error) => failed(server_id, error),
    }
}

fn failed(server_id: String, error: registry::Error) -> ImportResult {
    let code = error.code();
    let error = match code {
        // The details are for the log only.
        crate::a2e::ErrorCode::Internal => crate::a2e::internal_error(error),
        _ => error.to_string(),
    };
    ImportResult {
        server_id,
        action: ImportAction::Failed,
        error,
        code: Some(code),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn claude_cursor_and_vscode_entries() {
        let document = json!({
            "mcpServers": {
                "fs": {"command": "npx", "args": ["-y", "server-filesystem", "/tmp"], "env": {"K": "v"}},
                "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer t"}},
                "broken": {"args": ["x"]}
            },
            "servers": {"legacy": {"type": "sse", "url": "http://127.0.0.1:3001/sse"}}
        });
        let entries = entries(&document);
        assert_eq!(entries.len(), 4);
        let find = |id: &str| &entries.iter().find(|(key, _)| key == id).unwrap().1;
        let fs = find("fs").as_ref().unwrap();
        assert_eq!(fs.cmd, ["npx", "-y", "server-filesystem", "/tmp"]);
        assert_eq!(fs.env["K"], "v");
        let remote = entries
            .iter()
            .find(|(id, _)| id == "remote")
            .unwrap()
            .1
            .as_ref()
            .unwrap();
        assert_eq!(remote.transport, McpTransport::Http);
        assert_eq!(remote.headers["Authorization"], "Bearer t");
        assert!(
            entries
                .iter()
                .find(|(id, _)| id == "broken")
                .unwrap()
                .1
                .is_err()
        );
        assert_eq!(entries[3].1.as_ref().unwrap().transport, McpTransport::Sse);
    }
}
