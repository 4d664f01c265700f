//! Resource subscriptions to a 2026-07-28 server (`listen_server.py`, Python `mcp` 2.x stateless):
//! its news comes only on a `subscriptions/listen` stream, which the bridge keeps open with the
//! URIs agents follow, renews as they change and opens again after a reconnect.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;

const CLOCK: &str = "listen://clock";

/// The fixture's clock moves every second; an update reaches a subscriber within this.
const TICK_WAIT: Duration = Duration::from_secs(2);

/// The text a fixture tool answers.
async fn answer(app: &TestApp, tool: &str) -> String {
    let (status, body) = app.call(tool, json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["content"][0]["text"].as_str().unwrap().to_owned()
}

/// Waits until the fixture's tool `tool` answers `expected`.
async fn wait_answer(app: &TestApp, tool: &str, expected: &str) {
    wait_until(
        &format!("{tool} answering {expected:?}"),
        WAIT,
        async || match answer(app, tool).await {
            text if text == expected => Ok(()),
            text => Err(text),
        },
    )
    .await
}

/// Waits for the clock's next update on `stream`.
async fn next_tick(stream: &mut EventStream) {
    let update = stream
        .wait_for("the clock's update", TICK_WAIT, |m| {
            is_push(m, "notifications/resources/updated")
        })
        .await;
    assert_eq!(update.data["server_id"], "clock");
    // The id of the bridge's own listen stays upstream.
    assert_eq!(update.data["params"], json!({"uri": CLOCK}), "{update:?}");
}

/// Whether an update of the clock arrives on `stream` within `within`.
async fn ticks_within(stream: &mut EventStream, within: Duration) -> bool {
    stream
        .drain(within)
        .await
        .iter()
        .any(|m| is_push(m, "notifications/resources/updated"))
}

#[tokio::test]
async fn a_2026_server_is_followed_with_subscriptions_listen() {
    let app = spawn_app().await;
    let mut alice = EventStream::open(&app, &app.alice, None).await;
    let mut bob = EventStream::open(&app, &app.bob, None).await;
    let peer = listen_server_on(0).await;
    let server = app
        .register(json!({
            "server_id": "clock", "transport": "http", "url": peer.url,
            "protocol_version": "2026-07-28"
        }))
        .await;
    assert_eq!(server["mcp_version"], "2026-07-28", "{server}");

    // The tool the server adds once the bridge listens reaches the catalogue and every agent.
    wait_until("the added tool in the catalogue", WAIT, async || {
        let names = app.tool_names("").await;
        match names.contains(&"clock__late".to_owned()) {
            true => Ok(()),
            false => Err(format!("{names:?}")),
        }
    })
    .await;
    bob.wait_for("tools/list_changed", WAIT, |m| {
        is_push(m, "notifications/tools/list_changed")
    })
    .await;
    assert_eq!(answer(&app, "clock__late").await, "late");
    assert_eq!(answer(&app, "clock__following").await, "");

    let (status, body) = app
        .post("/v1/resources/subscribe", &app.alice, json!({"uri": CLOCK}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["server_id"], "clock");
    next_tick(&mut alice).await;
    next_tick(&mut alice).await;
    // One stream carries it all: the new one replaced the first.
    assert_eq!(answer(&app, "clock__following").await, CLOCK);
    wait_answer(&app, "clock__listeners", "1").await;
    assert!(!ticks_within(&mut bob, Duration::from_millis(1500)).await);

    // Unsubscribed: the server is asked for the list changes alone, and the updates stop.
    let (status, body) = app
        .post(
            "/v1/resources/unsubscribe",
            &app.alice,
            json!({"uri": CLOCK}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    wait_answer(&app, "clock__following", "").await;
    wait_answer(&app, "clock__listeners", "1").await;
    alice.drain(Duration::from_millis(200)).await;
    assert!(!ticks_within(&mut alice, Duration::from_millis(2500)).await);

    // Subscribed again, then reconnected: the new connection listens for it from the start.
    let (status, body) = app
        .post("/v1/resources/subscribe", &app.alice, json!({"uri": CLOCK}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    next_tick(&mut alice).await;
    let (status, body) = app
        .post("/v1/servers/clock/reconnect", &app.admin, json!(null))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["server"]["status"], "ready", "{body}");
    wait_answer(&app, "clock__listeners", "1").await;
    assert_eq!(answer(&app, "clock__following").await, CLOCK);
    alice.drain(Duration::from_millis(200)).await;
    next_tick(&mut alice).await;
    app.stop().await;
}

#[tokio::test]
async fn a_restarted_2026_server_is_listened_to_again() {
    let app = spawn_app().await;
    let peer = listen_server_on(0).await;
    let port = peer.port();
    app.register(json!({
        "server_id": "clock", "transport": "http", "url": peer.url,
        "protocol_version": "2026-07-28"
    }))
    .await;
    let mut alice = EventStream::open(&app, &app.alice, None).await;
    let (status, body) = app
        .post("/v1/resources/subscribe", &app.alice, json!({"uri": CLOCK}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    next_tick(&mut alice).await;

    // A new process on the same address knows nothing of the bridge: the stream the old one
    // ended is opened again there, with the clock in it.
    peer.stop().await;
    let _peer = listen_server_on(port).await;
    wait_answer(&app, "clock__following", CLOCK).await;
    alice.drain(Duration::from_millis(200)).await;
    next_tick(&mut alice).await;
    app.stop().await;
}
