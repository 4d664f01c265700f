//! Names: `server_id` rules, namespaced tool names `{server_id}__{tool}` and how they split, and
//! the allow-list match. Pure functions.

/// What separates the server id from the upstream tool name.
pub const SEPARATOR: &str = "__";
/// Longest full tool name MCP clients accept.
pub const MAX_TOOL_NAME: usize = crate::config::MAX_TOOL_NAME;
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

/// Shortest `MCP_BRIDGE_MAX_TOOL_NAME` (the config refuses less): room for the start of a
/// server id and the hash of an alias.
pub const MIN_TOOL_NAME: usize = crate::config::MIN_TOOL_NAME;
/// Hex digits of the hash that ends a short alias (40 bits).
pub const ALIAS_HASH_LEN: usize = 10;

/// The catalogue name of an upstream tool: `{server_id}__{tool}` when it has at most `max`
/// characters, else its short [`alias`]; `None` when the full name is not made of MCP tool
/// name characters (`[A-Za-z0-9_.-]`) or the tool has no name.
pub fn qualify(server_id: &str, tool: &str, max: usize) -> Option<String> {
    let full = format!("{server_id}{SEPARATOR}{tool}");
    let valid = !tool.is_empty()
        && full
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
    match (valid, full.len() <= max) {
        (false, _) => None,
        (true, true) => Some(full),
        (true, false) => Some(alias(server_id, &full, max)),
    }
}

