//! OAuth grants kept and refreshed: across a restart of the bridge or of the upstream, and when
//! the access token expires or is refused with 401.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use crate::helpers::*;

use super::{approve_ok, discovered, refreshed_after, whoami};

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
    app.register_server_as(&app.alice, discovered("lasting", &peer))
        .await;
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
    app.register_server_as(&app.alice, discovered("sleeper", &peer))
        .await;
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
    app.register_server_as(&app.alice, discovered("fresh", &peer))
        .await;
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
    app.register_server_as(&app.alice, discovered("revoked", &peer))
        .await;
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
    app.register_server_as(&app.alice, server).await;
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
