//! UpstreamIdentity: how a server sees which agent calls it, besides OAuth token exchange
//! (`identity` of MCPServerConfig): headers made from the caller's verified token, and, only when
//! asked in so many words, the caller's own token.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// UpstreamIdentity: the calling agent's identity sent to an `http`, `sse` or `ws` server as
/// headers. A server with `identity` is reached over one connection per agent (its headers are
/// the agent's), made on the agent's first call.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct UpstreamIdentity {
    /// Header name → template. `{sub}` is the agent's id, `{claims.NAME}` (dotted for nested
    /// objects, e.g. `{claims.realm_access.roles}`) a claim of its token, `{roles}` its roles
    /// separated by spaces; `{{` and `}}` are literal braces. A claim the token lacks makes the
    /// call fail; a value that is not visible ASCII (a CR, LF or NUL, say) is refused at call time.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schema(example = json!({"X-User": "{sub}", "X-Tenant": "{claims.tenant}"}))]
    pub headers: BTreeMap<String, String>,
    /// DANGEROUS: sends the agent's own bearer token (the one it presented to the bridge) to
    /// the server as `Authorization: Bearer …`. The server can then act as the agent wherever
    /// that token is accepted, including at this bridge. Prefer OAuth token exchange
    /// (`auth.grant_type` token_exchange), which gives the server a token for itself alone.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub forward_token: bool,
}

impl UpstreamIdentity {
    /// Whether it asks for anything.
    pub fn is_set(&self) -> bool {
        !self.headers.is_empty() || self.forward_token
    }
}
