//! OAuth 2.1 to upstream servers, end to end: the real bridge against `tests/peers/oauth_server.py`
//! (an MCP server protected by an authorization server built from the Python SDK's auth support,
//! whose /authorize approves at once, so a plain GET plays the person). Discovery from a bare 401,
//! the callback and its `state`, a restart, refresh, pre-registered credentials, `per_agent` with
//! two agents, and tokens that never leave the bridge.

use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

/// Registers `config` as `token` (alice, unless said otherwise: an http server needs no admin),
/// expecting 201; the server.
async fn register_as(app: &TestApp, token: &str, config: Value) -> Value {
    let (status, body) = app
        .post("/v1/servers", token, json!({ "config": config }))
        .await;
    assert_eq!(status, StatusCode::CREATED, "registration failed: {body}");
    body["server"].clone()
}

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
    let server = register_as(&app, &app.alice, discovered("guarded", &peer)).await;
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
    register_as(&app, &app.alice, discovered("replayed", &peer)).await;
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
    register_as(&app, &app.alice, discovered("owned", &peer)).await;
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
async fn a_restarted_bridge_comes_back_ready_with_the_same_grant() {
    let peer = oauth_peer(&[]).await;
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let port = free_port();
    let app = TestApp::builder()
        .data_dir(&data_dir)
        .port(port)
        .spawn()
        .await;
    register_as(&app, &app.alice, discovered("lasting", &peer)).await;
    app.wait_status("lasting", "auth_required", WAIT).await;
    approve_ok(&app.authorization_url("lasting", &app.alice).await).await;
    app.wait_status("lasting", "ready", WAIT).await;
    let before = whoami(&app, "lasting", &app.alice).await;
    app.stop().await;

    let app = TestApp::builder()
        .data_dir(&data_dir)
        .port(port)
        .spawn()
        .await;
    app.wait_status("lasting", "ready", WAIT).await;
    let after = whoami(&app, "lasting", &app.alice).await;
    assert_eq!(after["grant"], before["grant"], "{before} then {after}");
    let stats = peer.oauth_stats().await;
    assert_eq!(
        stats["authorizations"], 1,
        "no person after the restart: {stats}"
    );
    assert_eq!(stats["code_exchanges"], 1, "{stats}");
    assert_eq!(
        stats["registrations"], 1,
        "the client was kept too: {stats}"
    );
    app.stop().await;
}

#[tokio::test]
async fn a_restart_after_the_access_token_expired_refreshes_without_a_person() {
    let peer = oauth_peer(&["--access-ttl", "2"]).await;
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let port = free_port();
    let app = TestApp::builder()
        .data_dir(&data_dir)
        .port(port)
        .spawn()
        .await;
    register_as(&app, &app.alice, discovered("sleeper", &peer)).await;
    app.wait_status("sleeper", "auth_required", WAIT).await;
    approve_ok(&app.authorization_url("sleeper", &app.alice).await).await;
    app.wait_status("sleeper", "ready", WAIT).await;
    let before = whoami(&app, "sleeper", &app.alice).await;
    app.stop().await;
    // The 2 s access token expires while the service is down: only time does that.
    tokio::time::sleep(Duration::from_secs(3)).await;

    let app = TestApp::builder()
        .data_dir(&data_dir)
        .port(port)
        .spawn()
        .await;
    app.wait_status("sleeper", "ready", WAIT).await;
    let after = whoami(&app, "sleeper", &app.alice).await;
    assert_eq!(after["grant"], before["grant"], "{before} then {after}");
    let stats = peer.oauth_stats().await;
    assert!(stats["refreshes"].as_u64().unwrap() >= 1, "{stats}");
    assert_eq!(stats["refresh_reuse"], 0, "{stats}");
    assert_eq!(stats["authorizations"], 1, "{stats}");
    app.stop().await;
}

#[tokio::test]
async fn an_expired_access_token_is_refreshed_and_keeps_its_grant() {
    let peer = oauth_peer(&["--access-ttl", "2"]).await;
    let app = TestApp::builder().port(free_port()).spawn().await;
    register_as(&app, &app.alice, discovered("fresh", &peer)).await;
    app.wait_status("fresh", "auth_required", WAIT).await;
    approve_ok(&app.authorization_url("fresh", &app.alice).await).await;
    app.wait_status("fresh", "ready", WAIT).await;
    let first = whoami(&app, "fresh", &app.alice).await;

    // Calls until one goes out with a refreshed access token (the 2 s one has expired).
    let later = refreshed_after(&app, "fresh", &first).await;
    assert_eq!(later["grant"], first["grant"], "{first} then {later}");
    let again = refreshed_after(&app, "fresh", &later).await;
    assert_eq!(again["grant"], first["grant"]);

    let stats = peer.oauth_stats().await;
    assert!(stats["refreshes"].as_u64().unwrap() >= 2, "{stats}");
    assert_eq!(
        stats["refresh_reuse"], 0,
        "each rotated refresh token used once: {stats}"
    );
    assert_eq!(stats["authorizations"], 1, "{stats}");
    assert_eq!(app.server("fresh").await.1["server"]["status"], "ready");
    app.stop().await;
}

