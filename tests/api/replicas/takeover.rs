//! Replicas taking over from one another: a holder killed (`kill -9`) or stopped gracefully hands
//! its servers to a survivor within the lease, with calls, reads, listings, subscriptions and
//! the agent's stream carried over; a hand-over that goes wrong is taken back or left alone.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;

use crate::cluster::*;
use crate::helpers::*;

use super::echo;

#[tokio::test]
async fn when_the_holder_is_killed_a_survivor_takes_over_and_nothing_is_lost() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let mut a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let id = unique("kill");
    a.app.register_server(everything_stdio(&id)).await;
    b.wait_held(&id, "a", WAIT).await;
    let uri = "demo://resource/static/document/architecture.md";
    b.app.subscribe(json!({"server_id": id, "uri": uri})).await;
    // Alice's stream is on a; she saw this event last.
    let mut events = EventStream::open(&a.app, &a.app.alice, None).await;
    b.app
        .call_tool(&format!("{id}__echo"), json!({"message": "before"}))
        .await;
    b.app
        .post(
            "/v1/servers",
            &b.app.admin,
            json!({"config": everything_stdio(&unique("marker"))}),
        )
        .await;
    let seen = events
        .wait_for("an event on a", WAIT, |m| m.id.is_some())
        .await;
    let last = seen.id.clone().unwrap();

    a.bridge.signal("KILL");
    a.bridge.exited_within(WAIT).await.expect("a is gone");
    let killed = Instant::now();
    let held = b
        .wait_held(&id, "b", Duration::from_secs(LEASE_SECS) + WAIT)
        .await;
    let took = killed.elapsed();
    assert!(
        took < Duration::from_secs(LEASE_SECS + 1) + Duration::from_secs(10),
        "taken over after {took:?}"
    );
    eprintln!("taken over {took:?} after kill -9 (lease {LEASE_SECS} s)");
    assert!(held["connected_at"].as_f64().unwrap() > 0.0);
    let body = b
        .app
        .call_tool(&format!("{id}__echo"), json!({"message": "after"}))
        .await;
    assert!(echo(&body).contains("after"), "{body}");
    // The subscription is still hers (ending it finds it).
    b.app
        .unsubscribe(json!({"server_id": id, "uri": uri}))
        .await;
    // Her stream resumes on b after the last event she saw: nothing lost.
    let mut resumed = EventStream::open(&b.app, &b.app.alice, Some(&last)).await;
    let first = resumed
        .next(WAIT)
        .await
        .expect("events after the last seen");
    assert_ne!(
        first.data["method"], "bridge/events_lost",
        "{:?}",
        first.data
    );
    let status_push = resumed
        .wait_for("b's takeover announced", WAIT, |m| {
            is_push(m, "bridge/server_status") && m.data["params"]["replica"] == "b"
        })
        .await;
    assert!(status_push.id.unwrap().parse::<u64>().unwrap() > last.parse::<u64>().unwrap());
    assert!(b.metric("mcp_bridge_lease_changes_total").await >= 1.0);
}

#[tokio::test]
async fn a_replica_stopping_gracefully_hands_its_servers_over_at_once() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let mut a = replicas
        .start_with("a", &[("MCP_BRIDGE_LEASE_SECS", "30")])
        .await;
    let b = replicas
        .start_with("b", &[("MCP_BRIDGE_LEASE_SECS", "30")])
        .await;
    let id = unique("calm");
    a.app.register_server(everything_stdio(&id)).await;
    b.wait_held(&id, "a", WAIT).await;
    a.bridge.signal("TERM");
    let stopped = Instant::now();
    a.bridge.exited_within(WAIT).await.expect("a stops");
    // Far sooner than the 30 s lease.
    b.wait_held(&id, "b", Duration::from_secs(20)).await;
    eprintln!("handed over {:?} after SIGTERM", stopped.elapsed());
    b.app
        .call_tool(&format!("{id}__echo"), json!({"message": "handed over"}))
        .await;
}

