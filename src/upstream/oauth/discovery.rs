//! Where a server's authorization server is: rmcp's discovery, and for one case the 2025-03-26
//! revision's own.
//!
//! rmcp checks the `issuer` of authorization server metadata as RFC 8414 §3.3 says: it must be
//! the URL the metadata's well-known address was made from. For a server without protected
//! resource metadata (RFC 9728), rmcp looks for the metadata at the root of the server's origin,
//! so it wants the bare origin as the issuer. MCP 2025-03-26, which predates protected resource
//! metadata, put the authorization server at exactly that address ("the authorization base URL":
//! the server's URL without its path) and said nothing about its issuer, and servers of that
//! revision publish issuers with a path there (an authorization server mounted under `/oauth`,
//! say). Such metadata is taken here, and only when all of this holds:
//!
//! - the server publishes no protected resource metadata (its challenge names none, and neither
//!   well-known address has any): the 2025-03-26 case, where nothing else names its
//!   authorization server;
//! - rmcp refused the metadata at the root of the server's own origin, for its issuer;
//! - that issuer is on the server's own origin (scheme, host and port): only the path differs.
//!
//! Everything else keeps rmcp's check, a mismatch named by protected resource metadata first of
//! all (the attack the check is for: metadata claiming another authorization server's name).

use rmcp::transport::auth::{AuthError, AuthorizationManager, AuthorizationMetadata};

use super::OAuthError;
use super::guarded::GuardedHttp;

/// The authorization server metadata of the server at `url`, discovered from `challenge` (its
/// `WWW-Authenticate`, when it sent one) as rmcp does, or for a 2025-03-26 server as said above.
pub(super) async fn resolve(
    manager: &AuthorizationManager,
    http: &GuardedHttp,
    url: &str,
    challenge: Option<&str>,
) -> Result<AuthorizationMetadata, OAuthError> {
    match manager.resolve_metadata_from_challenge(challenge).await {
        Ok(resolved) => Ok(resolved.metadata),
        Err(AuthError::AuthorizationServerMismatch {
            expected_issuer,
            received_issuer,
        }) => {
            let legacy = of_2025_03_26(http, url, challenge, &expected_issuer, &received_issuer);
            match legacy.await {
                Some(metadata) => Ok(metadata),
                None => Err(http.explain(AuthError::AuthorizationServerMismatch {
                    expected_issuer,
                    received_issuer,
                })),
            }
        }
        Err(other) => Err(http.explain(other)),
    }
}

/// The server's origin, `scheme://host[:port]`, when `url` has one.
fn origin(url: &url::Url) -> Option<String> {
    url.has_host()
        .then(|| url.origin().ascii_serialization())
        .filter(|o| o != "null")
}

/// Whether a refused issuer may be taken as 2025-03-26 said: the refusal was for the metadata
/// at the root of the server's own origin, and the issuer it named is on that origin.
fn same_origin_mismatch(url: &str, expected: &str, received: &str) -> bool {
    let (Ok(server), Ok(expected), Ok(received)) = (
        url::Url::parse(url),
        url::Url::parse(expected),
        url::Url::parse(received),
    ) else {
        return false;
    };
    let Some(home) = origin(&server) else {
        return false;
    };
    let at_root = expected.path() == "/" || expected.path().is_empty();
    at_root
        && origin(&expected).as_deref() == Some(&home)
        && origin(&received).as_deref() == Some(&home)
}

/// The metadata at the root of the server's origin, when the 2025-03-26 case holds.
async fn of_2025_03_26(
    http: &GuardedHttp,
    url: &str,
    challenge: Option<&str>,
    expected: &str,
    received: &str,
) -> Option<AuthorizationMetadata> {
    let names_prm = challenge.is_some_and(|c| c.to_ascii_lowercase().contains("resource_metadata"));
    if names_prm || !same_origin_mismatch(url, expected, received) {
        return None;
    }
    let server = url::Url::parse(url).ok()?;
    let home = origin(&server)?;
    let path = server.path().trim_end_matches('/');
    for prm in [
        format!("{home}/.well-known/oauth-protected-resource{path}"),
        format!("{home}/.well-known/oauth-protected-resource"),
    ] {
        if get(http, &prm).await.is_some() {
            return None;
        }
    }
    let body = get(
        http,
        &format!("{home}/.well-known/oauth-authorization-server"),
    )
    .await?;
    let metadata: AuthorizationMetadata = serde_json::from_slice(&body).ok()?;
    let issuer = metadata.issuer.as_deref()?;
    // The one looked at is the one rmcp refused.
    (same_origin_mismatch(url, expected, issuer)).then_some(metadata)
}

/// The body of a `200` answer to a GET of `url`, through the guard.
async fn get(http: &GuardedHttp, url: &str) -> Option<Vec<u8>> {
    let request = oauth2::http::Request::builder()
        .method(oauth2::http::Method::GET)
        .uri(url)
        .header(oauth2::http::header::ACCEPT, "application/json")
        .body(Vec::new())
        .ok()?;
    let answer = http.send(request, false).await.ok()?;
    (answer.status() == oauth2::http::StatusCode::OK).then(|| answer.into_body())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_issuer_on_the_servers_own_origin_is_taken() {
        let url = "http://localhost:3000/mcp";
        let root = "http://localhost:3000/";
        assert!(same_origin_mismatch(
            url,
            root,
            "http://localhost:3000/oauth"
        ));
        assert!(same_origin_mismatch(
            url,
            "http://localhost:3000",
            "http://localhost:3000/a/b"
        ));
        // Another origin's name, another port, another scheme: refused as rmcp refuses them.
        assert!(!same_origin_mismatch(
            url,
            root,
            "https://attacker.example.com"
        ));
        assert!(!same_origin_mismatch(
            url,
            root,
            "http://localhost:3001/oauth"
        ));
        assert!(!same_origin_mismatch(
            url,
            root,
            "https://localhost:3000/oauth"
        ));
        // A refusal of metadata found elsewhere (path insertion, another server): not this case.
        assert!(!same_origin_mismatch(
            url,
            "http://localhost:3000/tenant",
            "http://localhost:3000/oauth"
        ));
        assert!(!same_origin_mismatch(
            url,
            "http://as.example/",
            "http://as.example/oauth"
        ));
    }
}