#[tokio::test]
async fn a_token_refused_with_401_is_refreshed_once_and_the_call_succeeds() {
    let peer = oauth_peer(&[]).await;
    let app = TestApp::builder().port(free_port()).spawn().await;
    register_as(&app, &app.alice, discovered("revoked", &peer)).await;
    app.wait_status("revoked", "auth_required", WAIT).await;
    approve_ok(&app.authorization_url("revoked", &app.alice).await).await;
    app.wait_status("revoked", "ready", WAIT).await;
    let first = whoami(&app, "revoked", &app.alice).await;

    // The token still looks valid for an hour to the bridge, but the peer now answers 401.
    peer.oauth_expire().await;
    let later = whoami(&app, "revoked", &app.alice).await;
    assert_eq!(later["grant"], first["grant"], "{first} then {later}");
    let stats = peer.oauth_stats().await;
    assert_eq!(stats["refreshes"], 1, "one refresh on the 401: {stats}");
    assert_eq!(stats["authorizations"], 1, "{stats}");
    app.stop().await;
}

#[tokio::test]
async fn a_restarted_upstream_is_reconnected_with_the_stored_token() {
    let state = tempfile::tempdir().unwrap();
    let state_file = state.path().join("oauth.json");
    let state_file = state_file.to_str().unwrap();
    let peer = oauth_peer(&["--state-file", state_file]).await;
    let port = peer.port();
    let app = TestApp::builder()
        .port(free_port())
        .watchful()
        .spawn()
        .await;
    let mut server = discovered("phoenix", &peer);
    server["auto_reconnect"] = json!(true);
    register_as(&app, &app.alice, server).await;
    app.wait_status("phoenix", "auth_required", WAIT).await;
    approve_ok(&app.authorization_url("phoenix", &app.alice).await).await;
    let ready = app.wait_status("phoenix", "ready", WAIT).await;
    let before = whoami(&app, "phoenix", &app.alice).await;

    peer.stop().await;
    // The bridge notices (a ping fails) before the peer is back: a peer back within one ping
    // interval answers the old connection's pings and nothing is to be reconnected.
    wait_until("the bridge noticing the peer is gone", WAIT, async || {
        let (_, body) = app.server("phoenix").await;
        match body["server"]["status"] != "ready" {
            true => Ok(()),
            false => Err(body.to_string()),
        }
    })
    .await;
    let peer = oauth_peer_on(port, &["--state-file", state_file]).await;
    let connected_at = ready["connected_at"].as_f64().unwrap_or_default();
    app.wait_reconnected("phoenix", connected_at, Duration::from_secs(20))
        .await;
    let after = whoami(&app, "phoenix", &app.alice).await;
    assert_eq!(after["grant"], before["grant"], "{before} then {after}");
    let stats = peer.oauth_stats().await;
    assert_eq!(
        stats["authorizations"], 0,
        "no person for the restarted peer: {stats}"
    );
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
    register_as(&app, &app.alice, config).await;
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
    let registered = register_as(&app, &app.alice, config).await;
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

#[tokio::test]
async fn per_agent_servers_hold_one_grant_per_agent() {
    let peer = oauth_peer(&[]).await;
    let app = TestApp::builder().port(free_port()).spawn().await;
    let mut config = discovered("mine", &peer);
    config["auth"] = json!({ "type": "oauth2", "per_agent": true });
    register_as(&app, &app.alice, config).await;
    app.wait_status("mine", "auth_required", WAIT).await;
    assert_auth_required(&app, "mine", &app.alice, &peer).await;
    assert_auth_required(&app, "mine", &app.bob, &peer).await;

    // Alice authorizes for herself; bob still has to.
    let alice_url = app.authorization_url("mine", &app.alice).await;
    approve_ok(&alice_url).await;
    let alice = wait_until("alice's calls working", WAIT, async || {
        match app.call_as(&app.alice, "mine__whoami", json!({})).await {
            (StatusCode::OK, body) if body["is_error"] == false => Ok(body),
            (status, body) => Err(format!("{status} {body}")),
        }
    })
    .await;
    let alice_grant = serde_json::from_str::<Value>(alice["content"][0]["text"].as_str().unwrap())
        .unwrap()["grant"]
        .clone();
    let tools = wait_until(
        "the tools listed after the first authorization",
        WAIT,
        async || {
            let (_, body) = app.get("/v1/tools?server_id=mine", &app.bob).await;
            let names: Vec<String> = body["tools"]
                .as_array()
                .map(|t| {
                    t.iter()
                        .map(|t| t["name"].as_str().unwrap().to_owned())
                        .collect()
                })
                .unwrap_or_default();
            match names.len() {
                3 => Ok(names),
                _ => Err(body.to_string()),
            }
        },
    )
    .await;
    assert!(tools.contains(&"mine__whoami".to_owned()), "{tools:?}");
    assert_auth_required(&app, "mine", &app.bob, &peer).await;
    assert_auth_required(&app, "mine", &app.admin, &peer).await;

    // Bob's own approval gives him his own grant.
    let bob_url = app.authorization_url("mine", &app.bob).await;
    assert_ne!(query(&bob_url)["state"], query(&alice_url)["state"]);
    approve_ok(&bob_url).await;
    let bob = wait_until("bob's calls working", WAIT, async || {
        match app.call_as(&app.bob, "mine__whoami", json!({})).await {
            (StatusCode::OK, body) if body["is_error"] == false => Ok(body),
            (status, body) => Err(format!("{status} {body}")),
        }
    })
    .await;
    let bob_who: Value = serde_json::from_str(bob["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_ne!(
        bob_who["grant"], alice_grant,
        "bob's own grant, not alice's"
    );
    for _ in 0..3 {
        assert_eq!(whoami(&app, "mine", &app.alice).await["grant"], alice_grant);
        assert_eq!(
            whoami(&app, "mine", &app.bob).await["grant"],
            bob_who["grant"]
        );
    }
    let stats = peer.oauth_stats().await;
    assert_eq!(stats["code_exchanges"], 2, "{stats}");
    assert_auth_required(&app, "mine", &app.admin, &peer).await;
    app.stop().await;
}

#[tokio::test]
async fn per_agent_grants_survive_a_restart() {
    let peer = oauth_peer(&[]).await;
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let port = free_port();
    let app = TestApp::builder()
        .data_dir(&data_dir)
        .port(port)
        .spawn()
        .await;
    let mut config = discovered("kept", &peer);
    config["auth"] = json!({ "type": "oauth2", "per_agent": true });
    register_as(&app, &app.alice, config).await;
    app.wait_status("kept", "auth_required", WAIT).await;
    approve_ok(&app.authorization_url("kept", &app.alice).await).await;
    approve_ok(&app.authorization_url("kept", &app.bob).await).await;
    let alice = wait_until("alice's calls working", WAIT, async || {
        match app.call_as(&app.alice, "kept__whoami", json!({})).await {
            (StatusCode::OK, body) if body["is_error"] == false => Ok(body),
            (status, body) => Err(format!("{status} {body}")),
        }
    })
    .await;
    let bob = whoami(&app, "kept", &app.bob).await;
    app.stop().await;

    let app = TestApp::builder()
        .data_dir(&data_dir)
        .port(port)
        .spawn()
        .await;
    let alice_grant = serde_json::from_str::<Value>(alice["content"][0]["text"].as_str().unwrap())
        .unwrap()["grant"]
        .clone();
    let again = wait_until(
        "alice's calls working after the restart",
        WAIT,
        async || match app.call_as(&app.alice, "kept__whoami", json!({})).await {
            (StatusCode::OK, body) if body["is_error"] == false => Ok(body),
            (status, body) => Err(format!("{status} {body}")),
        },
    )
    .await;
    let again: Value = serde_json::from_str(again["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(again["grant"], alice_grant);
    assert_eq!(whoami(&app, "kept", &app.bob).await["grant"], bob["grant"]);
    assert_auth_required(&app, "kept", &app.admin, &peer).await;
    let stats = peer.oauth_stats().await;
    assert_eq!(
        stats["authorizations"], 2,
        "no person after the restart: {stats}"
    );
    app.stop().await;
}

/// A protected resource whose metadata points wherever `authorization_server` says, and (when
/// that is itself) an authorization server that approves at once but whose token endpoint is a
/// closed port: the faults a bridge must survive without losing the server or leaking anything.
async fn faulty_upstream(authorization_server: Option<&str>) -> String {
    use axum::http::header;
    use axum::response::IntoResponse;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = authorization_server.map_or(base.clone(), str::to_owned);
    let refuse = {
        let challenge = format!(
            r#"Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp""#
        );
        move || async move {
            (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, challenge)],
            )
        }
    };
    let resource = json!({"resource": format!("{base}/mcp"), "authorization_servers": [server]});
    let metadata = json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        // Nothing listens on the discard port.
        "token_endpoint": "http://127.0.0.1:9/token",
        "registration_endpoint": format!("{base}/register"),
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
    });
    let app = axum::Router::new()
        .route("/mcp", axum::routing::any(refuse))
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            axum::routing::get(move || async move { axum::Json(resource) }),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            axum::routing::get(move || async move { axum::Json(metadata) }),
        )
        .route(
            "/register",
            axum::routing::post(|| async {
                (
                    StatusCode::CREATED,
                    axum::Json(json!({"client_id": "stub-client", "redirect_uris": []})),
                )
            }),
        )
        .route(
            "/authorize",
            axum::routing::get(
                |axum::extract::Query(q): axum::extract::Query<
                    std::collections::HashMap<String, String>,
                >| async move {
                    let back = format!("{}?code=stub-code&state={}", q["redirect_uri"], q["state"]);
                    (StatusCode::FOUND, [(header::LOCATION, back)]).into_response()
                },
            ),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("{base}/mcp")
}

