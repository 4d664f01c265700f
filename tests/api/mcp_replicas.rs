//! `/mcp` across replicas behind a load balancer that sticks to nothing: a 2025-11-25 session
//! whose every request lands on another replica in turn (a client that rotates the base URL
//! per request, as a round-robin balancer would) works as on one replica, is its agent's alone
//! and counted against its cap on every replica, and outlives the replica that opened it being
//! killed; the stateless 2026-07-28 era works on any replica. Skipped unless
//! `MCP_BRIDGE_TEST_POSTGRES` and `MCP_BRIDGE_TEST_NATS` are set.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::cluster::*;
use crate::helpers::*;

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

/// A `/mcp` client on one replica calls a tool of a server held by another: the server's
/// sampling request reaches the client (a 2025-11-25 session by a request, a stateless
/// 2026-07-28 client through its call's input-required result), its answer completes the call,
/// and nothing goes to the agent's event stream.
#[tokio::test]
async fn sampling_for_a_forwarded_mcp_call_reaches_its_client() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let ev = unique("ev");
    a.app.register_server(everything_stdio(&ev)).await;
    b.wait_held(&ev, "a", WAIT).await;
    let mut events = EventStream::open(&a.app, &a.app.alice, None).await;
    let forwarded = b.metric("mcp_bridge_forwarded_calls_total").await;
    for mode in ["legacy", "auto"] {
        let report = crate::mcp::mcp_client(
            &b.app,
            &b.app.alice,
            mode,
            &format!("{ev}__trigger-sampling-request"),
            json!({"prompt": "across replicas"}),
            &["--sample", "sampled by the client on b"],
        )
        .await;
        assert_eq!(
            report["sampled"].as_array().map(Vec::len),
            Some(1),
            "{mode}: {report}"
        );
        assert!(
            report["result"]
                .to_string()
                .contains("sampled by the client on b"),
            "{mode}: {report}"
        );
    }
    assert!(b.metric("mcp_bridge_forwarded_calls_total").await >= forwarded + 2.0);
    let heard = events.drain(Duration::from_millis(500)).await;
    assert!(
        heard.iter().all(|m| m.event != "mcp/sample/req"),
        "{:?}",
        heard.iter().map(|m| &m.event).collect::<Vec<_>>()
    );
}

/// A session that can sample, round-robined: its call (on one replica, forwarded to the holder)
/// raises a sampling request, which comes on the session's GET stream (held by another
/// replica), and the client's answer, posted to a third, completes the call.
#[tokio::test]
async fn a_round_robined_session_answers_sampling_on_any_replica() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let ev = unique("ev");
    let [a, b, c] = three_with_a_server(&mut replicas, &ev).await;
    let mut client = RoundRobin::new(&[&a, &b, &c], &a.app.alice);
    client.open(json!({"sampling": {}})).await; // a, b
    assert_eq!(client.result(9, "ping", json!({})).await, json!({})); // c
    let mut stream = client.listen().await; // a
    let call = json!({"name": format!("{ev}__trigger-sampling-request"),
        "arguments": {"prompt": "round and round", "maxTokens": 5}});
    let answered = async {
        let deadline = tokio::time::Instant::now() + WAIT;
        let request = loop {
            match tokio::time::timeout_at(deadline, stream.recv()).await {
                Ok(Some(m)) if m["method"] == "sampling/createMessage" => break m,
                Ok(Some(_)) => continue,
                other => panic!("no sampling request on the GET stream: {other:?}"),
            }
        };
        let answer = json!({"jsonrpc": "2.0", "id": request["id"], "result": {
            "role": "assistant", "content": {"type": "text", "text": "sampled round"},
            "model": "m"}});
        client
            .send(reqwest::Method::POST, Some(answer))
            .await
            .status()
    };
    // The call goes to b (which forwards it to a, the holder), the answer to c.
    let (called, status) = tokio::join!(client.request(2, "tools/call", call), answered);
    assert_eq!(status, StatusCode::ACCEPTED);
    let result = called.last().cloned().unwrap_or_default();
    assert!(result.to_string().contains("sampled round"), "{called:?}");
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

/// The shared database of `replicas`, to look at (and age) the sessions it holds.
async fn database(replicas: &Replicas) -> sqlx::PgConnection {
    use sqlx::Connection;
    sqlx::PgConnection::connect(&replicas.database)
        .await
        .unwrap()
}

