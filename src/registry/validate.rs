//! Checks a server config before anything is connected or stored: every refusal says which field
//! is wrong and why.

use axum::http::{HeaderName, HeaderValue};

use super::naming;
use crate::a2e::{McpServerConfig, McpTransport, OAuthConfig, OAuthGrant, TokenEndpointAuth};
use crate::guard::Guard;

/// Longest `timeout` / `connect_timeout` accepted, in seconds (one day).
const MAX_TIMEOUT: u64 = 86_400;

/// Checks `config` (with its `server_id` already set).
pub fn check_config(config: &McpServerConfig, guard: &Guard) -> Result<(), String> {
    naming::check_server_id(&config.server_id)?;
    for (field, value) in [
        ("timeout", config.timeout),
        ("connect_timeout", config.connect_timeout),
    ] {
        if !(1..=MAX_TIMEOUT).contains(&value) {
            return Err(format!(
                "`{field}` must be between 1 and {MAX_TIMEOUT} seconds"
            ));
        }
    }
    for (list, name) in [
        (&config.tool_allow_list, "tool_allow_list"),
        (&config.resource_allow_list, "resource_allow_list"),
    ] {
        if list.iter().any(|entry| entry.is_empty()) {
            return Err(format!("`{name}` must not contain an empty entry"));
        }
    }
    match config.transport {
        McpTransport::Stdio => check_stdio(config)?,
        McpTransport::Http | McpTransport::Sse | McpTransport::Ws => check_remote(config, guard)?,
    }
    if let Some(identity) = &config.identity {
        check_identity(config, identity)?;
    }
    match &config.auth {
        Some(_) if config.transport == McpTransport::Stdio => Err(
            "`auth` (OAuth) is for http, sse and ws servers; a stdio server takes its credentials in `env`"
                .into(),
        ),
        Some(auth) => check_auth(auth),
        None => Ok(()),
    }
}

/// `identity`: for a server reached over HTTP, header names the bridge may set and templates
/// that parse, and no second source of the `Authorization` header.
fn check_identity(
    config: &McpServerConfig,
    identity: &crate::a2e::UpstreamIdentity,
) -> Result<(), String> {
    if identity.is_set() && config.transport == McpTransport::Stdio {
        return Err(
            "`identity` (headers to the server) is for http, sse and ws servers, not stdio".into(),
        );
    }
    // Each agent's connection takes its OAuth grant under the agent's name: a shared grant
    // (held under no agent's) would be found on none of them.
    if identity.is_set()
        && let Some(auth) = &config.auth
        && !auth.per_agent
        && auth.grant_type != OAuthGrant::TokenExchange
    {
        return Err(
            "`identity` gives each agent a connection of its own, which a shared `auth` grant \
             cannot serve: make it `per_agent`, or use `token_exchange`"
                .into(),
        );
    }
    for (name, template) in &identity.headers {
        crate::upstream::identity::check_header(name, template)?;
        if config.headers.keys().any(|h| h.eq_ignore_ascii_case(name)) {
            return Err(format!(
                "`identity.headers`: \"{name}\" is also in `headers`: give it once"
            ));
        }
    }
    if identity.forward_token {
        let exchanged = config
            .auth
            .as_ref()
            .is_some_and(|a| a.grant_type == OAuthGrant::TokenExchange);
        let fixed = config
            .headers
            .keys()
            .any(|h| h.eq_ignore_ascii_case("authorization"));
        if exchanged || fixed {
            return Err(
                "`identity.forward_token` sends the agent's own token as `Authorization`, which \
                 `auth` (token_exchange) or `headers` already set: choose one"
                    .into(),
            );
        }
    }
    Ok(())
}

/// A URL agents' tokens are sent to (a token endpoint, an identity provider): https, or http to
/// a loopback address only, so that no token crosses a network in the clear.
fn token_url(field: &str, value: &str) -> Result<(), String> {
    let url = url::Url::parse(value).map_err(|e| format!("`{field}` is not a URL: {e}"))?;
    let loopback = match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    };
    match url.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        _ => Err(format!(
            "`{field}` must be an https URL (http only to a loopback address): agents' tokens \
             go there"
        )),
    }
}