/// A call made at any moment of a takeover, on any survivor, answers: before the survivors
/// see the lease lapse (relayed to the dead holder, undelivered, sent to the next), in the gap
/// when nobody holds the server (waits for the successor), and after.
#[tokio::test]
async fn calls_made_throughout_a_takeover_all_answer() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let mut a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let c = replicas.start("c").await;
    let id = unique("through");
    a.app.register_server(everything_stdio(&id)).await;
    b.wait_held(&id, "a", WAIT).await;
    c.wait_held(&id, "a", WAIT).await;
    a.bridge.signal("KILL");
    a.bridge.exited_within(WAIT).await.expect("a is gone");
    let killed = Instant::now();
    let name = format!("{id}__echo");
    let calls = |on: &Replica| {
        let app = std::sync::Arc::new(TestApp::at(&on.app.base, on.app.data_dir.clone()));
        let name = name.clone();
        async move {
            // A call starts every 100 ms, whether the ones before it answered or not.
            let mut calls = Vec::new();
            while killed.elapsed() < Duration::from_secs(LEASE_SECS) * 2 {
                let (app, name) = (app.clone(), name.clone());
                calls.push(tokio::spawn(async move {
                    let started = Instant::now();
                    let (status, body) = app.call(&name, json!({"message": "now"})).await;
                    (status, started.elapsed(), body)
                }));
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            let mut answers = Vec::new();
            for call in calls {
                answers.push(call.await.unwrap());
            }
            answers
        }
    };
    let (on_b, on_c) = tokio::join!(calls(&b), calls(&c));
    for (replica, answers) in [("b", &on_b), ("c", &on_c)] {
        let slowest = answers.iter().map(|(_, took, _)| *took).max();
        eprintln!("{} calls on {replica}, slowest {slowest:?}", answers.len());
        for (status, _, body) in answers {
            assert_eq!(*status, StatusCode::OK, "on {replica}: {body}");
        }
    }
}

#[tokio::test]
async fn a_read_through_another_replica_survives_its_holder_being_killed() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let mut a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let id = unique("reread");
    a.app.register_server(everything_stdio(&id)).await;
    b.wait_held(&id, "a", WAIT).await;
    a.bridge.signal("KILL");
    a.bridge.exited_within(WAIT).await.expect("a is gone");
    let killed = Instant::now();
    // b still takes a for the holder: the read goes there, finds nobody, and is read again on
    // the next holder (b itself, once a's lease lapsed).
    b.app
        .read_resource(
            json!({"server_id": id, "uri": "demo://resource/static/document/architecture.md"}),
        )
        .await;
    eprintln!(
        "read after {:?} across the holder's death",
        killed.elapsed()
    );
}

#[tokio::test]
async fn a_long_call_whose_holder_dies_fails_at_once_and_retryable() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let mut a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let id = unique("longdie");
    a.app.register_server(everything_stdio(&id)).await;
    b.wait_held(&id, "a", WAIT).await;
    let app = TestApp::at(&b.app.base, b.app.data_dir.clone());
    let name = format!("{id}__trigger-long-running-operation");
    let call =
        tokio::spawn(async move { app.call(&name, json!({"duration": 60, "steps": 60})).await });
    wait_until("the call forwarded to a", WAIT, async || {
        match b.metric("mcp_bridge_forwarded_calls_total").await >= 1.0 {
            true => Ok(()),
            false => Err("not yet".to_owned()),
        }
    })
    .await;
    a.bridge.signal("KILL");
    a.bridge.exited_within(WAIT).await.expect("a is gone");
    let killed = Instant::now();
    let (status, body) = call.await.unwrap();
    let took = killed.elapsed();
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["code"], "mcp_server_unavailable", "{body}");
    assert_eq!(body["retryable"], true, "{body}");
    assert!(
        took < Duration::from_secs(2 * LEASE_SECS),
        "failed {took:?} after the kill"
    );
    eprintln!("the call failed {took:?} after its holder was killed");
}

/// A replica killed and started again under the same id within its lease (a restarted pod,
/// found by tests/api/chaos.rs) runs the servers its lease still names, rather than renewing
/// that lease for servers no process runs, which kept them from every replica.
#[tokio::test]
async fn a_replica_restarted_within_its_lease_runs_the_servers_it_held() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let lease = [("MCP_BRIDGE_LEASE_SECS", "60")];
    let mut a = replicas.start_with("a", &lease).await;
    let b = replicas.start_with("b", &lease).await;
    let id = unique("again");
    a.app.register_server(everything_stdio(&id)).await;
    b.wait_held(&id, "a", WAIT).await;
    a.bridge.signal("KILL");
    a.bridge.exited_within(WAIT).await.expect("a is killed");
    let a = replicas.start_with("a", &lease).await;
    // Far within the 60 s lease: the new process holds the server again.
    a.wait_held(&id, "a", WAIT).await;
    let body = b
        .app
        .call_tool(&format!("{id}__echo"), json!({"message": "again"}))
        .await;
    assert!(echo(&body).contains("again"), "{body}");
}

