//! Each calling agent's own identity upstream. The agents' identity provider is the real OIDC
//! provider of `identity.rs` (panva's oidc-provider), which also exchanges tokens (RFC 8693, the
//! fixture's own grant); the upstream is a Python `mcp` SDK server (`identity_server.py`) that
//! checks bearer JWTs against the provider's JWKS and answers `whoami`. The upstream sees alice
//! and bob each as themselves, over REST and `/mcp`, with the bridge as the actor; a revoked grant
//! is a 403 `mcp_auth_required`; neither the log nor the audit holds a token. With
//! `identity.headers`, claims of the agent's token become headers of its own connection.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;
use crate::identity::{Provider, bridge_of};
use crate::mcp::mcp_client;

/// The identity fixture over Streamable HTTP, checking tokens of `issuer` when given.
async fn upstream(issuer: Option<&str>) -> Peer {
    let mut command = tokio::process::Command::new(python());
    command.arg(installed(peers_dir().join("identity_server.py")));
    if let Some(issuer) = issuer {
        command.args(["--issuer", issuer]);
    }
    reporting_peer(command, "/mcp", "http").await
}

/// The identity fixture over legacy HTTP+SSE, checking no token.
async fn upstream_over_sse() -> Peer {
    let mut command = tokio::process::Command::new(python());
    command
        .arg(installed(peers_dir().join("identity_server.py")))
        .arg("--sse");
    reporting_peer(command, "/sse", "http").await
}

/// What `whoami` answered a REST call.
fn seen(status: StatusCode, body: &Value) -> Value {
    assert_eq!(status, StatusCode::OK, "{body}");
    serde_json::from_str(body["content"][0]["text"].as_str().unwrap()).unwrap()
}

/// What `whoami` answered the Python client on `/mcp`.
fn seen_on_mcp(report: &Value) -> Value {
    let text = report["result"]["content"][0]["text"].as_str();
    serde_json::from_str(text.unwrap_or_else(|| panic!("{report}"))).unwrap()
}

fn sha256(text: &str) -> String {
    hex::encode(ring::digest::digest(&ring::digest::SHA256, text.as_bytes()))
}

#[tokio::test]
async fn each_agent_reaches_the_upstream_as_itself_by_token_exchange() {
    let provider = Provider::start().await;
    let peer = upstream(Some(&provider.issuer)).await;
    let dir = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let env = [
        ("MCP_BRIDGE_LOG", "debug"),
        ("MCP_BRIDGE_JWT_SECRET", ""),
        ("MCP_BRIDGE_JWT_ISSUER", provider.issuer.as_str()),
        ("MCP_BRIDGE_JWT_DISCOVERY", "true"),
        ("MCP_BRIDGE_JWT_AUDIENCE", "mcp-bridge"),
        ("MCP_BRIDGE_JWT_ROLES_CLAIM", "realm_access.roles"),
        ("MCP_BRIDGE_ALLOW_PRIVATE_UPSTREAMS", "true"),
    ];
    let bridge = start_bridge_with(dir.path(), &env).await;
    let mut app = TestApp::at(&bridge.base, dir);
    app.admin = provider.token("root").await;
    app.alice = provider.token("alice").await;
    app.bob = provider.token("bob").await;

    // The token endpoint found by discovery (the server's RFC 9728 metadata names the provider).
    let auth = json!({
        "type": "oauth2", "grant_type": "token_exchange",
        "client_id": "mcp-bridge", "client_secret": "mcp-bridge-secret",
    });
    let config = json!({"server_id": "who", "transport": "http", "url": peer.url, "auth": auth});
    let server = app.register_server(config).await;
    assert_eq!(server["status"], "ready", "{server}");

    // Over REST and over /mcp, each agent is itself upstream, the bridge its actor, the server
    // the audience.
    let (status, body) = app.call_as(&app.alice, "who__whoami", json!({})).await;
    let alice = seen(status, &body);
    assert_eq!(
        (&alice["sub"], &alice["act"], &alice["aud"]),
        (&json!("alice"), &json!("mcp-bridge"), &json!(peer.url)),
        "{alice}"
    );
    let (status, body) = app.call_as(&app.bob, "who__whoami", json!({})).await;
    assert_eq!(seen(status, &body)["sub"], "bob");
    for (token, agent) in [(&app.alice, "alice"), (&app.bob, "bob")] {
        let report = mcp_client(&app, token, "legacy", "who__whoami", json!({}), &[]).await;
        let who = seen_on_mcp(&report);
        assert_eq!(
            (&who["sub"], &who["act"]),
            (&json!(agent), &json!("mcp-bridge"))
        );
    }
    // A new token of alice's within the exchanged token's lifetime reuses it: one exchange each.
    let fresh = provider.token("alice").await;
    let (status, body) = app.call_as(&fresh, "who__whoami", json!({})).await;
    assert_eq!(seen(status, &body)["sub"], "alice");
    let exchanges = provider.test_route(reqwest::Method::GET, "exchanges").await;
    assert_eq!(
        (&exchanges["alice"], &exchanges["bob"]),
        (&json!(1), &json!(1)),
        "{exchanges}"
    );

    // Alice's grant revoked: the upstream refuses her token, the bridge's exchange is refused,
    // her calls are 403 mcp_auth_required; bob's go on.
    let revoked = reqwest::Client::new()
        .post(format!("{}/test/revoke?sub=alice", provider.issuer))
        .send()
        .await
        .unwrap();
    assert!(revoked.status().is_success());
    for _ in 0..2 {
        let (status, body) = app.call_as(&app.alice, "who__whoami", json!({})).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        assert_eq!(body["code"], "mcp_auth_required", "{body}");
        assert!(body["error"].as_str().unwrap().contains("alice"), "{body}");
    }
    let (status, body) = app.call_as(&app.bob, "who__whoami", json!({})).await;
    assert_eq!(seen(status, &body)["sub"], "bob");

    // No token anywhere: not in the log (debug level), not in the audit. Every token here is a
    // JWT, so none of them, whole or in part, begins with `eyJ`.
    let (status, audit) = app.get("/v1/audit?limit=1000", &app.admin).await;
    assert_eq!(status, StatusCode::OK, "{audit}");
    let audit = audit.to_string();
    assert!(audit.contains("who"), "{audit}");
    let log = bridge.log();
    assert!(
        log.iter().any(|l| l.contains("agent's token exchanged")),
        "{log:#?}"
    );
    for token in [&app.alice, &app.bob, &app.admin, &fresh] {
        let signature = token.rsplit('.').next().unwrap();
        assert!(!audit.contains(signature));
        assert!(!log.iter().any(|line| line.contains(signature)));
    }
    let leaks: Vec<&String> = log.iter().filter(|line| line.contains("eyJ")).collect();
    assert!(leaks.is_empty(), "{leaks:#?}");
    assert!(!audit.contains("eyJ"), "{audit}");
}

