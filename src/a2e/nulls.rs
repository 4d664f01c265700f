//! `null` in a request body means "absent": clients generated from the OpenAPI document (and
//! pydantic models dumped as they are) send `null` for every optional field they leave unset.
//!
//! Nulls are dropped from the JSON before it is read into its type, so a field sent as `null`
//! takes exactly the default it takes when left out (a `timeout` of 300, a fresh `id`, …), not
//! the type's zero. Only the request's own fields are touched: its top level and the A2E
//! objects it carries (a server `config`, a task's parameters, …). Free-form JSON inside
//! (`arguments` of a call, `content` of an answer, an MCP `ref`) is passed on as sent, nulls
//! included. A wrong type is still wrong: `"timeout": "soon"` is 422 as before.

use serde_json::Value;

use super::{
    CompletionRequest, Message, RootsListResponse, RootsSetRequest, ServerImportRequest,
    ServerRegisterRequest, ServerUpdateRequest, ToolCallRequest,
};

/// Drops the fields that are `null` from the request `body` of the A2E message type `kind`,
/// where `null` can only mean "not given".
pub fn drop_nulls(kind: &str, body: &mut Value) {
    let Value::Object(fields) = body else {
        return;
    };
    let kept = null_means_something(kind);
    fields.retain(|key, value| !value.is_null() || kept.contains(&key.as_str()));
    for path in nested(kind) {
        drop_nulls_at(body, path);
    }
}

/// The same for a JSON object that is not an A2E message (a policy, a toolset): its fields,
/// and the fields of the objects directly in it.
pub fn drop_nulls_two_levels(body: &mut Value) {
    let Value::Object(fields) = body else {
        return;
    };
    fields.retain(|_, value| !value.is_null());
    for value in fields.values_mut() {
        if let Value::Object(inner) = value {
            inner.retain(|_, value| !value.is_null());
        }
    }
}

/// Fields whose `null` is kept: in a PATCH, `"auth": null` removes the server's auth; an
/// import's file maps are what the request is, and their OpenAPI schema (a map, which the
/// client generators cannot take as nullable) says they are never `null`, so one is refused.
fn null_means_something(kind: &str) -> &'static [&'static str] {
    match kind {
        ServerUpdateRequest::TYPE => &["auth", "identity"],
        ServerImportRequest::TYPE => &["servers", "mcpServers"],
        _ => &[],
    }
}

/// The A2E objects a request carries, as dotted paths (`[]` for each element of a list).
fn nested(kind: &str) -> &'static [&'static str] {
    match kind {
        ServerRegisterRequest::TYPE => &["config", "config.auth", "config.identity"],
        ServerUpdateRequest::TYPE => &["auth", "identity"],
        ToolCallRequest::TYPE => &["task"],
        CompletionRequest::TYPE => &["argument", "context"],
        RootsSetRequest::TYPE | RootsListResponse::TYPE => &["roots[]"],
        _ => &[],
    }
}

/// The fields of a nested object that refuses unknown ones (`deny_unknown_fields`), by path.
fn closed_fields(path: &str) -> Option<&'static [&'static str]> {
    match path {
        "task" => Some(&["ttl"]),
        _ => None,
    }
}

fn drop_nulls_at(value: &mut Value, path: &str) {
    let (head, rest) = match path.split_once('.') {
        Some((head, rest)) => (head, Some(rest)),
        None => (path, None),
    };
    let (name, each) = match head.strip_suffix("[]") {
        Some(name) => (name, true),
        None => (head, false),
    };
    let Some(inner) = value.get_mut(name) else {
        return;
    };
    let targets: Vec<&mut Value> = match (each, inner) {
        (true, Value::Array(items)) => items.iter_mut().collect(),
        (false, inner) => vec![inner],
        _ => return,
    };
    for target in targets {
        match rest {
            Some(rest) => drop_nulls_at(target, rest),
            None => {
                if let Value::Object(fields) = target {
                    // An object that takes no unknown field (a task's parameters) keeps the
                    // null of a field it does not have, so that it is refused like any other
                    // value of an unknown field.
                    let known = closed_fields(path);
                    fields.retain(|key, value| {
                        !value.is_null() || known.is_some_and(|k| !k.contains(&key.as_str()))
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::a2e::{McpServerConfig, ServerRegisterRequest, ToolCallRequest};

    #[test]
    fn a_null_field_reads_as_an_absent_one() {
        let mut body = json!({
            "type": null, "id": null, "version": null, "ts": null,
            "config": {"server_id": "s", "url": "http://127.0.0.1:1/mcp", "transport": "http",
                "timeout": null, "connect_timeout": null, "auto_reconnect": null, "env": null,
                "headers": null, "cmd": null, "auth": null, "protocol_version": null}
        });
        drop_nulls(ServerRegisterRequest::TYPE, &mut body);
        let req: ServerRegisterRequest = serde_json::from_value(body).unwrap();
        assert!(!req.id.is_empty(), "a fresh id, as when absent");
        assert!(req.ts > 0.0);
        let absent = McpServerConfig::default();
        assert_eq!(req.config.timeout, absent.timeout);
        assert_eq!(req.config.connect_timeout, absent.connect_timeout);
        assert!(req.config.auto_reconnect);
    }

    #[test]
    fn free_form_json_keeps_its_nulls_and_patch_keeps_auth_null() {
        let mut body = json!({"name": "t", "arguments": {"x": null}, "timeout": null,
            "task": {"ttl": null}});
        drop_nulls(ToolCallRequest::TYPE, &mut body);
        assert_eq!(
            body,
            json!({"name": "t", "arguments": {"x": null}, "task": {}})
        );

        let mut body = json!({"auth": null, "url": null});
        drop_nulls(ServerUpdateRequest::TYPE, &mut body);
        assert_eq!(body, json!({"auth": null}));

        let mut body = json!({"roots": [{"uri": "file:///a", "name": null}]});
        drop_nulls(RootsSetRequest::TYPE, &mut body);
        assert_eq!(body, json!({"roots": [{"uri": "file:///a"}]}));
    }

    #[test]
    fn a_wrong_type_is_still_wrong() {
        let mut body = json!({"name": "t", "timeout": "soon"});
        drop_nulls(ToolCallRequest::TYPE, &mut body);
        assert!(serde_json::from_value::<ToolCallRequest>(body).is_err());
    }

    /// A task's parameters are an object: an array is not read as one with its fields in
    /// order, nor an empty one as one with every field left out.
    #[test]
    fn a_task_is_an_object_with_known_fields() {
        let read = |task: serde_json::Value| {
            let mut body = json!({"name": "t", "task": task});
            drop_nulls(ToolCallRequest::TYPE, &mut body);
            serde_json::from_value::<ToolCallRequest>(body).map(|req| req.task)
        };
        for wrong in [
            json!([]),
            json!([5000]),
            json!({"ttl": 5000, "x": 1}),
            json!("t"),
        ] {
            assert!(read(wrong.clone()).is_err(), "{wrong}");
        }
        let ttl = |task| read(task).unwrap().map(|task| task.ttl);
        assert_eq!(ttl(json!({})), Some(crate::a2e::DEFAULT_TASK_TTL_MS));
        assert_eq!(
            ttl(json!({"ttl": null})),
            Some(crate::a2e::DEFAULT_TASK_TTL_MS)
        );
        assert_eq!(ttl(json!({"ttl": 5000})), Some(5000));
        assert_eq!(ttl(json!(null)), None);
    }
}