/// A server handed over to a replica that never becomes ready with it (here: one not allowed to
/// run its command) is not left without a holder: the old holder takes its lease back and
/// serves it.
#[tokio::test]
async fn a_hand_over_to_a_replica_that_never_gets_ready_is_taken_back() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let a = replicas.start("a").await;
    let ids: Vec<String> = (0..3).map(|_| unique("handback")).collect();
    for id in &ids {
        let mut config = everything_stdio(id);
        config["connect_timeout"] = json!(5);
        a.app.register_server(config).await;
        a.wait_held(id, "a", WAIT).await;
    }
    // c may run no command: whatever a hands it, it never connects.
    let _c = replicas
        .start_with("c", &[("MCP_BRIDGE_STDIO_ALLOWED_COMMANDS", "/bin/false")])
        .await;
    // The store says who holds it: a keeps serving while it hands the server over.
    let handed = wait_until("a handing a server to c", WAIT, async || {
        for id in &ids {
            if replicas.lease_holder(id).await.as_deref() == Some("c") {
                return Ok(id.clone());
            }
        }
        Err("not yet".to_owned())
    })
    .await;
    // Within the connect bound and a lease, and some: a holds it again and it is called there.
    wait_until("a taking the lease back", WAIT, async || {
        match replicas.lease_holder(&handed).await {
            Some(holder) if holder == "a" => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    a.wait_held(&handed, "a", WAIT).await;
    let body = a
        .app
        .call_tool(&format!("{handed}__echo"), json!({"message": "back"}))
        .await;
    assert!(echo(&body).contains("back"), "{body}");
}

/// A listing of one server through another replica (here of its prompts) survives its holder
/// being killed, as a read does: it is asked again of the next holder.
#[tokio::test]
async fn a_listing_through_another_replica_survives_its_holder_being_killed() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let mut a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let id = unique("relist");
    a.app.register_server(everything_stdio(&id)).await;
    b.wait_held(&id, "a", WAIT).await;
    a.bridge.signal("KILL");
    a.bridge.exited_within(WAIT).await.expect("a is gone");
    let killed = Instant::now();
    let (status, body) = b
        .app
        .get(&format!("/v1/prompts?server_id={id}"), &b.app.alice)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let prompts = body["prompts"].as_array().map(Vec::len).unwrap_or_default();
    assert!(prompts > 0, "{body}");
    eprintln!(
        "listed after {:?} across the holder's death",
        killed.elapsed()
    );
}

/// A subscription made through another replica survives its holder being killed, as a read
/// does: subscribing again is harmless, so it is sent again to the next holder.
#[tokio::test]
async fn a_subscription_through_another_replica_survives_its_holder_being_killed() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let mut a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let id = unique("resub");
    a.app.register_server(everything_stdio(&id)).await;
    b.wait_held(&id, "a", WAIT).await;
    a.bridge.signal("KILL");
    a.bridge.exited_within(WAIT).await.expect("a is gone");
    let killed = Instant::now();
    b.app
        .subscribe(
            json!({"server_id": id, "uri": "demo://resource/static/document/architecture.md"}),
        )
        .await;
    eprintln!(
        "subscribed after {:?} across the holder's death",
        killed.elapsed()
    );
}

/// A replica that loses NATS while it hands a server over cannot hear that the new holder is
/// ready with it, so it must not take the lease back from it (the new holder may serve it fine):
/// here c never gets ready, and still a, cut off, takes nothing back.
#[tokio::test]
async fn a_replica_cut_off_mid_hand_over_takes_nothing_back() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let (mut bus, through) = replicas.bus_through_proxy().await;
    let a = replicas
        .start_with("a", &[("MCP_BRIDGE_NATS_URL", through.as_str())])
        .await;
    const CONNECT_SECS: u64 = 2;
    let ids: Vec<String> = (0..3).map(|_| unique("cuthand")).collect();
    for id in &ids {
        let mut config = everything_stdio(id);
        config["connect_timeout"] = json!(CONNECT_SECS);
        a.app.register_server(config).await;
        a.wait_held(id, "a", WAIT).await;
    }
    let _c = replicas
        .start_with("c", &[("MCP_BRIDGE_STDIO_ALLOWED_COMMANDS", "/bin/false")])
        .await;
    let handed = wait_until("a handing a server to c", WAIT, async || {
        for id in &ids {
            if replicas.lease_holder(id).await.as_deref() == Some("c") {
                return Ok(id.clone());
            }
        }
        Err("not yet".to_owned())
    })
    .await;
    bus.cut().await;
    // Past the connect bound and a lease (when a took it back before), and a lease more.
    let watch = Duration::from_secs(CONNECT_SECS + 3 * LEASE_SECS);
    let started = Instant::now();
    let mut pace = tokio::time::interval(Duration::from_millis(200));
    while started.elapsed() < watch {
        pace.tick().await;
        let holder = replicas.lease_holder(&handed).await;
        assert_ne!(
            holder.as_deref(),
            Some("a"),
            "{:?} after a lost NATS it took {handed} back",
            started.elapsed()
        );
    }
    bus.restore().await;
}
