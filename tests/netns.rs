//! The upstream address guard against real sockets. These tests run only inside a network
//! namespace that has nothing but loopback, where 169.254.169.254 and 10.0.0.1 are added to `lo`
//! and tests/netns/hosts is bind-mounted over /etc/hosts: `scripts/netns.sh` sets that up, and
//! `scripts/test.sh` runs it. Whatever the code does, nothing can leave the machine; a "trap"
//! server on each refused address counts what reaches it.

#![allow(dead_code)] // The helpers are shared with tests/api.

// An inline module with the path of tests/api: `helpers.rs` then finds its parts in
// tests/api/helpers/, as it does from tests/api/main.rs. Not every part it re-exports is used here.
#[path = "api"]
#[allow(unused_imports)]
mod api {
    pub mod helpers;
}

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use api::helpers::*;
use axum::http::{HeaderValue, StatusCode, header::LOCATION};
use axum::response::IntoResponse;
use serde_json::{Value, json};

/// Fails unless this process is in a namespace whose only interface is loopback.
fn assert_isolated() {
    let dev = std::fs::read_to_string("/proc/self/net/dev").unwrap();
    let interfaces: Vec<&str> = dev
        .lines()
        .skip(2)
        .filter_map(|l| l.split(':').next())
        .map(str::trim)
        .collect();
    assert_eq!(
        interfaces,
        ["lo"],
        "these tests send traffic to non-loopback addresses: run them with scripts/netns.sh"
    );
}

/// A server on `ip` that counts the requests reaching it.
struct Trap {
    hits: Arc<AtomicUsize>,
    port: u16,
}

impl Trap {
    async fn on(ip: &str) -> Trap {
        Self::answering(ip, None).await
    }

    async fn on_port(ip: &str, port: u16) -> Trap {
        Self::serve(ip, port, None).await
    }

    /// Answers every request with a redirect to itself.
    async fn answering_self_redirect() -> Trap {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        Self::serve(
            "127.0.0.1",
            port,
            Some(format!("http://127.0.0.1:{port}/mcp")),
        )
        .await
    }

    /// Answers every request with a redirect to `location` when given.
    async fn answering(ip: &str, location: Option<String>) -> Trap {
        Self::serve(ip, 0, location).await
    }

