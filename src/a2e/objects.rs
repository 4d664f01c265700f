//! The A2E objects a request carries, read from JSON objects only. serde's derived reading of a
//! struct also takes an array, its fields in order: `"task": []` started a task (the API
//! fuzzer's find), `"roots": [["file:///x"]]` was stored as a root, `"context": []` read as a
//! context with every field left out, and `"auth": []` was refused with "expected struct
//! OAuthConfig with 13 elements". Each field holding such an object reads it through one of
//! these (`#[serde(deserialize_with = …)]`), so an array gets the error any other wrong type
//! gets: "invalid type: sequence, expected an object".

use std::marker::PhantomData;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor, value::MapAccessDeserializer};

use super::Patch;

/// A `T` read from an object only.
struct Object<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Fields<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for Fields<T> {
            type Value = Object<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Object<T>, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map)).map(Object)
            }
        }
        deserializer.deserialize_map(Fields(PhantomData))
    }
}

/// A field that is an object.
pub fn object<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    Object::deserialize(d).map(|Object(value)| value)
}

/// A field that is an object or `null`.
pub fn optional_object<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<Object<T>>::deserialize(d).map(|value| value.map(|Object(value)| value))
}

/// A field that is a list of objects.
pub fn objects<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    let all = Vec::<Object<T>>::deserialize(d)?;
    Ok(all.into_iter().map(|Object(value)| value).collect())
}

/// A change to a field that is an object (`null` removes it).
pub fn patch_object<'de, D, T>(d: D) -> Result<Patch<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    optional_object(d).map(Patch::from)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::a2e::{
        CompletionRequest, McpServerConfig, RootsListResponse, RootsSetRequest,
        ServerRegisterRequest, ServerUpdateRequest,
    };

    /// The error serde_path_to_error gives for `body` read as `T` (as the API reads it), or
    /// None when it is read.
    fn refused<T: serde::de::DeserializeOwned>(body: serde_json::Value) -> Option<String> {
        let text = body.to_string();
        let through_value = serde_path_to_error::deserialize::<_, T>(body).err();
        // The API's fast path reads the bytes straight into the type: the same verdict.
        let through_bytes = serde_json::from_str::<T>(&text).err();
        assert_eq!(through_value.is_some(), through_bytes.is_some(), "{text}");
        through_value.map(|e| e.to_string())
    }

    #[test]
    fn an_array_is_not_read_as_a_nested_object() {
        let http = json!({"transport": "http", "url": "http://127.0.0.1:1/mcp"});
        let with = |field: &str, value| {
            let mut config = http.clone();
            config[field] = value;
            config
        };
        let cases = [
            (
                refused::<RootsSetRequest>(json!({"roots": [["file:///x"]]})),
                "roots[0]",
            ),
            (
                refused::<RootsListResponse>(json!({"roots": [[]]})),
                "roots[0]",
            ),
            (
                refused::<CompletionRequest>(json!({"argument": ["a", "b"]})),
                "argument",
            ),
            (
                refused::<CompletionRequest>(json!({"argument": {"name": "a"}, "context": []})),
                "context",
            ),
            (
                refused::<ServerRegisterRequest>(json!({"config": ["stdio"]})),
                "config",
            ),
            (
                refused::<ServerRegisterRequest>(json!({"config": with("auth", json!([]))})),
                "config.auth",
            ),
            (
                refused::<ServerRegisterRequest>(json!({"config": with("identity", json!([]))})),
                "config.identity",
            ),
            (
                refused::<ServerUpdateRequest>(json!({"server_id": "s", "auth": []})),
                "auth",
            ),
            (
                refused::<ServerUpdateRequest>(json!({"server_id": "s", "identity": [{}]})),
                "identity",
            ),
        ];
        for (error, path) in cases {
            let error = error.unwrap_or_else(|| panic!("{path}: an array was read"));
            assert_eq!(
                error,
                format!("{path}: invalid type: sequence, expected an object")
            );
        }
    }

    #[test]
    fn objects_and_nulls_are_read_as_before() {
        let set: RootsSetRequest =
            serde_json::from_value(json!({"roots": [{"uri": "file:///x"}]})).unwrap();
        assert_eq!(set.roots[0].uri, "file:///x");
        let asked: CompletionRequest = serde_json::from_value(json!({
            "argument": {"name": "a", "value": "b"}, "context": {"arguments": {"k": "v"}}
        }))
        .unwrap();
        assert_eq!(asked.argument.name, "a");
        assert_eq!(asked.context.unwrap().arguments["k"], "v");
        let asked: CompletionRequest =
            serde_json::from_value(json!({"argument": {"name": "a"}, "context": null})).unwrap();
        assert!(asked.context.is_none());
        let config: McpServerConfig = serde_json::from_value(json!({
            "transport": "http", "url": "http://127.0.0.1:1/mcp",
            "auth": {"type": "oauth2", "client_id": "c"}, "identity": null
        }))
        .unwrap();
        assert_eq!(config.auth.unwrap().client_id.as_deref(), Some("c"));
        assert!(config.identity.is_none());
        let update: ServerUpdateRequest =
            serde_json::from_value(json!({"server_id": "s", "auth": null})).unwrap();
        assert!(matches!(update.auth, crate::a2e::Patch::Null));
        let update: ServerUpdateRequest =
            serde_json::from_value(json!({"server_id": "s"})).unwrap();
        assert!(matches!(update.auth, crate::a2e::Patch::Absent));
        let update: ServerUpdateRequest =
            serde_json::from_value(json!({"server_id": "s", "identity": {}})).unwrap();
        assert!(matches!(update.identity, crate::a2e::Patch::Value(_)));
    }
}