/// The settings of `auth.grant_type` token_exchange: the bridge's client at the authorization
/// server, and nothing the exchange would not use.
fn check_exchange(auth: &OAuthConfig) -> Result<(), String> {
    if auth.client_id.is_none() {
        return Err(
            "`auth.grant_type` token_exchange needs `auth.client_id` (the bridge's client at the \
             authorization server)"
                .into(),
        );
    }
    if auth.private_key.is_some() {
        return Err(
            "`auth.grant_type` token_exchange authenticates with `auth.client_secret` (or none), \
             not `auth.private_key`"
                .into(),
        );
    }
    if let Some(value) = &auth.resource
        && reqwest::Url::parse(value)
            .map(|u| !matches!(u.scheme(), "http" | "https"))
            .unwrap_or(true)
    {
        return Err("`auth.resource` must be an http or https URL".into());
    }
    if let Some(value) = &auth.token_endpoint {
        token_url("auth.token_endpoint", value)?;
    }
    if auth
        .audience
        .as_deref()
        .is_some_and(|a| a.trim().is_empty())
    {
        return Err("`auth.audience` must not be empty when given".into());
    }
    Ok(())
}

/// The OAuth settings hang together: what each grant and token endpoint method needs is there,
/// and nothing is given that would be ignored. A secret is never quoted back.
fn check_auth(auth: &OAuthConfig) -> Result<(), String> {
    let client_credentials = auth.grant_type == OAuthGrant::ClientCredentials;
    for (field, value) in [
        ("client_id", &auth.client_id),
        ("client_secret", &auth.client_secret),
        ("private_key", &auth.private_key),
    ] {
        if value.as_deref().is_some_and(|v| v.trim().is_empty()) {
            return Err(format!("`auth.{field}` must not be empty when given"));
        }
    }
    if auth.grant_type == OAuthGrant::TokenExchange {
        check_exchange(auth)?;
    } else if auth.token_endpoint.is_some() || auth.audience.is_some() || auth.resource.is_some() {
        return Err(
            "`auth.token_endpoint`, `auth.audience` and `auth.resource` are settings of \
             `auth.grant_type` token_exchange"
                .into(),
        );
    }
    if auth.client_secret.is_some() && auth.client_id.is_none() {
        return Err("`auth.client_secret` needs the `auth.client_id` it belongs to".into());
    }
    if client_credentials && auth.client_id.is_none() {
        return Err("`auth.grant_type` client_credentials needs `auth.client_id`".into());
    }
    if client_credentials && auth.client_secret.is_none() && auth.private_key.is_none() {
        return Err(
            "`auth.grant_type` client_credentials needs `auth.client_secret` or `auth.private_key`"
                .into(),
        );
    }
    if auth.per_agent && client_credentials {
        return Err(
            "`auth.per_agent` needs `auth.grant_type` authorization_code: with client_credentials \
             there is no person for each agent to authorize as"
                .into(),
        );
    }
    check_id_jag(auth)?;
    check_token_endpoint_auth(auth)?;
    if let Some(key) = &auth.private_key {
        check_private_key(key)?;
    }
    for scope in &auth.scopes {
        check_scope(scope)?;
    }
    Ok(())
}

