//! Chaos under load, with a ledger (issue 35, item 5): three replicas behind HAProxy balancing
//! round robin with no stickiness, agents calling tools over REST and `/mcp` all along, an event
//! stream resumed with `Last-Event-ID`, tasks running, configuration written; then in turn
//! `kill -9` of a replica (started again), a restart of NATS, a restart of PostgreSQL and a replica
//! cut off from the bus. Every call is written to a ledger with its outcome and times; at the end
//! each call succeeded or failed retryably within a fault, nothing acknowledged is lost, no call
//! ran twice upstream, and the stream never saw `bridge/events_lost`.
//!
//! NATS and PostgreSQL are the test's own (a `nats-server` and an `initdb` cluster in temp dirs,
//! on free ports), so restarting them touches nothing else on the machine. Runs in scripts/test.sh's
//! PostgreSQL+NATS pass (`MCP_BRIDGE_TEST_POSTGRES` and `MCP_BRIDGE_TEST_NATS` set) and is skipped
//! without them or without `haproxy` (scripts/peers.sh installs it); about 45 s here. The
//! `MCP_BRIDGE_CHAOS_*` variables (ROUNDS, STEADY_MS, OUTAGE_MS, FAULTS, SESSIONS, VERBOSE,
//! LEDGER) make the long version scripts/chaos.sh runs.
//!
//! The bus cut uses a TCP proxy between one replica and NATS, cut and restored, not a network
//! namespace: a namespace per replica needs a veth pair and routes changed in the machine's own
//! namespace while `cargo test` runs beside other tests, and tests/netns.rs runs whole test
//! binaries inside one loopback-only namespace, where a replica cannot be cut from the others.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::cluster::*;
use crate::helpers::*;

mod ledger;
mod load;
mod services;

use ledger::*;
use load::*;
use services::*;

/// A failure this long after a fault's end still counts as the fault's (HAProxy's health checks
/// notice a replica back within a second; clients' connections to it are then re-made).
pub const GRACE: Duration = Duration::from_secs(3);

