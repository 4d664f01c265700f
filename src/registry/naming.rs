//! Names: `server_id` rules, namespaced tool names `{server_id}__{tool}` and how they split, and
//! the allow-list match. Pure functions.

/// What separates the server id from the upstream tool name.
pub const SEPARATOR: &str = "__";
/// Longest full tool name MCP clients accept.
pub const MAX_TOOL_NAME: usize = 128;
/// Longest server id, leaving room for a tool name within [`MAX_TOOL_NAME`].
pub const MAX_SERVER_ID: usize = 64;

/// Checks a `server_id`: `[A-Za-z0-9.-]` and single `_`, no `__`, not starting or ending with `_`.
pub fn check_server_id(id: &str) -> Result<(), String> {
    if id.is_empty() || id.len() > MAX_SERVER_ID {
        return Err(format!(
            "`server_id` must be 1 to {MAX_SERVER_ID} characters long"
        ));
    }
    if let Some(c) = id
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')))
    {
        return Err(format!(
            "`server_id` \"{id}\" contains {c:?}; use letters, digits, `.`, `-` and single `_`"
        ));
    }
    if id.contains(SEPARATOR) || id.starts_with('_') || id.ends_with('_') {
        return Err(format!(
            "`server_id` \"{id}\" must not contain `__` nor start or end with `_`"
        ));
    }
    Ok(())
}

/// A fresh server id: 8 hex characters.
pub fn generate_server_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..8].to_owned()
}

/// The catalogue name of an upstream tool, or `None` when the result would not be a valid MCP
/// tool name (`[A-Za-z0-9_.-]`, at most 128 characters).
pub fn qualify(server_id: &str, tool: &str) -> Option<String> {
    let full = format!("{server_id}{SEPARATOR}{tool}");
    let valid = !tool.is_empty()
        && full.len() <= MAX_TOOL_NAME
        && full
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    valid.then_some(full)
}

/// The scheme of a resource URI qualified with its server (`/mcp` shows a URI, or a template,
/// that several servers offer as `mcp-bridge://{server_id}/{uri}`).
pub const URI_SCHEME: &str = "mcp-bridge";

/// A resource URI (or URI template) qualified with the server that offers it. Reversible:
/// [`split_uri`] gives back both parts, whatever the URI holds.
pub fn qualify_uri(server_id: &str, uri: &str) -> String {
    format!("{URI_SCHEME}://{server_id}/{uri}")
}

/// The server id and upstream URI of a qualified URI; `None` for any other URI.
pub fn split_uri(uri: &str) -> Option<(&str, &str)> {
    let rest = uri.strip_prefix(URI_SCHEME)?.strip_prefix("://")?;
    let (server_id, uri) = rest.split_once('/')?;
    (check_server_id(server_id).is_ok() && !uri.is_empty()).then_some((server_id, uri))
}

/// Splits a catalogue name at its first `__` into server id and upstream tool name.
pub fn split(name: &str) -> Option<(&str, &str)> {
    let (server_id, tool) = name.split_once(SEPARATOR)?;
    (!server_id.is_empty() && !tool.is_empty()).then_some((server_id, tool))
}

/// Whether a `tool_allow_list` lets `tool` through: empty allows all, else exact names.
pub fn tool_allowed(list: &[String], tool: &str) -> bool {
    list.is_empty() || list.iter().any(|entry| entry == tool)
}

/// Whether a `resource_allow_list` lets `item` through: empty allows all; an entry ending with `*` is a
/// prefix, any other entry must match exactly.
pub fn allowed(list: &[String], item: &str) -> bool {
    list.is_empty()
        || list.iter().any(|entry| match entry.strip_suffix('*') {
            Some(prefix) => item.starts_with(prefix),
            None => entry == item,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualified_uris_give_back_their_parts() {
        for uri in [
            "info://server/version",
            "file:///tmp/a b?x=1#f",
            "demo://resource/dynamic/{id}",
            "mcp-bridge://inner/info://x",
        ] {
            let qualified = qualify_uri("ev.1", uri);
            assert_eq!(split_uri(&qualified), Some(("ev.1", uri)), "{qualified}");
        }
        assert_eq!(split_uri("info://server/version"), None);
        assert_eq!(split_uri("mcp-bridge://a__b/x"), None);
        assert_eq!(split_uri("mcp-bridge://ev/"), None);
        assert_eq!(split_uri("mcp-bridge://ev"), None);
    }

    #[test]
    fn server_ids() {
        for good in ["fs", "my-server", "a.b", "x_y", "A1"] {
            assert!(check_server_id(good).is_ok(), "{good}");
        }
        for bad in ["", "a__b", "_a", "a_", "a b", "ü", "a/b", &"x".repeat(65)] {
            assert!(check_server_id(bad).is_err(), "{bad}");
        }
        let generated = generate_server_id();
        assert_eq!(generated.len(), 8);
        assert!(check_server_id(&generated).is_ok());
    }

    #[test]
    fn qualify_and_split() {
        assert_eq!(qualify("fs", "read_file").as_deref(), Some("fs__read_file"));
        assert_eq!(split("fs__read_file"), Some(("fs", "read_file")));
        // The split is at the first separator, so upstream names may contain `__`.
        assert_eq!(qualify("fs", "a__b").as_deref(), Some("fs__a__b"));
        assert_eq!(split("fs__a__b"), Some(("fs", "a__b")));
        assert_eq!(qualify("fs", "has space"), None);
        assert_eq!(qualify("fs", ""), None);
        assert_eq!(qualify("fs", &"t".repeat(125)), None);
        assert_eq!(split("plain"), None);
        assert_eq!(split("__x"), None);
        assert_eq!(split("x__"), None);
    }

    #[test]
    fn allow_lists() {
        let list = vec!["echo".to_owned(), "demo://static/*".to_owned()];
        assert!(allowed(&[], "anything"));
        assert!(allowed(&list, "echo"));
        assert!(!allowed(&list, "echo2"));
        assert!(allowed(&list, "demo://static/1"));
        assert!(!allowed(&list, "demo://dynamic/1"));
        assert!(tool_allowed(&[], "echo"));
        assert!(tool_allowed(&list, "echo"));
        assert!(!tool_allowed(&list, "demo://static/1"));
    }
}
