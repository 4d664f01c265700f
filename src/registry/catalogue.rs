//! The synced tool catalogue: each server's tools as `{server_id}__{tool}` after its allow list
//! (the tools layer pages it and puts the agent-bridge tools after it).

use serde_json::Value;

use super::{Live, ServerEntry, apps, naming};
use crate::a2e::{McpServerConfig, ToolInfo, ToolSource};

/// One exposed tool.
pub struct Entry {
    /// The upstream name.
    pub tool: String,
    /// The catalogue name: `{server_id}__{tool}` or its short alias.
    pub name: String,
    /// The tool as the server described it, its `ui://` URIs qualified with the server.
    pub definition: rmcp::model::Tool,
}

impl Entry {
    /// The tool as the catalogue shows it. Made when asked (a listing copies it anyway) rather
    /// than kept: kept, its copy of every schema cost each server 33 KB for 17 small tools
    /// (heaptrack, 1,000 servers), while the definition shares its schemas with the list.
    pub fn info(&self, server_id: &str) -> ToolInfo {
        info(server_id, self.name.clone(), &self.definition)
    }
}

/// Rebuilds the exposed tools of `live` from its upstream list and the allow list, naming each
/// `{server_id}__{tool}` or its short alias past `max_name` characters, and leaving out the
/// tools held back (a changed definition waiting for approval).
pub fn rebuild(live: &mut Live, config: &McpServerConfig, max_name: usize) {
    let mut skipped = Vec::new();
    let mut entries: Vec<Entry> = Vec::with_capacity(live.lists.tools.len());
    for tool in &live.lists.tools {
        if !naming::tool_allowed(&config.tool_allow_list, &tool.name)
            || live.held_back.contains(tool.name.as_ref())
        {
            continue;
        }
        let Some(name) = naming::qualify(&config.server_id, &tool.name, max_name) else {
            skipped.push(format!(
                "tool \"{}\" (not a valid MCP tool name once namespaced)",
                tool.name
            ));
            continue;
        };
        let mut definition = tool.clone();
        if let Some(meta) = &mut definition.meta {
            apps::qualify_tool_meta(&config.server_id, &mut meta.0);
        }
        entries.push(Entry {
            tool: tool.name.to_string(),
            name,
            definition,
        });
    }
    entries.sort_by(|a, b| a.tool.cmp(&b.tool));
    entries.dedup_by(|a, b| a.tool == b.tool);
    skipped.extend(drop_name_collisions(&config.server_id, &mut entries));
    live.catalogue = std::sync::Arc::new(entries);
    live.skipped = skipped;
}

/// A tool as the catalogue shows it under `name`.
fn info(server_id: &str, name: String, tool: &rmcp::model::Tool) -> ToolInfo {
    ToolInfo {
        name,
        server_id: server_id.to_owned(),
        source: ToolSource::Mcp,
        title: tool
            .title
            .clone()
            .or_else(|| tool.annotations.as_ref().and_then(|a| a.title.clone())),
        description: tool.description.as_deref().unwrap_or_default().to_owned(),
        input_schema: Value::Object((*tool.input_schema).clone()),
        output_schema: tool
            .output_schema
            .as_ref()
            .map(|s| Value::Object((**s).clone())),
        annotations: tool
            .annotations
            .as_ref()
            .and_then(|a| serde_json::to_value(a).ok()),
        meta: tool.meta.as_ref().map(|m| Value::Object(m.0.clone())),
    }
}

/// Leaves out each alias that another tool of the server is already called (a full name that
/// happens to read like an alias, or two aliases whose 40-bit hashes meet): a full name keeps
/// its name, and of two aliases the tool first in name order. Why, for the server's `error`.
fn drop_name_collisions(server_id: &str, entries: &mut Vec<Entry>) -> Vec<String> {
    let full: std::collections::HashSet<String> = entries
        .iter()
        .filter(|e| !is_alias(server_id, e))
        .map(|e| e.name.clone())
        .collect();
    let mut seen = std::collections::HashSet::new();
    let mut dropped = Vec::new();
    entries.retain(|e| {
        if !is_alias(server_id, e) {
            return true;
        }
        let keep = !full.contains(&e.name) && seen.insert(e.name.clone());
        if !keep {
            dropped.push(format!(
                "tool \"{}\" (its short alias \"{}\" is another tool's name)",
                e.tool, e.name
            ));
        }
        keep
    });
    dropped
}

/// Whether the entry's catalogue name is a short alias rather than its full name.
fn is_alias(server_id: &str, entry: &Entry) -> bool {
    naming::split(&entry.name) != Some((server_id, entry.tool.as_str()))
}

/// The (server id, upstream tool) a catalogue name stands for: a full name `{server_id}__{tool}`
/// (also of a tool listed under its alias), or a short alias; failing those, any
/// `{server_id}__{tool}` of a registered server (the call then finds whether it is listed).
pub fn resolve(entries: &[std::sync::Arc<ServerEntry>], name: &str) -> Option<(String, String)> {
    let named = |entry: &ServerEntry| {
        let live = entry.live.read().unwrap_or_else(|e| e.into_inner());
        live.catalogue
            .iter()
            .find(|e| e.name == name)
            .map(|e| (entry.id.clone(), e.tool.clone()))
    };
    if let Some((server_id, tool)) = naming::split(name)
        && let Some(entry) = entries.iter().find(|e| e.id == server_id)
    {
        if contains(entry, tool) {
            return Some((server_id.to_owned(), tool.to_owned()));
        }
        if let Some(found) = named(entry) {
            return Some(found);
        }
    }
    // An alias without the `{server_id}__` prefix (the server id did not leave room for it).
    if let Some(found) = entries.iter().find_map(|entry| named(entry)) {
        return Some(found);
    }
    // A full name of a registered server that has not listed it (yet): down since the start,
    // or another replica's listing not shared yet. Its call answers what the server's state
    // says (503 while it is down), as for any other of its tools.
    let (server_id, tool) = naming::split(name)?;
    entries
        .iter()
        .any(|e| e.id == server_id)
        .then(|| (server_id.to_owned(), tool.to_owned()))
}

/// Whether the server exposes `tool` now.
pub fn contains(entry: &ServerEntry, tool: &str) -> bool {
    let live = entry.live.read().unwrap_or_else(|e| e.into_inner());
    live.catalogue
        .binary_search_by(|e| e.tool.as_str().cmp(tool))
        .is_ok()
}