/// The `id_jag` grant (enterprise-managed authorization): its client at the authorization
/// server, its identity provider, and whose identity assertion it uses (the configured one on a
/// shared server, each agent's own token on a `per_agent` one: exactly one of the two).
fn check_id_jag(auth: &OAuthConfig) -> Result<(), String> {
    let id_jag = auth.grant_type == OAuthGrant::IdJag;
    if !id_jag {
        return match (&auth.idp, &auth.identity_assertion) {
            (None, None) => Ok(()),
            _ => Err(
                "`auth.idp` and `auth.identity_assertion` are for `auth.grant_type` id_jag".into(),
            ),
        };
    }
    if auth.client_id.is_none() {
        return Err(
            "`auth.grant_type` id_jag needs `auth.client_id` (the bridge's client at the \
             server's authorization server)"
                .into(),
        );
    }
    let Some(idp) = &auth.idp else {
        return Err(
            "`auth.grant_type` id_jag needs `auth.idp` (issuer, token_endpoint, client_id)".into(),
        );
    };
    for (field, value) in [
        ("issuer", &idp.issuer),
        ("token_endpoint", &idp.token_endpoint),
        ("client_id", &idp.client_id),
    ] {
        if value.trim().is_empty() {
            return Err(format!("`auth.idp.{field}` must not be empty"));
        }
    }
    token_url("auth.idp.issuer", &idp.issuer)?;
    token_url("auth.idp.token_endpoint", &idp.token_endpoint)?;
    if idp
        .client_secret
        .as_deref()
        .is_some_and(|v| v.trim().is_empty())
    {
        return Err("`auth.idp.client_secret` must not be empty when given".into());
    }
    match (auth.per_agent, &auth.identity_assertion) {
        (true, Some(_)) => Err(
            "`auth.identity_assertion` is for a shared server: on a `per_agent` \
             server each agent's own bearer token is its identity assertion"
                .into(),
        ),
        (false, None) => Err(
            "`auth.grant_type` id_jag needs `auth.identity_assertion` (the ID \
             token its ID-JAGs are asked with), or `auth.per_agent` (each agent's own token)"
                .into(),
        ),
        (false, Some(assertion)) if assertion.trim().is_empty() => {
            Err("`auth.identity_assertion` must not be empty when given".into())
        }
        _ => Ok(()),
    }
}

/// `token_endpoint_auth_method` and the credentials it uses; a `private_key` serves
/// private_key_jwt only, which serves client_credentials only.
fn check_token_endpoint_auth(auth: &OAuthConfig) -> Result<(), String> {
    use TokenEndpointAuth::{ClientSecretBasic, ClientSecretPost, PrivateKeyJwt};
    let client_credentials = auth.grant_type == OAuthGrant::ClientCredentials;
    match auth.token_endpoint_auth_method {
        Some(PrivateKeyJwt) if !client_credentials => {
            return Err(
                "`auth.token_endpoint_auth_method` private_key_jwt needs `auth.grant_type` client_credentials"
                    .into(),
            );
        }
        Some(PrivateKeyJwt) if auth.private_key.is_none() => {
            return Err(
                "`auth.token_endpoint_auth_method` private_key_jwt needs `auth.private_key`".into(),
            );
        }
        Some(method @ (ClientSecretBasic | ClientSecretPost | TokenEndpointAuth::None))
            if auth.private_key.is_some() =>
        {
            return Err(format!(
                "`auth.private_key` is only used by private_key_jwt, not {}",
                method.as_str()
            ));
        }
        Some(TokenEndpointAuth::None) if auth.client_secret.is_some() => {
            return Err(
                "`auth.token_endpoint_auth_method` none sends no secret: leave out `auth.client_secret`"
                    .into(),
            );
        }
        _ => {}
    }
    if auth.private_key.is_some() && !client_credentials {
        return Err(
            "`auth.private_key` (for private_key_jwt) needs `auth.grant_type` client_credentials"
                .into(),
        );
    }
    Ok(())
}

