//! SEP-2243's per-request headers, which a Streamable HTTP client sends from protocol version
//! 2026-07-28 on so that intermediaries can route a request without reading its body:
//! `Mcp-Method`, `Mcp-Name`, and an `Mcp-Param-*` for each argument a tool's input schema marks
//! with `x-mcp-header`. rmcp has them, but crate-private, and the bridge's transport needs them.

use std::collections::HashSet;

use axum::http::{HeaderName, HeaderValue};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rmcp::model::JsonObject;
use serde_json::Value;

/// The header naming the request's method.
const METHOD: &str = "Mcp-Method";
/// The header naming what the request is about: a tool, a prompt, a resource or a task.
const NAME: &str = "Mcp-Name";
/// What an annotated argument's header name begins with.
const PARAM: &str = "Mcp-Param-";
/// The schema keyword that gives an argument a header.
const ANNOTATION: &str = "x-mcp-header";
/// What a base64-wrapped value begins with.
const WRAP_START: &str = "=?base64?";
/// What a base64-wrapped value ends with.
const WRAP_END: &str = "?=";

/// Checks the `x-mcp-header` annotations of a tool's input schema: each on a property reached
/// from the root through `properties` alone (not on the root), a non-empty HTTP token unique
/// regardless of case, on a property of type `string`, `integer` or `boolean`. The error is the
/// first violation found.
pub fn valid_annotations(schema: &JsonObject) -> Result<(), String> {
    if schema.contains_key(ANNOTATION) {
        return Err("x-mcp-header must annotate a property, not the schema root".to_owned());
    }
    if stray(schema, true) {
        return Err("x-mcp-header must sit on a `properties`-only path from the root".to_owned());
    }
    let mut taken = HashSet::new();
    for found in annotated(schema) {
        let property = found.path.join(".");
        let Value::String(header) = found.header else {
            return Err(format!(
                "property `{property}`: x-mcp-header must be a string"
            ));
        };
        if header.is_empty() {
            return Err(format!(
                "property `{property}`: x-mcp-header must not be empty"
            ));
        }
        if !is_token(header) {
            return Err(format!(
                "property `{property}`: x-mcp-header `{header}` is not a valid HTTP token"
            ));
        }
        if !taken.insert(header.to_ascii_lowercase()) {
            return Err(format!(
                "property `{property}`: duplicate x-mcp-header `{header}` (case-insensitive)"
            ));
        }
        let kind = found.schema.get("type").and_then(Value::as_str);
        if !matches!(kind, Some("string" | "integer" | "boolean")) {
            return Err(format!(
                "property `{property}`: x-mcp-header requires a primitive type \
                 (string/integer/boolean), got {kind:?}"
            ));
        }
    }
    Ok(())
}

/// The SEP-2243 headers for a request, given as its JSON-RPC JSON: `Mcp-Method`; `Mcp-Name` when
/// the method names something; and, for `tools/call` with the tool's input `schema`, an
/// `Mcp-Param-*` for each annotated argument present with a string, number or boolean value.
/// A value that cannot travel bare is sent base64-wrapped; a header that cannot be built is left
/// out.
pub fn request_headers(
    request: &Value,
    schema: Option<&JsonObject>,
) -> Vec<(HeaderName, HeaderValue)> {
    let mut headers = Vec::new();
    let Some(method) = request.get("method").and_then(Value::as_str) else {
        return headers;
    };
    let params = request.get("params");
    push(&mut headers, METHOD, method);
    let name = name_key(method)
        .zip(params)
        .and_then(|(key, params)| params.get(key))
        .and_then(Value::as_str);
    if let Some(name) = name {
        push(&mut headers, NAME, &wrapped(name));
    }
    let arguments = params.and_then(|params| params.get("arguments"));
    if method == "tools/call"
        && let (Some(schema), Some(arguments)) = (schema, arguments)
    {
        for found in annotated(schema) {
            let Some(header) = found.header.as_str().filter(|header| !header.is_empty()) else {
                continue;
            };
            let argument = found
                .path
                .iter()
                .try_fold(arguments, |value, key| value.get(key));
            if let Some(text) = argument.and_then(primitive_text) {
                push(&mut headers, &format!("{PARAM}{header}"), &wrapped(&text));
            }
        }
    }
    headers
}

