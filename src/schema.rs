//! JSON Schema `$ref`s resolved within fixed bounds, for what reads a tool's input schema
//! (search, and anything that walks its properties): servers generate schemas whose parameters
//! are `{"$ref": "#/$defs/Address"}` (pydantic, zod), so a reader that does not follow them sees
//! no names or descriptions. Only references inside the schema itself (`#`, `#/$defs/…`,
//! `#/definitions/…`, any JSON pointer into the document) are followed; a remote one is left as
//! it is. The bounds keep a hostile schema (a reference cycle, a "billion laughs" of references
//! to references) from costing more than a small, fixed amount: past them a reference is left
//! unresolved, never an error.

use serde_json::{Map, Value};

/// How many references deep one path of the resolved schema may follow.
pub const MAX_REF_DEPTH: usize = 8;
/// How many schema nodes the resolved copy may hold in all (a node is an object or an array).
pub const MAX_NODES: usize = 10_000;

/// `schema` with its local `$ref`s replaced by what they point at, within the bounds above.
/// A reference that is remote, points at nothing, is part of a cycle or lies past a bound stays
/// `{"$ref": …}`. Keywords beside a `$ref` (2020-12 allows them) are kept and win over the
/// target's. `$defs` and `definitions` are left out of the copy: everything they held that is
/// used is now inline.
pub fn resolve(schema: &Value) -> Value {
    let mut budget = MAX_NODES;
    let mut path = Vec::new();
    copy(schema, schema, &mut path, &mut budget, true)
}

/// Whether `schema` holds definitions a local `$ref` may point at (`$defs`, `definitions`) or is
/// itself a reference: a cheap test that spares [`resolve`] for the many schemas without any.
pub fn has_local_definitions(schema: &Value) -> bool {
    schema.as_object().is_some_and(|map| {
        ["$defs", "definitions", "$ref"]
            .iter()
            .any(|k| map.contains_key(*k))
    })
}

fn copy<'a>(
    root: &'a Value,
    node: &'a Value,
    path: &mut Vec<&'a str>,
    budget: &mut usize,
    top: bool,
) -> Value {
    match node {
        Value::Object(map) => {
            if *budget == 0 {
                return node_left_as_is(map);
            }
            *budget -= 1;
            if let Some(Value::String(reference)) = map.get("$ref")
                && let Some(target) = local_target(root, reference)
                && path.len() < MAX_REF_DEPTH
                && !path.contains(&reference.as_str())
            {
                path.push(reference);
                let mut resolved = copy(root, target, path, budget, false);
                path.pop();
                if let Value::Object(resolved_map) = &mut resolved {
                    for (key, value) in map {
                        if key != "$ref" && !(top && is_definitions(key)) {
                            let value = copy(root, value, path, budget, false);
                            resolved_map.insert(key.clone(), value);
                        }
                    }
                }
                return resolved;
            }
            let mut out = Map::new();
            for (key, value) in map {
                if top && is_definitions(key) {
                    continue;
                }
                out.insert(key.clone(), copy(root, value, path, budget, false));
            }
            Value::Object(out)
        }
        Value::Array(items) => {
            if *budget == 0 {
                return Value::Array(Vec::new());
            }
            *budget -= 1;
            Value::Array(
                items
                    .iter()
                    .map(|item| copy(root, item, path, budget, false))
                    .collect(),
            )
        }
        other => other.clone(),
    }
}

fn is_definitions(key: &str) -> bool {
    key == "$defs" || key == "definitions"
}

/// What is kept of an object once the budget is spent: its `$ref` alone, if it has one (so a
/// reader sees a reference it did not follow), else an empty schema.
fn node_left_as_is(map: &Map<String, Value>) -> Value {
    let mut out = Map::new();
    if let Some(reference) = map.get("$ref") {
        out.insert("$ref".into(), reference.clone());
    }
    Value::Object(out)
}

/// The node a local reference (`#` or `#/a/b`, JSON pointer escapes and percent-encoding
/// undone) points at in `root`.
fn local_target<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    let pointer = percent_decode(pointer)?;
    root.pointer(&pointer)
}

/// `text` with its percent-encoding undone (`%2F` is `/`), strictly: a `%` without two hex
/// digits after it, or bytes that are not UTF-8, make it none. Also what undoes a NATS URL's
/// user and password (the config's `nats` module).
pub fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn local_references_are_inlined_with_their_siblings() {
        let schema = json!({
            "type": "object",
            "properties": {
                "home": {"$ref": "#/$defs/Address", "description": "where they live"},
                "work": {"$ref": "#/definitions/Place"},
                "tags": {"type": "array", "items": {"$ref": "#/$defs/Tag"}},
                "odd": {"$ref": "#/$defs/a~1b%20c"}
            },
            "$defs": {
                "Address": {"type": "object", "description": "a postal address",
                            "properties": {"city": {"type": "string", "description": "the city"}}},
                "Tag": {"type": "string", "enum": ["a", "b"]},
                "a/b c": {"type": "integer"}
            },
            "definitions": {"Place": {"$ref": "#/$defs/Address"}}
        });
        let resolved = resolve(&schema);
        let home = &resolved["properties"]["home"];
        assert_eq!(home["description"], "where they live");
        assert_eq!(home["properties"]["city"]["description"], "the city");
        assert_eq!(
            resolved["properties"]["work"]["description"],
            "a postal address"
        );
        assert_eq!(
            resolved["properties"]["tags"]["items"]["enum"],
            json!(["a", "b"])
        );
        assert_eq!(resolved["properties"]["odd"]["type"], "integer");
        assert!(resolved.get("$defs").is_none() && resolved.get("definitions").is_none());
        // A schema that is itself a reference: its definitions are not copied beside it.
        let top = resolve(&json!({"$ref": "#/$defs/A", "$defs": {"A": {"type": "object"}}}));
        assert_eq!(top, json!({"type": "object"}));
    }

    #[test]
    fn cycles_remote_and_dangling_references_stay_references() {
        let schema = json!({
            "type": "object",
            "properties": {
                "node": {"$ref": "#/$defs/Node"},
                "remote": {"$ref": "https://example.com/schema.json"},
                "missing": {"$ref": "#/$defs/Nope"}
            },
            "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}}
        });
        let resolved = resolve(&schema);
        let node = &resolved["properties"]["node"];
        assert_eq!(node["type"], "object");
        assert_eq!(node["properties"]["next"], json!({"$ref": "#/$defs/Node"}));
        assert_eq!(
            resolved["properties"]["remote"],
            json!({"$ref": "https://example.com/schema.json"})
        );
        assert_eq!(
            resolved["properties"]["missing"],
            json!({"$ref": "#/$defs/Nope"})
        );
    }

    #[test]
    fn references_to_references_cost_no_more_than_the_bounds() {
        // Each level refers to the one below twice: 2^30 nodes if followed without bounds.
        let mut defs = Map::new();
        defs.insert("l0".into(), json!({"type": "string"}));
        for level in 1..30 {
            let below = format!("#/$defs/l{}", level - 1);
            defs.insert(
                format!("l{level}"),
                json!({"type": "array", "items": [{"$ref": below}, {"$ref": below}]}),
            );
        }
        let schema = json!({"$ref": "#/$defs/l29", "$defs": defs});
        let started = std::time::Instant::now();
        let resolved = resolve(&schema);
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        let text = resolved.to_string();
        assert!(text.len() < 2_000_000, "{} bytes", text.len());
        // The depth bound leaves the deepest levels as references.
        assert!(text.contains("\"$ref\""));
    }
}