/// A token endpoint that cannot be reached: the callback says so (502), and the server stays
/// registered, waiting for an authorization that can still be given.
#[tokio::test]
async fn an_unreachable_token_endpoint_fails_the_callback_and_keeps_the_server() {
    let app = spawn_app().await;
    let url = faulty_upstream(None).await;
    let config = json!({"server_id": "stub", "transport": "http", "url": url});
    let server = register_as(&app, &app.alice, config).await;
    assert_eq!(server["status"], "auth_required", "{server}");
    let link = app.authorization_url("stub", &app.alice).await;
    let consent = approve(&link).await;
    assert_eq!(consent.status, StatusCode::BAD_GATEWAY, "{}", consent.body);
    assert!(consent.body.contains("token"), "{}", consent.body);
    let (status, info) = app.get("/v1/servers/stub", &app.alice).await;
    assert_eq!(status, StatusCode::OK, "{info}");
    assert_eq!(info["server"]["status"], "auth_required", "{info}");
    // The state was used up by that attempt: a new link is needed, and one is given.
    let (status, _) = open_callback(&consent.callback_url).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = app.authorize("stub", &app.alice).await;
    assert_eq!(status, StatusCode::OK);
}

/// Protected resource metadata naming an authorization server at a cloud metadata address: the
/// address guard refuses it (the SSRF guard applies to every discovered URL), no link is given,
/// and the server stays registered, in error with the reason.
#[tokio::test]
async fn a_discovered_url_the_guard_refuses_is_never_fetched() {
    let app = spawn_app().await;
    let url = faulty_upstream(Some("http://169.254.169.254/latest")).await;
    let config = json!({"server_id": "ssrf", "transport": "http", "url": url});
    register_as(&app, &app.alice, config).await;
    let (status, info) = app.get("/v1/servers/ssrf", &app.alice).await;
    assert_eq!(status, StatusCode::OK, "{info}");
    assert_eq!(info["server"]["status"], "error", "{info}");
    let (status, body) = app.authorize("ssrf", &app.alice).await;
    assert!(
        status.is_client_error() || status.is_server_error(),
        "{body}"
    );
    assert!(body.get("authorization_url").is_none(), "{body}");
    assert!(
        !body["error"].as_str().unwrap_or_default().is_empty(),
        "{body}"
    );
}