/// Where session `id` listens, as the shared database says (`None`: nowhere, or no such row).
async fn stream_replica(db: &mut sqlx::PgConnection, id: &str) -> Option<String> {
    sqlx::query_scalar("SELECT stream_replica FROM mcp_sessions WHERE session_id = $1")
        .bind(id)
        .fetch_optional(db)
        .await
        .unwrap()
        .flatten()
}

/// An initialize opening a new session on `replica` for `token`: its status.
async fn initialize(replica: &Replica, token: &str) -> StatusCode {
    let client = RoundRobin::new(&[replica], token);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "racer", "version": "1"}}});
    client
        .send(reqwest::Method::POST, Some(body))
        .await
        .status()
}

/// Concurrent opens by one agent on three replicas cannot pass its cap together: the count and
/// the recording are one step in the store.
#[tokio::test]
async fn concurrent_opens_on_every_replica_stay_within_the_cap() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let cap = [("MCP_BRIDGE_AGENT_MCP_SESSIONS", "2")];
    let a = replicas.start_with("a", &cap).await;
    let b = replicas.start_with("b", &cap).await;
    let c = replicas.start_with("c", &cap).await;
    let opens =
        [&a, &b, &c, &a, &b, &c, &a, &b, &c].map(|replica| initialize(replica, &a.app.alice));
    let statuses = futures::future::join_all(opens).await;
    let opened = statuses.iter().filter(|s| **s == StatusCode::OK).count();
    assert!(
        opened <= 2,
        "{opened} sessions opened past a cap of 2: {statuses:?}"
    );
    assert!(
        statuses
            .iter()
            .all(|s| *s == StatusCode::OK || *s == StatusCode::TOO_MANY_REQUESTS),
        "{statuses:?}"
    );
    let mut db = database(&replicas).await;
    let kept: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM mcp_sessions")
        .fetch_one(&mut db)
        .await
        .unwrap();
    assert_eq!(usize::try_from(kept).unwrap(), opened);
}

/// Without a per-agent cap, expired sessions are removed from the store all the same (here
/// when another session opens).
#[tokio::test]
async fn expired_sessions_are_removed_without_a_cap() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let no_cap = [("MCP_BRIDGE_AGENT_MCP_SESSIONS", "0")];
    let a = replicas.start_with("a", &no_cap).await;
    let b = replicas.start_with("b", &no_cap).await;
    let mut old = RoundRobin::new(&[&a], &a.app.alice);
    old.open(json!({})).await;
    let old = old.session.unwrap();
    let mut db = database(&replicas).await;
    sqlx::query("UPDATE mcp_sessions SET used_at = used_at - 100000 WHERE session_id = $1")
        .bind(&old)
        .execute(&mut db)
        .await
        .unwrap();
    assert_eq!(initialize(&b, &b.app.alice).await, StatusCode::OK);
    let left: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM mcp_sessions WHERE session_id = $1")
        .bind(&old)
        .fetch_one(&mut db)
        .await
        .unwrap();
    assert_eq!(left, 0, "the expired session is still stored");
}

/// A session whose GET stream ends no longer names the replica that held it.
#[tokio::test]
async fn an_ended_get_stream_is_no_longer_where_the_session_listens() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let mut client = RoundRobin::new(&[&a, &b], &a.app.alice);
    client.open(json!({})).await; // a, then b
    let id = client.session.clone().unwrap();
    let stream = client.send(reqwest::Method::GET, None).await; // a
    assert_eq!(stream.status(), StatusCode::OK);
    let mut db = database(&replicas).await;
    assert_eq!(stream_replica(&mut db, &id).await.as_deref(), Some("a"));
    drop(stream); // the client goes away
    wait_until(
        "the stream's replica forgotten",
        Duration::from_secs(40),
        async || match stream_replica(&mut db, &id).await {
            None => Ok(()),
            Some(replica) => Err(replica),
        },
    )
    .await;
}

