//! Who is calling: the identity a verified bearer token names (its `sub`, its roles, whether it
//! holds the `admin` role, and its other claims). Every layer may know it; only the front ends
//! make one.

use std::sync::Arc;

use serde_json::{Map, Value};

/// The verified caller of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub id: String,
    pub admin: bool,
    /// The token's `roles`.
    pub roles: Vec<String>,
    /// The token's claims beyond `sub`, `exp`, `iat`, `iss`, `aud` and `roles` (access policies
    /// match on them).
    pub claims: Arc<Map<String, Value>>,
}

impl Caller {
    /// A caller with no claims: `admin` or none.
    pub fn new(id: impl Into<String>, admin: bool) -> Self {
        Self {
            id: id.into(),
            admin,
            roles: match admin {
                true => vec!["admin".to_owned()],
                false => Vec::new(),
            },
            claims: Arc::default(),
        }
    }

    /// Whether this caller may change, reconnect or remove what `owner` registered.
    pub fn may_manage(&self, owner: &str) -> bool {
        self.admin || self.id == owner
    }
}
