//! Import of the MCP server lists users already have: Claude Desktop, Claude Code, Cursor and
//! Cline (`mcpServers`), VS Code (`servers`), and the `servers` of the config file. Each key
//! becomes a `server_id`, and each entry's outcome is reported without stopping the others.
//!
//! What a file says is honoured or refused per entry, never dropped or stored half-understood:
//! `disabled` entries are skipped, `timeout` is read in the unit its writer uses, an `envFile` is
//! read for admins, and an editor's `${…}` variables (`${input:…}`, `${workspaceFolder}`), which
//! only the editor can answer, fail their entry. A server already registered under the same id
//! is replaced only when the import says `replace: true`.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::a2e::{ErrorCode, ImportAction, ImportResult, McpServerConfig, McpTransport};
use crate::caller::Caller;
use crate::registry::{self, Registry};

mod env_file;
use env_file::read_env_file;

/// Keys only Cline writes in an `mcpServers` entry: its `timeout` is in seconds.
const CLINE_KEYS: [&str; 4] = ["autoApprove", "alwaysAllow", "disabled", "transportType"];

/// One entry of a file, read: the config to register and the `envFile` still to read.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    pub config: McpServerConfig,
    pub env_file: Option<String>,
}

impl From<McpServerConfig> for Draft {
    fn from(config: McpServerConfig) -> Self {
        Self {
            config,
            env_file: None,
        }
    }
}

/// Why an entry is not registered: `failed` (something to fix) or `skipped` (as the file asks).
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub action: ImportAction,
    pub reason: String,
}

impl Refusal {
    fn failed(reason: impl Into<String>) -> Self {
        Self {
            action: ImportAction::Failed,
            reason: reason.into(),
        }
    }
}

impl From<String> for Refusal {
    fn from(reason: String) -> Self {
        Self::failed(reason)
    }
}

/// One entry of a file by its key.
pub type Entry = (String, Result<Draft, Refusal>);

/// The server configs a file describes, by key.
pub fn entries(document: &Value) -> Vec<Entry> {
    let mut all = Vec::new();
    for key in ["mcpServers", "servers"] {
        if let Some(map) = document.get(key).and_then(Value::as_object) {
            all.extend(map.iter().map(|(id, entry)| (id.clone(), draft_of(entry))));
        }
    }
    all
}

/// A field of an entry; `null` is an absent field, as everywhere in a request.
fn field<'a>(entry: &'a Value, key: &str) -> Option<&'a Value> {
    entry.get(key).filter(|v| !v.is_null())
}

fn strings(value: Option<&Value>) -> Result<BTreeMap<String, String>, String> {
    match value {
        None => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => Ok(map
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| match v {
                Value::String(s) => (k.clone(), s.clone()),
                other => (k.clone(), other.to_string()),
            })
            .collect()),
        Some(_) => Err("must be an object of strings".into()),
    }
}

fn draft_of(entry: &Value) -> Result<Draft, Refusal> {
    if !entry.is_object() {
        return Err(Refusal::failed("an entry must be a JSON object"));
    }
    if field(entry, "disabled").and_then(Value::as_bool) == Some(true) {
        return Err(Refusal {
            action: ImportAction::Skipped,
            reason: "`disabled` in the file: not registered (remove `disabled` to import it)"
                .into(),
        });
    }
    let found = placeholders(entry);
    if !found.is_empty() {
        return Err(Refusal::failed(explain_placeholders(&found)));
    }
    let mut config = config_of(entry)?;
    if let Some(timeout) = timeout_of(entry)? {
        config.timeout = timeout;
    }
    let env_file = match field(entry, "envFile") {
        None => None,
        Some(Value::String(path)) if config.transport == McpTransport::Stdio => Some(path.clone()),
        Some(Value::String(_)) => {
            return Err(Refusal::failed(
                "`envFile` is for a server the bridge starts (`command`), not for a `url`",
            ));
        }
        Some(_) => return Err(Refusal::failed("`envFile` must be a path")),
    };
    Ok(Draft { config, env_file })
}

