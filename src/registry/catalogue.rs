//! The synced tool catalogue: each server's tools as `{server_id}__{tool}` after its allow list,
//! and pages of the whole catalogue walked in (server id, tool) order.

use serde_json::Value;

use super::{Live, ServerEntry, naming};
use crate::a2e::{McpServerConfig, ToolInfo, ToolSource};

/// Most tools one page holds.
pub const PAGE_SIZE: usize = 500;

/// One exposed tool.
pub struct Entry {
    /// The upstream name.
    pub tool: String,
    pub info: ToolInfo,
    /// The tool as the server described it.
    pub definition: rmcp::model::Tool,
}

/// A page of the catalogue.
#[derive(Debug, Default)]
pub struct Page {
    pub tools: Vec<ToolInfo>,
    /// Opaque; empty on the last page.
    pub next_cursor: String,
}

/// Rebuilds the exposed tools of `live` from its upstream list and the allow list.
pub fn rebuild(live: &mut Live, config: &McpServerConfig) {
    let mut skipped = Vec::new();
    let mut entries: Vec<Entry> = Vec::with_capacity(live.lists.tools.len());
    for tool in &live.lists.tools {
        if !naming::tool_allowed(&config.tool_allow_list, &tool.name) {
            continue;
        }
        let Some(name) = naming::qualify(&config.server_id, &tool.name) else {
            skipped.push(format!(
                "tool \"{}\" (not a valid MCP tool name once namespaced)",
                tool.name
            ));
            continue;
        };
        entries.push(Entry {
            definition: tool.clone(),
            tool: tool.name.to_string(),
            info: ToolInfo {
                name,
                server_id: config.server_id.clone(),
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
            },
        });
    }
    entries.sort_by(|a, b| a.tool.cmp(&b.tool));
    entries.dedup_by(|a, b| a.tool == b.tool);
    live.catalogue = std::sync::Arc::new(entries);
    live.skipped = skipped;
}

/// Every exposed tool as its server described it: (server id, tool), in catalogue order.
pub fn definitions(entries: &[std::sync::Arc<ServerEntry>]) -> Vec<(String, rmcp::model::Tool)> {
    let mut all = Vec::new();
    for entry in entries {
        let catalogue = entry
            .live
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .catalogue
            .clone();
        all.extend(
            catalogue
                .iter()
                .map(|e| (entry.id.clone(), e.definition.clone())),
        );
    }
    all
}

/// Whether the server exposes `tool` now.
pub fn contains(entry: &ServerEntry, tool: &str) -> bool {
    let live = entry.live.read().unwrap_or_else(|e| e.into_inner());
    live.catalogue
        .binary_search_by(|e| e.tool.as_str().cmp(tool))
        .is_ok()
}

/// The page after `cursor` of the tools of `entries` (sorted by server id), only `server_id`'s
/// when it is not empty. A cursor names the last tool of the previous page, so a server that
/// joins or leaves between pages moves nothing else.
pub fn page(
    entries: &[std::sync::Arc<ServerEntry>],
    server_id: &str,
    cursor: &str,
) -> Result<Page, String> {
    let after = decode_cursor(cursor)?;
    let mut page = Page::default();
    for entry in entries {
        if !server_id.is_empty() && entry.id != server_id {
            continue;
        }
        if let Some((after_id, _)) = &after
            && entry.id.as_str() < after_id.as_str()
        {
            continue;
        }
        let catalogue = entry
            .live
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .catalogue
            .clone();
        let start = match &after {
            Some((after_id, after_tool)) if *after_id == entry.id => {
                catalogue.partition_point(|e| e.tool.as_str() <= after_tool.as_str())
            }
            _ => 0,
        };
        for item in &catalogue[start..] {
            if page.tools.len() == PAGE_SIZE {
                page.next_cursor = encode_cursor(&page.tools[PAGE_SIZE - 1].name);
                return Ok(page);
            }
            page.tools.push(item.info.clone());
        }
    }
    Ok(page)
}

fn encode_cursor(last_name: &str) -> String {
    hex::encode(last_name)
}

fn decode_cursor(cursor: &str) -> Result<Option<(String, String)>, String> {
    if cursor.is_empty() {
        return Ok(None);
    }
    let invalid = || format!("`cursor` \"{cursor}\" is not a cursor this service gave out");
    let bytes = hex::decode(cursor).map_err(|_| invalid())?;
    let name = String::from_utf8(bytes).map_err(|_| invalid())?;
    let (id, tool) = naming::split(&name).ok_or_else(invalid)?;
    Ok(Some((id.to_owned(), tool.to_owned())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_refuse_garbage() {
        let cursor = encode_cursor("fs__read_file");
        assert_eq!(
            decode_cursor(&cursor).unwrap(),
            Some(("fs".into(), "read_file".into()))
        );
        assert_eq!(decode_cursor("").unwrap(), None);
        assert!(decode_cursor("zz").is_err());
        assert!(decode_cursor(&hex::encode("nosplit")).is_err());
    }
}
