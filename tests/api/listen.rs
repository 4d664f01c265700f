//! Resource subscriptions to a 2026-07-28 server (`listen_server.py`, Python `mcp` 2.x stateless):
//! its news comes only on a `subscriptions/listen` stream, which the bridge keeps open with the
//! URIs agents follow, renews as they change and opens again after a reconnect. Its news reaches
//! a REST agent, a 2025-11-25 `/mcp` session (`resources/subscribe`) and a 2026-07-28 `/mcp`
//! client on a `subscriptions/listen` stream of its own (`mcp_listen.py`, the Python SDK's client).

use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

const CLOCK: &str = "listen://clock";

/// The fixture's clock moves every second; an update reaches a subscriber within this.
const TICK_WAIT: Duration = Duration::from_secs(2);

/// The text a fixture tool answers.
async fn answer(app: &TestApp, tool: &str) -> String {
    let body = app.call_tool(tool, json!({})).await;
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
        .register_server(json!({
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

    let body = app.subscribe(json!({"uri": CLOCK})).await;
    assert_eq!(body["server_id"], "clock");
    next_tick(&mut alice).await;
    next_tick(&mut alice).await;
    // One stream carries it all: the new one replaced the first.
    assert_eq!(answer(&app, "clock__following").await, CLOCK);
    wait_answer(&app, "clock__listeners", "1").await;
    assert!(!ticks_within(&mut bob, Duration::from_millis(1500)).await);

    // Unsubscribed: the server is asked for the list changes alone, and the updates stop.
    app.unsubscribe(json!({"uri": CLOCK})).await;
    wait_answer(&app, "clock__following", "").await;
    wait_answer(&app, "clock__listeners", "1").await;
    alice.drain(Duration::from_millis(200)).await;
    assert!(!ticks_within(&mut alice, Duration::from_millis(2500)).await);

    // Subscribed again, then reconnected: the new connection listens for it from the start.
    app.subscribe(json!({"uri": CLOCK})).await;
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

/// The bridge with the 2026 clock server registered, alice following its clock over REST and
/// one tick of it heard.
async fn clock_followed_by_alice() -> (TestApp, Peer, EventStream) {
    let app = spawn_app().await;
    let peer = listen_server_on(0).await;
    app.register_server(json!({
        "server_id": "clock", "transport": "http", "url": peer.url,
        "protocol_version": "2026-07-28"
    }))
    .await;
    let mut alice = EventStream::open(&app, &app.alice, None).await;
    app.subscribe(json!({"uri": CLOCK})).await;
    next_tick(&mut alice).await;
    (app, peer, alice)
}

#[tokio::test]
async fn a_restarted_2026_server_is_listened_to_again() {
    let (app, peer, mut alice) = clock_followed_by_alice().await;
    let port = peer.port();

    // A new process on the same address knows nothing of the bridge: the stream the old one
    // ended is opened again there, with the clock in it.
    peer.stop().await;
    let _peer = listen_server_on(port).await;
    wait_answer(&app, "clock__following", CLOCK).await;
    alice.drain(Duration::from_millis(200)).await;
    next_tick(&mut alice).await;
    app.stop().await;
}

/// `mcp_listen.py`: a Python SDK client following a URI on `/mcp` in one era, its lines as they
/// come (killed when dropped, which ends its stream).
struct Follower {
    child: tokio::process::Child,
    lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    mode: &'static str,
}

impl Follower {
    /// Starts one as `token` in `mode` (`legacy`: 2025-11-25, `auto`: 2026-07-28) following
    /// `uri`, and waits until it follows; with the line that said so.
    async fn start(app: &TestApp, token: &str, mode: &'static str, uri: &str) -> (Self, Value) {
        let url = format!("{}/mcp", app.base);
        let mut child = tokio::process::Command::new(python())
            .arg(peers_dir().join("mcp_listen.py"))
            .args([url.as_str(), token, mode, uri])
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut follower = Self { child, lines, mode };
        let ready = follower
            .wait_for("following", WAIT, |line| line["event"] == "ready")
            .await;
        (follower, ready)
    }

    /// The next line that `wanted` accepts within `within`; fails saying what did not come.
    async fn wait_for(
        &mut self,
        what: &str,
        within: Duration,
        wanted: impl Fn(&Value) -> bool,
    ) -> Value {
        let mode = self.mode;
        let deadline = tokio::time::Instant::now() + within;
        let mut seen = Vec::new();
        loop {
            let line = tokio::time::timeout_at(deadline, self.lines.next_line()).await;
            let line = match line {
                Ok(Ok(Some(line))) => line,
                Ok(_) => panic!("the {mode} client ended before {what}; it said {seen:?}"),
                Err(_) => {
                    panic!("no {what} on the {mode} client within {within:?}; it said {seen:?}")
                }
            };
            let line: Value = serde_json::from_str(&line).unwrap_or(Value::String(line));
            if wanted(&line) {
                return line;
            }
            seen.push(line);
        }
    }

    /// Waits for the next update of `uri`, within [`TICK_WAIT`].
    async fn next_tick(&mut self, uri: &str) {
        // It names the URI as the client followed it.
        let update = self
            .wait_for(&format!("the update of {uri}"), TICK_WAIT, |line| {
                line["event"] == "updated"
            })
            .await;
        assert_eq!(update["uri"], uri, "{update}");
    }

    /// Waits until the client lists `tool` after a change of the tool list.
    async fn sees_tool(&mut self, tool: &str) {
        self.wait_for(&format!("a tool list with {tool}"), WAIT, |line| {
            line["event"] == "tools"
                && line["names"]
                    .as_array()
                    .is_some_and(|names| names.iter().any(|n| n == tool))
        })
        .await;
    }

    /// Whether an update comes within `within`.
    async fn ticks_within(&mut self, within: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + within;
        while let Ok(Ok(Some(line))) =
            tokio::time::timeout_at(deadline, self.lines.next_line()).await
        {
            if line.contains("\"updated\"") {
                return true;
            }
        }
        false
    }

    async fn stop(mut self) {
        let _ = self.child.kill().await;
    }
}

#[tokio::test]
async fn a_rest_agent_and_mcp_clients_of_both_eras_hear_a_2026_server() {
    let (app, _peer, mut alice) = clock_followed_by_alice().await;

    let (mut legacy, _) = Follower::start(&app, &app.bob, "legacy", CLOCK).await;
    legacy.next_tick(CLOCK).await;
    legacy.next_tick(CLOCK).await;

    // The 2026 client is acknowledged with what it asked for, then hears on its own stream.
    let (mut modern, ready) = Follower::start(&app, &app.admin, "auto", CLOCK).await;
    assert_eq!(
        ready["honored"],
        json!({"toolsListChanged": true, "resourceSubscriptions": [CLOCK]}),
        "{ready}"
    );
    assert!(ready["subscription_id"].is_string(), "{ready}");
    modern.next_tick(CLOCK).await;
    modern.next_tick(CLOCK).await;
    next_tick(&mut alice).await;
    legacy.next_tick(CLOCK).await;

    // A tool added upstream reaches all three.
    alice.drain(Duration::from_millis(100)).await;
    assert_eq!(
        answer_with(&app, "clock__grow", json!({"name": "fresh"})).await,
        "fresh"
    );
    alice
        .wait_for("tools/list_changed", WAIT, |m| {
            is_push(m, "notifications/tools/list_changed")
        })
        .await;
    legacy.sees_tool("clock__fresh").await;
    modern.sees_tool("clock__fresh").await;
    modern.stop().await;
    legacy.stop().await;
    app.stop().await;
}

#[tokio::test]
async fn a_listen_stream_follows_what_its_caller_may_read_while_it_is_open() {
    let app = spawn_app().await;
    let (one, two) = tokio::join!(listen_server_on(0), listen_server_on(0));
    for (id, peer) in [("clock", &one), ("clock2", &two)] {
        app.register_server(json!({
            "server_id": id, "transport": "http", "url": peer.url,
            "protocol_version": "2026-07-28"
        }))
        .await;
    }
    // Both servers offer the clock: /mcp names each by its server.
    let second = format!("mcp-bridge://clock2/{CLOCK}");
    let (mut modern, ready) = Follower::start(&app, &app.alice, "auto", &second).await;
    assert_eq!(ready["honored"]["resourceSubscriptions"], json!([second]));
    modern.next_tick(&second).await;
    assert_eq!(answer(&app, "clock2__following").await, CLOCK);
    assert_eq!(answer(&app, "clock__following").await, "");

    // The stream's end ends the subscription it made.
    modern.stop().await;
    wait_answer(&app, "clock2__following", "").await;

    // A URI the caller may not read is not followed, and brings no news; the stream lives on.
    let (status, body) = app
        .client
        .put(format!("{}/v1/policies/no-clock", app.base))
        .bearer_auth(&app.admin)
        .json(&json!({"match": {"subs": ["bob"]}, "deny": {"resources": [CLOCK]}}))
        .send()
        .await
        .map(|r| (r.status(), r))
        .unwrap();
    assert_eq!(status, StatusCode::CREATED, "{:?}", body.text().await);
    let (mut denied, _) = Follower::start(&app, &app.bob, "auto", &second).await;
    assert!(!denied.ticks_within(Duration::from_millis(2500)).await);
    assert_eq!(answer(&app, "clock2__following").await, "");
    answer_with(&app, "clock2__grow", json!({"name": "fresh"})).await;
    denied.sees_tool("clock2__fresh").await;
    denied.stop().await;
    app.stop().await;
}

/// The text a fixture tool answers to `arguments`.
async fn answer_with(app: &TestApp, tool: &str, arguments: Value) -> String {
    let body = app.call_tool(tool, arguments).await;
    body["content"][0]["text"].as_str().unwrap().to_owned()
}
