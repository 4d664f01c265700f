//! Requests to an `/mcp` client across replicas: a sampling request for a forwarded call reaches
//! its client, and an answer posted to any replica reaches the replica that asked.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::cluster::*;
use crate::helpers::*;

use super::{RoundRobin, messages, three_with_a_server};

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