/// A whole number from the environment, or `default`.
pub fn knob(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Whether `MCP_BRIDGE_CHAOS_FAULTS` (a comma-separated subset of `kill,nats,postgres,cut`; all
/// when unset) names `fault`.
fn fault_on(fault: &str) -> bool {
    std::env::var("MCP_BRIDGE_CHAOS_FAULTS")
        .map(|faults| faults.split(',').any(|f| f.trim() == fault))
        .unwrap_or(true)
}

/// Agents on `/mcp` sessions of the 2025-11-25 era, each request on whichever replica the proxy
/// picks (the session is shared through the store); `MCP_BRIDGE_CHAOS_SESSIONS=0` leaves them out.
fn sessions_on() -> bool {
    knob("MCP_BRIDGE_CHAOS_SESSIONS", 1) == 1
}

// ---- the test ----

#[tokio::test]
async fn three_replicas_behind_round_robin_survive_kills_and_outages_with_a_ledger() {
    if postgres_server().is_none() || std::env::var("MCP_BRIDGE_TEST_NATS").is_err() {
        eprintln!("skipped: needs MCP_BRIDGE_TEST_POSTGRES and MCP_BRIDGE_TEST_NATS");
        return;
    }
    if !Haproxy::installed() {
        eprintln!("skipped: haproxy is not installed (scripts/peers.sh installs Debian's haproxy)");
        return;
    }
    let rounds = knob("MCP_BRIDGE_CHAOS_ROUNDS", 1);
    let steady = Duration::from_millis(knob("MCP_BRIDGE_CHAOS_STEADY_MS", 1500));
    let outage = Duration::from_millis(knob("MCP_BRIDGE_CHAOS_OUTAGE_MS", 1500));
    let test_started = Instant::now();

    // Declared first, dropped last: after the replicas that use them.
    let mut pg = PrivatePostgres::start().await;
    let mut nats = PrivateNats::start().await;
    let mut bus_cut = Proxy::start(&format!("127.0.0.1:{}", nats.port)).await;
    let calls = tempfile::tempdir().unwrap();
    let (stdio_log, http_log) = (calls.path().join("stdio"), calls.path().join("http"));
    let (_http_peer, http_url) = recording_http(&http_log).await;

    let first = Arc::new(tempfile::tempdir().unwrap());
    // The private cluster's own `postgres` database. `Replicas` is never dropped: its `Drop` drops
    // a database of that name on `MCP_BRIDGE_TEST_POSTGRES`'s server and deletes the NATS prefix,
    // and both of these servers go with their temp dirs.
    let mut replicas = std::mem::ManuallyDrop::new(Replicas {
        database: format!("{}/postgres", pg.url()),
        nats: nats.url(),
        prefix: unique("t.chaos").replace('-', "_"),
        dirs: vec![first],
    });
    let ids = ["a", "b", "c"];
    let ports: Vec<u16> = ids.iter().map(|_| free_port()).collect();
    let binds: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
    // `c` reaches NATS through a proxy the test cuts: the replica cut off from the bus.
    let cut_url = format!("nats://127.0.0.1:{}", bus_cut.port);
    let env_of = |i: usize| -> Vec<(&str, String)> {
        let mut env = vec![("MCP_BRIDGE_BIND", binds[i].clone())];
        if i == 2 {
            env.push(("MCP_BRIDGE_NATS_URL", cut_url.clone()));
        }
        env
    };
    let mut running: Vec<Option<Replica>> = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let env = env_of(i);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        running.push(Some(replicas.start_with(id, &env).await));
    }
    let named: Vec<(&str, u16)> = ids.iter().copied().zip(ports.iter().copied()).collect();
    let proxy = Haproxy::start(&named).await;
    let front = TestApp::at(&proxy.base(), replicas.dirs[0].clone());

    // Servers: a recording stdio fixture, the recording HTTP one, server-everything over stdio.
    let mut stdio = py_stdio("ps", &unique("chaos"));
    stdio["env"]["FIXTURE_CALL_LOG"] = json!(stdio_log.display().to_string());
    front.register_server(stdio).await;
    front
        .register_server(json!({"server_id": "ph", "transport": "http", "url": http_url}))
        .await;
    front.register_server(everything_stdio("ev")).await;
    for server in ["ps", "ph", "ev"] {
        wait_until(&format!("{server} ready"), WAIT, async || {
            let (_, body) = front.server(server).await;
            match body["server"]["status"] == "ready" {
                true => Ok(()),
                false => Err(body.to_string()),
            }
        })
        .await;
    }
    let acked = Arc::new(Mutex::new(vec![
        "/v1/servers/ps".to_owned(),
        "/v1/servers/ph".to_owned(),
        "/v1/servers/ev".to_owned(),
    ]));
    // A subscription, checked at the end on the upstream that holds it then.
    let doc = "fixture://doc/1";
    front
        .subscribe(json!({"uri": doc, "server_id": "ps"}))
        .await;

    let stop = CancellationToken::new();
    let load = Arc::new(Load {
        base: proxy.base(),
        alice: front.alice.clone(),
        admin: front.admin.clone(),
        client: reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap(),
        ledger: Ledger::default(),
        stop: stop.clone(),
        workers: Mutex::default(),
    });
    // The streams are followed until the checks are done, past the load's end: the update of a
    // touch answered as the load stops arrives after it.
    let following = CancellationToken::new();
    let _following = following.clone().drop_guard();
    let seen = follow_events(proxy.base(), front.alice.clone(), following.clone());
    // A second agent's stream, which only sees the list changes the registrations make.
    let bob_seen = follow_events(proxy.base(), front.bob.clone(), following);
    wait_until("the event stream open", WAIT, async || {
        match seen.lock().unwrap().first_open {
            true => Ok(()),
            false => Err("not yet".to_owned()),
        }
    })
    .await;
    load.rest("rest-stdio", "ps__echo".into(), |id| json!({"text": id}));
    load.rest("rest-http", "ph__echo".into(), |id| json!({"text": id}));
    load.rest(
        "rest-everything",
        "ev__echo".into(),
        |id| json!({"message": id}),
    );
    // Each touch makes the upstream send alice an update of the subscribed resource.
    load.rest(
        "touch",
        "ps__touch".into(),
        |id| json!({"uri": "fixture://doc/1", "mark": id}),
    );
    load.stateless("mcp-stdio", "ps__echo".into());
    load.stateless("mcp-http", "ph__echo".into());
    if sessions_on() {
        load.session("session-stdio", "ps__echo".into());
        load.session("session-http", "ph__echo".into());
    }
    load.configure(http_url.clone(), Duration::from_secs(2), acked.clone());

    // Durable tasks: one started now, one after the first fault.
    let mut tasks = Vec::new();
    let start_task = async |front: &TestApp| -> String {
        let (status, created) = front
            .post(
                "/v1/tools/call",
                &front.alice,
                json!({"name": "ps__slow", "arguments": {"seconds": 4}, "task": {"ttl": 600_000}}),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{created}");
        created["task_id"].as_str().unwrap().to_owned()
    };
    tasks.push(start_task(&front).await);
    tokio::time::sleep(steady).await;

    let mut faults: Vec<Fault> = Vec::new();
    for round in 0..rounds {
        // 1. kill -9 of the replica holding the stdio server, then started again.
        if fault_on("kill") {
            let (_, body) = front.server("ps").await;
            let holder = body["server"]["replica"].as_str().unwrap_or("a").to_owned();
            let i = ids.iter().position(|id| *id == holder).unwrap_or(0);
            let started = Instant::now();
            let mut killed = running[i].take().unwrap();
            killed.bridge.signal("KILL");
            let _ = killed.bridge.exited_within(WAIT).await;
            let survivor = running.iter().flatten().next().unwrap();
            wait_until("a survivor holding ps", WAIT + WAIT, async || {
                let (_, body) = survivor.app.server("ps").await;
                let server = &body["server"];
                match server["status"] == "ready" && server["replica"] != holder.as_str() {
                    true => Ok(()),
                    false => Err(body.to_string()),
                }
            })
            .await;
            tokio::time::sleep(outage.saturating_sub(started.elapsed())).await;
            drop(killed);
            let env = env_of(i);
            let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
            running[i] = Some(replicas.start_with(ids[i], &env).await);
            faults.push(Fault {
                name: format!("kill -9 of {holder} (round {round})"),
                started,
                ended: Instant::now(),
            });
            tokio::time::sleep(steady).await;
        }
        if round == 0 {
            tasks.push(start_task(&front).await);
        }

        // 1b. kill -9 of the replica serving the event stream, if that was another one: the
        // stream resumes elsewhere with `Last-Event-ID`.
        let streaming = seen.lock().unwrap().replica.clone();
        if fault_on("kill") && ids.contains(&streaming.as_str()) {
            let i = ids.iter().position(|id| *id == streaming).unwrap();
            let started = Instant::now();
            let mut killed = running[i].take().unwrap();
            killed.bridge.signal("KILL");
            let _ = killed.bridge.exited_within(WAIT).await;
            let resumes = seen.lock().unwrap().resumes;
            wait_until("the event stream resumed", WAIT, async || {
                match seen.lock().unwrap().resumes > resumes {
                    true => Ok(()),
                    false => Err("not yet".to_owned()),
                }
            })
            .await;
            tokio::time::sleep(outage.saturating_sub(started.elapsed())).await;
            drop(killed);
            let env = env_of(i);
            let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
            running[i] = Some(replicas.start_with(ids[i], &env).await);
            faults.push(Fault {
                name: format!("kill -9 of {streaming}, serving the event stream (round {round})"),
                started,
                ended: Instant::now(),
            });
            tokio::time::sleep(steady).await;
        }

        // 2. NATS restarted.
        if fault_on("nats") {
            let started = Instant::now();
            nats.stop().await;
            tokio::time::sleep(outage).await;
            nats.run().await;
            for replica in running.iter().flatten() {
                replica.wait_ready().await;
            }
            faults.push(Fault {
                name: format!("NATS restart (round {round})"),
                started,
                ended: Instant::now(),
            });
            tokio::time::sleep(steady).await;
        }

        // 3. PostgreSQL restarted.
        if fault_on("postgres") {
            let started = Instant::now();
            pg.stop().await;
            tokio::time::sleep(outage).await;
            pg.run().await;
            for replica in running.iter().flatten() {
                replica.wait_ready().await;
            }
            faults.push(Fault {
                name: format!("PostgreSQL restart (round {round})"),
                started,
                ended: Instant::now(),
            });
            tokio::time::sleep(steady).await;
        }

        // 4. `c` cut off from the bus, then reconnected.
        if fault_on("cut") {
            let started = Instant::now();
            bus_cut.cut().await;
            tokio::time::sleep(outage).await;
            bus_cut.restore().await;
            for replica in running.iter().flatten() {
                replica.wait_ready().await;
            }
            faults.push(Fault {
                name: format!("c cut off from NATS (round {round})"),
                started,
                ended: Instant::now(),
            });
            tokio::time::sleep(steady).await;
        }
    }
    stop.cancel();
    // Every worker ends its call in flight within the client's timeout (10 s): every call
    // started is in the ledger with an outcome.
    let workers = std::mem::take(&mut *load.workers.lock().unwrap());
    for worker in workers {
        worker.await.unwrap();
    }

    let entries = load.ledger.entries();
    report(&entries, &faults);
    if let Ok(path) = std::env::var("MCP_BRIDGE_CHAOS_LEDGER") {
        write_ledger(Path::new(&path), test_started, &entries, &faults);
    }

    // 1. Each call succeeded, or failed retryably within a fault.
    let unexcused: Vec<&Entry> = entries
        .iter()
        .filter(|e| !matches!(e.outcome, Outcome::Ok))
        .filter(|e| !(e.outcome.retryable() && fault_of(&faults, e).is_some()))
        .collect();
    assert!(
        unexcused.is_empty(),
        "{} calls failed outside a fault or not retryably, e.g. {:?}",
        unexcused.len(),
        &unexcused[..unexcused.len().min(5)]
    );
    for kind in ["rest-stdio", "rest-http", "mcp-stdio", "mcp-http"] {
        let ok = entries
            .iter()
            .filter(|e| e.kind == kind && matches!(e.outcome, Outcome::Ok))
            .count();
        assert!(ok > 0, "no {kind} call succeeded");
    }

    // 2. No call ran twice upstream, and every call answered ran exactly once.
    let counts = upstream_counts(&[stdio_log.clone(), http_log.clone()]);
    let twice: Vec<(&String, &usize)> = counts.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "calls ran more than once: {twice:?}");
    let echoes = ["rest-stdio", "rest-http", "mcp-stdio", "mcp-http"];
    let missing: Vec<&String> = entries
        .iter()
        .filter(|e| echoes.contains(&e.kind) || e.kind.starts_with("session-"))
        .filter(|e| matches!(e.outcome, Outcome::Ok) && !counts.contains_key(&e.id))
        .map(|e| &e.id)
        .collect();
    assert!(
        missing.is_empty(),
        "answered calls the upstream never saw: {missing:?}"
    );

    // 3. Nothing acknowledged is lost: servers and policies on every replica, the subscription
    // on the upstream holding it now, the tasks in the store and finished.
    let acked = acked.lock().unwrap().clone();
    for replica in running.iter().flatten() {
        // Policies reach every replica within its refresh (2 s); servers are read from the store.
        wait_until(
            &format!("every policy on {}", replica.id),
            WAIT,
            async || {
                let (_, listed) = replica.app.get("/v1/policies", &replica.app.admin).await;
                let named: Vec<&str> = listed["policies"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|p| p["name"].as_str())
                    .collect();
                let lost: Vec<&String> = acked
                    .iter()
                    .filter_map(|what| what.strip_prefix("policy "))
                    .filter(|policy| !named.contains(policy))
                    .map(|_| &acked[0])
                    .collect();
                match lost.is_empty() {
                    true => Ok(()),
                    false => Err(format!("{} policies missing: {listed}", lost.len())),
                }
            },
        )
        .await;
        for what in acked.iter().filter(|w| w.starts_with('/')) {
            let (status, body) = replica.app.get(what, &replica.app.admin).await;
            assert_eq!(status, StatusCode::OK, "{} lost {what}: {body}", replica.id);
        }
    }
    eprintln!(
        "acknowledged and found on every replica: {} servers and policies",
        acked.len()
    );
    wait_until("the subscription on the upstream", WAIT, async || {
        let (status, body) = front.call("ps__subscriptions", json!({})).await;
        match status == StatusCode::OK && body.to_string().contains(doc) {
            true => Ok(()),
            false => Err(format!("{status} {body}")),
        }
    })
    .await;
    for task in &tasks {
        let path = format!("/v1/tasks/{task}");
        let (status, body) = front.get(&path, &front.alice).await;
        assert_eq!(status, StatusCode::OK, "task {task} lost: {body}");
        // Every task finishes: a survivor takes over a dead replica's (src/tasks.rs).
        let last = wait_until(&format!("task {task} finished"), WAIT, async || {
            let (status, body) = front.get(&path, &front.alice).await;
            match status == StatusCode::OK
                && ["completed", "failed", "cancelled"]
                    .contains(&body["status"].as_str().unwrap_or(""))
            {
                true => Ok(body),
                false => Err(format!("{status} {body}")),
            }
        })
        .await;
        eprintln!(
            "task {task}: {} {}",
            last["status"], last["task"]["status_message"]
        );
    }

    // 4. The stream resumed without loss, and saw every update a touch acknowledged.
    let touched = entries
        .iter()
        .filter(|e| e.kind == "touch" && matches!(e.outcome, Outcome::Ok))
        .count();
    // Where updates went missing, if any: acknowledged touches and updates between faults.
    {
        let seen = seen.lock().unwrap();
        let mut bounds: Vec<(Instant, &str)> = faults
            .iter()
            .map(|f| (f.started, f.name.as_str()))
            .collect();
        bounds.insert(0, (test_started, "the start"));
        bounds.push((Instant::now(), "the end"));
        for pair in bounds.windows(2) {
            let within = |t: &Instant| *t >= pair[0].0 && *t < pair[1].0;
            let touches = entries
                .iter()
                .filter(|e| e.kind == "touch" && matches!(e.outcome, Outcome::Ok))
                .filter(|e| within(&e.ended))
                .count();
            let updates = seen.update_times.iter().filter(|t| within(t)).count();
            let at = pair[0].0.duration_since(test_started).as_millis();
            let what = pair[0].1;
            eprintln!("from {at} ms ({what}): {touches} touches acknowledged, {updates} updates");
        }
    }
    // Each acknowledged touch's own update (its mark), not a count: a touch that failed after it
    // ran sends one too, which a count would take for another's.
    wait_until("every touch's update on the stream", WAIT, async || {
        let seen = seen.lock().unwrap();
        let missing: Vec<String> = entries
            .iter()
            .filter(|e| e.kind == "touch" && matches!(e.outcome, Outcome::Ok))
            .filter(|e| !seen.marks.contains(&e.id))
            .map(|e| {
                let at = |t: Instant| t.duration_since(test_started).as_millis();
                format!(
                    "{} answered by {} from {} to {} ms",
                    e.id,
                    e.replica,
                    at(e.started),
                    at(e.ended)
                )
            })
            .collect();
        match missing.is_empty() {
            true => Ok(()),
            false => Err(format!(
                "{} of {touched} acknowledged touches have no update: {missing:?}",
                missing.len()
            )),
        }
    })
    .await;
    let seen = seen.lock().unwrap();
    eprintln!(
        "event stream: {} resumes, {} updates for {touched} touches, {} events_lost",
        seen.resumes,
        seen.updates.len(),
        seen.lost.len()
    );
    assert!(seen.lost.is_empty(), "bridge/events_lost: {:?}", seen.lost);
    let bob_seen = bob_seen.lock().unwrap();
    eprintln!(
        "bob's event stream: {} resumes, {} events_lost",
        bob_seen.resumes,
        bob_seen.lost.len()
    );
    assert!(
        bob_seen.lost.is_empty(),
        "bridge/events_lost: {:?}",
        bob_seen.lost
    );
    eprintln!("chaos test took {:?}", test_started.elapsed());
    drop(std::mem::take(&mut replicas.dirs));
}
