//! IdentityProvider: the enterprise identity provider of the ID-JAG grant (`auth.idp` of
//! OAuthConfig; the MCP enterprise-managed authorization extension, SEP-990).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::REDACTED;

/// RFC 8693's type of an OpenID Connect ID token, the default `subject_token_type`.
pub const ID_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:id_token";

/// IdentityProvider: where the bridge exchanges an identity assertion for an ID-JAG (an
/// Identity Assertion JWT Authorization Grant) by token exchange (RFC 8693), and how it
/// authenticates there.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct IdentityProvider {
    /// The identity provider's issuer identifier: the `iss` of the ID-JAGs it issues.
    #[schema(example = "https://idp.example.com")]
    pub issuer: String,
    /// The identity provider's token endpoint.
    #[schema(example = "https://idp.example.com/oauth2/token")]
    pub token_endpoint: String,
    /// The bridge's client at the identity provider (the audience of the ID tokens it
    /// exchanges).
    pub client_id: String,
    /// The secret of `client_id` (secret: shown as `***`); sent with HTTP Basic. Without it the
    /// bridge authenticates as a public client (`client_id` in the body).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// What the identity assertion is (RFC 8693 `subject_token_type`); by default an OpenID
    /// Connect ID token, `urn:ietf:params:oauth:token-type:id_token`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject_token_type: Option<String>,
}

/// The secret never appears in a log line.
impl std::fmt::Debug for IdentityProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdentityProvider")
            .field("issuer", &self.issuer)
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| REDACTED),
            )
            .field("subject_token_type", &self.subject_token_type)
            .finish()
    }
}

impl IdentityProvider {
    /// The `subject_token_type` sent: the configured one, else an ID token.
    pub fn subject_token_type(&self) -> &str {
        self.subject_token_type.as_deref().unwrap_or(ID_TOKEN_TYPE)
    }
}

#[cfg(test)]
mod tests {
    use crate::a2e::{OAuthConfig, OAuthGrant, REDACTED};

    #[test]
    fn the_assertion_and_the_idp_secret_are_secrets() {
        let auth: OAuthConfig = serde_json::from_value(serde_json::json!({
            "type": "oauth2", "grant_type": "id_jag", "client_id": "c", "client_secret": "cs",
            "idp": {"issuer": "https://idp", "token_endpoint": "https://idp/token",
                    "client_id": "i", "client_secret": "idp-s3cret"},
            "identity_assertion": "id-t0ken",
        }))
        .unwrap();
        assert_eq!(auth.grant_type, OAuthGrant::IdJag);
        let shown = auth.redacted();
        assert_eq!(shown.identity_assertion.as_deref(), Some(REDACTED));
        let idp = shown.idp.as_ref().unwrap();
        assert_eq!(idp.client_secret.as_deref(), Some(REDACTED));
        assert_eq!(idp.client_id, "i");
        let printed = format!("{auth:?}");
        assert!(
            !printed.contains("idp-s3cret") && !printed.contains("id-t0ken"),
            "{printed}"
        );
        let secrets = auth.secret_values();
        assert!(secrets.contains(&"idp-s3cret".to_owned()), "{secrets:?}");
        assert!(secrets.contains(&"id-t0ken".to_owned()), "{secrets:?}");
        // Sent back as shown, they keep what is stored.
        let kept = shown.keeping_secrets(Some(&auth));
        assert_eq!(kept, auth);
    }
}
