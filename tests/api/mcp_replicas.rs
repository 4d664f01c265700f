//! `/mcp` across replicas behind a load balancer that sticks to nothing: a 2025-11-25 session
//! whose every request lands on another replica in turn (a client that rotates the base URL
//! per request, as a round-robin balancer would) works as on one replica, is its agent's alone
//! and counted against its cap on every replica, and outlives the replica that opened it being
//! killed; the stateless 2026-07-28 era works on any replica. Sessions in the shared store are
//! in `sessions`, requests to the client answered across replicas in `answers`. Skipped unless
//! `MCP_BRIDGE_TEST_POSTGRES` and `MCP_BRIDGE_TEST_NATS` are set.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::cluster::*;
use crate::helpers::*;

mod answers;
mod sessions;

/// An MCP client over raw HTTP whose each request goes to the next of `bases`.
struct RoundRobin {
    client: reqwest::Client,
    bases: Vec<String>,
    next: AtomicUsize,
    token: String,
    session: Option<String>,
}

impl RoundRobin {
    fn new(replicas: &[&Replica], token: &str) -> Self {
        Self {
            client: reqwest::Client::new(),
            bases: replicas.iter().map(|r| r.app.base.clone()).collect(),
            next: AtomicUsize::new(0),
            token: token.to_owned(),
            session: None,
        }
    }

    /// The base the next request goes to, and moves on.
    fn base(&self) -> String {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        self.bases[n % self.bases.len()].clone()
    }

    /// A request to `/mcp` on the next replica.
    async fn send(&self, method: reqwest::Method, body: Option<Value>) -> reqwest::Response {
        let mut req = self
            .client
            .request(method, format!("{}/mcp", self.base()))
            .bearer_auth(&self.token)
            .header("accept", "application/json, text/event-stream");
        if let Some(session) = &self.session {
            req = req
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-11-25");
        }
        if let Some(body) = body {
            req = req.json(&body);
        }
        req.send().await.unwrap()
    }