/// Adds a header, unless its name or value is not valid in HTTP.
fn push(headers: &mut Vec<(HeaderName, HeaderValue)>, name: &str, value: &str) {
    if let (Ok(name), Ok(value)) = (
        HeaderName::from_bytes(name.as_bytes()),
        HeaderValue::from_str(value),
    ) {
        headers.push((name, value));
    }
}

/// The member of `params` that holds the `Mcp-Name` of a request with this method, if any.
fn name_key(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => Some("uri"),
        "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
        _ => None,
    }
}

/// A string, number or boolean as a header carries it; nothing for other values.
fn primitive_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        _ => None,
    }
}

/// `value` as a header value: as it is, or as `=?base64?…?=` when it starts or ends with a space
/// or tab, holds a character outside printable ASCII, or already looks wrapped.
fn wrapped(value: &str) -> String {
    let padded = value.starts_with([' ', '\t']) || value.ends_with([' ', '\t']);
    let unprintable = value.chars().any(|c| !(' '..='~').contains(&c));
    let looks_wrapped = value.starts_with(WRAP_START) && value.ends_with(WRAP_END);
    if padded || unprintable || looks_wrapped {
        format!("{WRAP_START}{}{WRAP_END}", STANDARD.encode(value))
    } else {
        value.to_owned()
    }
}

/// Whether every character of `text` may be in an RFC 9110 token.
fn is_token(text: &str) -> bool {
    text.chars()
        .all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c))
}

/// A property with an `x-mcp-header`.
struct Annotated<'a> {
    /// The property names leading to it from the root.
    path: Vec<&'a str>,
    /// Its schema.
    schema: &'a Value,
    /// The annotation's value, whatever it is.
    header: &'a Value,
}

/// The annotated properties reached from the root through `properties` alone, depth first.
fn annotated(schema: &JsonObject) -> Vec<Annotated<'_>> {
    let mut found = Vec::new();
    collect(schema.get("properties"), &mut Vec::new(), &mut found);
    found
}

/// Adds the annotated properties in `properties` (a `properties` keyword's value) and below to
/// `found`; `path` leads to the schema that holds it.
fn collect<'a>(
    properties: Option<&'a Value>,
    path: &mut Vec<&'a str>,
    found: &mut Vec<Annotated<'a>>,
) {
    let Some(Value::Object(properties)) = properties else {
        return;
    };
    for (name, schema) in properties {
        path.push(name);
        if let Some(header) = schema.get(ANNOTATION) {
            found.push(Annotated {
                path: path.clone(),
                schema,
                header,
            });
        }
        collect(schema.get("properties"), path, found);
        path.pop();
    }
}

/// Whether `schema` or a subschema of it has an `x-mcp-header` off the `properties` chain;
/// `on_chain` says whether `schema` is the root or reached from it through `properties` alone.
fn stray(schema: &JsonObject, on_chain: bool) -> bool {
    schema
        .iter()
        .any(|(keyword, value)| match keyword.as_str() {
            ANNOTATION => !on_chain,
            "properties" => stray_in_map(value, on_chain),
            "$defs" | "definitions" | "dependencies" | "dependentSchemas" | "patternProperties" => {
                stray_in_map(value, false)
            }
            // Instance data or property names, not schemas.
            "default" | "const" | "enum" | "examples" | "dependentRequired" => false,
            _ => stray_in(value, false),
        })
}

/// [`stray`] for each schema of a map from names to schemas.
fn stray_in_map(map: &Value, on_chain: bool) -> bool {
    map.as_object()
        .is_some_and(|map| map.values().any(|schema| stray_in(schema, on_chain)))
}