    async fn serve(ip: &str, port: u16, location: Option<String>) -> Trap {
        let hits = Arc::new(AtomicUsize::new(0));
        let counted = hits.clone();
        let app = axum::Router::new().fallback(move || {
            let counted = counted.clone();
            let location = location.clone();
            async move {
                counted.fetch_add(1, Ordering::SeqCst);
                match location {
                    Some(to) => (
                        StatusCode::TEMPORARY_REDIRECT,
                        [(LOCATION, HeaderValue::from_str(&to).unwrap())],
                    )
                        .into_response(),
                    None => (StatusCode::OK, "{}").into_response(),
                }
            }
        });
        let listener = tokio::net::TcpListener::bind((ip, port))
            .await
            .unwrap_or_else(|e| panic!("cannot listen on {ip} ({e}): run with scripts/netns.sh"));
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Trap { hits, port }
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

async fn register(app: &TestApp, transport: &str, url: &str) -> (StatusCode, Value) {
    let config =
        json!({ "server_id": "guarded", "transport": transport, "url": url, "connect_timeout": 5 });
    app.post("/v1/servers", &app.admin, json!({ "config": config }))
        .await
}

fn assert_refused(status: StatusCode, body: &Value, why: &str) {
    assert_ne!(status, StatusCode::CREATED, "{body}");
    let text = body.to_string();
    assert!(
        text.contains("address guard") && text.contains(why),
        "{status} {body}"
    );
}

#[tokio::test]
async fn link_local_and_metadata_addresses_are_refused_by_literal_and_by_name() {
    assert_isolated();
    let app = spawn_app().await;
    let trap = Trap::on("169.254.169.254").await;
    let p = trap.port;
    for (transport, url) in [
        ("http", format!("http://169.254.169.254:{p}/mcp")),
        ("http", format!("http://metadata.test:{p}/mcp")),
        ("sse", format!("http://metadata.test:{p}/sse")),
        ("ws", format!("ws://169.254.169.254:{p}/")),
        ("ws", format!("ws://metadata.test:{p}/")),
        // IPv4 embedded in IPv6: IPv4-compatible, NAT64, 6to4, and a name answering NAT64.
        ("http", format!("http://[::169.254.169.254]:{p}/mcp")),
        ("http", format!("http://[64:ff9b::a9fe:a9fe]:{p}/mcp")),
        ("ws", format!("ws://[2002:a9fe:a9fe::1]:{p}/")),
        ("http", format!("http://nat64-metadata.test:{p}/mcp")),
    ] {
        let (status, body) = register(&app, transport, &url).await;
        assert_refused(status, &body, "link-local");
    }
    assert_eq!(trap.hits(), 0, "nothing reached the metadata address");
}

#[tokio::test]
async fn private_addresses_are_refused_unless_allowed() {
    assert_isolated();
    let trap = Trap::on("10.0.0.1").await;
    let p = trap.port;
    let app = spawn_app().await;
    for url in [
        format!("http://10.0.0.1:{p}/mcp"),
        format!("http://private.test:{p}/mcp"),
        format!("http://[fec0::1]:{p}/mcp"),
        format!("http://[::10.0.0.1]:{p}/mcp"),
    ] {
        let (status, body) = register(&app, "http", &url).await;
        assert_refused(status, &body, "private");
    }
    assert_eq!(trap.hits(), 0);

    let lenient = TestApp::builder()
        .configure(|c| c.allow_private_upstreams = true)
        .spawn()
        .await;
    let (status, body) = register(&lenient, "http", &format!("http://private.test:{p}/mcp")).await;
    assert_ne!(status, StatusCode::CREATED, "the trap is no MCP server");
    assert!(!body.to_string().contains("address guard"), "{body}");
    assert!(
        trap.hits() > 0,
        "with MCP_BRIDGE_ALLOW_PRIVATE_UPSTREAMS the address is reached"
    );
}

#[tokio::test]
async fn redirects_are_followed_only_to_allowed_addresses() {
    assert_isolated();
    let app = spawn_app().await;
    let trap = Trap::on("169.254.169.254").await;
    let p = trap.port;
    for target in [
        format!("http://169.254.169.254:{p}/mcp"),
        format!("http://metadata.test:{p}/mcp"),
    ] {
        let redirector = Trap::answering("127.0.0.1", Some(target.clone())).await;
        let url = format!("http://127.0.0.1:{}/mcp", redirector.port);
        let (status, body) = register(&app, "http", &url).await;
        assert_ne!(status, StatusCode::CREATED, "{body}");
        assert!(redirector.hits() > 0, "the redirect was asked for");
        assert_eq!(trap.hits(), 0, "the redirect to {target} was not followed");
    }
    // A same-origin redirect is followed, a bounded number of times.
    let looping = Trap::answering_self_redirect().await;
    let url = format!("http://127.0.0.1:{}/mcp", looping.port);
    register(&app, "http", &url).await;
    let hits = looping.hits();
    assert!(
        (2..=6).contains(&hits),
        "followed, at most 5 times: {hits} requests"
    );
}

#[tokio::test]
async fn a_name_is_used_only_through_the_addresses_the_guard_allows() {
    assert_isolated();
    let app = spawn_app().await;
    // mixed.test resolves to both 127.0.0.1 and 169.254.169.254: a trap on each, same port.
    let trap = Trap::on("169.254.169.254").await;
    let allowed = Trap::on_port("127.0.0.1", trap.port).await;
    let url = format!("http://mixed.test:{}/mcp", trap.port);
    for _ in 0..3 {
        let (status, body) = register(&app, "http", &url).await;
        assert!(
            !body.to_string().contains("address guard"),
            "{status} {body}"
        );
    }
    assert!(allowed.hits() > 0, "the allowed address is used");
    assert_eq!(trap.hits(), 0, "the refused one never is");
}

#[tokio::test]
async fn a2a_card_and_endpoint_urls_are_guarded() {
    assert_isolated();
    let app = spawn_app().await;
    let trap = Trap::on("169.254.169.254").await;
    let p = trap.port;
    let (status, body) = app
        .post(
            "/v1/a2a/agents",
            &app.alice,
            json!({ "agent_id": "meta", "url": format!("http://metadata.test:{p}") }),
        )
        .await;
    assert_refused(status, &body, "link-local");

    // A card on loopback that sends calls to the metadata address.
    let card = json!({
        "name": "sneaky", "url": format!("http://169.254.169.254:{p}/"), "version": "1",
        "protocolVersion": "0.3", "capabilities": {}, "skills": [],
        "defaultInputModes": ["text"], "defaultOutputModes": ["text"],
    });
    let cards = axum::Router::new().fallback(move || {
        let card = card.clone();
        async move { axum::Json(card) }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, cards).await });
    let (status, body) = app
        .post(
            "/v1/a2a/agents",
            &app.alice,
            json!({ "agent_id": "sneaky", "url": base }),
        )
        .await;
    assert_refused(status, &body, "link-local");
    assert_eq!(trap.hits(), 0);
}

#[tokio::test]
async fn loopback_is_allowed() {
    assert_isolated();
    let app = spawn_app().await;
    let trap = Trap::on("127.0.0.1").await;
    let (status, body) =
        register(&app, "http", &format!("http://localhost:{}/mcp", trap.port)).await;
    assert_ne!(status, StatusCode::CREATED, "the trap is no MCP server");
    assert!(!body.to_string().contains("address guard"), "{body}");
    assert!(trap.hits() > 0);
}

/// With private upstreams allowed, an authorization server (the real OAuth peer, on loopback)
/// whose metadata names the metadata address as its registration or token endpoint: refused
/// before any connection, by literal and by name, and nothing of an answer is shown.
#[tokio::test]
async fn oauth_endpoints_at_link_local_addresses_are_refused_even_with_private_allowed() {
    assert_isolated();
    let trap = Trap::on("169.254.169.254").await;
    let p = trap.port;
    let app = TestApp::builder()
        .port(free_port())
        .configure(|c| c.allow_private_upstreams = true)
        .spawn()
        .await;
    for (n, host) in ["169.254.169.254", "metadata.test"].into_iter().enumerate() {
        // The registration endpoint: the server's status says the guard refused it.
        let over = format!("registration_endpoint=http://{host}:{p}/register");
        let peer = oauth_peer(&["--metadata-override", &over]).await;
        let id = format!("reg{n}");
        let config =
            json!({ "server_id": id, "transport": "http", "url": peer.url, "connect_timeout": 5 });
        let (status, body) = app
            .post("/v1/servers", &app.alice, json!({ "config": config }))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let server = app.wait_status(&id, "error", WAIT).await;
        let error = server["error"].as_str().unwrap();
        assert!(
            error.contains("address guard") && error.contains("registration endpoint"),
            "{error}"
        );

        // The token endpoint: the registration goes through, the callback's exchange is refused.
        let over = format!("token_endpoint=http://{host}:{p}/token");
        let peer = oauth_peer(&["--metadata-override", &over]).await;
        let id = format!("tok{n}");
        let config =
            json!({ "server_id": id, "transport": "http", "url": peer.url, "connect_timeout": 5 });
        let (status, body) = app
            .post("/v1/servers", &app.alice, json!({ "config": config }))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        app.wait_status(&id, "auth_required", WAIT).await;
        let url = app.authorization_url(&id, &app.alice).await;
        let consent = approve(&url).await;
        assert_ne!(consent.status, StatusCode::OK, "{}", consent.body);
        assert!(
            consent.body.contains("address guard") && consent.body.contains("token endpoint"),
            "{}",
            consent.body
        );
    }
    assert_eq!(trap.hits(), 0, "nothing reached the metadata address");
}
