//! The bus between replicas grants nothing to whoever can reach NATS: on a `nats-server` with
//! an auth config (the bridge's user, and an intruder of the same account with every right but
//! without the bus key), a process without credentials is not let in, and the intruder can
//! neither act as an agent (a forged call or read, in the old wire format and the new one
//! unsealed), nor inject an event into an agent's stream, nor read a forwarded call's
//! arguments, nor replay a captured request. Skipped unless `MCP_BRIDGE_TEST_POSTGRES` and
//! `MCP_BRIDGE_TEST_NATS` are set.

use std::time::Duration;

use futures::StreamExt;
use serde_json::json;

use crate::cluster::*;
use crate::helpers::*;

const DISTINCTIVE: &str = "the-argument-no-intruder-may-read-7f3a9c";

/// Sends `payload` to `subject` as a request; its reply (if any) must be no success an
/// intruder can read.
async fn forged_request(intruder: &async_nats::Client, subject: &str, payload: Vec<u8>) {
    let asked = intruder
        .send_request(
            subject.to_owned(),
            async_nats::Request::new()
                .payload(payload.into())
                .timeout(Some(Duration::from_secs(3))),
        )
        .await;
    if let Ok(reply) = asked {
        let text = String::from_utf8_lossy(&reply.payload);
        assert!(
            serde_json::from_slice::<serde_json::Value>(&reply.payload).is_err(),
            "the intruder reads an answer: {text}"
        );
        assert!(!text.contains("forged") && !text.contains("Echo"), "{text}");
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

#[tokio::test]
async fn an_intruder_on_nats_without_the_bus_key_can_neither_act_nor_read() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let nats = PrivateNats::with_auth(&replicas.prefix).await;
    // (a) Without credentials NATS lets nobody in.
    assert!(
        async_nats::connect(nats.url()).await.is_err(),
        "a client without credentials is refused"
    );
    replicas.nats = nats.url_as(BRIDGE_USER);
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let id = unique("bus");
    a.app.register_server(everything_stdio(&id)).await;
    b.wait_held(&id, "a", WAIT).await;
    let prefix = replicas.prefix.clone();
    let intruder =
        async_nats::ConnectOptions::with_user_and_password(INTRUDER.0.into(), INTRUDER.1.into())
            .connect(nats.url())
            .await
            .unwrap();

    // (e) A call forwarded to the holder, under a wildcard subscription: its argument is in no
    // payload and no header. On a loaded machine a 3 s lease can lapse and the server move to
    // the other replica, so the call is made from whichever replica does not hold it then.
    let mut everything = intruder.subscribe(format!("{prefix}.>")).await.unwrap();
    let mut inboxes = intruder.subscribe("_INBOX.>").await.unwrap();
    intruder.flush().await.unwrap();
    let mut attempts = Vec::new();
    let (holder, heard, captured) = loop {
        let held_by = wait_until("the server ready on a replica", WAIT, async || {
            let (_, body) = a.app.server(&id).await;
            let server = &body["server"];
            match (server["status"].as_str(), server["replica"].as_str()) {
                (Some("ready"), Some(holder)) => Ok(holder.to_owned()),
                _ => Err(body.to_string()),
            }
        })
        .await;
        let (holder, caller) = match held_by.as_str() {
            "b" => (&b, &a),
            _ => (&a, &b),
        };
        let body = caller
            .app
            .call_tool(&format!("{id}__echo"), json!({"message": DISTINCTIVE}))
            .await;
        assert!(body.to_string().contains(DISTINCTIVE), "{body}");
        let mut heard = Vec::new();
        // Listens for a while: what must not be heard can only be waited out.
        let listen = tokio::time::sleep(Duration::from_secs(2));
        tokio::pin!(listen);
        loop {
            tokio::select! {
                _ = &mut listen => break,
                Some(message) = everything.next() => heard.push(message),
                Some(message) = inboxes.next() => heard.push(message),
            }
        }
        let rpc_subject = format!("{prefix}.rpc.{}", holder.id);
        let subjects: Vec<String> = heard.iter().map(|m| m.subject.to_string()).collect();
        if let Some(captured) = heard.iter().find(|m| m.subject.as_str() == rpc_subject) {
            let captured = captured.clone();
            break (holder, heard, captured);
        }
        attempts.push(format!("held by {held_by}, heard {subjects:?}"));
        assert!(
            attempts.len() < 3,
            "the forwarded call never crossed NATS: {attempts:#?}"
        );
    };
    let rpc_subject = captured.subject.to_string();
    for message in &heard {
        let headers = format!("{:?}", message.headers);
        let payload = String::from_utf8_lossy(&message.payload);
        assert!(
            !payload.contains(DISTINCTIVE) && !headers.contains(DISTINCTIVE),
            "the argument is readable on {}",
            message.subject
        );
        assert!(
            !payload.contains("alice"),
            "who called is readable on {}",
            message.subject
        );
    }

    // (b) A forged call as agent "nobody", in the wire format before sealing and in the new
    // one unsealed: refused before anything runs.
    let refused_before = holder.metric("mcp_bridge_bus_refused_total").await;
    let call = json!({"op": "call_tool", "name": format!("{id}__echo"),
        "arguments": {"message": "forged"}, "timeout": null, "agent": "nobody",
        "req_id": "x", "call_key": "k"});
    let old = serde_json::to_vec(&json!(["op", call])).unwrap();
    forged_request(&intruder, &rpc_subject, old).await;
    let new = json!({"v": 1, "from": "b", "id": "forged-1", "at": now_ms(),
        "message": {"type": "request", "body": call}});
    forged_request(&intruder, &rpc_subject, serde_json::to_vec(&new).unwrap()).await;
    // (c) A resource read as alice (through alice's grants, were it served).
    let read = json!({"v": 1, "from": "b", "id": "forged-2", "at": now_ms(),
        "message": {"type": "request", "body": {"op": "read_resource", "agent": "alice",
        "server_id": id, "uri": "demo://resource/static/document/architecture.md"}}});
    forged_request(&intruder, &rpc_subject, serde_json::to_vec(&read).unwrap()).await;
    // (f) The captured sealed call, replayed: refused as seen before.
    forged_request(&intruder, &rpc_subject, captured.payload.to_vec()).await;
    wait_until("the holder counting the four refusals", WAIT, async || {
        let refused = holder.metric("mcp_bridge_bus_refused_total").await;
        match refused - refused_before >= 4.0 {
            true => Ok(()),
            false => Err(format!("{refused_before} -> {refused}")),
        }
    })
    .await;

    // (d) Forged log entries (old header format, new format unsealed) reach no stream; a
    // genuine event after them does.
    let mut events = EventStream::open(&b.app, &b.app.alice, None).await;
    let mut headers = async_nats::HeaderMap::new();
    headers.insert("x-entry", "event");
    headers.insert("x-agent", "\"alice\"");
    headers.insert("x-kind", "mcp/server/push");
    let log_subject = format!("{prefix}.log");
    intruder
        .publish_with_headers(
            log_subject.clone(),
            headers,
            r#"{"forged": "Open the authorization page"}"#.into(),
        )
        .await
        .unwrap();
    let entry = json!({"v": 1, "from": "a", "id": "forged-3", "at": now_ms(),
        "message": {"type": "log", "body": {"entry": "event", "agent": "alice",
        "kind": "mcp/server/push", "data": "{\"forged\": true}"}}});
    intruder
        .publish(log_subject, serde_json::to_vec(&entry).unwrap().into())
        .await
        .unwrap();
    intruder.flush().await.unwrap();
    let genuine = unique("after");
    a.app.register_server(everything_stdio(&genuine)).await;
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        let event = events.next(left).await.expect("the genuine event arrives");
        assert!(
            !event.data.to_string().contains("forged"),
            "a forged event reached alice: {:?}",
            event.data
        );
        if event.data.to_string().contains(&genuine) {
            break;
        }
    }
}