/// [`stray`] for a keyword's value: a schema, or a list of them (never on the chain).
fn stray_in(value: &Value, on_chain: bool) -> bool {
    match value {
        Value::Object(schema) => stray(schema, on_chain),
        Value::Array(schemas) => schemas.iter().any(|schema| stray_in(schema, false)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;

    fn object(value: Value) -> JsonObject {
        value.as_object().unwrap().clone()
    }

    fn with_properties(properties: Value) -> JsonObject {
        object(json!({ "type": "object", "properties": properties }))
    }

    /// The headers as (name, value) text, in order.
    fn headers(request: Value, schema: Option<&JsonObject>) -> Vec<(String, String)> {
        request_headers(&request, schema)
            .into_iter()
            .map(|(name, value)| (name.to_string(), value.to_str().unwrap().to_owned()))
            .collect()
    }

    fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
        expected
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect()
    }

    fn call(arguments: Value) -> Value {
        json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": { "name": "deploy", "arguments": arguments }
        })
    }

    fn region_schema() -> JsonObject {
        with_properties(json!({ "region": { "type": "string", "x-mcp-header": "Region" } }))
    }

    #[test]
    fn tools_call_gives_method_and_name() {
        let request = call(json!({ "region": "eu" }));
        assert_eq!(
            headers(request, None),
            pairs(&[("mcp-method", "tools/call"), ("mcp-name", "deploy")])
        );
    }

    #[test]
    fn prompts_get_is_named_by_name() {
        let request = json!({
            "jsonrpc": "2.0", "id": 2, "method": "prompts/get",
            "params": { "name": "greet", "arguments": { "who": "x" } }
        });
        assert_eq!(
            headers(request, None),
            pairs(&[("mcp-method", "prompts/get"), ("mcp-name", "greet")])
        );
    }

    #[test]
    fn resources_read_is_named_by_uri() {
        let request = json!({
            "jsonrpc": "2.0", "id": 3, "method": "resources/read",
            "params": { "uri": "file:///etc/motd", "name": "not this" }
        });
        assert_eq!(
            headers(request, None),
            pairs(&[
                ("mcp-method", "resources/read"),
                ("mcp-name", "file:///etc/motd")
            ])
        );
    }

    #[test]
    fn task_method_is_named_by_task_id() {
        let request = json!({
            "jsonrpc": "2.0", "id": 4, "method": "tasks/get",
            "params": { "taskId": "task-17" }
        });
        assert_eq!(
            headers(request, None),
            pairs(&[("mcp-method", "tasks/get"), ("mcp-name", "task-17")])
        );
    }

    #[test]
    fn other_method_has_no_name() {
        let request = json!({
            "jsonrpc": "2.0", "id": 5, "method": "tools/list",
            "params": { "name": "deploy" }
        });
        assert_eq!(
            headers(request, None),
            pairs(&[("mcp-method", "tools/list")])
        );
    }

    #[test]
    fn notification_gives_method_only_and_no_method_gives_nothing() {
        let notification = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
        assert_eq!(
            headers(notification, None),
            pairs(&[("mcp-method", "notifications/initialized")])
        );
        let response = json!({ "jsonrpc": "2.0", "id": 1, "result": {} });
        assert_eq!(headers(response, None), pairs(&[]));
    }

    #[test]
    fn annotated_string_integer_and_boolean_arguments_give_headers() {
        let schema = with_properties(json!({
            "region": { "type": "string", "x-mcp-header": "Region" },
            "replicas": { "type": "integer", "x-mcp-header": "Replicas" },
            "dry_run": { "type": "boolean", "x-mcp-header": "Dry-Run" },
            "image": { "type": "string" },
        }));
        let request = call(json!({
            "region": "us-west1", "replicas": 42, "dry_run": true, "image": "app:1"
        }));
        let got: BTreeMap<_, _> = headers(request, Some(&schema)).into_iter().collect();
        let expected: BTreeMap<_, _> = pairs(&[
            ("mcp-method", "tools/call"),
            ("mcp-name", "deploy"),
            ("mcp-param-region", "us-west1"),
            ("mcp-param-replicas", "42"),
            ("mcp-param-dry-run", "true"),
        ])
        .into_iter()
        .collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn nested_annotated_property_gives_header() {
        let schema = with_properties(json!({
            "location": {
                "type": "object",
                "properties": { "region": { "type": "string", "x-mcp-header": "Region" } }
            }
        }));
        let nested = call(json!({ "location": { "region": "eu" } }));
        assert_eq!(
            headers(nested, Some(&schema)),
            pairs(&[
                ("mcp-method", "tools/call"),
                ("mcp-name", "deploy"),
                ("mcp-param-region", "eu"),
            ])
        );
        // The same name at the wrong depth is not the annotated property.
        let flat = call(json!({ "region": "eu" }));
        assert_eq!(
            headers(flat, Some(&schema)),
            pairs(&[("mcp-method", "tools/call"), ("mcp-name", "deploy")])
        );
    }

    #[test]
    fn absent_null_or_structured_argument_gives_no_header() {
        for arguments in [
            json!({}),
            json!({ "region": null }),
            json!({ "region": ["eu"] }),
            json!({ "region": { "name": "eu" } }),
        ] {
            assert_eq!(
                headers(call(arguments.clone()), Some(&region_schema())),
                pairs(&[("mcp-method", "tools/call"), ("mcp-name", "deploy")]),
                "arguments {arguments}"
            );
        }
    }

    #[test]
    fn param_headers_only_for_tools_call() {
        let request = json!({
            "jsonrpc": "2.0", "id": 2, "method": "prompts/get",
            "params": { "name": "greet", "arguments": { "region": "eu" } }
        });
        assert_eq!(
            headers(request, Some(&region_schema())),
            pairs(&[("mcp-method", "prompts/get"), ("mcp-name", "greet")])
        );
    }

    #[test]
    fn non_ascii_value_is_base64_wrapped() {
        let request = call(json!({ "region": "café" }));
        assert_eq!(
            headers(request, Some(&region_schema())),
            pairs(&[
                ("mcp-method", "tools/call"),
                ("mcp-name", "deploy"),
                ("mcp-param-region", "=?base64?Y2Fmw6k=?="),
            ])
        );
    }

    #[test]
    fn padded_value_is_base64_wrapped_but_inner_space_is_not() {
        let padded = call(json!({ "region": " padded " }));
        assert_eq!(
            headers(padded, Some(&region_schema()))[2],
            (
                "mcp-param-region".to_owned(),
                "=?base64?IHBhZGRlZCA=?=".to_owned()
            )
        );
        let trailing_tab = call(json!({ "region": "eu\t" }));
        assert_eq!(
            headers(trailing_tab, Some(&region_schema()))[2].1,
            "=?base64?ZXUJ?="
        );
        let inner = call(json!({ "region": "a b c" }));
        assert_eq!(headers(inner, Some(&region_schema()))[2].1, "a b c");
    }

    #[test]
    fn sentinel_lookalike_and_control_characters_are_wrapped() {
        assert_eq!(wrapped("=?base64?x?="), "=?base64?PT9iYXNlNjQ/eD89?=");
        assert_eq!(wrapped("a\r\nEvil: 1"), "=?base64?YQ0KRXZpbDogMQ==?=");
        assert_eq!(wrapped(""), "");
        assert_eq!(wrapped("us-west1"), "us-west1");
    }

    #[test]
    fn name_is_wrapped_like_a_param() {
        let request = json!({
            "jsonrpc": "2.0", "id": 1, "method": "resources/read",
            "params": { "uri": "file:///café" }
        });
        assert_eq!(
            headers(request, None)[1],
            (
                "mcp-name".to_owned(),
                format!("=?base64?{}?=", STANDARD.encode("file:///café"))
            )
        );
    }

    #[test]
    fn valid_schema_passes() {
        let schema = with_properties(json!({
            "region": { "type": "string", "x-mcp-header": "Region" },
            "replicas": { "type": "integer", "x-mcp-header": "Replicas" },
            "dry_run": { "type": "boolean", "x-mcp-header": "Dry-Run" },
            "location": {
                "type": "object",
                "properties": { "zone": { "type": "string", "x-mcp-header": "Zone" } },
                "default": { "x-mcp-header": "not a schema" }
            },
            "x-mcp-header": { "type": "string" }
        }));
        assert_eq!(valid_annotations(&schema), Ok(()));
        assert_eq!(
            valid_annotations(&object(json!({ "type": "object" }))),
            Ok(())
        );
    }

    #[test]
    fn annotation_on_root_fails() {
        let schema = object(json!({ "type": "object", "x-mcp-header": "Root" }));
        assert_eq!(
            valid_annotations(&schema),
            Err("x-mcp-header must annotate a property, not the schema root".to_owned())
        );
    }

    #[test]
    fn annotation_off_the_properties_chain_fails() {
        let off_chain = "x-mcp-header must sit on a `properties`-only path from the root";
        let under_items = with_properties(json!({
            "list": { "type": "array", "items": { "type": "string", "x-mcp-header": "Item" } }
        }));
        let under_one_of = with_properties(json!({
            "choice": { "oneOf": [{ "type": "string", "x-mcp-header": "Choice" }] }
        }));
        let in_defs = object(json!({
            "type": "object",
            "properties": { "region": { "$ref": "#/$defs/region" } },
            "$defs": { "region": { "type": "string", "x-mcp-header": "Region" } }
        }));
        for schema in [under_items, under_one_of, in_defs] {
            assert_eq!(valid_annotations(&schema), Err(off_chain.to_owned()));
        }
    }

    #[test]
    fn non_string_annotation_fails() {
        let schema = with_properties(json!({ "r": { "type": "string", "x-mcp-header": 7 } }));
        assert_eq!(
            valid_annotations(&schema),
            Err("property `r`: x-mcp-header must be a string".to_owned())
        );
    }

    #[test]
    fn empty_annotation_fails() {
        let schema = with_properties(json!({ "r": { "type": "string", "x-mcp-header": "" } }));
        assert_eq!(
            valid_annotations(&schema),
            Err("property `r`: x-mcp-header must not be empty".to_owned())
        );
    }

    #[test]
    fn non_token_annotation_fails() {
        let schema = with_properties(json!({
            "outer": {
                "type": "object",
                "properties": { "r": { "type": "string", "x-mcp-header": "bad:name" } }
            }
        }));
        assert_eq!(
            valid_annotations(&schema),
            Err("property `outer.r`: x-mcp-header `bad:name` is not a valid HTTP token".to_owned())
        );
    }

    #[test]
    fn duplicate_annotation_regardless_of_case_fails() {
        let schema = with_properties(json!({
            "outer": {
                "type": "object",
                "properties": { "a": { "type": "string", "x-mcp-header": "Region" } }
            },
            "zz": { "type": "string", "x-mcp-header": "REGION" }
        }));
        assert_eq!(
            valid_annotations(&schema),
            Err("property `zz`: duplicate x-mcp-header `REGION` (case-insensitive)".to_owned())
        );
    }

    #[test]
    fn non_primitive_type_fails() {
        let array = with_properties(json!({ "a": { "type": "array", "x-mcp-header": "A" } }));
        assert_eq!(
            valid_annotations(&array),
            Err("property `a`: x-mcp-header requires a primitive type \
                 (string/integer/boolean), got Some(\"array\")"
                .to_owned())
        );
        let number = with_properties(json!({ "n": { "type": "number", "x-mcp-header": "N" } }));
        assert!(
            valid_annotations(&number)
                .is_err_and(|reason| reason.ends_with("got Some(\"number\")"))
        );
        let untyped = with_properties(json!({ "u": { "x-mcp-header": "U" } }));
        assert!(valid_annotations(&untyped).is_err_and(|reason| reason.ends_with("got None")));
    }
}