/// A PEM private key the bridge can sign a client assertion with: RSA (PKCS#1 or PKCS#8) or EC
/// (PKCS#8). The error names neither the key nor the parser's reason, which may quote it.
fn check_private_key(pem: &str) -> Result<(), String> {
    use jsonwebtoken::EncodingKey;
    let bytes = pem.trim().as_bytes();
    if EncodingKey::from_rsa_pem(bytes).is_ok() || EncodingKey::from_ec_pem(bytes).is_ok() {
        return Ok(());
    }
    Err(
        "`auth.private_key` is not a PEM private key the bridge can use: it takes RSA \
         (`BEGIN RSA PRIVATE KEY` or `BEGIN PRIVATE KEY`) or EC in PKCS#8 (`BEGIN PRIVATE KEY`; \
         convert an `EC PRIVATE KEY` with `openssl pkcs8 -topk8 -nocrypt`)"
            .into(),
    )
}

/// A scope token as RFC 6749 (3.3) defines it: printable ASCII, no space, `"` or `\`.
fn check_scope(scope: &str) -> Result<(), String> {
    if scope.is_empty() {
        return Err("`auth.scopes` must not contain an empty entry".into());
    }
    if scope.chars().any(char::is_whitespace) {
        return Err(format!(
            "`auth.scopes` entry \"{}\" contains a space: give each scope as its own entry",
            scope.escape_debug()
        ));
    }
    if !scope
        .chars()
        .all(|c| c.is_ascii_graphic() && c != '"' && c != '\\')
    {
        return Err(format!(
            "`auth.scopes` entry \"{}\" is not a scope (printable ASCII without `\"` or `\\`)",
            scope.escape_debug()
        ));
    }
    Ok(())
}

fn check_stdio(config: &McpServerConfig) -> Result<(), String> {
    if config
        .cmd
        .first()
        .is_none_or(|program| program.trim().is_empty())
    {
        return Err("a stdio server needs a command: `cmd` must start with a program".into());
    }
    if config.cmd.iter().any(|arg| arg.contains('\0')) {
        return Err("`cmd` must not contain NUL characters".into());
    }
    for (name, value) in &config.env {
        if name.is_empty() || name.contains('=') || name.contains('\0') || value.contains('\0') {
            return Err(format!(
                "`env` entry \"{name}\" is not a valid environment variable"
            ));
        }
    }
    Ok(())
}