    /// Opens the session (initialize, then initialized), each on another replica.
    async fn open(&mut self, capabilities: Value) {
        let resp = self
            .send(
                reqwest::Method::POST,
                Some(
                    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": capabilities,
                    "clientInfo": {"name": "round-robin", "version": "1"}}}),
                ),
            )
            .await;
        assert_eq!(resp.status(), StatusCode::OK, "initialize");
        let id = resp.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        self.session = Some(id);
        let said = self
            .send(
                reqwest::Method::POST,
                Some(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})),
            )
            .await;
        assert_eq!(said.status(), StatusCode::ACCEPTED, "initialized");
    }

    /// A request of the session on the next replica: every message of its answer (one, or
    /// those of its SSE stream), ending with the answer.
    async fn request(&self, id: u64, method: &str, params: Value) -> Vec<Value> {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let resp = self.send(reqwest::Method::POST, Some(body)).await;
        let status = resp.status();
        let text = resp.text().await.unwrap();
        assert_eq!(status, StatusCode::OK, "{method}: {text}");
        messages(&text)
    }

    /// The answer's result of a request of the session on the next replica.
    async fn result(&self, id: u64, method: &str, params: Value) -> Value {
        let messages = self.request(id, method, params).await;
        let answer = messages.last().cloned().unwrap_or_default();
        assert_eq!(answer["id"], json!(id), "{messages:?}");
        answer["result"].clone()
    }

    /// The session's GET stream, opened on the next replica: its messages as they come.
    async fn listen(&self) -> mpsc::UnboundedReceiver<Value> {
        let resp = self.send(reqwest::Method::GET, None).await;
        assert_eq!(resp.status(), StatusCode::OK, "the GET stream");
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            let mut resp = resp;
            let mut buffer = String::new();
            while let Ok(Some(chunk)) = resp.chunk().await {
                buffer.push_str(&String::from_utf8_lossy(&chunk));
                while let Some(end) = buffer.find("\n\n") {
                    let event: String = buffer.drain(..end + 2).collect();
                    for message in messages(&event) {
                        if tx.send(message).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        rx
    }
}

/// The JSON-RPC messages of an answer: a JSON body, or the `data:` lines of an SSE stream.
fn messages(text: &str) -> Vec<Value> {
    if let Ok(message) = serde_json::from_str::<Value>(text) {
        return vec![message];
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .collect()
}

/// Waits for a message with `method` on a GET stream.
async fn heard(stream: &mut mpsc::UnboundedReceiver<Value>, method: &str, within: Duration) {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, stream.recv()).await {
            Ok(Some(message)) if message["method"] == method => return,
            Ok(Some(_)) => continue,
            Ok(None) => panic!("the GET stream ended before {method}"),
            Err(_) => panic!("no {method} on the GET stream within {within:?}"),
        }
    }
}

/// Three replicas, a server (server-everything) registered on the first and held by it, shown
/// ready on all.
async fn three_with_a_server(replicas: &mut Replicas, id: &str) -> [Replica; 3] {
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let c = replicas.start("c").await;
    a.app.register_server(everything_stdio(id)).await;
    for replica in [&b, &c] {
        replica.wait_held(id, "a", WAIT).await;
    }
    [a, b, c]
}

/// Every request of a session on the next replica in turn: initialize, initialized, tools/list,
/// ping, a forwarded call with progress, the GET stream, a subscription and the resource update
/// on the stream, a list change on the stream, a call and DELETE; after it the session is gone
/// on every replica.
#[tokio::test]
async fn a_session_round_robined_over_three_replicas_works_on_each() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let ev = unique("ev");
    let [a, b, c] = three_with_a_server(&mut replicas, &ev).await;
    let mut client = RoundRobin::new(&[&a, &b, &c], &a.app.alice);
    client.open(json!({})).await; // on a, then b
    let tools = client.result(2, "tools/list", json!({})).await; // c
    let echo = format!("{ev}__echo");
    assert!(
        tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == echo),
        "{tools}"
    );
    assert_eq!(client.result(3, "ping", json!({})).await, json!({})); // a
    // On b, which forwards the call to a: the progress comes back on the call's stream.
    let long = json!({"name": format!("{ev}__trigger-long-running-operation"),
        "arguments": {"duration": 1, "steps": 2}, "_meta": {"progressToken": "p-1"}});
    let called = client.request(4, "tools/call", long).await; // b
    let progress = called
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .count();
    assert!(progress >= 1, "no progress in {called:?}");
    let done = &called.last().unwrap()["result"];
    assert!(
        done["content"].is_array() && done["isError"] != json!(true),
        "{called:?}"
    );
    let mut stream = client.listen().await; // c
    let uri = "demo://resource/static/document/architecture.md";
    client
        .result(5, "resources/subscribe", json!({"uri": uri}))
        .await; // a
    let toggled = client
        .result(
            6,
            "tools/call",
            json!({"name": format!("{ev}__toggle-subscriber-updates"), "arguments": {}}),
        )
        .await; // b
    assert_ne!(toggled["isError"], json!(true), "{toggled}");
    heard(
        &mut stream,
        "notifications/resources/updated",
        Duration::from_secs(20),
    )
    .await;
    // A new server on yet another replica changes the catalogue.
    c.app
        .register_server(everything_stdio(&unique("ev2")))
        .await;
    heard(&mut stream, "notifications/tools/list_changed", WAIT).await;
    let echoed = client
        .result(
            7,
            "tools/call",
            json!({"name": echo, "arguments": {"message": "round"}}),
        )
        .await; // c
    assert_eq!(echoed["content"][0]["text"], "Echo: round", "{echoed}");
    let ended = client.send(reqwest::Method::DELETE, None).await; // a
    assert_eq!(ended.status(), StatusCode::NO_CONTENT);
    for replica in ["b", "c", "a"] {
        let ping = json!({"jsonrpc": "2.0", "id": 8, "method": "ping"});
        let after = client.send(reqwest::Method::POST, Some(ping)).await;
        assert_eq!(after.status(), StatusCode::NOT_FOUND, "ended, on {replica}");
    }
}

/// A session is its agent's alone on every replica, and its agent's cap counts its sessions on
/// all of them.
#[tokio::test]
async fn a_session_is_its_agents_and_counted_on_every_replica() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let cap = [("MCP_BRIDGE_AGENT_MCP_SESSIONS", "2")];
    let a = replicas.start_with("a", &cap).await;
    let b = replicas.start_with("b", &cap).await;
    let c = replicas.start_with("c", &cap).await;
    let mut first = RoundRobin::new(&[&a, &b], &a.app.alice);
    first.open(json!({})).await;
    // Bob with alice's session, on a replica that has not seen it: as if it did not exist.
    let mut bobs = RoundRobin::new(&[&c], &a.app.bob);
    bobs.session = first.session.clone();
    for method in [reqwest::Method::POST, reqwest::Method::GET] {
        let body = (method == reqwest::Method::POST)
            .then(|| json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
        let resp = bobs.send(method.clone(), body).await;
        assert_eq!(resp.status(), StatusCode::NOT_FOUND, "bob's {method}");
    }
    let mut second = RoundRobin::new(&[&b, &c], &a.app.alice);
    second.open(json!({})).await;
    // The third, on a replica that opened none of the two: past the cap.
    let third = RoundRobin::new(&[&c], &a.app.alice);
    let refused = third
        .send(
            reqwest::Method::POST,
            Some(
                json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "third", "version": "1"}}}),
            ),
        )
        .await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    // Alice's own session still works on c.
    assert_eq!(first.result(3, "ping", json!({})).await, json!({}));
}

