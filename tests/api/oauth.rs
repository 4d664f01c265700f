//! OAuth 2.1 to upstream servers, end to end: the real bridge against `tests/peers/oauth_server.py`
//! (an MCP server protected by an authorization server built from the Python SDK's auth support,
//! whose /authorize approves at once, so a plain GET plays the person). Here, discovery from a
//! bare 401, the callback and its `state`, who may authorize, pre-registered credentials, and
//! tokens that never leave the bridge, with the helpers every OAuth test uses; restarts and
//! refresh are in `refresh`, `per_agent` servers in `per_agent`, faulty upstreams in `faults`.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

mod faults;
mod id_jag;
mod per_agent;
mod refresh;

/// The plain http config of the peer, without `auth` (the bridge discovers OAuth from the 401).
fn discovered(server_id: &str, peer: &Peer) -> Value {
    json!({ "server_id": server_id, "transport": "http", "url": peer.url, "connect_timeout": 5 })
}

/// The peer's `whoami` through the bridge as `token`: the grant its token belongs to.
async fn whoami(app: &TestApp, server_id: &str, token: &str) -> Value {
    let (status, body) = app
        .call_as(token, &format!("{server_id}__whoami"), json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "whoami failed: {body}");
    assert_eq!(body["is_error"], false, "{body}");
    let text = body["content"][0]["text"].as_str().expect("a text block");
    let who: Value = serde_json::from_str(text).unwrap();
    assert!(who["grant"].is_u64(), "a token of a known grant: {who}");
    who
}

/// [`whoami`] as alice, again until the access token's generation is past `before`'s: a refresh.
async fn refreshed_after(app: &TestApp, server_id: &str, before: &Value) -> Value {
    let what = format!("a refreshed access token after {before}");
    wait_until(&what, WAIT, async || {
        let now = whoami(app, server_id, &app.alice).await;
        match now["generation"].as_u64() > before["generation"].as_u64() {
            true => Ok(now),
            false => Err(now.to_string()),
        }
    })
    .await
}

/// Asserts that a call as `token` is refused for want of that caller's authorization: 403
/// `mcp_auth_required` with an authorization URL at the peer's authorization endpoint.
async fn assert_auth_required(app: &TestApp, server_id: &str, token: &str, peer: &Peer) -> String {
    let (status, body) = app
        .call_as(token, &format!("{server_id}__whoami"), json!({}))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["code"], "mcp_auth_required", "{body}");
    assert_eq!(body["retryable"], false, "{body}");
    let url = body["authorization_url"]
        .as_str()
        .unwrap_or_else(|| panic!("authorization_url in {body}"));
    assert!(
        url.starts_with(&format!("{}/authorize?", peer.origin())),
        "the peer's authorization endpoint: {url}"
    );
    url.to_owned()
}

