//! Replicas through outages of what they share: NATS restarting or away for all of them, one
//! replica cut off from the bus, PostgreSQL away; nothing stored is lost and calls go on.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;

use crate::cluster::*;
use crate::helpers::*;

use super::echo;

#[tokio::test]
async fn nats_restarting_under_load_loses_nothing_stored() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let mut nats = PrivateNats::start().await;
    replicas.nats = nats.url();
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let id = unique("nats");
    a.app.register_server(everything_stdio(&id)).await;
    b.wait_held(&id, "a", WAIT).await;
    // Calls through b (forwarded to a) all along.
    let stop = tokio_util::sync::CancellationToken::new();
    let load: Vec<_> = (0..4)
        .map(|i| {
            let (base, token, stop) = (b.app.base.clone(), b.app.alice.clone(), stop.clone());
            let name = format!("{id}__echo");
            tokio::spawn(async move {
                let client = reqwest::Client::new();
                let (mut ok, mut failed) = (0u32, 0u32);
                while !stop.is_cancelled() {
                    let sent = client
                        .post(format!("{base}/v1/tools/call"))
                        .bearer_auth(&token)
                        .json(&json!({"name": name, "arguments": {"message": format!("load {i}")}}))
                        .send()
                        .await;
                    match sent.map(|r| r.status()) {
                        Ok(StatusCode::OK) => ok += 1,
                        _ => failed += 1,
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                (ok, failed)
            })
        })
        .collect();
    // A while of calls before the outage (their counts are only known at the end).
    tokio::time::sleep(Duration::from_secs(1)).await;
    nats.stop().await;
    // A replica that cannot reach NATS is not ready.
    wait_until("a not ready without NATS", WAIT, async || {
        match a
            .app
            .send(reqwest::Method::GET, "/readyz", None, None)
            .await
        {
            (StatusCode::SERVICE_UNAVAILABLE, body) if body.to_string().contains("NATS") => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    // The outage lasts a while, calls going on.
    tokio::time::sleep(Duration::from_secs(1)).await;
    nats.run().await;
    for replica in [&a, &b] {
        replica.wait_ready().await;
    }
    // Calls go through again, and the load saw them before and after.
    wait_until("a call through b after NATS is back", WAIT, async || {
        let (status, body) = b
            .app
            .call(&format!("{id}__echo"), json!({"message": "back"}))
            .await;
        match status {
            StatusCode::OK => Ok(()),
            other => Err(format!("{other}: {body}")),
        }
    })
    .await;
    stop.cancel();
    let mut total_ok = 0;
    for task in load {
        let (ok, failed) = task.await.unwrap();
        eprintln!("load: {ok} calls answered, {failed} failed while NATS restarted");
        total_ok += ok;
    }
    assert!(total_ok > 0);
    // The calls that failed meanwhile are counted as errors between replicas.
    assert!(b.metric("mcp_bridge_bus_errors_total").await >= 1.0);
    // What is stored is all there: the server, on both replicas.
    for replica in [&a, &b] {
        let (status, body) = replica.app.server(&id).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    // Events flow again, on either replica.
    let mut events = EventStream::open(&a.app, &a.app.alice, None).await;
    b.app
        .register_server(everything_stdio(&unique("after")))
        .await;
    events
        .wait_for("a push after NATS restarted", WAIT, |m| {
            is_push(m, "notifications/tools/list_changed")
        })
        .await;
    nats.stop().await;
}

#[tokio::test]
async fn while_postgres_is_away_calls_go_on_and_writes_fail_cleanly() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let (mut proxy, direct) = replicas.database_through_proxy().await;
    // A lease longer than the outage: a replica lets its servers go only past a whole lease
    // without renewing it.
    let lease = [("MCP_BRIDGE_LEASE_SECS", "30")];
    let a = replicas.start_with("a", &lease).await;
    let b = replicas.start_with("b", &lease).await;
    let id = unique("pg");
    a.app.register_server(everything_stdio(&id)).await;
    b.wait_held(&id, "a", WAIT).await;

    proxy.cut().await;
    for replica in [&a, &b] {
        let (status, body) = replica
            .app
            .call(&format!("{id}__echo"), json!({"message": "no database"}))
            .await;
        assert_eq!(status, StatusCode::OK, "{}: {body}", replica.id);
    }
    let refused = unique("refused");
    let (status, body) = b
        .app
        .post(
            "/v1/servers",
            &b.app.admin,
            json!({"config": everything_stdio(&refused)}),
        )
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["retryable"], true, "{body}");
    proxy.restore().await;

    // Nothing half-written: the refused server is nowhere, the other one is held as before.
    replicas.database = direct;
    for replica in [&a, &b] {
        let (status, _) = replica.app.server(&refused).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        replica.wait_held(&id, "a", WAIT).await;
    }
    b.app
        .call_tool(&format!("{id}__echo"), json!({"message": "database back"}))
        .await;
    b.app.register_server(everything_stdio(&refused)).await;
}

/// A replica cut off from NATS still renews its leases in PostgreSQL, but no other replica can
/// reach its servers. After a lease without the bus it lets them go (and claims none while cut),
/// so another replica takes them over; once the bus is back it is handed its share again.
#[tokio::test]
async fn a_replica_cut_off_from_the_bus_lets_its_servers_go_and_comes_back_for_its_share() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let (mut bus, through) = replicas.bus_through_proxy().await;
    let a = replicas.start("a").await;
    let b = replicas
        .start_with("b", &[("MCP_BRIDGE_NATS_URL", through.as_str())])
        .await;
    let id = unique("cutoff");
    b.app.register_server(everything_stdio(&id)).await;
    a.wait_held(&id, "b", WAIT).await;

    bus.cut().await;
    let cut = Instant::now();
    // The lease, a grace for b's own reconnect, then a's claim and connect.
    a.wait_held(&id, "a", 2 * WAIT).await;
    eprintln!(
        "a holds the server {:?} after b's bus was cut",
        cut.elapsed()
    );
    let body = a
        .app
        .call_tool(&format!("{id}__echo"), json!({"message": "over"}))
        .await;
    assert!(echo(&body).contains("over"), "{body}");
    // Registered while b is cut off: a holds it, b claims nothing it cannot serve.
    let more: Vec<String> = (0..3).map(|_| unique("cutmore")).collect();
    for server in &more {
        a.app.register_server(everything_stdio(server)).await;
        a.wait_held(server, "a", WAIT).await;
    }

    bus.restore().await;
    // a holds four, b none: b takes one once it has been back for a lease.
    let mut all = more.clone();
    all.push(id.clone());
    wait_until("b holding a server again", WAIT, async || {
        for server in &all {
            let (_, body) = a.app.server(server).await;
            if body["server"]["replica"] == "b" && body["server"]["status"] == "ready" {
                return Ok(());
            }
        }
        Err("none yet".to_owned())
    })
    .await;
}

/// When NATS is down for every replica (not one replica cut off from it), no replica can tell
/// another is better placed: each keeps serving the servers it holds, for longer than a lease,
/// on the same connection, and its callers are answered all along.
#[tokio::test]
async fn a_nats_outage_for_all_replicas_keeps_each_serving_what_it_holds() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let mut nats = PrivateNats::start().await;
    replicas.nats = nats.url();
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let id = unique("alldown");
    a.app.register_server(everything_stdio(&id)).await;
    let held = wait_until("the server held somewhere", WAIT, async || {
        let (_, body) = a.app.server(&id).await;
        let server = &body["server"];
        match (server["status"].as_str(), server["replica"].as_str()) {
            (Some("ready"), Some(holder)) if !holder.is_empty() => Ok(server.clone()),
            _ => Err(body.to_string()),
        }
    })
    .await;
    let holder = if held["replica"] == "a" { &a } else { &b };
    let server = holder.wait_held(&id, &holder.id, WAIT).await;
    let connected_at = server["connected_at"].as_f64().unwrap();

    nats.stop().await;
    wait_until(
        "the holder not ready without NATS",
        WAIT,
        async || match holder
            .app
            .send(reqwest::Method::GET, "/readyz", None, None)
            .await
        {
            (StatusCode::SERVICE_UNAVAILABLE, body) if body.to_string().contains("NATS") => Ok(()),
            other => Err(format!("{other:?}")),
        },
    )
    .await;
    // Calls through the holder itself, for well over a lease without NATS.
    let outage = Duration::from_secs(3 * LEASE_SECS);
    let started = Instant::now();
    let mut pace = tokio::time::interval(Duration::from_millis(250));
    let mut calls = 0;
    while started.elapsed() < outage {
        pace.tick().await;
        let (status, body) = holder
            .app
            .call(&format!("{id}__echo"), json!({"message": "still"}))
            .await;
        assert_eq!(
            status,
            StatusCode::OK,
            "{:?} into the outage: {body}",
            started.elapsed()
        );
        assert!(echo(&body).contains("still"), "{body}");
        calls += 1;
    }
    eprintln!("{calls} calls answered by {} without NATS", holder.id);
    // On the connection it had before: never ended, nothing restarted.
    let (_, body) = holder.app.server(&id).await;
    assert_eq!(body["server"]["status"], "ready", "{body}");
    assert_eq!(body["server"]["replica"], holder.id.as_str(), "{body}");
    assert_eq!(
        body["server"]["connected_at"].as_f64(),
        Some(connected_at),
        "{body}"
    );
    assert_eq!(
        replicas.lease_holder(&id).await.as_deref(),
        Some(holder.id.as_str())
    );

    nats.run().await;
    for replica in [&a, &b] {
        replica.wait_ready().await;
    }
    let other = if holder.id == "a" { &b } else { &a };
    let server = other.wait_held(&id, &holder.id, WAIT).await;
    assert_eq!(server["connected_at"].as_f64(), Some(connected_at));
    nats.stop().await;
}
