//! Per-agent OAuth servers: one grant per agent, kept across a restart, and each agent's reads,
//! listings and messages going over its own grant only.

use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

use super::{approve_ok, assert_auth_required, discovered, query, whoami};

#[tokio::test]
async fn per_agent_servers_hold_one_grant_per_agent() {
    let peer = oauth_peer(&[]).await;
    let app = TestApp::builder().port(free_port()).spawn().await;
    let mut config = discovered("mine", &peer);
    config["auth"] = json!({ "type": "oauth2", "per_agent": true });
    app.register_server_as(&app.alice, config).await;
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
    app.register_server_as(&app.alice, config).await;
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

/// On a `per_agent` server a resource is read over the reader's own session: bob cannot read
/// with alice's grant, and once he has authorized he reads with his own.
#[tokio::test]
async fn per_agent_reads_go_over_the_readers_own_grant() {
    let peer = oauth_peer(&[]).await;
    let app = TestApp::builder().port(free_port()).spawn().await;
    let mut config = discovered("reads", &peer);
    config["auth"] = json!({ "type": "oauth2", "per_agent": true });
    app.register_server_as(&app.alice, config).await;
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
    let resources = app.list_resources_as(token, "").await;
    resources
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
    app.register_server_as(&app.alice, config).await;
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
