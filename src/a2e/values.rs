//! The closed sets of values A2E fields take (protocol versions, roles, actions, sources), as
//! enums that read and write the same strings the fields always carried.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// How a session with an MCP server starts (`protocol_version` of MCPServerConfig).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
pub enum McpProtocol {
    /// The `initialize` handshake.
    #[default]
    #[serde(rename = "2025-11-25")]
    Legacy,
    /// Stateless, `server/discover`.
    #[serde(rename = "2026-07-28")]
    Stateless,
    /// Discover, falling back to `initialize`.
    #[serde(rename = "auto")]
    Auto,
}

impl McpProtocol {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Legacy => McpVersion::V2025_11_25.as_str(),
            Self::Stateless => McpVersion::V2026_07_28.as_str(),
            Self::Auto => "auto",
        }
    }
}

/// A version of the MCP protocol as peers name it (`protocolVersion`, the
/// `MCP-Protocol-Version` header), oldest first. [`McpProtocol`] is what a server's config may
/// ask for, a narrower set (and `auto`) whose schema lists exactly those.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum McpVersion {
    V2024_11_05,
    V2025_03_26,
    V2025_06_18,
    /// The last with sessions and the `initialize` handshake; the first with tasks.
    V2025_11_25,
    /// Stateless: no session, `server/discover`.
    V2026_07_28,
}

impl McpVersion {
    pub const ALL: [Self; 5] = [
        Self::V2024_11_05,
        Self::V2025_03_26,
        Self::V2025_06_18,
        Self::V2025_11_25,
        Self::V2026_07_28,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            Self::V2024_11_05 => "2024-11-05",
            Self::V2025_03_26 => "2025-03-26",
            Self::V2025_06_18 => "2025-06-18",
            Self::V2025_11_25 => "2025-11-25",
            Self::V2026_07_28 => "2026-07-28",
        }
    }

    /// The version named `version`; none for one the bridge does not know.
    pub fn parse(version: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == version)
    }

    /// Whether a peer speaking `version` speaks this one or a later one. Versions are dates, so
    /// a later one the bridge does not know yet still counts.
    pub fn reached_by(self, version: &str) -> bool {
        version >= self.as_str()
    }

    /// Whether this version has sessions (`Mcp-Session-Id`): all before the stateless one.
    pub fn has_sessions(self) -> bool {
        self < Self::V2026_07_28
    }
}

/// The kind of an upstream's `auth` (`type` of OAuthConfig): OAuth 2.1 is the only one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
pub enum OAuthKind {
    #[default]
    #[serde(rename = "oauth2")]
    OAuth2,
}

impl OAuthKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OAuth2 => "oauth2",
        }
    }
}

/// How the bridge obtains an upstream's token (`grant_type` of OAuthConfig).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum OAuthGrant {
    /// A person approves in a browser (PKCE); the bridge keeps and refreshes the token.
    #[default]
    AuthorizationCode,
    /// The bridge authenticates as itself, with a client secret or a private key; no person.
    ClientCredentials,
    /// RFC 8693: each calling agent's own token is exchanged for one naming the agent (`sub`)
    /// and the bridge (`act.sub`), for this server only; one connection per agent.
    TokenExchange,
    /// Enterprise-managed authorization (SEP-990): an identity assertion is exchanged at the
    /// identity provider (`idp`) for an ID-JAG, which the server's authorization server takes
    /// as a JWT bearer grant (RFC 7523); no person.
    IdJag,
}

impl OAuthGrant {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AuthorizationCode => "authorization_code",
            Self::ClientCredentials => "client_credentials",
            Self::TokenExchange => "token_exchange",
            Self::IdJag => "id_jag",
        }
    }
}

/// How the bridge authenticates at an upstream's token endpoint
/// (`token_endpoint_auth_method` of OAuthConfig, as RFC 7591 names them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TokenEndpointAuth {
    /// `client_secret` in an HTTP Basic `Authorization` header.
    ClientSecretBasic,
    /// `client_secret` in the form body.
    ClientSecretPost,
    /// A public client: no secret.
    None,
    /// A JWT signed with `private_key` (RFC 7523).
    PrivateKeyJwt,
}

impl TokenEndpointAuth {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ClientSecretBasic => "client_secret_basic",
            Self::ClientSecretPost => "client_secret_post",
            Self::None => "none",
            Self::PrivateKeyJwt => "private_key_jwt",
        }
    }
}

/// Who speaks a message, as MCP says (`role`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    /// The default of an answer to a sampling request, as the seed gives it.
    #[default]
    Assistant,
}

/// What the agent did with an elicitation (`action` of mcp/elicit/resp).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    Accept,
    Decline,
    Cancel,
}

/// Where a catalogue tool comes from (`source`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ToolSource {
    /// A tool of an MCP server.
    #[default]
    Mcp,
    /// An agent-bridge tool.
    A2a,
}

/// The kind of a resource content block (`type` of MCPResourceContent).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ContentKind {
    #[default]
    Text,
    /// Base64 in `blob`.
    Blob,
}

/// What an import did with one server (`action` of an import result).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ImportAction {
    Created,
    Replaced,
    Unchanged,
    /// Not registered because the file says so (`disabled: true`); `error` says why.
    Skipped,
    /// Nothing was changed; `error` says why.
    #[default]
    Failed,
}

impl ImportAction {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::Replaced => "replaced",
            Self::Unchanged => "unchanged",
            Self::Skipped => "skipped",
            Self::Failed => "failed",
        }
    }
}

/// The A2A protocol an agent speaks, as its card says (`protocol_version` of an A2A agent).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
pub enum A2aProtocol {
    /// PascalCase methods, the `A2A-Version: 1.0` header.
    #[default]
    #[serde(rename = "1.0")]
    V1_0,
    /// Slash-separated methods (`message/send`).
    #[serde(rename = "0.3")]
    V0_3,
}

