//! Who is calling: the identity a verified bearer token names (its `sub`, and whether it holds
//! the `admin` role). Every layer may know it; only the front ends make one.

/// The verified caller of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub id: String,
    pub admin: bool,
}

impl Caller {
    /// Whether this caller may change, reconnect or remove what `owner` registered.
    pub fn may_manage(&self, owner: &str) -> bool {
        self.admin || self.id == owner
    }
}