#[tokio::test]
async fn claims_of_each_agents_token_become_headers_of_its_own_connection() {
    let provider = Provider::start().await;
    let (app, running) = bridge_of(&provider).await;
    let peer = upstream(None).await;
    let identity = json!({"headers": {"X-User": "{sub}", "X-Tenant": "{claims.tenant}"}});
    let config =
        json!({"server_id": "hdr", "transport": "http", "url": peer.url, "identity": identity});
    app.register_server(config).await;
    for (token, user, tenant) in [(&app.alice, "alice", "acme"), (&app.bob, "bob", "globex")] {
        let (status, body) = app.call_as(token, "hdr__whoami", json!({})).await;
        let who = seen(status, &body);
        assert_eq!(
            (&who["x_user"], &who["x_tenant"]),
            (&json!(user), &json!(tenant)),
            "{who}"
        );
        // Its token stays with the bridge.
        assert_eq!(who["bearer_sha256"], Value::Null, "{who}");
        let report = mcp_client(&app, token, "legacy", "hdr__whoami", json!({}), &[]).await;
        assert_eq!(seen_on_mcp(&report)["x_user"], user);
    }
    // The config is shown as it was given (templates, not values).
    let (status, body) = app.get("/v1/servers/hdr", &app.admin).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["config"]["identity"], identity, "{body}");

    // The same over legacy HTTP+SSE: the headers go with the stream and every message.
    let sse = upstream_over_sse().await;
    let config =
        json!({"server_id": "hdrsse", "transport": "sse", "url": sse.url, "identity": identity});
    app.register_server(config).await;
    for (token, user) in [(&app.alice, "alice"), (&app.bob, "bob")] {
        let (status, body) = app.call_as(token, "hdrsse__whoami", json!({})).await;
        assert_eq!(seen(status, &body)["x_user"], user);
    }

    // A change of templates makes each agent's connection again with the new headers.
    let (status, body) = app
        .patch(
            "/v1/servers/hdr",
            &app.admin,
            json!({"identity": {"headers": {"X-User": "user-{sub}"}}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = app.call_as(&app.alice, "hdr__whoami", json!({})).await;
    let who = seen(status, &body);
    assert_eq!(
        (&who["x_user"], &who["x_tenant"]),
        (&json!("user-alice"), &Value::Null),
        "{who}"
    );

    // A claim the caller's token lacks: its call is refused, saying which header.
    let config = json!({"server_id": "grp", "transport": "http", "url": peer.url,
        "identity": {"headers": {"X-Group": "{claims.group}"}}});
    app.register_server(config).await;
    let (status, body) = app.call_as(&app.alice, "grp__whoami", json!({})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["code"], "forbidden", "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("X-Group"),
        "{body}"
    );

    // Only `forward_token: true` sends the agent's own token; only an admin may say so, as
    // every caller's token goes to the server (alice's server would collect bob's).
    let config = json!({"server_id": "fwd", "transport": "http", "url": peer.url,
        "identity": {"forward_token": true}});
    let (status, body) = app
        .post("/v1/servers", &app.alice, json!({"config": config.clone()}))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    app.register_server(config).await;
    let (status, body) = app
        .patch(
            "/v1/servers/grp",
            &app.alice,
            json!({"identity": {"forward_token": true}}),
        )
        .await;
    assert!(
        status == StatusCode::FORBIDDEN || status == StatusCode::NOT_FOUND,
        "{status} {body}"
    );
    let (status, body) = app.call_as(&app.alice, "fwd__whoami", json!({})).await;
    assert_eq!(seen(status, &body)["bearer_sha256"], sha256(&app.alice));

    // Names and templates are checked when the server is registered.
    for (headers, why) in [
        (json!({"X User": "{sub}"}), "not a valid header name"),
        (json!({"Authorization": "Bearer {sub}"}), "forward_token"),
        (json!({"X-User": "{subject}"}), "{claims.NAME}"),
        (json!({"X-User": "a\r\nX-Evil: 1"}), "visible ASCII"),
    ] {
        let config = json!({"server_id": "bad", "transport": "http", "url": peer.url,
            "identity": {"headers": headers}});
        let (status, body) = app
            .post("/v1/servers", &app.admin, json!({"config": config}))
            .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(
            body["error"].as_str().unwrap().contains(why),
            "{why}: {body}"
        );
    }
    running.abort();
}
