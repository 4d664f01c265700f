//! The meta-tools of a deferred scope (`search_tools`, `describe_tool`, `call_tool`): a client
//! loads only the tools it looks for, then calls them through `call_tool`.

use rmcp::model::{CallToolResult, ContentBlock, Tool};
use serde_json::{Map, Value, json};

use super::{CallRequest, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT, Scope, ToolFilter, Tools};
use crate::a2e::{ToolInfo, ToolSource};
use crate::access::toolsets::Item;
use crate::registry;

pub const SEARCH: &str = "search_tools";
pub const DESCRIBE: &str = "describe_tool";
pub const CALL: &str = "call_tool";

/// The meta-tools: name, description, input schema.
fn definitions() -> [(&'static str, &'static str, Value); 3] {
    [
        (
            SEARCH,
            "Find tools for a task: answers the best matches of `query` (what you want to do, \
             in plain words) with their names and descriptions. Then `describe_tool` one to see \
             its arguments, and `call_tool` it.",
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What the tool should do."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_LIMIT,
                              "description": format!("Most tools to answer (default {DEFAULT_SEARCH_LIMIT}).")}
                },
                "required": ["query"]
            }),
        ),
        (
            DESCRIBE,
            "The full definition of a tool `search_tools` found: its description and the JSON \
             Schema of its arguments (and of its result, when it has one).",
            json!({
                "type": "object",
                "properties": {"name": {"type": "string", "description": "The tool's name."}},
                "required": ["name"]
            }),
        ),
        (
            CALL,
            "Call a tool `search_tools` found, by its name, with its arguments.",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The tool's name."},
                    "arguments": {"type": "object", "description": "The tool's arguments, as its schema says."}
                },
                "required": ["name"]
            }),
        ),
    ]
}

/// The meta-tools as a scope lists them.
pub fn items() -> Vec<Item> {
    definitions()
        .into_iter()
        .map(|(name, description, schema)| {
            let info = ToolInfo {
                name: name.to_owned(),
                source: ToolSource::Mcp,
                description: description.to_owned(),
                input_schema: schema.clone(),
                ..Default::default()
            };
            let schema = match schema {
                Value::Object(map) => map,
                _ => Map::new(),
            };
            Item {
                owner: None,
                full: name.to_owned(),
                info,
                definition: Tool::new(name, description, std::sync::Arc::new(schema)),
            }
        })
        .collect()
}

/// A meta-tool's call.
pub async fn call(
    tools: &Tools,
    mut req: CallRequest<'_>,
) -> Result<(String, CallToolResult), registry::Error> {
    let (caller, arguments) = (req.caller, &mut req.arguments);
    let text = |arguments: &Map<String, Value>, field: &str| -> Result<String, registry::Error> {
        match arguments.get(field) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
            _ => Err(registry::Error::Invalid(format!(
                "`{field}` must be a non-empty string"
            ))),
        }
    };
    // The deferred catalogue is the catalogue itself; a toolset is its own members.
    let inner = match req.scope {
        Scope::Deferred => Scope::Catalogue,
        other => other,
    };
    match req.name {
        SEARCH => {
            let query = text(arguments, "query")?;
            let limit = match arguments.get("limit") {
                None | Some(Value::Null) => DEFAULT_SEARCH_LIMIT,
                Some(value) => value
                    .as_u64()
                    .filter(|n| (1..=MAX_SEARCH_LIMIT as u64).contains(n))
                    .ok_or_else(|| {
                        registry::Error::Invalid(format!(
                            "`limit` must be a whole number from 1 to {MAX_SEARCH_LIMIT}"
                        ))
                    })? as usize,
            };
            let found = tools
                .search(caller, inner, &query, limit, ToolFilter::MODEL)
                .await?;
            let listed: Vec<Value> = found
                .iter()
                .map(|t| {
                    let mut entry = json!({"name": t.name, "description": t.description});
                    if let Some(title) = &t.title {
                        entry["title"] = json!(title);
                    }
                    entry
                })
                .collect();
            Ok((String::new(), structured(json!({ "tools": listed }))))
        }
        DESCRIBE => {
            let wanted = text(arguments, "name")?;
            let members = tools.members(inner)?;
            let view = tools.access.view(caller);
            // An app-only tool is not for the model these meta-tools serve.
            let mut item = members
                .find(&view, &wanted)
                .filter(|item| !super::app_only(&item.info))
                .ok_or_else(|| registry::Error::ToolNotFound(wanted.clone()))?
                .clone();
            tools.fit_item(&view, &mut item);
            let definition = serde_json::to_value(&item.definition)
                .map_err(|e| registry::Error::Internal(e.to_string()))?;
            Ok((String::new(), structured(definition)))
        }
        CALL => {
            let wanted = text(arguments, "name")?;
            let inner_arguments = match arguments.remove("arguments") {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(map)) => map,
                Some(_) => {
                    return Err(registry::Error::Invalid(
                        "`arguments` must be an object".into(),
                    ));
                }
            };
            tools.check_app_call(inner, &wanted, super::Via::Model)?;
            // A deferred toolset's members are called by the names it shows.
            let inner_req = CallRequest {
                scope: inner,
                name: &wanted,
                arguments: inner_arguments,
                ..req
            };
            tools.call_member(inner_req).await
        }
        other => Err(registry::Error::ToolNotFound(other.to_owned())),
    }
}

/// A result carrying `value` both as structured content and as its JSON text.
fn structured(value: Value) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(value.to_string())]);
    result.structured_content = Some(value);
    result
}
