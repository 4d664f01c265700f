//! Agents' tokens from a real identity provider (`tests/peers/oidc_provider.mjs`: panva's
//! oidc-provider, issuing JWT access tokens by the client credentials grant): the bridge finds
//! the provider's keys by OpenID Connect discovery, reads the roles where Keycloak puts them,
//! and goes on accepting tokens, with no call failing, while the provider rotates its key.

use std::sync::Arc;

use mcp_bridge::startup::Application;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

/// The provider, running until dropped.
pub struct Provider {
    _peer: Peer,
    pub issuer: String,
    client: reqwest::Client,
}

impl Provider {
    pub async fn start() -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut command = tokio::process::Command::new("node");
        command
            .arg(installed(peers_dir().join("oidc_provider.mjs")))
            .current_dir(peers_dir());
        // It says its port once it listens; its issuer is its base URL.
        let peer = reporting_peer(command, "", "http").await;
        Self {
            issuer: peer.url.clone(),
            _peer: peer,
            client: reqwest::Client::new(),
        }
    }

    /// An access token for the client `name` (alice, bob or root).
    pub async fn token(&self, name: &str) -> String {
        let answer = self
            .client
            .post(format!("{}/token", self.issuer))
            .basic_auth(name, Some(format!("{name}-secret")))
            .header("content-type", "application/x-www-form-urlencoded")
            .body("grant_type=client_credentials&scope=mcp")
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), StatusCode::OK);
        let body: Value = answer.json().await.unwrap();
        body["access_token"].as_str().unwrap().to_owned()
    }

    /// Rotates the signing key; the new key's id.
    async fn rotate(&self) -> String {
        let answer = self.test_route(reqwest::Method::POST, "rotate").await;
        answer["kid"].as_str().unwrap().to_owned()
    }

    /// How many times the JWKS was read.
    async fn jwks_fetches(&self) -> u64 {
        let answer = self.test_route(reqwest::Method::GET, "jwks-fetches").await;
        answer["fetches"].as_u64().unwrap()
    }

    /// What the fixture's own route `/test/{name}` answers.
    pub async fn test_route(&self, method: reqwest::Method, name: &str) -> Value {
        let url = format!("{}/test/{name}", self.issuer);
        let answer = self.client.request(method, url).send().await.unwrap();
        answer.json().await.unwrap()
    }
}

/// The service verifying the provider's tokens (found by discovery), roles at
/// `realm_access.roles`; its admin, alice and bob hold the provider's tokens.
pub async fn bridge_of(
    provider: &Provider,
) -> (TestApp, tokio::task::JoinHandle<std::io::Result<()>>) {
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let mut config = config(data_dir.path());
    // The SQLite file in the data dir whatever the pass: nothing here is the store's.
    config.database_url = None;
    config.jwt_secret = None;
    config.jwt_issuer = Some(provider.issuer.clone());
    config.jwt_discovery = true;
    config.jwt_audience = Some("mcp-bridge".into());
    config.jwt_roles_claim = "realm_access.roles".into();
    let app = Application::build(config)
        .await
        .expect("the service starts");
    let base = format!("http://{}", app.addr());
    let running = tokio::spawn(app.run_until_stopped());
    let mut test_app = TestApp::at(&base, data_dir);
    test_app.admin = provider.token("root").await;
    test_app.alice = provider.token("alice").await;
    test_app.bob = provider.token("bob").await;
    (test_app, running)
}

#[tokio::test]
async fn an_identity_providers_tokens_work_across_a_key_rotation() {
    let provider = Provider::start().await;
    let (app, running) = bridge_of(&provider).await;
    // Discovery, then the keys, once at start.
    assert_eq!(provider.jwks_fetches().await, 1);

    // root's role `admin` (in realm_access.roles) lets it register a stdio server; alice's
    // `lead` does not.
    let (status, body) = app
        .post(
            "/v1/servers",
            &app.alice,
            json!({"config": py_stdio("ps", &unique("idp"))}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    app.register_server(py_stdio("ps", &unique("idp"))).await;

    // A run of calls, each with a token fetched just before, across a rotation.
    let mut calls = 0;
    let mut rotated = None;
    for round in 0..40 {
        if round == 20 {
            rotated = Some(provider.rotate().await);
        }
        let token = provider
            .token(if round % 2 == 0 { "alice" } else { "bob" })
            .await;
        let (status, body) = app
            .call_as(&token, "ps__echo", json!({"text": format!("call {round}")}))
            .await;
        assert_eq!(status, StatusCode::OK, "call {round}: {body}");
        calls += 1;
    }
    assert_eq!(calls, 40);
    assert_eq!(rotated.as_deref(), Some("key-2"));
    // The first token of the new key had the keys fetched again, and no other did.
    assert_eq!(provider.jwks_fetches().await, 2);
    // Tokens of the old key, still valid, are still taken.
    let (status, _) = app.get("/v1/tools", &app.alice).await;
    assert_eq!(status, StatusCode::OK);

    running.abort();
}

#[tokio::test]
async fn tokens_the_provider_did_not_sign_are_refused_and_refetch_at_most_once_a_while() {
    let provider = Provider::start().await;
    let (app, running) = bridge_of(&provider).await;
    let token = provider.token("alice").await;
    let payload = token.split('.').nth(1).unwrap();
    let claims: Value = serde_json::from_slice(&base64_url(payload)).unwrap();

    // The provider's claims under an HMAC signature keyed by anything: refused at once (no key
    // of a published set verifies HMAC), with no fetch.
    let before = provider.jwks_fetches().await;
    let hmac = jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(b"anything").unwrap(),
    )
    .unwrap();
    let (status, body) = app.get("/v1/tools", &hmac).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(provider.jwks_fetches().await, before);

    // A key id the provider never had: the keys are asked for again, but not sooner than 5 s
    // after the last time, and once for all the tokens that wait meanwhile.
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
    header.kid = Some("no-such-key".into());
    let (_, payload_and_signature) = token.split_once('.').unwrap();
    let unknown = format!(
        "{}.{payload_and_signature}",
        base64_url_encode(&serde_json::to_vec(&header).unwrap())
    );
    let before = provider.jwks_fetches().await;
    let refused = futures::future::join_all((0..5).map(|_| app.get("/v1/tools", &unknown))).await;
    for (status, body) in refused {
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    }
    assert_eq!(provider.jwks_fetches().await - before, 1);

    // The provider's own token still works, and its 401 says where tokens come from.
    let (status, _) = app.get("/v1/tools", &app.alice).await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = app.get("/v1/tools", "not-a-jwt").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|m| m.contains("identity provider")),
        "{body}"
    );
    running.abort();
}

fn base64_url_encode(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn base64_url(text: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(text)
        .unwrap()
}