/// On a `per_agent` server a resource is read over the reader's own session: bob cannot read
/// with alice's grant, and once he has authorized he reads with his own.
#[tokio::test]
async fn per_agent_reads_go_over_the_readers_own_grant() {
    let peer = oauth_peer(&[]).await;
    let app = TestApp::builder().port(free_port()).spawn().await;
    let mut config = discovered("reads", &peer);
    config["auth"] = json!({ "type": "oauth2", "per_agent": true });
    register_as(&app, &app.alice, config).await;
    approve_ok(&app.authorization_url("reads", &app.alice).await).await;
    let read = async |token: &str| {
        let body = json!({"server_id": "reads", "uri": "grant://me"});
        app.post("/v1/resources/read", token, body).await
    };
    let alice = wait_until("alice's read", WAIT, async || {
        match read(&app.alice).await {
            (StatusCode::OK, body) => Ok(body),
            (status, body) => Err(format!("{status} {body}")),
        }
    })
    .await;
    let grant_of = |body: &Value| -> Value {
        let text = body["contents"][0]["text"].as_str().unwrap_or("{}");
        serde_json::from_str::<Value>(text).unwrap()["grant"].clone()
    };
    let (status, refused) = read(&app.bob).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
    assert_eq!(refused["code"], "mcp_auth_required", "{refused}");
    approve_ok(refused["authorization_url"].as_str().unwrap()).await;
    let (status, bob) = read(&app.bob).await;
    assert_eq!(status, StatusCode::OK, "{bob}");
    assert!(grant_of(&alice).is_u64(), "{alice}");
    assert_ne!(
        grant_of(&bob),
        grant_of(&alice),
        "bob reads with his own grant"
    );
    let (_, again) = read(&app.alice).await;
    assert_eq!(grant_of(&again), grant_of(&alice));
    app.stop().await;
}