/// A client that only listens on its GET stream keeps its shared session past the idle
/// timeout (3 s here): the replica holding the stream marks it used.
#[tokio::test]
async fn a_session_that_only_listens_outlives_the_idle_timeout() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let idle = [("MCP_BRIDGE_MCP_SESSION_IDLE_SECS", "3")];
    let a = replicas.start_with("a", &idle).await;
    let b = replicas.start_with("b", &idle).await;
    let mut client = RoundRobin::new(&[&a, &b], &a.app.alice);
    client.open(json!({})).await; // a, then b
    let _stream = client.listen().await; // a
    // Time passing is what is tested: three idle timeouts with nothing but the stream open.
    tokio::time::sleep(Duration::from_secs(9)).await;
    let mut db = database(&replicas).await;
    let unused: f64 = sqlx::query_scalar(
        "SELECT extract(epoch from now())::double precision - used_at FROM mcp_sessions \
         WHERE session_id = $1",
    )
    .bind(client.session.as_deref().unwrap())
    .fetch_one(&mut db)
    .await
    .unwrap();
    assert!(
        unused < 3.0,
        "unused for {unused} s while its stream was open"
    );
    assert_eq!(client.result(2, "ping", json!({})).await, json!({})); // b
}

/// The caller's limits come before its session is looked up: while the database does not
/// answer, a caller past its rate is told so (429), not sent to the database (503).
#[tokio::test]
async fn a_sessions_limits_are_checked_before_the_database() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let (mut proxy, direct) = replicas.database_through_proxy().await;
    let env = [
        ("MCP_BRIDGE_LEASE_SECS", "30"),
        ("MCP_BRIDGE_AGENT_RATE", "1"),
        ("MCP_BRIDGE_AGENT_BURST", "2"),
    ];
    let a = replicas.start_with("a", &env).await;
    let b = replicas.start_with("b", &env).await;
    let mut on_a = RoundRobin::new(&[&a], &a.app.alice);
    on_a.open(json!({})).await;
    let mut on_b = RoundRobin::new(&[&b], &b.app.alice);
    on_b.session = on_a.session.clone();
    proxy.cut().await;
    let ping = || json!({"jsonrpc": "2.0", "id": 2, "method": "ping"});
    // Five at once against a burst of two: past it even if a slow machine spreads them over
    // a refill or two.
    let pings = (0..5).map(|_| on_b.send(reqwest::Method::POST, Some(ping())));
    let statuses: Vec<StatusCode> = futures::future::join_all(pings)
        .await
        .iter()
        .map(|resp| resp.status())
        .collect();
    proxy.restore().await;
    replicas.database = direct;
    assert!(
        statuses.contains(&StatusCode::TOO_MANY_REQUESTS),
        "{statuses:?}"
    );
}

/// A session deleted on one replica closes its GET stream held on another at once.
#[tokio::test]
async fn a_delete_closes_the_sessions_stream_on_another_replica() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let mut client = RoundRobin::new(&[&a, &b], &a.app.alice);
    client.open(json!({})).await; // a, then b
    let mut stream = client.listen().await; // a
    let mut db = database(&replicas).await;
    let id = client.session.clone().unwrap();
    assert_eq!(stream_replica(&mut db, &id).await.as_deref(), Some("a"));
    let ended = client.send(reqwest::Method::DELETE, None).await; // b
    assert_eq!(ended.status(), StatusCode::NO_CONTENT);
    // At once in practice; the bound is for a loaded machine (without the notice the stream
    // stays open for good).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(12);
    loop {
        match tokio::time::timeout_at(deadline, stream.recv()).await {
            Ok(Some(_)) => continue,
            Ok(None) => break,
            Err(_) => panic!("the GET stream on a is still open 12 s after the DELETE on b"),
        }
    }
}

/// A task request of a session this replica has not seen restores the session, as any other
/// request does, instead of answering that it does not exist.
#[tokio::test]
async fn a_task_request_restores_a_session_unseen_here() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let mut on_a = RoundRobin::new(&[&a], &a.app.alice);
    on_a.open(json!({})).await;
    let mut on_b = RoundRobin::new(&[&b], &b.app.alice);
    on_b.session = on_a.session.clone();
    let listed = on_b.result(2, "tasks/list", json!({})).await; // b, which never saw it
    assert!(listed["tasks"].is_array(), "{listed}");
    assert_eq!(on_b.result(3, "ping", json!({})).await, json!({}));
}

/// A POST of `client`'s session to the replica at `base`, whichever is next.
async fn post_to(client: &RoundRobin, base: &str, body: Value) -> reqwest::Response {
    client
        .client
        .post(format!("{base}/mcp"))
        .bearer_auth(&client.token)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", client.session.as_deref().unwrap())
        .header("mcp-protocol-version", "2025-11-25")
        .json(&body)
        .send()
        .await
        .unwrap()
}

