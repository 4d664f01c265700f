//! OAuth to upstreams: the OAuth-protected peer, a browser approving consent, and the
//! authorize calls on `TestApp`.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::app::TestApp;
use super::peers::{Peer, installed, peers_dir, python, reporting_peer};

/// A plain HTTP client that follows no redirect (a TLS provider installed first: reqwest is built
/// without one, and no in-process service may have installed it yet).
fn browser() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

pub fn oauth_server() -> String {
    installed(peers_dir().join("oauth_server.py"))
}

/// `tests/peers/oauth_server.py` (an OAuth-protected MCP server and its auto-approving authorization
/// server, one origin) on `port` (0: any) with `extra` flags; its `url` is the MCP endpoint `/mcp`.
pub async fn oauth_peer_on(port: u16, extra: &[&str]) -> Peer {
    let port = port.to_string();
    let mut command = tokio::process::Command::new(python());
    command
        .args([oauth_server().as_str(), "--port", &port])
        .args(extra);
    reporting_peer(command, "/mcp", "http").await
}

/// [`oauth_peer_on`] on a free port.
pub async fn oauth_peer(extra: &[&str]) -> Peer {
    oauth_peer_on(0, extra).await
}

impl Peer {
    /// The peer's origin (`http://127.0.0.1:<port>`).
    pub fn origin(&self) -> String {
        let url = reqwest::Url::parse(&self.url).unwrap();
        url.origin().ascii_serialization()
    }

    /// The OAuth peer's `GET /_stats`: its counters, grants and every token it issued.
    pub async fn oauth_stats(&self) -> Value {
        let resp = browser()
            .get(format!("{}/_stats", self.origin()))
            .send()
            .await
            .expect("the OAuth peer answers /_stats");
        assert_eq!(resp.status(), StatusCode::OK);
        resp.json().await.unwrap()
    }

    /// The OAuth peer's `POST /_expire`: every access token it issued expires now.
    pub async fn oauth_expire(&self) {
        let resp = browser()
            .post(format!("{}/_expire", self.origin()))
            .send()
            .await
            .expect("the OAuth peer answers /_expire");
        assert_eq!(resp.status(), StatusCode::OK);
    }
}

/// What a browser sees opening an authorization URL whose authorization server approves at once:
/// the redirect it was sent to (the bridge's callback) and the callback's answer.
pub struct Consent {
    pub callback_url: String,
    pub status: StatusCode,
    pub body: String,
}

/// Opens `authorization_url` as a person's browser would: GET it, follow the authorization server's
/// redirect to the callback, and read the callback's answer (no bridge token on either request).
pub async fn approve(authorization_url: &str) -> Consent {
    let resp = browser()
        .get(authorization_url)
        .send()
        .await
        .expect("the authorization server answers");
    assert!(
        resp.status().is_redirection(),
        "the authorization server redirects at once, not {} {:?}",
        resp.status(),
        resp.text().await
    );
    let location = resp.headers()["location"].to_str().unwrap().to_owned();
    let callback_url = reqwest::Url::parse(authorization_url)
        .unwrap()
        .join(&location)
        .unwrap()
        .to_string();
    let (status, body) = open_callback(&callback_url).await;
    Consent {
        callback_url,
        status,
        body,
    }
}

/// GET `url` (a bridge OAuth callback) without a bridge token and without following redirects.
pub async fn open_callback(url: &str) -> (StatusCode, String) {
    let resp = browser()
        .get(url)
        .send()
        .await
        .expect("the bridge answers its callback");
    let status = resp.status();
    (status, resp.text().await.unwrap())
}

impl TestApp {
    /// `POST /v1/servers/{server_id}/authorize` as `token`: the status and the answer.
    pub async fn authorize(&self, server_id: &str, token: &str) -> (StatusCode, Value) {
        self.post(
            &format!("/v1/servers/{server_id}/authorize"),
            token,
            json!({}),
        )
        .await
    }

    /// [`Self::authorize`] as `token`, expecting success; the `authorization_url`.
    pub async fn authorization_url(&self, server_id: &str, token: &str) -> String {
        let (status, body) = self.authorize(server_id, token).await;
        assert_eq!(status, StatusCode::OK, "authorize failed: {body}");
        body["authorization_url"]
            .as_str()
            .unwrap_or_else(|| panic!("no authorization_url in {body}"))
            .to_owned()
    }
}