/// The `uri`s of the resources `token` sees listed of `server_id` in the merged listing.
async fn listed_uris(app: &TestApp, server_id: &str, token: &str) -> Vec<String> {
    let (status, body) = app.get("/v1/resources", token).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["server_id"] == server_id)
        .map(|r| r["uri"].as_str().unwrap().to_owned())
        .collect()
}

/// Issue 34, item 4: on a `per_agent` server each agent sees only what was listed over its own
/// session (nothing before it authorizes), and what the server sends on an agent's session
/// (here a log message) goes to that agent, not to the server's owner.
#[tokio::test]
async fn per_agent_listings_and_messages_stay_with_their_agent() {
    let peer = oauth_peer(&[]).await;
    let app = TestApp::builder().port(free_port()).spawn().await;
    let mut config = discovered("priv", &peer);
    config["auth"] = json!({ "type": "oauth2", "per_agent": true });
    register_as(&app, &app.alice, config).await;
    approve_ok(&app.authorization_url("priv", &app.alice).await).await;
    let alice_listed =
        wait_until(
            "alice's private resource listed",
            WAIT,
            async || match listed_uris(&app, "priv", &app.alice).await {
                uris if uris.len() == 1 => Ok(uris),
                uris => Err(format!("{uris:?}")),
            },
        )
        .await;
    assert!(
        alice_listed[0].starts_with("grant://private-"),
        "{alice_listed:?}"
    );
    assert_eq!(
        listed_uris(&app, "priv", &app.bob).await,
        Vec::<String>::new(),
        "bob has not authorized: he sees nothing listed over alice's session"
    );
    let (status, body) = app.get("/v1/resources?server_id=priv", &app.bob).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["code"], "mcp_auth_required", "{body}");
    let bob_url = body["authorization_url"].as_str().unwrap().to_owned();
    approve_ok(&bob_url).await;
    let bob_listed =
        wait_until(
            "bob's own private resource listed",
            WAIT,
            async || match listed_uris(&app, "priv", &app.bob).await {
                uris if uris.len() == 1 => Ok(uris),
                uris => Err(format!("{uris:?}")),
            },
        )
        .await;
    assert_ne!(bob_listed, alice_listed, "bob lists over his own grant");
    assert_eq!(listed_uris(&app, "priv", &app.alice).await, alice_listed);

    // A log message on bob's session is bob's: not the owner's (alice).
    let mut alice_events = EventStream::open(&app, &app.alice, None).await;
    let mut bob_events = EventStream::open(&app, &app.bob, None).await;
    app.call_tool_as(&app.bob, "priv__tell", json!({})).await;
    let bob_grant = bob_listed[0]
        .trim_start_matches("grant://private-")
        .to_owned();
    let told = bob_events
        .wait_for("bob's log message", WAIT, |m| {
            is_push(m, "notifications/message") && m.data.to_string().contains("log of grant")
        })
        .await;
    assert!(
        told.data
            .to_string()
            .contains(&format!("log of grant {bob_grant}")),
        "{}",
        told.data
    );
    let leaked: Vec<_> = alice_events
        .drain(Duration::from_secs(2))
        .await
        .into_iter()
        .filter(|m| m.data.to_string().contains("log of grant"))
        .collect();
    assert!(leaked.is_empty(), "alice got bob's log: {leaked:?}");
    app.stop().await;
}
