//! Who is calling: the identity a verified bearer token names (its `sub`, its roles, whether it
//! holds the `admin` role, and its other claims). Every layer may know it; only the front ends
//! make one.

use std::sync::Arc;

use serde_json::{Map, Value};

/// The verified caller of a request. Cloned wherever a request goes (the auth check, the
/// handler, a call's origin and its progress): one reference count, not a copy of its id, roles
/// and claims each time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller(Arc<Identity>);

/// Who a caller is, as its token says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub id: String,
    pub admin: bool,
    /// The token's `roles`.
    pub roles: Vec<String>,
    /// The token's claims beyond `sub`, `exp`, `iat`, `iss`, `aud` and `roles` (access policies
    /// match on them).
    pub claims: Map<String, Value>,
}

impl Caller {
    /// A caller with no claims: `admin` or none.
    pub fn new(id: impl Into<String>, admin: bool) -> Self {
        Self::from(Identity {
            id: id.into(),
            admin,
            roles: match admin {
                true => vec!["admin".to_owned()],
                false => Vec::new(),
            },
            claims: Map::new(),
        })
    }

    /// The identity to change (copied first when another clone shares it).
    pub fn identity_mut(&mut self) -> &mut Identity {
        Arc::make_mut(&mut self.0)
    }

    /// Whether this caller may change, reconnect or remove what `owner` registered.
    pub fn may_manage(&self, owner: &str) -> bool {
        self.admin || self.id == owner
    }
}

impl From<Identity> for Caller {
    fn from(identity: Identity) -> Self {
        Self(Arc::new(identity))
    }
}

impl std::ops::Deref for Caller {
    type Target = Identity;

    fn deref(&self) -> &Identity {
        &self.0
    }
}