/// The query parameters of `url`.
fn query(url: &str) -> std::collections::HashMap<String, String> {
    reqwest::Url::parse(url)
        .unwrap()
        .query_pairs()
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// Approves `url` and expects the callback to answer 200.
async fn approve_ok(url: &str) -> Consent {
    let consent = approve(url).await;
    assert_eq!(
        consent.status,
        StatusCode::OK,
        "the callback {} answered {}",
        consent.callback_url,
        consent.body
    );
    consent
}

/// Every access and refresh token the peer issued, and every client secret it minted.
async fn secrets_of(peer: &Peer) -> Vec<String> {
    let stats = peer.oauth_stats().await;
    let mut all: Vec<String> = stats["issued_tokens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_owned())
        .collect();
    all.extend(
        stats["clients"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["client_secret"].as_str().map(str::to_owned)),
    );
    assert!(!all.is_empty(), "the peer issued something: {stats}");
    all
}

fn assert_no_secret(what: &str, text: &str, secrets: &[String]) {
    for secret in secrets {
        assert!(
            !text.contains(secret.as_str()),
            "{what} contains a token or client secret the peer issued: {text}"
        );
    }
}

#[tokio::test]
async fn a_bare_401_is_discovered_and_one_approval_makes_the_server_ready() {
    let peer = oauth_peer(&[]).await;
    let app = TestApp::builder().port(free_port()).spawn().await;
    let mut events = EventStream::open(&app, &app.alice, None).await;
    let server = app
        .register_server_as(&app.alice, discovered("guarded", &peer))
        .await;
    assert_ne!(server["status"], "ready", "no token yet: {server}");

    let waiting = app.wait_status("guarded", "auth_required", WAIT).await;
    assert_eq!(waiting["server_id"], "guarded");
    let event = events
        .wait_for("bridge/auth_required on the owner's stream", WAIT, |m| {
            is_push(m, "bridge/auth_required") && m.data["params"]["server_id"] == "guarded"
        })
        .await;
    let pushed = event.data["params"]["authorization_url"].as_str().unwrap();
    assert!(
        pushed.starts_with(&format!("{}/authorize?", peer.origin())),
        "{pushed}"
    );

    // Before anyone approves: a call is 403 mcp_auth_required (401 is the bridge's own token).
    assert_auth_required(&app, "guarded", &app.alice, &peer).await;
    let before = peer.oauth_stats().await;
    assert_eq!(before["code_exchanges"], 0, "{before}");

    let url = app.authorization_url("guarded", &app.alice).await;
    let params = query(&url);
    assert_eq!(params["response_type"], "code", "{url}");
    assert_eq!(params["code_challenge_method"], "S256", "{url}");
    assert!(params["code_challenge"].len() >= 43, "{url}");
    assert!(params["state"].len() >= 16, "an unguessable state: {url}");
    assert_eq!(params["resource"], peer.url, "the RFC 8707 resource: {url}");
    assert_eq!(
        params["redirect_uri"],
        format!("{}/oauth/callback", app.base),
        "the redirect URI under MCP_BRIDGE_PUBLIC_URL: {url}"
    );

    let consent = approve_ok(&url).await;
    assert!(
        consent
            .callback_url
            .starts_with(&format!("{}/oauth/callback?", app.base)),
        "{}",
        consent.callback_url
    );
    app.wait_status("guarded", "ready", WAIT).await;

    let who = whoami(&app, "guarded", &app.alice).await;
    assert_eq!(who["grant"], 1, "{who}");
    assert_eq!(
        who["resource"], peer.url,
        "a token for this resource: {who}"
    );
    assert!(
        who["scopes"].as_array().unwrap().contains(&json!("mcp")),
        "the scope the resource requires: {who}"
    );
    let body = app
        .call_tool("guarded__echo", json!({ "text": "through oauth" }))
        .await;
    assert_eq!(body["content"][0]["text"], "through oauth", "{body}");
    let mut tools = app.tool_names("?server_id=guarded").await;
    tools.sort();
    assert_eq!(tools, ["guarded__echo", "guarded__tell", "guarded__whoami"]);

    let stats = peer.oauth_stats().await;
    assert_eq!(
        stats["registrations"], 1,
        "one dynamic registration: {stats}"
    );
    assert_eq!(stats["code_exchanges"], 1, "{stats}");
    assert_eq!(stats["code_reuse"], 0, "{stats}");
    assert_eq!(
        stats["clients"][0]["client_id"], who["client_id"],
        "{stats}"
    );
    assert_eq!(
        stats["clients"][0]["redirect_uris"],
        json!([format!("{}/oauth/callback", app.base)]),
        "{stats}"
    );
    assert!(
        stats["resource_params"]["token"].as_u64().unwrap() >= 1,
        "the token request carries resource too: {stats}"
    );
    assert_eq!(stats["resources"], json!([peer.url]), "{stats}");
    app.stop().await;
}

#[tokio::test]
async fn the_callback_refuses_a_replayed_or_a_wrong_state() {
    let peer = oauth_peer(&[]).await;
    let app = TestApp::builder().port(free_port()).spawn().await;
    app.register_server_as(&app.alice, discovered("replayed", &peer))
        .await;
    app.wait_status("replayed", "auth_required", WAIT).await;

    // A state the bridge never issued, and no state at all, before any approval.
    let (status, body) = open_callback(&format!(
        "{}/oauth/callback?code=made-up&state=not-a-state-the-bridge-issued",
        app.base
    ))
    .await;
    assert!(status.is_client_error(), "a wrong state: {status} {body}");
    assert!(!body.trim().is_empty(), "a clear error");
    let (status, body) = open_callback(&format!("{}/oauth/callback?code=made-up", app.base)).await;
    assert!(status.is_client_error(), "no state: {status} {body}");
    assert_eq!(
        app.server("replayed").await.1["server"]["status"],
        "auth_required"
    );

    let url = app.authorization_url("replayed", &app.alice).await;
    let consent = approve_ok(&url).await;
    app.wait_status("replayed", "ready", WAIT).await;
    let who = whoami(&app, "replayed", &app.alice).await;
    let exchanged = peer.oauth_stats().await;
    assert_eq!(exchanged["code_exchanges"], 1, "{exchanged}");

    // The same redirect again (a replay), and the right code with a wrong state.
    let (status, body) = open_callback(&consent.callback_url).await;
    assert!(
        status.is_client_error(),
        "a replayed state: {status} {body}"
    );
    assert!(!body.trim().is_empty(), "a clear error");
    let code = &query(&consent.callback_url)["code"];
    let (status, body) = open_callback(&format!(
        "{}/oauth/callback?code={code}&state=wrong{}",
        app.base,
        &query(&consent.callback_url)["state"]
    ))
    .await;
    assert!(status.is_client_error(), "a wrong state: {status} {body}");

    // Nothing changed: no second exchange, the same grant, still ready.
    let after = peer.oauth_stats().await;
    assert_eq!(after["code_exchanges"], 1, "{after}");
    assert_eq!(
        after["code_reuse"], 0,
        "the bridge never presented the code again: {after}"
    );
    assert_eq!(app.server("replayed").await.1["server"]["status"], "ready");
    assert_eq!(
        whoami(&app, "replayed", &app.alice).await["grant"],
        who["grant"]
    );
    app.stop().await;
}

#[tokio::test]
async fn only_the_owner_or_an_admin_authorizes_a_shared_server() {
    let peer = oauth_peer(&[]).await;
    let app = TestApp::builder().port(free_port()).spawn().await;
    app.register_server_as(&app.alice, discovered("owned", &peer))
        .await;
    app.wait_status("owned", "auth_required", WAIT).await;

    // Bob can neither call it yet nor give the authorization it waits for.
    let (status, body) = app.call_as(&app.bob, "owned__whoami", json!({})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let (status, body) = app.authorize("owned", &app.bob).await;
    assert_eq!(
        status,
        StatusCode::FORBIDDEN,
        "bob is not the owner: {body}"
    );
    assert_eq!(body["code"], "forbidden", "{body}");
    let (status, body) = app.authorize("no-such-server", &app.alice).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");

    // The admin's approval serves everyone: the server holds one authorization.
    let url = app.authorization_url("owned", &app.admin).await;
    approve_ok(&url).await;
    app.wait_status("owned", "ready", WAIT).await;
    let alice = whoami(&app, "owned", &app.alice).await;
    let bob = whoami(&app, "owned", &app.bob).await;
    assert_eq!(alice["grant"], bob["grant"], "one shared grant");
    app.stop().await;
}

#[tokio::test]
async fn pre_registered_credentials_are_used_and_never_shown() {
    pre_registered("client_secret_post").await;
}

/// The SDK's authorization server wants `client_id` in the token request's body with Basic
/// authentication too (its token handler requires the field; RFC 6749 §4.1.3 makes it optional for
/// an authenticating client, and the SDK's own client always sends it).
#[tokio::test]
async fn pre_registered_credentials_with_client_secret_basic() {
    pre_registered("client_secret_basic").await;
}

/// A client the operator registered out of band, authenticating at the token endpoint by `method`.
async fn pre_registered(method: &str) {
    let peer = oauth_peer(&[]).await;
    let port = free_port();
    let app = TestApp::builder().port(port).spawn().await;
    let callback = format!("http://127.0.0.1:{port}/oauth/callback");
    // The operator registers the bridge with the authorization server out of band.
    let resp = app
        .client
        .post(format!("{}/register", peer.origin()))
        .json(&json!({
            "client_name": "mcp-bridge (pre-registered)",
            "redirect_uris": [callback],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
            "scope": "mcp offline_access",
        }))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::CREATED);
    let client: Value = resp.json().await.unwrap();
    let client_id = client["client_id"].as_str().unwrap();
    let client_secret = client["client_secret"].as_str().unwrap();

    let mut config = discovered("preset", &peer);
    config["auth"] = json!({
        "type": "oauth2",
        "grant_type": "authorization_code",
        "client_id": client_id,
        "client_secret": client_secret,
        "token_endpoint_auth_method": method,
    });
    app.register_server_as(&app.alice, config).await;
    app.wait_status("preset", "auth_required", WAIT).await;
    let url = app.authorization_url("preset", &app.alice).await;
    assert_eq!(query(&url)["client_id"], client_id, "{url}");
    approve_ok(&url).await;
    app.wait_status("preset", "ready", WAIT).await;
    let who = whoami(&app, "preset", &app.alice).await;
    assert_eq!(who["client_id"], client_id, "{who}");
    let stats = peer.oauth_stats().await;
    assert_eq!(
        stats["registrations"], 1,
        "only the operator's registration: {stats}"
    );

    let (status, body) = app.server("preset").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["config"]["auth"]["client_id"], client_id, "{body}");
    assert_eq!(body["config"]["auth"]["client_secret"], "***", "{body}");
    assert_no_secret(
        "GET /v1/servers/preset",
        &body.to_string(),
        &secrets_of(&peer).await,
    );
    app.stop().await;
}

#[tokio::test]
async fn tokens_never_appear_in_any_answer() {
    let peer = oauth_peer(&["--access-ttl", "2"]).await;
    let app = TestApp::builder().port(free_port()).spawn().await;
    let mut events = EventStream::open(&app, &app.alice, None).await;
    let mut config = discovered("sealed", &peer);
    config["auth"] = json!({ "type": "oauth2" });
    let registered = app.register_server_as(&app.alice, config).await;
    app.wait_status("sealed", "auth_required", WAIT).await;
    let (_, authorize) = app.authorize("sealed", &app.alice).await;
    let consent = approve_ok(authorize["authorization_url"].as_str().unwrap()).await;
    app.wait_status("sealed", "ready", WAIT).await;
    let first = whoami(&app, "sealed", &app.alice).await;
    refreshed_after(&app, "sealed", &first).await;
    let (_, call) = app.call("sealed__whoami", json!({})).await; // after a refresh

    let mut seen = vec![
        ("POST /v1/servers", registered.to_string()),
        ("POST /v1/servers/sealed/authorize", authorize.to_string()),
        ("GET /oauth/callback", consent.body.clone()),
        ("the whoami call", call.to_string()),
    ];
    for (what, path, token) in [
        ("GET /v1/servers/sealed", "/v1/servers/sealed", &app.admin),
        ("GET /v1/servers", "/v1/servers", &app.admin),
        ("GET /v1/tools", "/v1/tools", &app.alice),
        ("GET /v1/audit", "/v1/audit", &app.admin),
    ] {
        let (status, body) = app.get(path, token).await;
        assert!(
            status.is_success() || status == StatusCode::NOT_FOUND,
            "{what}: {status}"
        );
        seen.push((what, body.to_string()));
    }
    let (_, metrics) = app.send(reqwest::Method::GET, "/metrics", None, None).await;
    seen.push(("GET /metrics", metrics.to_string()));
    let pushed = events.drain(Duration::from_millis(500)).await;
    seen.push(("alice's events", format!("{pushed:?}")));

    let secrets = secrets_of(&peer).await;
    assert!(
        secrets.len() >= 4,
        "at least two token pairs (one refresh): {secrets:?}"
    );
    for (what, text) in &seen {
        assert_no_secret(what, text, &secrets);
    }
    // Nor in the data dir's files as plain text (sealed at rest).
    for entry in std::fs::read_dir(app.data_dir.path()).unwrap().flatten() {
        if entry.file_type().unwrap().is_file() {
            let bytes = std::fs::read(entry.path()).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            assert_no_secret(&entry.path().display().to_string(), &text, &secrets);
        }
    }
    app.stop().await;
}
