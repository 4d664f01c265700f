//! Replicas: real `mcp-bridge` processes sharing one PostgreSQL database and one NATS (each test
//! its own database and subject prefix). A server registered on one replica is held by it and
//! called through the others; a server's sampling request reaches its agent's stream on a third
//! replica and is answered through a fourth route; `kill -9` of the holder hands its servers to
//! a survivor within the lease, with subscriptions intact and the agent's stream resumed there
//! without loss; a graceful stop hands them over at once. Skipped unless `MCP_BRIDGE_TEST_POSTGRES`
//! and `MCP_BRIDGE_TEST_NATS` are set (scripts/test.sh sets both).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::cluster::*;
use crate::helpers::*;

fn echo(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or("")
}

#[tokio::test]
async fn a_server_registered_on_one_replica_is_called_through_another() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let http = everything_http().await;
    let stdio = unique("rs");
    let remote = unique("rh");
    a.app.register_server(everything_stdio(&stdio)).await;
    let (status, body) = a
        .app
        .post(
            "/v1/servers",
            &a.app.admin,
            json!({"config": {"server_id": remote, "transport": "http", "url": http.url}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["server"]["replica"], "a", "{body}");
    for id in [&stdio, &remote] {
        let on_b = b.wait_held(id, "a", WAIT).await;
        assert!(on_b["tools_count"].as_u64().unwrap() > 0, "{on_b}");
        assert!(
            b.app
                .tool_names(&format!("?server_id={id}"))
                .await
                .contains(&format!("{id}__echo"))
        );
        let body = b
            .app
            .call_tool(&format!("{id}__echo"), json!({"message": "through b"}))
            .await;
        assert!(echo(&body).contains("through b"), "{body}");
    }
    assert!(b.metric("mcp_bridge_forwarded_calls_total").await >= 2.0);
    // A resource read and a prompt, through the replica that does not hold the server.
    b.app
        .read_resource(
            json!({"server_id": stdio, "uri": "demo://resource/static/document/architecture.md"}),
        )
        .await;
    let (status, body) = b
        .app
        .get(&format!("/v1/resources?server_id={stdio}"), &b.app.alice)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(!body["resources"].as_array().unwrap().is_empty(), "{body}");
    // A completion, and a prompt rendered, through b too.
    let (status, body) = b
        .app
        .post(
            "/v1/completions",
            &b.app.alice,
            json!({
                "server_id": stdio,
                "ref": {"type": "ref/prompt", "name": "completable-prompt"},
                "argument": {"name": "name", "value": "A"},
                "context": {"arguments": {"department": "Engineering"}}
            }),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["server_id"], stdio.as_str(), "{body}");
    assert!(!body["values"].as_array().unwrap().is_empty(), "{body}");
    b.app
        .get_prompt(json!({"server_id": stdio, "name": "simple-prompt"}))
        .await;
    // Removed through b: a closes its connection, and neither shows it any more.
    let (status, body) = b
        .app
        .delete(&format!("/v1/servers/{remote}"), &b.app.admin)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    wait_until("a forgetting the removed server", WAIT, async || {
        match a.app.server(&remote).await {
            (StatusCode::NOT_FOUND, _) => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    http.stop().await;
}

#[tokio::test]
async fn a_sampling_request_reaches_the_agent_on_a_third_replica_and_is_answered_on_a_second() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let c = replicas.start("c").await;
    let id = unique("samp");
    a.app.register_server(everything_stdio(&id)).await;
    b.wait_held(&id, "a", WAIT).await;
    let mut events = EventStream::open(&c.app, &c.app.alice, None).await;
    let call = {
        let (base, token) = (b.app.base.clone(), b.app.alice.clone());
        let name = format!("{id}__trigger-sampling-request");
        tokio::spawn(async move {
            reqwest::Client::new()
                .post(format!("{base}/v1/tools/call"))
                .bearer_auth(token)
                .json(&json!({"id": "call-1", "name": name, "arguments": {"prompt": "hi", "maxTokens": 5}}))
                .send()
                .await
                .unwrap()
                .json::<Value>()
                .await
                .unwrap()
        })
    };
    let request = events
        .wait_for("the sampling request on c", WAIT, |m| {
            m.event == "mcp/sample/req"
        })
        .await;
    let data = &request.data;
    let answer = json!({"req_id": data["id"], "server_id": id, "mcp_request_id": data["mcp_request_id"],
        "content": {"type": "text", "text": "sampled on c"}, "model": "m", "stop_reason": "endTurn"});
    let (status, body) = b
        .app
        .post("/v1/sampling/responses", &b.app.alice, answer.clone())
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let result = tokio::time::timeout(WAIT, call).await.unwrap().unwrap();
    assert!(result.to_string().contains("sampled on c"), "{result}");
    // Answered once: a second answer, on yet another replica, is a conflict.
    let (status, body) = a
        .app
        .post("/v1/sampling/responses", &a.app.alice, answer)
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
}

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
    let (status, body) = b
        .app
        .call(&format!("{id}__echo"), json!({"message": "handed over"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

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
    let (status, body) = b
        .app
        .call(&format!("{id}__echo"), json!({"message": "database back"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    b.app.register_server(everything_stdio(&refused)).await;
}

#[tokio::test]
async fn a_policy_set_on_one_replica_is_in_force_on_another() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let id = unique("pol");
    a.app.register_server(everything_stdio(&id)).await;
    b.wait_held(&id, "a", WAIT).await;
    let echo = format!("{id}__echo");
    let resp = a
        .app
        .client
        .put(format!("{}/v1/policies/no-echo", a.app.base))
        .bearer_auth(&a.app.admin)
        .json(&json!({"match": {"subs": ["alice"]}, "deny": {"tools": [echo]}}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::CREATED);
    // Refused on the other replica within its refresh (2 s), listed and called.
    let started = Instant::now();
    wait_until("the policy reaching replica b", WAIT, async || {
        let (status, body) = b
            .app
            .post(
                "/v1/tools/call",
                &b.app.alice,
                json!({"name": echo, "arguments": {"message": "x"}}),
            )
            .await;
        match status {
            StatusCode::NOT_FOUND => Ok(()),
            other => Err(format!("{other}: {body}")),
        }
    })
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(!b.app.tool_names("").await.contains(&echo));
    let (status, _) = b
        .app
        .post(
            "/v1/tools/call",
            &b.app.bob,
            json!({"name": echo, "arguments": {"message": "x"}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "another agent is not matched");
}

#[tokio::test]
async fn replicas_agree_on_a_quarantined_tool_and_its_approval() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let pinning = [("MCP_BRIDGE_TOOL_PINNING", "quarantine")];
    let a = replicas.start_with("a", &pinning).await;
    let b = replicas.start_with("b", &pinning).await;
    let state = a.app.data_dir.path().join("rug-state");
    a.app
        .register_server(crate::pinning::rug_stdio("rug", &state))
        .await;
    // A Python stdio server: its start (the SDK's imports) took over 15 s once on CI's loaded
    // cores, so it gets the connect timeout its config has (30 s).
    b.wait_held("rug", "a", 2 * WAIT).await;
    let weather_listed = async |replica: &Replica| {
        replica
            .app
            .tool_names("?server_id=rug")
            .await
            .contains(&"rug__weather".to_owned())
    };
    assert!(weather_listed(&b).await);
    // The owner listens on b; the change happens on a, which holds the server.
    let mut owner = EventStream::open(&b.app, &b.app.admin, None).await;
    b.app.call_tool("rug__swap", json!({})).await;
    let push = owner
        .wait_for("bridge/tool_changed on b", WAIT, |m| {
            is_push(m, "bridge/tool_changed")
        })
        .await;
    assert_eq!(push.data["params"]["quarantined"], true, "{push:?}");
    for replica in [&a, &b] {
        wait_until(
            &format!("rug__weather hidden on {}", replica.id),
            WAIT,
            async || match weather_listed(replica).await {
                false => Ok(()),
                true => Err("listed".into()),
            },
        )
        .await;
        let (status, body) = replica
            .app
            .call("rug__weather", json!({"city": "Oslo"}))
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    }
    // Approved on the replica that does not hold it: carried out by the holder, seen by both.
    let (status, body) = b
        .app
        .post(
            "/v1/servers/rug/tools/weather/approve",
            &b.app.admin,
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["approved"], true, "{body}");
    assert!(weather_listed(&b).await);
    wait_until(
        "rug__weather listed on a",
        WAIT,
        async || match weather_listed(&a).await {
            true => Ok(()),
            false => Err("hidden".into()),
        },
    )
    .await;
    b.app
        .call_tool("rug__weather", json!({"city": "Oslo"}))
        .await;
    // One event for the change, from the holder alone.
    let more = owner.drain(Duration::from_millis(500)).await;
    assert!(
        !more.iter().any(|m| is_push(m, "bridge/tool_changed")),
        "{more:?}"
    );
}

#[tokio::test]
async fn a_call_cancelled_on_the_replica_that_forwarded_it_is_cancelled_on_the_holder() {
    use crate::cancel::{Marks, assert_cancelled, cancel, spawn_call};
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let id = unique("rc");
    a.app
        .register_server(py_stdio(&id, &unique("rcancel")))
        .await;
    b.wait_held(&id, "a", WAIT).await;
    // Cancelled by DELETE on b, where the call was made.
    let marks = Marks::new();
    let call_id = unique("fwd");
    let name = format!("{id}__slow");
    let call = spawn_call(&b.app, &b.app.alice, &call_id, &name, marks.arguments());
    marks.started.wait().await;
    let (status, body) = cancel(&b.app, &b.app.alice, &call_id).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_cancelled(call, &call_id).await;
    marks.wait_cancelled().await;
    // Cancelled by DELETE on a, the holder, while the request is open on b.
    let marks = Marks::new();
    let call_id = unique("fwd");
    let call = spawn_call(&b.app, &b.app.alice, &call_id, &name, marks.arguments());
    marks.started.wait().await;
    let (status, body) = cancel(&a.app, &a.app.alice, &call_id).await;
    assert_eq!(status, StatusCode::OK, "DELETE on another replica: {body}");
    assert_cancelled(call, &call_id).await;
    marks.wait_cancelled().await;
    // Another agent's call, on any replica: 404, and it runs on.
    let marks = Marks::new();
    let call_id = unique("fwd");
    let call = spawn_call(&b.app, &b.app.alice, &call_id, &name, marks.arguments());
    marks.started.wait().await;
    let (status, body) = cancel(&a.app, &a.app.bob, &call_id).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(!call.is_finished());
    call.abort();
    marks.wait_cancelled().await;
    // Cancelled by closing the request on b.
    let marks = Marks::new();
    let call = spawn_call(
        &b.app,
        &b.app.alice,
        &unique("fwd"),
        &name,
        marks.arguments(),
    );
    marks.started.wait().await;
    call.abort();
    marks.wait_cancelled().await;
    // The server goes on serving through b.
    b.app
        .call_tool(&format!("{id}__echo"), json!({"text": "on"}))
        .await;
}

/// A task cancelled through another replica than the one running it is stopped there within
/// the sweep (2 s): a call the bridge runs is cancelled upstream, a server's task gets
/// `tasks/cancel`.
#[tokio::test]
async fn a_task_cancelled_on_another_replica_stops_where_it_runs() {
    use crate::cancel::Marks;
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let id = unique("rt");
    a.app.register_server(py_stdio(&id, &unique("rtask"))).await;
    let noted = tempfile::NamedTempFile::new().unwrap();
    let peer = tasks_server("http", noted.path()).await;
    let tasks_id = unique("rtk");
    a.app
        .register_server(json!({"server_id": tasks_id, "transport": "http", "url": peer.url}))
        .await;
    b.wait_held(&id, "a", WAIT).await;
    b.wait_held(&tasks_id, "a", WAIT).await;
    let start = async |name: String, arguments: Value| {
        let body = json!({"name": name, "arguments": arguments, "task": {"ttl": 60_000}});
        let (status, created) = a.app.post("/v1/tools/call", &a.app.alice, body).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{created}");
        created["task_id"].as_str().unwrap().to_owned()
    };
    let marks = Marks::new();
    let bridge_run = start(format!("{id}__slow"), marks.arguments()).await;
    let upstream = start(format!("{tasks_id}__slow_task"), json!({"seconds": 60})).await;
    marks.started.wait().await;
    wait_until("the server's task polled", WAIT, async || {
        let (_, body) = a
            .app
            .get(&format!("/v1/tasks/{upstream}"), &a.app.alice)
            .await;
        match body["task"]["upstream"] == true {
            true => Ok(()),
            false => Err(body.to_string()),
        }
    })
    .await;
    for task_id in [&bridge_run, &upstream] {
        let (status, body) = b
            .app
            .delete(&format!("/v1/tasks/{task_id}"), &b.app.alice)
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["status"], "cancelled", "{body}");
    }
    marks.wait_cancelled().await;
    wait_until("tasks/cancel on the server", WAIT, async || {
        let noted = std::fs::read_to_string(noted.path()).unwrap();
        match noted.lines().count() {
            1 => Ok(()),
            n => Err(format!("{n} cancels: {noted:?}")),
        }
    })
    .await;
}

/// Registers `n` servers on `on` (the first over stdio, the others over HTTP to `http`): ids.
async fn register_many(on: &Replica, http: &Peer, n: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..n {
        let id = unique(&format!("spread{i}"));
        match i {
            0 => on.app.register_server(everything_stdio(&id)).await,
            _ => {
                let config = json!({"server_id": id, "transport": "http", "url": http.url});
                on.app.register_server(config).await
            }
        };
        ids.push(id);
    }
    ids
}

/// How many of `ids` each replica holds as `seen_by` lists them, once each is ready on its holder.
async fn holdings(seen_by: &Replica, ids: &[String]) -> Result<HashMap<String, usize>, String> {
    let (_, body) = seen_by.app.get("/v1/servers", &seen_by.app.admin).await;
    let mut held = HashMap::new();
    for id in ids {
        let server = body["servers"]
            .as_array()
            .and_then(|all| all.iter().find(|s| s["server_id"] == id.as_str()))
            .ok_or_else(|| format!("{id} not listed: {body}"))?;
        let replica = server["replica"].as_str().unwrap_or_default();
        if server["status"] != "ready" || replica.is_empty() {
            return Err(format!("{id} not ready: {server}"));
        }
        *held.entry(replica.to_owned()).or_default() += 1;
    }
    Ok(held)
}

/// Waits until `seen_by` shows `ids` spread over exactly `over`: each holds at least one, none
/// more than ceil(n / replicas) + 1.
async fn wait_spread(seen_by: &Replica, ids: &[String], over: &[&str], within: Duration) {
    let most = ids.len().div_ceil(over.len()) + 1;
    let what = format!("{} servers spread over {over:?}", ids.len());
    wait_until(&what, within, async || {
        let held = holdings(seen_by, ids).await?;
        let spread = held.len() == over.len()
            && over
                .iter()
                .all(|r| (1..=most).contains(&held.get(*r).copied().unwrap_or(0)));
        match spread {
            true => Ok(()),
            false => Err(format!("{held:?}")),
        }
    })
    .await
}

#[tokio::test]
async fn servers_registered_on_one_replica_spread_over_three() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let c = replicas.start("c").await;
    let http = everything_http().await;
    let ids = register_many(&a, &http, 6).await;
    let started = Instant::now();
    wait_spread(&b, &ids, &["a", "b", "c"], Duration::from_secs(60)).await;
    eprintln!(
        "spread after {:?}: {:?}",
        started.elapsed(),
        holdings(&b, &ids).await
    );
    // Every server answers through a replica, wherever it went.
    for id in &ids {
        let (status, body) = c
            .app
            .call(&format!("{id}__echo"), json!({"message": "spread"}))
            .await;
        assert_eq!(status, StatusCode::OK, "{id}: {body}");
    }
    let per_replica = a.metric("mcp_bridge_servers_held{").await;
    assert!(per_replica >= ids.len() as f64, "{per_replica}");
}

#[tokio::test]
async fn a_fourth_replica_takes_its_share_while_calls_go_on() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let c = replicas.start("c").await;
    let http = everything_http().await;
    let ids = register_many(&a, &http, 6).await;
    wait_spread(&a, &ids, &["a", "b", "c"], Duration::from_secs(60)).await;
    // The loop goes through the replica holding the fewest: it hands nothing over itself.
    let held = holdings(&a, &ids).await.unwrap();
    let through = [&a, &b, &c]
        .into_iter()
        .min_by_key(|r| held.get(&r.id).copied().unwrap_or(0))
        .unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    let calls = {
        let app = TestApp::at(&through.app.base, through.app.data_dir.clone());
        let (ids, stop) = (ids.clone(), stop.clone());
        tokio::spawn(async move {
            let (mut made, mut failed) = (0, Vec::new());
            while !stop.is_cancelled() {
                let id = &ids[made % ids.len()];
                let (status, body) = app
                    .call(&format!("{id}__echo"), json!({"message": "loop"}))
                    .await;
                if status != StatusCode::OK {
                    failed.push(format!("{id}: {status} {body}"));
                }
                made += 1;
            }
            (made, failed)
        })
    };
    let d = replicas.start("d").await;
    let joined = Instant::now();
    wait_spread(&a, &ids, &["a", "b", "c", "d"], Duration::from_secs(60)).await;
    eprintln!("d took its share after {:?}", joined.elapsed());
    // Calls go on a while after the last hand-over too (its connection closed on the old holder).
    tokio::time::sleep(Duration::from_secs(1)).await;
    stop.cancel();
    let (made, failed) = calls.await.unwrap();
    assert!(made > 20, "{made} calls");
    assert!(
        failed.is_empty(),
        "{} of {made} failed: {failed:?}",
        failed.len()
    );
    d.app
        .call_tool(&format!("{}__echo", ids[0]), json!({"message": "d"}))
        .await;
}

#[tokio::test]
async fn a_killed_replicas_servers_go_to_the_others() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let c = replicas.start("c").await;
    let http = everything_http().await;
    let ids = register_many(&a, &http, 6).await;
    wait_spread(&b, &ids, &["a", "b", "c"], Duration::from_secs(60)).await;
    let held = holdings(&b, &ids).await.unwrap();
    let mut all = [a, b, c];
    // The replica holding the most dies.
    let most = (0..3).max_by_key(|&i| held[&all[i].id]).unwrap();
    all[most].bridge.signal("KILL");
    all[most].bridge.exited_within(WAIT).await.expect("killed");
    let killed = Instant::now();
    let survivors: Vec<&Replica> = all
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != most)
        .map(|(_, r)| r)
        .collect();
    let names: Vec<&str> = survivors.iter().map(|r| r.id.as_str()).collect();
    wait_spread(
        survivors[0],
        &ids,
        &names,
        Duration::from_secs(LEASE_SECS) + WAIT,
    )
    .await;
    eprintln!(
        "{:?} after kill -9: {:?}",
        killed.elapsed(),
        holdings(survivors[0], &ids).await
    );
    for id in &ids {
        let (status, body) = survivors[1]
            .app
            .call(&format!("{id}__echo"), json!({"message": "after"}))
            .await;
        assert_eq!(status, StatusCode::OK, "{id}: {body}");
    }
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

/// An OAuth authorization whose link replica a made is completed by its callback on replica b
/// (a round-robin load balancer sends the person's browser anywhere): the link's state is in
/// the store, b exchanges the code, the server connects on its holder a, and calls work through
/// either replica. The link still works once.
#[tokio::test]
async fn an_oauth_callback_completes_on_another_replica_than_the_links() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    // One secrets key, as replicas need: the link's verifier is sealed in the store by a and
    // opened by b.
    let key = "5a".repeat(32);
    let sealing = [("MCP_BRIDGE_SECRETS_KEY", key.as_str())];
    let a = replicas.start_with("a", &sealing).await;
    let b = replicas.start_with("b", &sealing).await;
    let peer = oauth_peer(&[]).await;
    let id = unique("roa");
    let config =
        json!({"server_id": id, "transport": "http", "url": peer.url, "connect_timeout": 5});
    let (status, body) = a
        .app
        .post("/v1/servers", &a.app.alice, json!({ "config": config }))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    a.app.wait_status(&id, "auth_required", WAIT).await;
    let link = a.app.authorization_url(&id, &a.app.alice).await;

    // The person approves; the authorization server sends the browser back to the callback,
    // which reaches b.
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let approved = browser.get(&link).send().await.unwrap();
    assert!(approved.status().is_redirection(), "{approved:?}");
    let location = approved.headers()["location"].to_str().unwrap().to_owned();
    let on_a = reqwest::Url::parse(&link).unwrap().join(&location).unwrap();
    assert!(on_a.as_str().starts_with(&a.app.base), "{on_a}");
    let mut on_b = reqwest::Url::parse(&b.app.base).unwrap();
    on_b.set_path(on_a.path());
    on_b.set_query(on_a.query());
    let (status, body) = open_callback(on_b.as_str()).await;
    assert_eq!(status, StatusCode::OK, "the callback on b: {body}");

    // Connected on its holder with the new grant; called through either replica.
    for replica in [&a, &b] {
        replica.wait_held(&id, "a", WAIT).await;
        let (status, body) = replica
            .app
            .call_as(&replica.app.alice, &format!("{id}__whoami"), json!({}))
            .await;
        assert_eq!(status, StatusCode::OK, "through {}: {body}", replica.id);
        assert_eq!(body["is_error"], false, "{body}");
    }
    // The same callback again, on the replica that made the link: used already.
    let (status, body) = open_callback(on_a.as_str()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(body.contains("already used"), "{body}");
    let stats = peer.oauth_stats().await;
    assert_eq!(stats["code_exchanges"], 1, "{stats}");
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