/// The short alias of a full name `{server_id}__{tool}` longer than `max`: exactly `max`
/// characters, as much of the full name as fits, `_`, then the hex SHA-256 of the full name
/// (its first [`ALIAS_HASH_LEN`] digits, a digit or two more where a server id is cut).
/// When the server id leaves room for at least one character of the tool name, the alias keeps
/// `{server_id}__` and so splits like any other name; otherwise it starts with as much of the
/// server id as fits (without a trailing `_`) and holds no `__`. A pure function of its
/// arguments: the same on every replica and after every restart.
pub fn alias(server_id: &str, full: &str, max: usize) -> String {
    let digest = hex::encode(ring::digest::digest(&ring::digest::SHA256, full.as_bytes()));
    let keep = max.saturating_sub(ALIAS_HASH_LEN + 1);
    let head = match keep > server_id.len() + SEPARATOR.len() {
        true => &full[..keep],
        false => full[..keep.min(server_id.len())].trim_end_matches('_'),
    };
    let hash_len = (max - head.len() - 1).min(digest.len());
    format!("{head}_{}", &digest[..hash_len])
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

/// The scheme of MCP Apps' user interfaces (extension `io.modelcontextprotocol/ui`): such a URI
/// must keep it, so it is qualified inside the scheme rather than with [`URI_SCHEME`].
pub const UI_SCHEME: &str = "ui://";

/// A `ui://` URI qualified with the server that offers it: `ui://{server_id}/{rest}` for the
/// upstream `ui://{rest}`, so two servers' `ui://dashboard` stay apart and stay `ui://`.
/// `None` for any other URI. Reversible by [`split_ui`] for every `ui://` URI, since a server
/// id holds no `/`.
pub fn qualify_ui(server_id: &str, uri: &str) -> Option<String> {
    let rest = uri.strip_prefix(UI_SCHEME)?;
    Some(format!("{UI_SCHEME}{server_id}/{rest}"))
}

/// The server id and upstream `ui://` URI of a URI [`qualify_ui`] made; `None` when `uri` is not
/// `ui://{server_id}/{rest}` with a valid server id.
pub fn split_ui(uri: &str) -> Option<(&str, String)> {
    let rest = uri.strip_prefix(UI_SCHEME)?;
    let (server_id, inner) = rest.split_once('/')?;
    check_server_id(server_id)
        .is_ok()
        .then(|| (server_id, format!("{UI_SCHEME}{inner}")))
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
    fn ui_uris_stay_ui_and_give_back_their_parts() {
        for uri in [
            "ui://dashboard",
            "ui://weather-server/dashboard-template",
            "ui:///absolute",
            "ui://a__b/c?x=1#f",
            "ui://",
        ] {
            let qualified = qualify_ui("ev.1", uri).unwrap();
            assert!(qualified.starts_with("ui://ev.1/"), "{qualified}");
            assert_eq!(
                split_ui(&qualified),
                Some(("ev.1", uri.to_owned())),
                "{qualified}"
            );
        }
        assert_eq!(qualify_ui("ev", "info://x"), None);
        assert_eq!(split_ui("ui://dashboard"), None);
        assert_eq!(split_ui("ui://a__b/x"), None);
        assert_eq!(split_ui("mcp-bridge://ev/ui://x"), None);
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
        let qualify = |s: &str, t: &str| qualify(s, t, MAX_TOOL_NAME);
        assert_eq!(qualify("fs", "read_file").as_deref(), Some("fs__read_file"));
        assert_eq!(split("fs__read_file"), Some(("fs", "read_file")));
        // The split is at the first separator, so upstream names may contain `__`.
        assert_eq!(qualify("fs", "a__b").as_deref(), Some("fs__a__b"));
        assert_eq!(split("fs__a__b"), Some(("fs", "a__b")));
        assert_eq!(qualify("fs", "has space"), None);
        assert_eq!(qualify("fs", ""), None);
        assert_eq!(qualify("fs", &"t".repeat(124)).unwrap().len(), 128);
        assert_eq!(qualify("fs", &"t".repeat(125)).unwrap().len(), 128);
        assert_eq!(split("plain"), None);
        assert_eq!(split("__x"), None);
        assert_eq!(split("x__"), None);
    }

    fn mcp_name(name: &str) -> bool {
        name.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
    }

    #[test]
    fn long_names_get_short_stable_aliases() {
        let tool = "a_tool_with_a_rather_long_name_that_goes_on_and_on";
        let full = format!("my-server__{tool}");
        for max in [MIN_TOOL_NAME, 48, 64, 100] {
            let alias = qualify("my-server", tool, max).unwrap();
            assert_eq!(alias.len(), max.min(full.len()), "{alias}");
            assert!(mcp_name(&alias), "{alias}");
            if full.len() > max {
                // Same inputs, same alias; it keeps the server prefix and the name's start.
                assert_eq!(qualify("my-server", tool, max).unwrap(), alias);
                assert_eq!(split(&alias).unwrap().0, "my-server", "{alias}");
                assert!(alias.starts_with("my-server__a_tool"), "{alias}");
            }
        }
        // Names that differ only past the cut differ in their alias.
        let a = qualify("s", &format!("{}a", "x".repeat(80)), 64).unwrap();
        let b = qualify("s", &format!("{}b", "x".repeat(80)), 64).unwrap();
        assert_ne!(a, b);
        assert_eq!(&a[..53], &b[..53]);
        // The example of docs/mcp.md ("Long tool names").
        assert_eq!(
            qualify(
                "github-enterprise",
                "create_or_update_repository_environment_deployment_branch_policy",
                64
            )
            .unwrap(),
            "github-enterprise__create_or_update_repository_enviro_04fb2de61c"
        );
        // The documented rule, spelt out once.
        let long = format!("fs__{}", "t".repeat(100));
        let hash = hex::encode(ring::digest::digest(&ring::digest::SHA256, long.as_bytes()));
        assert_eq!(
            qualify("fs", &"t".repeat(100), 64).unwrap(),
            format!("{}_{}", &long[..53], &hash[..10])
        );
    }

    #[test]
    fn a_server_id_too_long_for_the_limit_gives_a_bare_alias() {
        for id in [
            "x".repeat(64),
            format!("{}_{}", "x".repeat(20), "y".repeat(30)),
            "a.b-c".repeat(12),
        ] {
            assert!(check_server_id(&id).is_ok());
            for max in [MIN_TOOL_NAME, 40] {
                let alias = qualify(&id, "tool", max).unwrap();
                assert_eq!(alias.len(), max, "{alias}");
                assert!(mcp_name(&alias), "{alias}");
                assert!(
                    !alias[..max - ALIAS_HASH_LEN - 1].contains(SEPARATOR),
                    "{alias}"
                );
                assert_eq!(qualify(&id, "tool", max).unwrap(), alias);
            }
        }
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
