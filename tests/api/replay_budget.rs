//! The replay buffers' byte budget against the real service: what a resume gets once an agent's
//! history passed its budget, and one `resources/updated` shared by every subscriber.

use std::time::Duration;

use serde_json::json;

use crate::helpers::*;

/// Ids of the messages that carry one.
fn ids(messages: &[SseMessage]) -> Vec<u64> {
    messages
        .iter()
        .filter_map(|m| m.id.as_ref()?.parse().ok())
        .collect()
}

#[tokio::test]
async fn past_the_agents_byte_budget_a_resume_is_told_and_gets_the_newest() {
    // A `tools/list_changed` push is about 100 bytes: room for two of them, the count limit far.
    const BUDGET: usize = 250;
    let app = TestApp::builder()
        .configure(|c| c.replay_agent_bytes = BUDGET)
        .spawn()
        .await;
    app.register_server(py_stdio("py", &unique("budget"))).await;
    let mut alice = EventStream::open(&app, &app.alice, None).await;
    let mut live = Vec::new();
    for i in 0..5 {
        app.call("py__grow", json!({"name": format!("t{i}")})).await;
        live.push(
            alice
                .wait_for("tools/list_changed", WAIT, |m| {
                    is_push(m, "notifications/tools/list_changed")
                })
                .await,
        );
    }
    drop(alice);
    let live_ids = ids(&live);
    let size = serde_json::to_string(&live[0].data).unwrap().len();
    assert!(
        size * 5 > BUDGET,
        "the five events ({size} bytes each) must not fit"
    );

    // Resuming after the first event: the ones right after it are gone.
    let first = live_ids[0].to_string();
    let mut resumed = EventStream::open(&app, &app.alice, Some(&first)).await;
    let replayed = resumed.drain(Duration::from_millis(300)).await;
    assert!(is_push(&replayed[0], "bridge/events_lost"), "{replayed:?}");
    let kept = ids(&replayed[1..]);
    assert!(!kept.is_empty() && kept.len() < 4, "{kept:?}");
    assert_eq!(
        kept,
        live_ids[live_ids.len() - kept.len()..],
        "the newest, in order"
    );
    let bytes: usize = replayed[1..]
        .iter()
        .map(|m| serde_json::to_string(&m.data).unwrap().len())
        .sum();
    assert!(bytes <= BUDGET, "{bytes} bytes kept");

    // Resuming from the oldest kept: the rest, nothing lost.
    let mut again = EventStream::open(&app, &app.alice, Some(&kept[0].to_string())).await;
    let rest = again.drain(Duration::from_millis(300)).await;
    assert!(rest.iter().all(|m| !is_push(m, "bridge/events_lost")));
    assert_eq!(ids(&rest), kept[1..]);
    app.stop().await;
}

#[tokio::test]
async fn every_subscriber_of_a_resource_gets_the_same_update() {
    let app = spawn_app().await;
    app.register_server(everything_stdio("ev")).await;
    let mut alice = EventStream::open(&app, &app.alice, None).await;
    let mut bob = EventStream::open(&app, &app.bob, None).await;
    let uri = "demo://resource/static/document/architecture.md";
    app.subscribe(json!({"uri": uri})).await;
    let (status, _) = app
        .post("/v1/resources/subscribe", &app.bob, json!({"uri": uri}))
        .await;
    assert!(status.is_success(), "{status}");
    app.call_tool("ev__toggle-subscriber-updates", json!({}))
        .await;
    let updated = |m: &SseMessage| is_push(m, "notifications/resources/updated");
    let to_alice = alice.wait_for("resources/updated", WAIT, updated).await;
    let to_bob = bob.wait_for("resources/updated", WAIT, updated).await;
    assert_eq!(to_alice.data, to_bob.data);
    assert_eq!(to_alice.data["params"]["uri"], uri);
    app.stop().await;
}
