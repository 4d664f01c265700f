//! A field of a partial update (a PATCH body) whose `null` means something: left out, it keeps
//! what is stored; `null`, it removes it; a value, it replaces it. An `Option<Option<T>>` says
//! the same but hides which `None` is which, and serde reads both layers from `null` unless told
//! otherwise.
//!
//! Only the fields a PATCH may remove are one of these (`auth` of `mcp/server/update`); its other
//! fields are `Option`s, their `null` dropped before reading (`nulls.rs`), since a server has no
//! "no name" nor "no timeout" to go back to.
//!
//! Its schema is `T`'s, nullable. A field says so with `#[schema(value_type = Option<T>)]`:
//! utoipa names the schema of a generic field type after the type and its parameter
//! (`Patch_OAuthConfig`), a component of its own where the document refers to `T`'s.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What a partial update does to one field.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Patch<T> {
    /// The field was left out: it stays as it is.
    #[default]
    Absent,
    /// The field was `null`: it is removed.
    Null,
    /// The field was given: it takes this value.
    Value(T),
}

impl<T> Patch<T> {
    /// Whether the field was left out (so is left out when written back).
    pub fn is_absent(&self) -> bool {
        matches!(self, Self::Absent)
    }

    /// The same update with the given value changed by `f`.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Patch<U> {
        match self {
            Self::Absent => Patch::Absent,
            Self::Null => Patch::Null,
            Self::Value(value) => Patch::Value(f(value)),
        }
    }

    /// The field after the update, from what is stored: kept, removed or replaced.
    pub fn apply(self, stored: Option<T>) -> Option<T> {
        match self {
            Self::Absent => stored,
            Self::Null => None,
            Self::Value(value) => Some(value),
        }
    }
}

impl<T> From<Option<T>> for Patch<T> {
    /// A field that is present: `None` is `null`.
    fn from(value: Option<T>) -> Self {
        value.map_or(Self::Null, Self::Value)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Patch<T> {
    /// Reads a field that is there; one left out takes the default, [`Patch::Absent`], by the
    /// `#[serde(default)]` of its struct.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Option::<T>::deserialize(deserializer).map(Self::from)
    }
}

impl<T: Serialize> Serialize for Patch<T> {
    /// Writes `null` for a removal. An absent field is skipped by its
    /// `skip_serializing_if = "Patch::is_absent"`; written anyway (a schema's default), it is
    /// `null` too.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Absent | Self::Null => serializer.serialize_none(),
            Self::Value(value) => serializer.serialize_some(value),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::Patch;

    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize, Default)]
    #[serde(default)]
    struct Change {
        #[serde(skip_serializing_if = "Patch::is_absent")]
        limit: Patch<u64>,
    }

    #[test]
    fn absent_null_and_a_value_read_apart_and_write_back() {
        let read = |v: Value| serde_json::from_value::<Change>(v).unwrap().limit;
        assert_eq!(read(json!({})), Patch::Absent);
        assert_eq!(read(json!({"limit": null})), Patch::Null);
        assert_eq!(read(json!({"limit": 3})), Patch::Value(3));
        assert!(serde_json::from_value::<Change>(json!({"limit": "three"})).is_err());
        for body in [json!({}), json!({"limit": null}), json!({"limit": 3})] {
            let change: Change = serde_json::from_value(body.clone()).unwrap();
            assert_eq!(serde_json::to_value(&change).unwrap(), body);
        }
    }

    #[test]
    fn applied_it_keeps_removes_or_replaces() {
        assert_eq!(Patch::Absent.apply(Some(1)), Some(1));
        assert_eq!(Patch::Null.apply(Some(1)), None);
        assert_eq!(Patch::Value(2).apply(Some(1)), Some(2));
        assert_eq!(Patch::Value(2).apply(None), Some(2));
        assert_eq!(Patch::Value(2).map(|v| v * 10), Patch::Value(20));
        assert_eq!(Patch::<u64>::Null.map(|v| v * 10), Patch::Null);
    }
}
