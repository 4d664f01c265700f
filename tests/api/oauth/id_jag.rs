//! Enterprise-managed authorization (SEP-990, `grant_type` id_jag): no person. The peer runs with
//! `--id-jag`, so it also plays the enterprise identity provider (tests/peers/id_jag_idp.py, issuer
//! `<origin>/idp`), which exchanges an ID token for an ID-JAG that its authorization server takes
//! as a JWT bearer grant from the pre-registered client `xaa-client`.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

use super::{assert_no_secret, discovered, secrets_of, whoami};

/// The peer's identity provider: an ID token for `sub` (what a person's sign-in yields).
async fn id_token(peer: &Peer, sub: &str) -> String {
    let answer: Value = reqwest::get(format!("{}/_idp/id_token?sub={sub}", peer.origin()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    answer["id_token"].as_str().unwrap().to_owned()
}

async fn idp(peer: &Peer, method: reqwest::Method, path: &str) -> Value {
    reqwest::Client::new()
        .request(method, format!("{}{path}", peer.origin()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// The `auth` of a shared id_jag server asking its ID-JAGs with `assertion`.
fn id_jag_auth(peer: &Peer, assertion: &str) -> Value {
    json!({
        "type": "oauth2",
        "grant_type": "id_jag",
        "client_id": "xaa-client",
        "client_secret": "xaa-secret",
        "scopes": ["mcp"],
        "idp": {
            "issuer": format!("{}/idp", peer.origin()),
            "token_endpoint": format!("{}/idp/token", peer.origin()),
            "client_id": "idp-client",
        },
        "identity_assertion": assertion,
    })
}

#[tokio::test]
async fn an_identity_assertion_gets_a_token_with_no_person_and_stays_secret() {
    let peer = oauth_peer(&["--id-jag", "--scopes", "mcp"]).await;
    let app = TestApp::builder().port(free_port()).spawn().await;
    let assertion = id_token(&peer, "carol@example.com").await;
    let mut config = discovered("xaa", &peer);
    config["auth"] = id_jag_auth(&peer, &assertion);
    let registered = app.register_server_as(&app.alice, config).await;
    app.wait_status("xaa", "ready", WAIT).await;

    // The upstream sees the person the identity provider vouched for, through the bridge's client.
    let who = whoami(&app, "xaa", &app.alice).await;
    assert_eq!(who["subject"], "carol@example.com", "{who}");
    assert_eq!(who["client_id"], "xaa-client", "{who}");
    assert_eq!(who["resource"], peer.url, "{who}");
    let bob = whoami(&app, "xaa", &app.bob).await;
    assert_eq!(bob["grant"], who["grant"], "one shared grant: {bob}");
    let stats = idp(&peer, reqwest::Method::GET, "/_idp/stats").await;
    assert_eq!(stats["exchanges"], 1, "one ID-JAG for the token: {stats}");
    assert_eq!(stats["redeemed"], 1, "{stats}");
    let oauth = peer.oauth_stats().await;
    assert_eq!(oauth["authorizations"], 0, "no person: {oauth}");
    assert_eq!(
        oauth["registrations"], 0,
        "the pre-registered client: {oauth}"
    );
    // Nothing for a person to authorize.
    let (status, body) = app.authorize("xaa", &app.alice).await;
    assert!(
        status.is_client_error() || status.is_server_error(),
        "{status} {body}"
    );
    assert!(body.get("authorization_url").is_none(), "{body}");

    // The assertion, the client secret and the access token are never shown, audited or stored plain.
    let (status, server) = app.server("xaa").await;
    assert_eq!(status, StatusCode::OK, "{server}");
    let auth = &server["config"]["auth"];
    assert_eq!(auth["identity_assertion"], "***", "{server}");
    assert_eq!(auth["client_secret"], "***", "{server}");
    assert_eq!(auth["idp"]["client_id"], "idp-client", "{server}");
    let mut secrets = secrets_of(&peer).await;
    secrets.push(assertion.clone());
    let mut seen = vec![
        ("POST /v1/servers", registered.to_string()),
        ("GET /v1/servers/xaa", server.to_string()),
    ];
    for (what, path) in [
        ("GET /v1/servers", "/v1/servers"),
        ("GET /v1/audit", "/v1/audit"),
    ] {
        let (_, body) = app.get(path, &app.admin).await;
        seen.push((what, body.to_string()));
    }
    for (what, text) in &seen {
        assert_no_secret(what, text, &secrets);
    }
    for entry in std::fs::read_dir(app.data_dir.path()).unwrap().flatten() {
        if entry.file_type().unwrap().is_file() {
            let text = String::from_utf8_lossy(&std::fs::read(entry.path()).unwrap()).into_owned();
            assert_no_secret(&entry.path().display().to_string(), &text, &secrets);
        }
    }

    // A change that sends the assertion back as shown keeps it: the server still works.
    let mut auth = id_jag_auth(&peer, "***");
    auth["client_secret"] = json!("***");
    let (status, body) = app
        .patch("/v1/servers/xaa", &app.alice, json!({ "auth": auth }))
        .await;
    assert!(status.is_success(), "{status} {body}");
    app.wait_status("xaa", "ready", WAIT).await;
    let again = whoami(&app, "xaa", &app.alice).await;
    assert_eq!(again["subject"], "carol@example.com", "{again}");
    app.stop().await;
}

#[tokio::test]
async fn a_refused_identity_ends_in_error_without_a_link_or_the_assertion() {
    let peer = oauth_peer(&["--id-jag", "--scopes", "mcp"]).await;
    let app = TestApp::builder().port(free_port()).spawn().await;
    let assertion = id_token(&peer, "mallory").await;
    idp(&peer, reqwest::Method::POST, "/_idp/deny?sub=mallory").await;
    let mut config = discovered("denied", &peer);
    config["auth"] = id_jag_auth(&peer, &assertion);
    // Registering connects at once: the refusal is the answer, as for any server that cannot be
    // reached (nothing is kept, nothing waits for a person).
    let (status, body) = app
        .post("/v1/servers", &app.alice, json!({ "config": config }))
        .await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
    let error = body["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("identity provider refused the grant (invalid_grant)"),
        "{body}"
    );
    assert!(!body.to_string().contains(&assertion), "{body}");
    assert!(body.get("authorization_url").is_none(), "{body}");
    let stats = idp(&peer, reqwest::Method::GET, "/_idp/stats").await;
    assert_eq!(stats["redeemed"], 0, "{stats}");
    assert_eq!(peer.oauth_stats().await["authorizations"], 0);
    app.stop().await;
}

/// On a `per_agent` server each agent's own bearer token is its identity assertion: here the
/// bridge and the identity provider share the key, so the provider's ID tokens are the agents'
/// bridge tokens, as when the bridge trusts the enterprise's provider (`MCP_BRIDGE_JWT_JWKS_URL`).
#[tokio::test]
async fn each_agents_own_token_is_its_identity_assertion_on_a_per_agent_server() {
    let peer = oauth_peer(&["--id-jag", "--scopes", "mcp", "--idp-key", SECRET]).await;
    let app = TestApp::builder().port(free_port()).spawn().await;
    // dana is an admin: a server that carries its callers' tokens is an admin's to register.
    let (dana, erin) = (
        id_token(&peer, "dana&roles=admin").await,
        id_token(&peer, "erin").await,
    );
    let mut config = discovered("xaa", &peer);
    let mut auth = id_jag_auth(&peer, "");
    auth.as_object_mut().unwrap().remove("identity_assertion");
    auth["per_agent"] = json!(true);
    config["auth"] = auth;
    // erin, no admin, may not: every caller's token would go where the config says.
    let (status, body) = app
        .post("/v1/servers", &erin, json!({ "config": config.clone() }))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    app.register_server_as(&dana, config).await;
    app.wait_status("xaa", "ready", WAIT).await;

    // Each agent reaches the upstream as itself, by an ID-JAG asked with its own token.
    let who = whoami(&app, "xaa", &dana).await;
    assert_eq!(who["subject"], "dana", "{who}");
    assert_eq!(who["client_id"], "xaa-client", "{who}");
    let other = whoami(&app, "xaa", &erin).await;
    assert_eq!(other["subject"], "erin", "{other}");
    assert_ne!(other["grant"], who["grant"], "a grant each: {other}");
    // A token is kept until it expires: calls again ask the provider for nothing more. (The
    // first is the server's own connection, which lists with its owner's identity.)
    whoami(&app, "xaa", &erin).await;
    whoami(&app, "xaa", &dana).await;
    let stats = idp(&peer, reqwest::Method::GET, "/_idp/stats").await;
    assert_eq!(
        stats["subjects"],
        json!(["dana", "dana", "erin"]),
        "{stats}"
    );

    // An agent the provider no longer lets reach the server is refused, with no link to open.
    let frank = id_token(&peer, "frank").await;
    idp(&peer, reqwest::Method::POST, "/_idp/deny?sub=frank").await;
    let (status, body) = app.call_as(&frank, "xaa__whoami", json!({})).await;
    assert!(
        status.is_client_error() || status.is_server_error(),
        "{status} {body}"
    );
    assert!(body.get("authorization_url").is_none(), "{body}");
    assert!(!body.to_string().contains(&frank), "{body}");
    let stats = idp(&peer, reqwest::Method::GET, "/_idp/stats").await;
    assert_eq!(stats["refused"], 1, "{stats}");
    app.stop().await;
}

#[tokio::test]
async fn id_jag_settings_that_do_not_hang_together_are_422() {
    let peer = oauth_peer(&["--id-jag", "--scopes", "mcp"]).await;
    let app = TestApp::builder().port(free_port()).spawn().await;
    let full = id_jag_auth(&peer, "an-id-token");
    let mut no_idp = full.clone();
    no_idp.as_object_mut().unwrap().remove("idp");
    let mut no_assertion = full.clone();
    no_assertion
        .as_object_mut()
        .unwrap()
        .remove("identity_assertion");
    let mut both = full.clone();
    both["per_agent"] = json!(true);
    let mut no_issuer = full.clone();
    no_issuer["idp"]["issuer"] = json!("");
    let mut elsewhere = json!({ "type": "oauth2", "client_id": "c" });
    elsewhere["identity_assertion"] = json!("an-id-token");
    for (what, auth) in [
        ("no idp", no_idp),
        ("no assertion", no_assertion),
        ("an assertion on a per_agent server", both),
        ("an empty idp issuer", no_issuer),
        ("an assertion for authorization_code", elsewhere),
    ] {
        let mut config = discovered("bad", &peer);
        config["auth"] = auth;
        let (status, body) = app
            .post("/v1/servers", &app.admin, json!({ "config": config }))
            .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{what}: {body}");
        assert!(!body.to_string().contains("an-id-token"), "{what}: {body}");
    }
    app.stop().await;
}
