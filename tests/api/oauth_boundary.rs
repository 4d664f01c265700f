//! What one agent's or one authorization server's OAuth traffic can do to another (issue 34):
//! the bodies of refused answers stay out of what agents read, a link dies with the server it was
//! made for, one server's hanging authorization server holds up no other server's links, and one
//! agent's links never push out another's. Against `tests/peers/oauth_server.py`, the real
//! authorization server (its hostile modes where the test says so).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

/// A body a hostile authorization server answers with: nothing of it may reach an agent.
const SECRET_BODY: &str = r#"{"error":"invalid_request","error_description":"SECRET-d1e5c0 internal trace","token":"sk-live-SECRET-4242"}"#;

fn discovered(server_id: &str, url: &str) -> Value {
    json!({ "server_id": server_id, "transport": "http", "url": url, "connect_timeout": 5 })
}

async fn register_as(app: &TestApp, token: &str, config: Value) -> (StatusCode, Value) {
    app.post("/v1/servers", token, json!({ "config": config }))
        .await
}

/// What every agent can read of a server: its listing entry, as `token`.
async fn seen_by(app: &TestApp, token: &str) -> String {
    let (status, body) = app.get("/v1/servers", token).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body.to_string()
}

#[tokio::test]
async fn a_refused_registrations_body_is_never_shown_only_its_code() {
    let peer = oauth_peer(&["--fail-with-body", SECRET_BODY]).await;
    let app = spawn_app().await;
    let (status, body) = register_as(&app, &app.alice, discovered("hostile", &peer.url)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let server = app.wait_status("hostile", "error", WAIT).await;
    let error = server["error"].as_str().unwrap();
    assert!(
        error.contains("registration endpoint") && error.contains("400 invalid_request"),
        "says what failed in words: {error}"
    );
    for text in [
        error.to_owned(),
        seen_by(&app, &app.bob).await,
        seen_by(&app, &app.alice).await,
    ] {
        assert!(!text.contains("SECRET"), "the body leaked: {text}");
    }
    // Asking again: the answer of the authorize route says as much, no more.
    let (status, body) = app.authorize("hostile", &app.alice).await;
    assert_ne!(status, StatusCode::OK, "{body}");
    assert!(!body.to_string().contains("SECRET"), "{body}");
    assert!(body.to_string().contains("400 invalid_request"), "{body}");
}

#[tokio::test]
async fn a_refused_token_requests_body_is_never_shown_on_the_callback() {
    // Registration goes through; the token endpoint refuses with its body.
    let fail = ["--fail-with-body", SECRET_BODY, "--fail-on", "/token"];
    let peer = oauth_peer(&fail).await;
    let app = TestApp::builder().port(free_port()).spawn().await;
    let (status, body) = register_as(&app, &app.alice, discovered("refusing", &peer.url)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    app.wait_status("refusing", "auth_required", WAIT).await;
    let url = app.authorization_url("refusing", &app.alice).await;
    let consent = approve(&url).await;
    assert_ne!(consent.status, StatusCode::OK, "{}", consent.body);
    assert!(
        consent.body.contains("token endpoint") && consent.body.contains("400 invalid_request"),
        "says what failed: {}",
        consent.body
    );
    assert!(
        !consent.body.contains("SECRET"),
        "the body leaked: {}",
        consent.body
    );
    assert!(!seen_by(&app, &app.bob).await.contains("SECRET"));
}

/// A link made for a server, opened after that server was removed and another agent registered
/// the same id: nothing is exchanged, the new server gets no token, the page says why.
#[tokio::test]
async fn a_link_dies_with_its_server_and_never_authorizes_a_new_one_of_the_same_id() {
    let peer = oauth_peer(&[]).await;
    let app = TestApp::builder().port(free_port()).spawn().await;
    let (status, body) = register_as(&app, &app.alice, discovered("same-id", &peer.url)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    app.wait_status("same-id", "auth_required", WAIT).await;
    let hers = app.authorization_url("same-id", &app.alice).await;

    let (status, body) = app.delete("/v1/servers/same-id", &app.alice).await;
    assert!(status.is_success(), "{body}");
    let (status, body) = register_as(&app, &app.bob, discovered("same-id", &peer.url)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    app.wait_status("same-id", "auth_required", WAIT).await;

    let consent = approve(&hers).await;
    assert_eq!(consent.status, StatusCode::BAD_REQUEST, "{}", consent.body);
    assert!(consent.body.contains("no longer valid"), "{}", consent.body);
    let stats = peer.oauth_stats().await;
    assert_eq!(
        stats["code_exchanges"], 0,
        "her code was never exchanged: {stats}"
    );
    // His server still waits for his own authorization, and a call carries no token of hers (a
    // negative: nothing to wait on but time).
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (_, server) = app.server("same-id").await;
    assert_eq!(server["server"]["status"], "auth_required", "{server}");
    let (status, body) = app.call_as(&app.bob, "same-id__whoami", json!({})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
}

#[tokio::test]
async fn a_link_dies_when_its_servers_url_or_auth_changes() {
    let peer = oauth_peer(&[]).await;
    let other = oauth_peer(&[]).await;
    let app = TestApp::builder().port(free_port()).spawn().await;
    let (status, body) = register_as(&app, &app.alice, discovered("moving", &peer.url)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    app.wait_status("moving", "auth_required", WAIT).await;

    for change in [
        json!({ "url": other.url }),
        json!({ "auth": { "type": "oauth2", "grant_type": "authorization_code", "scopes": ["mcp"] } }),
    ] {
        let link = app.authorization_url("moving", &app.alice).await;
        let (status, body) = app.patch("/v1/servers/moving", &app.alice, change).await;
        assert!(status.is_success(), "{body}");
        let consent = approve(&link).await;
        assert_eq!(consent.status, StatusCode::BAD_REQUEST, "{}", consent.body);
        assert!(consent.body.contains("no longer valid"), "{}", consent.body);
    }
    for p in [&peer, &other] {
        let stats = p.oauth_stats().await;
        assert_eq!(stats["code_exchanges"], 0, "{stats}");
    }
    // A link made after the change works.
    let link = app.authorization_url("moving", &app.alice).await;
    let consent = approve(&link).await;
    assert_eq!(consent.status, StatusCode::OK, "{}", consent.body);
}

/// An HTTP listener that answers every request at once with a bare `401 Bearer` challenge until
/// `hang` is set; then it accepts connections and never answers, counting them in `held`.
async fn hanging_server(hang: Arc<AtomicBool>, held: Arc<AtomicUsize>) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let mut kept = Vec::new();
        while let Ok((mut socket, _)) = listener.accept().await {
            if hang.load(Ordering::SeqCst) {
                held.fetch_add(1, Ordering::SeqCst);
                kept.push(socket);
                continue;
            }
            tokio::spawn(async move {
                let mut buf = vec![0u8; 16 * 1024];
                let _ = socket.read(&mut buf).await;
                let answer = "HTTP/1.1 401 Unauthorized\r\nwww-authenticate: Bearer\r\n\
                              content-length: 0\r\nconnection: close\r\n\r\n";
                let _ = socket.write_all(answer.as_bytes()).await;
            });
        }
    });
    url
}

#[tokio::test]
async fn a_hanging_authorization_server_holds_up_no_other_servers_links() {
    let hang = Arc::new(AtomicBool::new(false));
    let held = Arc::new(AtomicUsize::new(0));
    let hanging = hanging_server(hang.clone(), held.clone()).await;
    let peer = oauth_peer(&[]).await;
    let app = spawn_app().await;
    let (status, body) = register_as(&app, &app.alice, discovered("stuck", &hanging)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = register_as(&app, &app.bob, discovered("fine", &peer.url)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    app.wait_status("fine", "auth_required", WAIT).await;

    // From now on every request to the first server's origin hangs (30 s per request).
    hang.store(true, Ordering::SeqCst);
    let mut stuck = Vec::new();
    for _ in 0..3 {
        let (base, token) = (app.base.clone(), app.alice.clone());
        stuck.push(tokio::spawn(async move {
            reqwest::Client::new()
                .post(format!("{base}/v1/servers/stuck/authorize"))
                .bearer_auth(token)
                .json(&json!({}))
                .send()
                .await
        }));
    }
    wait_until(
        "an authorize held by the hanging server",
        WAIT,
        async || match held.load(Ordering::SeqCst) {
            0 => Err("no connection held yet".to_owned()),
            _ => Ok(()),
        },
    )
    .await;
    let started = Instant::now();
    let url = app.authorization_url("fine", &app.bob).await;
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(5),
        "another server's authorize took {took:?} behind a hanging one"
    );
    assert!(url.starts_with(&peer.origin()), "{url}");
    assert!(
        stuck.iter().all(|t| !t.is_finished()),
        "the hanging server's authorizes still wait (so they were in flight)"
    );
    for task in stuck {
        task.abort();
    }
}

/// One agent's flood of links (past the table of 1,000 it once shared with everyone) pushes out
/// only its own oldest ones: another agent's pending link still works.
#[tokio::test]
async fn one_agents_flood_of_links_leaves_another_agents_link_alone() {
    let peer = oauth_peer(&[]).await;
    let app = TestApp::builder().port(free_port()).spawn().await;
    for (id, token) in [("his", &app.bob), ("hers", &app.alice)] {
        let (status, body) = register_as(&app, token, discovered(id, &peer.url)).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        app.wait_status(id, "auth_required", WAIT).await;
    }
    let his = app.authorization_url("his", &app.bob).await;
    let first = app.authorization_url("hers", &app.alice).await;
    let mut last = first.clone();
    for _ in 0..1000 {
        last = app.authorization_url("hers", &app.alice).await;
    }
    let consent = approve(&his).await;
    assert_eq!(
        consent.status,
        StatusCode::OK,
        "his link survived: {}",
        consent.body
    );
    let consent = approve(&first).await;
    assert_eq!(
        consent.status,
        StatusCode::BAD_REQUEST,
        "her oldest went: {}",
        consent.body
    );
    let consent = approve(&last).await;
    assert_eq!(
        consent.status,
        StatusCode::OK,
        "her newest works: {}",
        consent.body
    );
}

/// The audit log keeps at most `audit_max_rows` entries, the newest, applied at start.
#[tokio::test]
async fn the_audit_log_is_bounded_at_start() {
    let peer = oauth_peer(&[]).await;
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let app = spawn_app_in(data_dir.clone()).await;
    let (status, body) = register_as(&app, &app.alice, discovered("audited", &peer.url)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    app.wait_status("audited", "auth_required", WAIT).await;
    for _ in 0..9 {
        app.authorization_url("audited", &app.alice).await;
    }
    let (_, before) = app.get("/v1/audit?limit=100", &app.admin).await;
    let entries = before["entries"].as_array().expect("entries");
    assert!(entries.len() >= 10, "{before}");
    let newest = entries[0]["id"].clone();
    app.stop().await;

    let app = TestApp::builder()
        .data_dir(&data_dir)
        .configure(|c| c.audit_max_rows = 4)
        .spawn()
        .await;
    let (_, after) = app.get("/v1/audit?limit=100", &app.admin).await;
    let entries = after["entries"].as_array().expect("entries");
    assert_eq!(entries.len(), 4, "{after}");
    assert_eq!(entries[0]["id"], newest, "the newest are kept: {after}");
}
