//! Events are not dropped while NATS is away: an event raised on one replica while the log
//! takes no entries (here NATS runs without JetStream, as a cluster without quorum would
//! answer) for longer than the 30 s appends were once retried for waits in that replica's
//! outbox and reaches the agent's stream on another replica once the log is back, once. Skipped unless
//! `MCP_BRIDGE_TEST_POSTGRES` and `MCP_BRIDGE_TEST_NATS` are set.

use std::collections::HashSet;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::json;

use crate::cluster::*;
use crate::helpers::*;

#[tokio::test]
async fn an_event_raised_while_nats_is_away_reaches_the_stream_once_it_is_back() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let mut nats = PrivateNats::start().await;
    replicas.nats = nats.url();
    let a = replicas.start("a").await;
    let b = replicas.start("b").await;
    let id = unique("outbox");
    a.app.register_server(everything_stdio(&id)).await;
    b.wait_held(&id, "a", WAIT).await;
    let mut events = EventStream::open(&b.app, &b.app.alice, None).await;
    nats.stop().await;
    let mut without_log = tokio::process::Command::new("nats-server")
        .args(["-a", "127.0.0.1", "-p", &nats.port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("nats-server runs");
    wait_until("a back on a NATS without JetStream", WAIT, async || match a
        .app
        .send(reqwest::Method::GET, "/readyz", None, None)
        .await
    {
        (StatusCode::OK, _) => Ok(()),
        other => Err(format!("{other:?}")),
    })
    .await;
    // Raised on a, which holds the server, while nobody can append to the log.
    let (status, body) = a
        .app
        .post(
            &format!("/v1/servers/{id}/reconnect"),
            &a.app.admin,
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // Time passing is what is tested: longer than the 30 s appends were once retried for.
    tokio::time::sleep(Duration::from_secs(35)).await;
    let _ = without_log.kill().await;
    nats.run().await;
    let of_server = |m: &SseMessage| {
        is_push(m, "bridge/server_status") && m.data["params"]["server_id"] == id.as_str()
    };
    let first = events
        .wait_for(
            "the status raised during the outage",
            Duration::from_secs(30),
            of_server,
        )
        .await;
    let mut seen = vec![first];
    seen.extend(
        events
            .drain(Duration::from_secs(3))
            .await
            .into_iter()
            .filter(|m| of_server(m)),
    );
    let mut distinct = HashSet::new();
    for message in &seen {
        assert!(
            distinct.insert(message.data.to_string()),
            "an event arrived twice: {:?}",
            message.data
        );
    }
    assert_eq!(a.metric("mcp_bridge_bus_dropped_events_total").await, 0.0);
}