/// One entry: `command`/`args`/`env`/`cwd` for stdio, `url`/`type`/`headers` for the others.
fn config_of(entry: &Value) -> Result<McpServerConfig, String> {
    let text = |k: &str| field(entry, k).and_then(Value::as_str).map(str::to_owned);
    let mut config = McpServerConfig::default();
    if let Some(command) = text("command") {
        config.transport = McpTransport::Stdio;
        config.cmd = vec![command];
        if let Some(args) = field(entry, "args") {
            let args: Vec<String> = serde_json::from_value(args.clone())
                .map_err(|_| "`args` must be a list of strings".to_owned())?;
            config.cmd.extend(args);
        }
        config.env = strings(field(entry, "env")).map_err(|e| format!("`env` {e}"))?;
        config.cwd = text("cwd").unwrap_or_default();
        return Ok(config);
    }
    let url = text("url").ok_or("an entry needs a `command` or a `url`")?;
    // Cline names the transport `transportType`; the others `type`.
    let kind = text("type").or_else(|| text("transportType"));
    config.transport = match kind.as_deref() {
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
    config.headers = strings(field(entry, "headers")).map_err(|e| format!("`headers` {e}"))?;
    Ok(config)
}

/// `timeout` in seconds. Cline writes seconds (default 60); Claude Code writes milliseconds
/// (and ignores values under 1000). So: seconds in an entry Cline wrote or below 1000,
/// milliseconds (rounded up to whole seconds) otherwise.
fn timeout_of(entry: &Value) -> Result<Option<u64>, String> {
    let Some(value) = field(entry, "timeout") else {
        return Ok(None);
    };
    let number = value
        .as_f64()
        .filter(|n| n.is_finite() && *n > 0.0)
        .ok_or("`timeout` must be a positive number")?;
    let cline = CLINE_KEYS.iter().any(|key| entry.get(key).is_some());
    let seconds = if cline || number < 1000.0 {
        number.ceil()
    } else {
        (number / 1000.0).ceil()
    };
    // A day is the longest the registry takes; it says so itself for anything longer.
    Ok(Some(seconds.min(u64::MAX as f64) as u64))
}

/// The editor variables (`${…}`) in the fields the bridge would use, with the field each is in.
fn placeholders(entry: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for key in ["command", "args", "env", "cwd", "url", "headers", "envFile"] {
        if let Some(value) = entry.get(key) {
            collect_placeholders(key, value, &mut found);
        }
    }
    found
}

fn collect_placeholders(key: &str, value: &Value, found: &mut Vec<(String, String)>) {
    match value {
        Value::String(text) => {
            let mut rest = text.as_str();
            while let Some(start) = rest.find("${") {
                let Some(len) = rest[start..].find('}') else {
                    break;
                };
                let name = rest[start..start + len + 1].to_owned();
                if !found.iter().any(|(_, n)| *n == name) {
                    found.push((key.to_owned(), name));
                }
                rest = &rest[start + len + 1..];
            }
        }
        Value::Array(items) => items
            .iter()
            .for_each(|v| collect_placeholders(key, v, found)),
        Value::Object(map) => map
            .values()
            .for_each(|v| collect_placeholders(key, v, found)),
        _ => {}
    }
}

/// Why an entry with editor variables is not imported, naming each variable.
fn explain_placeholders(found: &[(String, String)]) -> String {
    let reasons: Vec<String> = found
        .iter()
        .map(|(key, name)| {
            let why = if let Some(input) = name.strip_prefix("${input:") {
                format!(
                    "asks the editor's user for the input `{}`, which the bridge cannot do: \
                     write the value itself",
                    input.trim_end_matches('}')
                )
            } else if name.starts_with("${env:") || is_env_name(name) {
                "is a variable of the editor's environment, which the bridge does not expand: \
                 write the value itself"
                    .to_owned()
            } else {
                "is a path or value only the editor knows (its workspace folder, home, …): \
                 write it out"
                    .to_owned()
            };
            format!("`{name}` in `{key}` {why}")
        })
        .collect();
    format!("cannot be imported as it is: {}", reasons.join("; "))
}

/// Whether `${NAME}` names an environment variable (upper case, as Claude Code's expansion and
/// `${env:…}` use), not an editor variable such as `${workspaceFolder}`.
fn is_env_name(placeholder: &str) -> bool {
    let inner = placeholder.trim_start_matches("${").trim_end_matches('}');
    let name = inner.split(":-").next().unwrap_or_default();
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// Registers each server as `agent` would one by one; one already registered under the same id
/// is replaced only when `replace` says so.
pub async fn apply(
    registry: &std::sync::Arc<Registry>,
    agent: &Caller,
    entries: Vec<Entry>,
    replace: bool,
) -> Vec<ImportResult> {
    let mut results = Vec::with_capacity(entries.len());
    for (server_id, draft) in entries {
        let result = match draft {
            Err(refusal) => ImportResult {
                server_id,
                ok: refusal.action == ImportAction::Skipped,
                action: refusal.action,
                error: refusal.reason,
                ..Default::default()
            },
            Ok(draft) => match prepare(agent, server_id.clone(), draft).await {
                Ok(config) => upsert(registry, agent, config, replace).await,
                Err(reason) => ImportResult {
                    server_id,
                    action: ImportAction::Failed,
                    error: reason,
                    ..Default::default()
                },
            },
        };
        results.push(result);
    }
    results
}

/// The config to register: named after its key, its `envFile` read (its `env` wins).
async fn prepare(
    agent: &Caller,
    server_id: String,
    draft: Draft,
) -> Result<McpServerConfig, String> {
    let mut config = draft.config;
    if config.name.is_empty() {
        config.name.clone_from(&server_id);
    }
    config.server_id = server_id;
    if let Some(path) = draft.env_file {
        let mut env = read_env_file(agent, &path).await?;
        env.append(&mut config.env);
        config.env = env;
    }
    Ok(config)
}

async fn upsert(
    registry: &std::sync::Arc<Registry>,
    agent: &Caller,
    config: McpServerConfig,
    replace: bool,
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
    let action = match (existing.is_some(), replace) {
        (true, false) => {
            return ImportResult {
                error: format!(
                    "a server `{server_id}` is already registered with another config: \
                     import with `replace: true` (`mcp-bridge import --replace`) to replace it"
                ),
                server_id,
                action: ImportAction::Failed,
                code: Some(ErrorCode::Conflict),
                ..Default::default()
            };
        }
        (true, true) => {
            if let Err(error) = registry.unregister(agent, &server_id).await {
                return failed(server_id, error);
            }
            ImportAction::Replaced
        }
        (false, _) => ImportAction::Created,
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
        ErrorCode::Internal => crate::a2e::internal_error(error),
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

    fn read(document: Value) -> Vec<Entry> {
        entries(&document)
    }

    fn find<'a>(entries: &'a [Entry], id: &str) -> &'a Result<Draft, Refusal> {
        &entries.iter().find(|(key, _)| key == id).expect(id).1
    }

    #[test]
    fn claude_cursor_and_vscode_entries() {
        let entries = read(json!({
            "mcpServers": {
                "fs": {"command": "npx", "args": ["-y", "server-filesystem", "/tmp"], "env": {"K": "v"}},
                "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer t"}},
                "broken": {"args": ["x"]},
                "nulls": {"command": "srv", "args": null, "env": null, "cwd": null, "type": null}
            },
            "servers": {"legacy": {"type": "sse", "url": "http://127.0.0.1:3001/sse"}}
        }));
        assert_eq!(entries.len(), 5);
        let fs = &find(&entries, "fs").as_ref().unwrap().config;
        assert_eq!(fs.cmd, ["npx", "-y", "server-filesystem", "/tmp"]);
        assert_eq!(fs.env["K"], "v");
        let remote = &find(&entries, "remote").as_ref().unwrap().config;
        assert_eq!(remote.transport, McpTransport::Http);
        assert_eq!(remote.headers["Authorization"], "Bearer t");
        assert!(find(&entries, "broken").is_err());
        assert_eq!(
            find(&entries, "nulls").as_ref().unwrap().config.cmd,
            ["srv"]
        );
        let legacy = &find(&entries, "legacy").as_ref().unwrap().config;
        assert_eq!(legacy.transport, McpTransport::Sse);
    }

    #[test]
    fn editor_variables_fail_their_entry_naming_them() {
        let entries = read(json!({"servers": {
            "key": {"type": "http", "url": "https://x/mcp",
                "headers": {"Authorization": "Bearer ${input:api-key}"}},
            "ws": {"command": "srv", "args": ["${workspaceFolder}/data"]},
            "env": {"command": "srv", "env": {"TOKEN": "${env:TOKEN}"}}
        }}));
        let reason = |id| find(&entries, id).as_ref().unwrap_err().reason.clone();
        assert!(
            reason("key").contains("`${input:api-key}` in `headers`"),
            "{}",
            reason("key")
        );
        assert!(
            reason("key").contains("input `api-key`"),
            "{}",
            reason("key")
        );
        assert!(
            reason("ws").contains("`${workspaceFolder}` in `args`"),
            "{}",
            reason("ws")
        );
        assert!(reason("env").contains("environment"), "{}", reason("env"));
    }

    #[test]
    fn disabled_is_skipped_and_timeout_is_read_in_its_writers_unit() {
        let entries = read(json!({"mcpServers": {
            "off": {"command": "srv", "disabled": true},
            "cline": {"command": "srv", "timeout": 1800, "disabled": false, "autoApprove": []},
            "claude": {"url": "https://x/mcp", "timeout": 45000},
            "small": {"url": "https://x/mcp", "timeout": 90},
            "clinesse": {"url": "https://x/sse", "transportType": "sse"},
            "bad": {"url": "https://x/mcp", "timeout": "1m"}
        }}));
        let off = find(&entries, "off").as_ref().unwrap_err();
        assert_eq!(off.action, ImportAction::Skipped);
        let timeout = |id| find(&entries, id).as_ref().unwrap().config.timeout;
        assert_eq!(timeout("cline"), 1800);
        assert_eq!(timeout("claude"), 45);
        assert_eq!(timeout("small"), 90);
        let sse = &find(&entries, "clinesse").as_ref().unwrap().config;
        assert_eq!(sse.transport, McpTransport::Sse);
        assert!(find(&entries, "bad").is_err());
    }
}