/// The messages of an answer (its SSE stream, or its one JSON body) as they come.
fn events(resp: reqwest::Response) -> mpsc::UnboundedReceiver<Value> {
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut resp = resp;
        let mut buffer = String::new();
        while let Ok(Some(chunk)) = resp.chunk().await {
            buffer.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = buffer.find("\n\n") {
                let event: String = buffer.drain(..end + 2).collect();
                for message in messages(&event) {
                    drop(tx.send(message));
                }
            }
        }
        for message in messages(&buffer) {
            drop(tx.send(message));
        }
    });
    rx
}

/// The next message on `stream` that `wanted` picks, within [`WAIT`].
async fn next_of(
    stream: &mut mpsc::UnboundedReceiver<Value>,
    wanted: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    let mut seen = Vec::new();
    loop {
        match tokio::time::timeout_at(deadline, stream.recv()).await {
            Ok(Some(message)) if wanted(&message) => return message,
            Ok(Some(message)) => seen.push(message),
            other => panic!("not the message awaited: {other:?} after {seen:?}"),
        }
    }
}

/// A call of the test server's tool that asks its client to sample.
fn sampling_call(ev: &str, id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": format!("{ev}__trigger-sampling-request"),
        "arguments": {"prompt": "who asked?", "maxTokens": 5}}})
}

/// The client's answer to sampling request `request`.
fn sampled(request: &Value, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": request["id"], "result": {
        "role": "assistant", "content": {"type": "text", "text": text}, "model": "m"}})
}

/// A session without a GET stream: a call on a raises a sampling request, which comes on the
/// call's own stream, and the client's answer, posted to c (neither the asker nor a holder of a
/// stream), reaches a, whose request waits for it: the call completes with it.
#[tokio::test]
async fn an_answer_posted_to_a_third_replica_reaches_its_asker_without_a_get_stream() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let ev = unique("ev");
    let [a, b, c] = three_with_a_server(&mut replicas, &ev).await;
    let mut client = RoundRobin::new(&[&b, &a], &a.app.alice);
    client.open(json!({"sampling": {}})).await; // b, a
    let mut call = events(post_to(&client, &a.app.base, sampling_call(&ev, 2)).await);
    let request = next_of(&mut call, |m| m["method"] == "sampling/createMessage").await;
    let answer = sampled(&request, "answered on c");
    let status = post_to(&client, &c.app.base, answer).await.status();
    assert_eq!(status, StatusCode::ACCEPTED);
    let result = next_of(&mut call, |m| m["id"] == json!(2)).await;
    assert!(result.to_string().contains("answered on c"), "{result}");
}

/// Two replicas ask the client of one session at once (a call on a, the holder, and one on b,
/// whose request b sends on its call's stream): their requests have distinct ids, and each
/// answer, posted to the other replica, reaches its own asker.
#[tokio::test]
async fn two_replicas_asking_in_one_session_each_get_their_own_answer() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let ev = unique("ev");
    let [a, b, _c] = three_with_a_server(&mut replicas, &ev).await;
    // A server each: the bridge tells a server's request's call only when it is its only one.
    let other = unique("ev");
    a.app.register_server(everything_stdio(&other)).await;
    b.wait_held(&other, "a", WAIT).await;
    let mut client = RoundRobin::new(&[&a, &b], &a.app.alice);
    client.open(json!({"sampling": {}})).await; // a, b
    let mut on_a = events(post_to(&client, &a.app.base, sampling_call(&ev, 2)).await);
    let mut on_b = events(post_to(&client, &b.app.base, sampling_call(&other, 3)).await);
    let asked_a = next_of(&mut on_a, |m| m["method"] == "sampling/createMessage").await;
    let asked_b = next_of(&mut on_b, |m| m["method"] == "sampling/createMessage").await;
    assert_ne!(asked_a["id"], asked_b["id"], "two requests under one id");
    let answer_a = sampled(&asked_a, "for the call on a");
    let answer_b = sampled(&asked_b, "for the call on b");
    assert_eq!(
        post_to(&client, &b.app.base, answer_a).await.status(),
        StatusCode::ACCEPTED
    );
    assert_eq!(
        post_to(&client, &a.app.base, answer_b).await.status(),
        StatusCode::ACCEPTED
    );
    let result_a = next_of(&mut on_a, |m| m["id"] == json!(2)).await;
    let result_b = next_of(&mut on_b, |m| m["id"] == json!(3)).await;
    assert!(
        result_a.to_string().contains("for the call on a"),
        "{result_a}"
    );
    assert!(
        result_b.to_string().contains("for the call on b"),
        "{result_b}"
    );
}