/// The replica that opened a session killed with `kill -9`: the next requests, on the others,
/// go on in the same session.
#[tokio::test]
async fn a_session_outlives_its_first_replica_killed() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let c = replicas.start("c").await;
    let ev = unique("ev");
    b.app.register_server(everything_stdio(&ev)).await;
    c.wait_held(&ev, "b", WAIT).await;
    let mut client = RoundRobin::new(&[&a], &a.app.alice);
    client.open(json!({})).await;
    let session = client.session.clone();
    a.bridge.signal("KILL");
    let mut survivors = RoundRobin::new(&[&b, &c], &b.app.alice);
    survivors.session = session;
    let echo = format!("{ev}__echo");
    for (id, word) in [(2, "after"), (3, "still")] {
        let result = survivors
            .result(
                id,
                "tools/call",
                json!({"name": echo, "arguments": {"message": word}}),
            )
            .await;
        assert_eq!(
            result["content"][0]["text"],
            format!("Echo: {word}"),
            "{result}"
        );
    }
    let tools = survivors.result(4, "tools/list", json!({})).await;
    assert!(tools["tools"].as_array().is_some_and(|t| !t.is_empty()));
    drop(a);
}

/// A stateless (2026-07-28) call goes to any replica: one that does not hold the server
/// forwards it.
#[tokio::test]
async fn a_stateless_call_works_on_any_replica() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let ev = unique("ev");
    let [a, b, c] = three_with_a_server(&mut replicas, &ev).await;
    for replica in [&a, &b, &c] {
        let resp = replica
            .app
            .stateless_mcp_call(
                &replica.app.alice,
                &format!("{ev}__echo"),
                json!({"message": replica.id}),
                json!({}),
            )
            .await;
        assert_eq!(resp.status(), StatusCode::OK);
        let answer = messages(&resp.text().await.unwrap())
            .pop()
            .unwrap_or_default();
        assert_eq!(
            answer["result"]["content"][0]["text"],
            format!("Echo: {}", replica.id),
            "{answer}"
        );
    }
}

/// While the shared database does not answer, a request of a session this replica never saw is
/// answered 503 (retryable), not 404, which would make the client drop a session that is alive;
/// once the database is back the session goes on there.
#[tokio::test]
async fn a_session_unseen_here_while_the_database_is_away_is_retryable_not_gone() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let (mut proxy, direct) = replicas.database_through_proxy().await;
    // A lease longer than the outage, so nothing else moves meanwhile.
    let lease = [("MCP_BRIDGE_LEASE_SECS", "30")];
    let a = replicas.start_with("a", &lease).await;
    let b = replicas.start_with("b", &lease).await;
    let mut on_a = RoundRobin::new(&[&a], &a.app.alice);
    on_a.open(json!({})).await;
    let mut on_b = RoundRobin::new(&[&b], &b.app.alice);
    on_b.session = on_a.session.clone();

    proxy.cut().await;
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    let resp = on_b.send(reqwest::Method::POST, Some(ping.clone())).await;
    let status = resp.status();
    let retry_after = resp.headers().get("retry-after").cloned();
    let body: Value = resp.json().await.unwrap_or_default();
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["retryable"], true, "{body}");
    assert!(retry_after.is_some());
    proxy.restore().await;
    replicas.database = direct;

    assert_eq!(on_b.result(3, "ping", json!({})).await, json!({}));
}

/// What a session asks for through one replica is kept when it asks for more through another:
/// a subscription made on a survives a log level set on b, and its updates still come.
#[tokio::test]
async fn a_subscription_made_on_one_replica_survives_a_change_made_on_another() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let ev = unique("ev");
    a.app.register_server(everything_stdio(&ev)).await;
    b.wait_held(&ev, "a", WAIT).await;
    let mut client = RoundRobin::new(&[&a, &b], &a.app.alice);
    client.open(json!({})).await; // a, then b
    let uri = "demo://resource/static/document/architecture.md";
    client
        .result(2, "resources/subscribe", json!({"uri": uri}))
        .await; // a
    client
        .result(3, "logging/setLevel", json!({"level": "error"}))
        .await; // b
    let mut stream = client.listen().await; // a
    let toggled = client
        .result(
            4,
            "tools/call",
            json!({"name": format!("{ev}__toggle-subscriber-updates"), "arguments": {}}),
        )
        .await; // b
    assert_ne!(toggled["isError"], json!(true), "{toggled}");
    heard(
        &mut stream,
        "notifications/resources/updated",
        Duration::from_secs(20),
    )
    .await;
}