fn check_remote(config: &McpServerConfig, guard: &Guard) -> Result<(), String> {
    let schemes: &[&str] = match config.transport {
        McpTransport::Ws => &["ws", "wss"],
        _ => &["http", "https"],
    };
    let url = reqwest::Url::parse(&config.url)
        .map_err(|e| format!("`url` \"{}\" is not a valid URL: {e}", config.url))?;
    if !schemes.contains(&url.scheme()) {
        return Err(format!(
            "`url` of a {} server must use {}",
            config.transport.as_str(),
            schemes.join(" or ")
        ));
    }
    crate::guard::check_host_syntax(&url).map_err(|e| format!("`url`: {e}"))?;
    guard
        .check_url(&url)
        .map_err(|refused| format!("`url`: {refused}"))?;
    for (name, value) in &config.headers {
        let header = HeaderName::try_from(name.as_str())
            .map_err(|_| format!("`headers` entry \"{name}\" is not a valid header name"))?;
        if HeaderValue::try_from(value.as_str()).is_err() {
            return Err(format!(
                "the value of header \"{header}\" is not a valid header value"
            ));
        }
        if matches!(
            header.as_str(),
            "accept" | "mcp-session-id" | "last-event-id" | "host" | "content-length"
        ) {
            return Err(format!(
                "header \"{header}\" is set by the transport and cannot be configured"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(config: &McpServerConfig) -> Result<(), String> {
        check_config(config, &Guard::default())
    }

    fn http(url: &str) -> McpServerConfig {
        McpServerConfig {
            server_id: "s".into(),
            transport: McpTransport::Http,
            url: url.into(),
            ..Default::default()
        }
    }

    #[test]
    fn stdio_needs_a_command() {
        let mut config = McpServerConfig {
            server_id: "s".into(),
            ..Default::default()
        };
        assert!(check(&config).unwrap_err().contains("cmd"));
        config.cmd = vec!["  ".into()];
        assert!(check(&config).is_err());
        config.cmd = vec!["node".into(), "server.js".into()];
        assert!(check(&config).is_ok());
    }

    #[test]
    fn remote_urls() {
        assert!(check(&http("http://127.0.0.1:3000/mcp")).is_ok());
        assert!(check(&http("https://example.com/mcp")).is_ok());
        assert!(
            check(&http("ftp://example.com"))
                .unwrap_err()
                .contains("http")
        );
        assert!(check(&http("not a url")).is_err());
        for refused in [
            "http://169.254.169.254/latest",
            "http://[fe80::1]/mcp",
            "http://[::ffff:169.254.1.1]/",
            "http://metadata.google.internal/",
            "http://100.100.100.200/",
        ] {
            assert!(
                check(&http(refused)).unwrap_err().contains("address guard"),
                "{refused}"
            );
        }
    }

    #[test]
    fn headers_and_limits() {
        let mut config = http("http://127.0.0.1/mcp");
        config.headers.insert("bad header".into(), "x".into());
        assert!(check(&config).is_err());
        let mut config = http("http://127.0.0.1/mcp");
        config.headers.insert("Accept".into(), "x".into());
        assert!(check(&config).unwrap_err().contains("transport"));
        let mut config = http("http://127.0.0.1/mcp");
        config.timeout = 0;
        assert!(check(&config).unwrap_err().contains("timeout"));
    }
}

#[cfg(test)]
mod auth_tests {
    use super::*;
    use crate::a2e::OAuthKind;

    // Keys made for these tests only.
    const EC_PKCS8: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgenemQ8a9Y3J4BG8w
cMDMi9+qwI7dF2G8OsKc+gfJMd+hRANCAASuOhLPxue73TAowBFA0lauXqoh1ksi
Gu3bC1IydhEUY2wB7rg+OzQ5i9MoUyardKQaFE0AlxcXL4b+Z1OBz9H1
-----END PRIVATE KEY-----
";
    const RSA_PKCS1: &str = "-----BEGIN RSA PRIVATE KEY-----
MIICXAIBAAKBgQC+vRzgpPgfbW4EGHYCKKBH+fzhWdE6i6ApdTHwG2gFgd4ql74p
yrbJ7S9yBECwTasKDRzhcPusvVJUcdNeepju5E99i+Has3Zluj7dkphTw4xyqtYt
Gnbp26r8BQCMqtmg0Og1SVduYvMYmUKI9A1WJzY7zUARk5KWI5LZnFFpOwIDAQAB
AoGAVVX0uoj0PdNOumRbP8H/W9R7kDMICgJ4CLRXQE5yrqwYwsObH8WDHDqS1JcU
fgxxrpCJUE+lOfaGBCPc5lNBYjHQ2qO4oIiH4z3yAHHChH8CF2mPawGmWD0CmKRE
+W2+ESFFWVImy9cWE+NQqMvb/QfnHTWTBXtsFqnCVDiRqRkCQQDuqVmxDoExmtyO
+N0XyfvUaarmXe2IdVTBAIzY+Uc0gvDyqBqu+HpMtWkjNLJR6XCbLH8ifT8pHbQx
20eR+JW1AkEAzJh9V4k6/cE0jNktDaJ34EVKQ2Aeqa5yhsqMujcVqa5UTcZ6CV3K
1Y3aZ71ANk5kIRLwPBXntO0xuplD+lpZLwJBANHUqzr0WbpXQZuiSiDkQTkcPlmU
M4dKQV3/MdaCNIyCo311NyCm7kALL4j4h99kstB7arvUCngH2aoL9Pzt5hECQC1+
lxiY9loo1TOgs0j94KQpJDtZK1hV5zeb4LEjwJhroGlvAgIFLi5QjclVpuqsgc1s
9aiWwmBUAiPZIumPn5cCQGEmssHkOVqQ6ZxNMNsQbKVkmiDZavli4v6aHvYzNErJ
nGKU33fnA66d4O4NWtQ+hcwbpl++bGGYRucDITEtCAo=
-----END RSA PRIVATE KEY-----
";
    const EC_SEC1: &str = "-----BEGIN EC PRIVATE KEY-----
MHcCAQEEIKDJpxp+pht4oC6IOxXWY5u8joOs16DRoB7dzZF/uLpEoAoGCCqGSM49
AwEHoUQDQgAE7U/UU8gNvaFEdM2fB+IpUqDf9CSbGVxpigk+FGmWuLujDFPtNpPH
e4sDRwlV/D6fE53UEyNqRJ5T1RqgawdqdQ==
-----END EC PRIVATE KEY-----
";

    fn with_auth(transport: McpTransport, auth: OAuthConfig) -> Result<(), String> {
        let url = match transport {
            McpTransport::Ws => "ws://127.0.0.1/mcp",
            _ => "http://127.0.0.1/mcp",
        };
        let config = McpServerConfig {
            server_id: "s".into(),
            transport,
            url: url.into(),
            cmd: vec!["node".into()],
            auth: Some(auth),
            ..Default::default()
        };
        check_config(&config, &Guard::default())
    }

    fn check(auth: OAuthConfig) -> Result<(), String> {
        with_auth(McpTransport::Http, auth)
    }

    /// Client credentials with a pre-registered client and its secret.
    fn client_credentials() -> OAuthConfig {
        OAuthConfig {
            kind: OAuthKind::OAuth2,
            grant_type: OAuthGrant::ClientCredentials,
            client_id: Some("bridge".into()),
            client_secret: Some("s3cret".into()),
            ..Default::default()
        }
    }

    /// Client credentials signed with `key`.
    fn private_key_jwt(key: &str) -> OAuthConfig {
        OAuthConfig {
            client_secret: None,
            private_key: Some(key.into()),
            token_endpoint_auth_method: Some(TokenEndpointAuth::PrivateKeyJwt),
            ..client_credentials()
        }
    }

    #[test]
    fn auth_is_for_remote_servers_only() {
        for transport in [McpTransport::Http, McpTransport::Sse, McpTransport::Ws] {
            assert_eq!(with_auth(transport, OAuthConfig::default()), Ok(()));
        }
        let error = with_auth(McpTransport::Stdio, OAuthConfig::default()).unwrap_err();
        assert!(
            error.contains("`auth`") && error.contains("stdio"),
            "{error}"
        );
    }

    #[test]
    fn authorization_code_needs_nothing_configured() {
        assert_eq!(check(OAuthConfig::default()), Ok(()));
        let pre_registered = OAuthConfig {
            client_id: Some("bridge".into()),
            client_secret: Some("s3cret".into()),
            scopes: vec!["mcp:tools".into(), "offline_access".into()],
            token_endpoint_auth_method: Some(TokenEndpointAuth::ClientSecretPost),
            per_agent: true,
            ..Default::default()
        };
        assert_eq!(check(pre_registered), Ok(()));
    }

    #[test]
    fn client_credentials_need_a_client_and_a_credential() {
        assert_eq!(check(client_credentials()), Ok(()));
        let error = check(OAuthConfig {
            client_id: None,
            client_secret: None,
            ..client_credentials()
        })
        .unwrap_err();
        assert!(error.contains("client_id"), "{error}");
        let error = check(OAuthConfig {
            client_secret: None,
            ..client_credentials()
        })
        .unwrap_err();
        assert!(
            error.contains("client_secret") && error.contains("private_key"),
            "{error}"
        );
    }

    #[test]
    fn a_secret_needs_its_client_id() {
        let error = check(OAuthConfig {
            client_secret: Some("s3cret".into()),
            ..Default::default()
        })
        .unwrap_err();
        assert!(error.contains("client_id"), "{error}");
        assert!(!error.contains("s3cret"));
        let error = check(OAuthConfig {
            client_secret: Some(" ".into()),
            ..client_credentials()
        })
        .unwrap_err();
        assert!(error.contains("empty"), "{error}");
    }

    #[test]
    fn private_key_jwt_needs_a_key_and_client_credentials() {
        assert_eq!(check(private_key_jwt(EC_PKCS8)), Ok(()));
        assert_eq!(check(private_key_jwt(RSA_PKCS1)), Ok(()));
        // The method may be left for the key to imply.
        let implied = OAuthConfig {
            token_endpoint_auth_method: None,
            ..private_key_jwt(EC_PKCS8)
        };
        assert_eq!(check(implied), Ok(()));
        let error = check(OAuthConfig {
            private_key: None,
            client_secret: Some("s3cret".into()),
            ..private_key_jwt(EC_PKCS8)
        })
        .unwrap_err();
        assert!(
            error.contains("private_key_jwt needs `auth.private_key`"),
            "{error}"
        );
        let error = check(OAuthConfig {
            grant_type: OAuthGrant::AuthorizationCode,
            ..private_key_jwt(EC_PKCS8)
        })
        .unwrap_err();
        assert!(error.contains("client_credentials"), "{error}");
        // A key with authorization_code or another method would be ignored.
        let error = check(OAuthConfig {
            grant_type: OAuthGrant::AuthorizationCode,
            token_endpoint_auth_method: None,
            ..private_key_jwt(EC_PKCS8)
        })
        .unwrap_err();
        assert!(error.contains("client_credentials"), "{error}");
        let error = check(OAuthConfig {
            token_endpoint_auth_method: Some(TokenEndpointAuth::ClientSecretBasic),
            ..private_key_jwt(EC_PKCS8)
        })
        .unwrap_err();
        assert!(error.contains("client_secret_basic"), "{error}");
        let error = check(OAuthConfig {
            token_endpoint_auth_method: Some(TokenEndpointAuth::None),
            ..client_credentials()
        })
        .unwrap_err();
        assert!(error.contains("none"), "{error}");
    }

    #[test]
    fn a_private_key_must_be_a_usable_pem_key_and_is_never_quoted() {
        let public = "-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEAJe8ZOx75l2FCFVsnL+NQCJ9nt9EPVO7JyAYdHXelHgE=
-----END PUBLIC KEY-----
";
        let truncated = &EC_PKCS8[..120];
        for bad in ["not a key at all, just text", public, truncated, EC_SEC1] {
            let error = check(private_key_jwt(bad)).unwrap_err();
            assert!(error.contains("PEM private key"), "{error}");
            for line in bad.lines().filter(|l| l.len() > 8) {
                assert!(!error.contains(line), "the key is quoted: {error}");
            }
        }
        let error = check(private_key_jwt(EC_SEC1)).unwrap_err();
        assert!(error.contains("pkcs8"), "{error}");
    }

    #[test]
    fn per_agent_is_for_authorization_code_only() {
        let error = check(OAuthConfig {
            per_agent: true,
            ..client_credentials()
        })
        .unwrap_err();
        assert!(
            error.contains("per_agent") && error.contains("authorization_code"),
            "{error}"
        );
    }

    #[test]
    fn scopes_are_single_nonempty_tokens() {
        let with = |scopes: &[&str]| {
            check(OAuthConfig {
                scopes: scopes.iter().map(|s| s.to_string()).collect(),
                ..Default::default()
            })
        };
        assert_eq!(
            with(&["read", "mcp:tools", "https://x.example/scope"]),
            Ok(())
        );
        assert!(with(&[""]).unwrap_err().contains("empty"));
        let error = with(&["read write"]).unwrap_err();
        assert!(
            error.contains("space") && error.contains("read write"),
            "{error}"
        );
        assert!(with(&["tab\there"]).unwrap_err().contains("space"));
        assert!(with(&["quote\""]).unwrap_err().contains("not a scope"));
        assert!(with(&["sc\u{e9}pe"]).unwrap_err().contains("not a scope"));
    }
}
