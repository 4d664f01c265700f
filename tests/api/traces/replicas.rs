//! A trace across replicas: a call made on a replica that does not hold its server goes to the
//! holder over NATS with its trace in the message's headers, and the holder's spans (the
//! forwarded request, its upstream request) are in the caller's trace. Skipped unless
//! `MCP_BRIDGE_TEST_POSTGRES` and `MCP_BRIDGE_TEST_NATS` are set (scripts/test.sh sets both).

use reqwest::StatusCode;
use serde_json::json;

use super::*;
use crate::cluster::Replicas;

#[tokio::test]
async fn the_holders_spans_are_in_the_trace_of_a_call_forwarded_to_it() {
    let Some(mut replicas) = Replicas::new().await else {
        return;
    };
    let receiver = Receiver::start().await;
    let a = replicas
        .start_with("a", &exporting_to(&receiver, "bridge-a"))
        .await;
    let b = replicas
        .start_with("b", &exporting_to(&receiver, "bridge-b"))
        .await;
    let upstream = traced_fixture(&receiver).await;
    let server_id = unique("tr");
    let config = json!({"server_id": server_id, "transport": "http", "url": upstream.url});
    let (status, body) = (a.app)
        .post("/v1/servers", &a.app.admin, json!({ "config": config }))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    b.wait_held(&server_id, "a", WAIT).await;

    let (trace_id, parent, header) = traceparent();
    let tool = format!("{server_id}__trace_context");
    let (status, result) = call_traced(&b.app, &header, &tool, json!({})).await;
    assert_eq!(status, StatusCode::OK, "{result}");
    let seen = seen_context(&result);
    assert!(
        (seen["meta"].as_str().unwrap_or_default()).starts_with(&format!("00-{trace_id}-")),
        "{seen}"
    );
    let request = ("bridge-b", "POST /v1/tools/call");
    let call = ("bridge-b", "tool.call");
    let forward = ("bridge-b", "forward tools/call");
    let forwarded = ("bridge-a", "forwarded tools/call");
    let client = ("bridge-a", "tools/call trace_context");
    let server = ("py-fixture", "tools/call trace_context");
    let trace = receiver
        .trace(
            &trace_id,
            &[request, call, forward, forwarded, client, server],
        )
        .await;
    assert_eq!(trace.span(request)["parent_span_id"], parent);
    assert_eq!(trace.span(forward)["kind"], "client");
    assert_eq!(
        trace.span(forward)["attributes"]["mcp_bridge.replica.to"],
        "a"
    );
    assert_eq!(trace.span(forwarded)["kind"], "server");
    assert_eq!(
        trace.span(forwarded)["attributes"]["mcp_bridge.replica.from"],
        "b"
    );
    trace.assert_chain(&[
        trace.span(request),
        trace.span(call),
        trace.span(forward),
        trace.span(forwarded),
        trace.span(client),
        trace.span(server),
    ]);
    // No baggage crosses the bus, and nothing the caller sent is an attribute.
    assert_nothing_secret(&trace, &[&b.app.alice, "tenant=acme"]);
}