impl A2aProtocol {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V1_0 => "1.0",
            Self::V0_3 => "0.3",
        }
    }
}

/// How the bridge calls an A2A agent (`binding` of an A2A agent): the protocol binding of the
/// card's interface it chose, named as cards name it (`protocolBinding`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
pub enum A2aBinding {
    /// JSON-RPC 2.0 requests posted to the endpoint URL.
    #[default]
    #[serde(rename = "JSONRPC")]
    JsonRpc,
    /// A2A 1.0 HTTP+JSON: one path per operation under the endpoint URL (`/message:send`,
    /// `/tasks/{id}`, …), errors as `google.rpc.Status` bodies.
    #[serde(rename = "HTTP+JSON")]
    HttpJson,
}

/// `#[serde(with)]` for an optional filter whose absence is written as an empty string, as A2E
/// filters are (`""` = all): `""` reads as `None`, and `None` is written `""`.
pub mod empty_is_none {
    use serde::de::value::StringDeserializer;
    use serde::de::{DeserializeOwned, Deserializer};
    use serde::{Deserialize, Serialize, Serializer};

    pub fn serialize<S: Serializer, T: Serialize>(
        value: &Option<T>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(value) => value.serialize(serializer),
            None => serializer.serialize_str(""),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>, T: DeserializeOwned>(
        deserializer: D,
    ) -> Result<Option<T>, D::Error> {
        let text = String::deserialize(deserializer)?;
        if text.is_empty() {
            return Ok(None);
        }
        T::deserialize(StringDeserializer::<D::Error>::new(text)).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// The wire string of a value.
    fn wire(value: impl Serialize) -> Value {
        serde_json::to_value(value).unwrap()
    }

    #[test]
    fn the_strings_on_the_wire_stay_as_they_were() {
        for protocol in [
            McpProtocol::Legacy,
            McpProtocol::Stateless,
            McpProtocol::Auto,
        ] {
            assert_eq!(wire(protocol), protocol.as_str());
        }
        assert_eq!(wire(McpProtocol::default()), "2025-11-25");
        for protocol in [A2aProtocol::V1_0, A2aProtocol::V0_3] {
            assert_eq!(wire(protocol), protocol.as_str());
        }
        assert_eq!(wire(Role::default()), "assistant");
        assert_eq!(wire(Role::User), "user");
        assert_eq!(wire(ElicitAction::Decline), "decline");
        assert_eq!(wire(ToolSource::A2a), "a2a");
        assert_eq!(wire(ContentKind::Blob), "blob");
        for action in [
            ImportAction::Created,
            ImportAction::Replaced,
            ImportAction::Unchanged,
            ImportAction::Skipped,
            ImportAction::Failed,
        ] {
            assert_eq!(wire(action), action.as_str());
        }
        assert_eq!(wire(OAuthKind::OAuth2), OAuthKind::OAuth2.as_str());
        assert_eq!(wire(OAuthGrant::default()), "authorization_code");
        for grant in [OAuthGrant::AuthorizationCode, OAuthGrant::ClientCredentials] {
            assert_eq!(wire(grant), grant.as_str());
        }
        assert_eq!(wire(OAuthGrant::IdJag), OAuthGrant::IdJag.as_str());
        for method in [
            TokenEndpointAuth::ClientSecretBasic,
            TokenEndpointAuth::ClientSecretPost,
            TokenEndpointAuth::None,
            TokenEndpointAuth::PrivateKeyJwt,
        ] {
            assert_eq!(wire(method), method.as_str());
        }
        assert!(serde_json::from_value::<OAuthKind>(json!("apikey")).is_err());
        assert!(serde_json::from_value::<OAuthGrant>(json!("password")).is_err());
        assert!(serde_json::from_value::<ElicitAction>(json!("maybe")).is_err());
        assert!(serde_json::from_value::<McpProtocol>(json!("2024-11-05")).is_err());
    }

    #[test]
    fn protocol_versions_parse_back_and_order_as_their_dates() {
        for version in McpVersion::ALL {
            assert_eq!(McpVersion::parse(version.as_str()), Some(version));
        }
        assert_eq!(McpVersion::parse("2024-10-07"), None);
        for pair in McpVersion::ALL.windows(2) {
            assert!(pair[0] < pair[1]);
            assert!(pair[0].as_str() < pair[1].as_str());
        }
        assert!(McpVersion::V2025_11_25.reached_by("2025-11-25"));
        assert!(McpVersion::V2025_11_25.reached_by("2027-01-01"));
        assert!(!McpVersion::V2025_11_25.reached_by("2025-06-18"));
        assert!(McpVersion::V2024_11_05.has_sessions() && McpVersion::V2025_11_25.has_sessions());
        assert!(!McpVersion::V2026_07_28.has_sessions());
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Filter {
        #[serde(default, with = "empty_is_none")]
        source: Option<ToolSource>,
    }

    #[test]
    fn an_empty_filter_is_none() {
        let read = |v: Value| serde_json::from_value::<Filter>(v);
        assert_eq!(read(json!({})).unwrap().source, None);
        assert_eq!(read(json!({"source": ""})).unwrap().source, None);
        assert_eq!(
            read(json!({"source": "a2a"})).unwrap().source,
            Some(ToolSource::A2a)
        );
        let error = read(json!({"source": "carrier"})).unwrap_err().to_string();
        assert!(error.contains("unknown variant `carrier`"), "{error}");
        assert_eq!(wire(Filter { source: None }), json!({"source": ""}));
        assert_eq!(
            wire(Filter {
                source: Some(ToolSource::Mcp)
            }),
            json!({"source": "mcp"})
        );
    }
}
