//! MCP Apps (extension `io.modelcontextprotocol/ui`) as tools carry it in `_meta`: the `ui://`
//! resource a tool is shown with (`ui.resourceUri`, and the deprecated `ui/resourceUri`),
//! qualified per server, and who a tool is for (`ui.visibility`). Pure functions.

use serde_json::{Map, Value};

use super::naming;

/// The deprecated flat key of a tool's user interface.
pub const LEGACY_RESOURCE_URI: &str = "ui/resourceUri";

/// Who may use a tool, from its `_meta.ui.visibility` (both when absent).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Visibility {
    /// Shown to and callable by a model.
    pub model: bool,
    /// Callable by an app of the same server.
    pub app: bool,
}

impl Visibility {
    /// Whether only apps may use the tool: a model must neither see nor call it.
    pub fn app_only(self) -> bool {
        !self.model
    }
}

/// A tool's visibility; a `visibility` that is not a list of strings counts as absent.
pub fn visibility(meta: Option<&Map<String, Value>>) -> Visibility {
    let list = meta
        .and_then(|m| m.get("ui"))
        .and_then(|ui| ui.get("visibility"))
        .and_then(Value::as_array);
    match list {
        Some(list) if list.iter().all(Value::is_string) => Visibility {
            model: list.iter().any(|v| v == "model"),
            app: list.iter().any(|v| v == "app"),
        },
        _ => Visibility {
            model: true,
            app: true,
        },
    }
}

/// Rewrites the `ui://` URIs a tool of `server_id` names in `_meta` to the form the bridge lists
/// them in ([`naming::qualify_ui`]); other values stay as they are.
pub fn qualify_tool_meta(server_id: &str, meta: &mut Map<String, Value>) {
    let qualify = |value: &mut Value| {
        if let Some(uri) = value
            .as_str()
            .and_then(|u| naming::qualify_ui(server_id, u))
        {
            *value = Value::String(uri);
        }
    };
    if let Some(uri) = meta
        .get_mut("ui")
        .and_then(Value::as_object_mut)
        .and_then(|ui| ui.get_mut("resourceUri"))
    {
        qualify(uri);
    }
    if let Some(uri) = meta.get_mut(LEGACY_RESOURCE_URI) {
        qualify(uri);
    }
}

/// The (server id, upstream URI) of each qualified `ui://` URI a tool's `_meta` names.
pub fn resource_uris(meta: &Map<String, Value>) -> Vec<(String, String)> {
    let modern = meta.get("ui").and_then(|ui| ui.get("resourceUri"));
    [modern, meta.get(LEGACY_RESOURCE_URI)]
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter_map(naming::split_ui)
        .map(|(id, uri)| (id.to_owned(), uri))
        .collect()
}

/// Takes a tool's user interface away (both keys), leaving the rest of `_meta` as it was.
pub fn strip_resource_uri(meta: &mut Map<String, Value>) {
    meta.remove(LEGACY_RESOURCE_URI);
    if let Some(ui) = meta.get_mut("ui").and_then(Value::as_object_mut) {
        ui.remove("resourceUri");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn visibility_defaults_to_both() {
        let both = Visibility {
            model: true,
            app: true,
        };
        assert_eq!(visibility(None), both);
        assert_eq!(visibility(Some(&meta(json!({"ui": {}})))), both);
        assert_eq!(
            visibility(Some(&meta(json!({"ui": {"visibility": "app"}})))),
            both
        );
        let app = visibility(Some(&meta(json!({"ui": {"visibility": ["app"]}}))));
        assert!(app.app_only() && app.app);
        let model = visibility(Some(&meta(json!({"ui": {"visibility": ["model"]}}))));
        assert!(!model.app_only() && !model.app);
    }

    #[test]
    fn ui_uris_are_qualified_found_and_stripped() {
        let mut m = meta(json!({
            "ui": {"resourceUri": "ui://dashboard", "visibility": ["app"]},
            "ui/resourceUri": "ui://dashboard",
            "other": "ui://untouched"
        }));
        qualify_tool_meta("ev", &mut m);
        assert_eq!(m["ui"]["resourceUri"], "ui://ev/dashboard");
        assert_eq!(m[LEGACY_RESOURCE_URI], "ui://ev/dashboard");
        assert_eq!(m["other"], "ui://untouched");
        let uris = resource_uris(&m);
        assert_eq!(uris, vec![("ev".into(), "ui://dashboard".into()); 2]);
        strip_resource_uri(&mut m);
        assert_eq!(
            m,
            meta(json!({"ui": {"visibility": ["app"]}, "other": "ui://untouched"}))
        );
        let mut plain = meta(json!({"ui": {"resourceUri": "https://x"}}));
        qualify_tool_meta("ev", &mut plain);
        assert_eq!(plain["ui"]["resourceUri"], "https://x");
    }
}
