//! Servers spread over the replicas: registered on one, held by all three in shares; a fourth
//! replica takes its share while calls go on, and a killed replica's share goes to the others.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;

use crate::cluster::*;
use crate::helpers::*;

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
