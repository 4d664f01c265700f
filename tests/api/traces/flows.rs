//! The flows of one trace: a REST call to a Streamable HTTP upstream and to a stdio one, a call
//! on `/mcp` whose `_meta` carries the trace, a call that waits on its agent's sampling answer.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::*;

/// The spans of a call of the fixture's `trace_context` over REST: the bridge's request, its
/// `tool.call`, its request to the upstream, and the upstream's own.
const REQUEST: (&str, &str) = ("mcp-bridge", "POST /v1/tools/call");
const CALL: (&str, &str) = ("mcp-bridge", "tool.call");
const CLIENT: (&str, &str) = ("mcp-bridge", "tools/call trace_context");
const UPSTREAM: (&str, &str) = ("py-fixture", "tools/call trace_context");

/// The chain agent → bridge request → `tool.call` → upstream client request → upstream server,
/// in the trace the agent's `traceparent` started; the upstream request carries the trace in
/// its header and in `_meta`.
#[tokio::test]
async fn a_rest_call_is_one_trace_from_the_agent_to_the_upstream_server() {
    let receiver = Receiver::start().await;
    let upstream = traced_fixture(&receiver).await;
    let (_bridge, app) = traced_bridge(&receiver, &[]).await;
    app.register_server(json!({"server_id": "py", "transport": "http", "url": upstream.url}))
        .await;
    let (trace_id, parent, header) = traceparent();
    let (status, result) = call_traced(&app, &header, "py__trace_context", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{result}");
    let seen = seen_context(&result);
    let prefix = format!("00-{trace_id}-");
    for how in ["header", "meta"] {
        let carried = seen[how].as_str().unwrap_or_default();
        assert!(carried.starts_with(&prefix), "{how}: {seen}");
        assert_ne!(parent_of(carried), parent, "the bridge's own span: {seen}");
    }

    let trace = receiver
        .trace(&trace_id, &[UPSTREAM, REQUEST, CALL, CLIENT])
        .await;
    let request = trace.span(REQUEST);
    assert_eq!(request["kind"], "server");
    assert_eq!(request["parent_span_id"], parent, "{}", trace.shown());
    assert_eq!(request["attributes"]["http.route"], "/v1/tools/call");
    assert_eq!(request["attributes"]["http.response.status_code"], 200);
    let call = trace.span(CALL);
    assert_eq!(call["attributes"]["gen_ai.tool.name"], "py__trace_context");
    assert_eq!(call["attributes"]["mcp_bridge.server.id"], "py");
    assert_eq!(call["attributes"]["mcp.method.name"], "tools/call");
    let client = trace.span(CLIENT);
    assert_eq!(client["kind"], "client");
    let server = trace.span(UPSTREAM);
    assert_eq!(server["kind"], "server");
    // The upstream continued what the bridge wrote into _meta: the span the bridge sent from.
    assert_eq!(
        server["parent_span_id"],
        parent_of(seen["meta"].as_str().unwrap())
    );
    trace.assert_chain(&[request, call, client, server]);
    for span in &trace.spans {
        assert_ne!(span["status"]["code"], "error", "{}", trace.shown());
    }
    assert_nothing_secret(&trace, &[&app.alice]);
}

/// Over stdio the trace goes in `_meta` (there is no header), a log line written in the call
/// names its trace and span, and a failing call marks its spans failed with the A2E code.
#[tokio::test]
async fn a_stdio_upstream_gets_the_trace_in_meta_and_failures_carry_the_a2e_code() {
    let receiver = Receiver::start().await;
    let json_lines = [
        ("MCP_BRIDGE_LOG_FORMAT", "json"),
        ("MCP_BRIDGE_LOG", "debug"),
    ];
    let (bridge, app) = traced_bridge(&receiver, &json_lines).await;
    let mut config = py_stdio("local", &unique("traced"));
    config["env"]["OTEL_EXPORTER_OTLP_ENDPOINT"] = json!(receiver.endpoint());
    config["env"]["OTEL_SERVICE_NAME"] = json!("py-stdio");
    app.register_server(config).await;
    let (trace_id, _, header) = traceparent();
    let (status, result) = call_traced(&app, &header, "local__trace_context", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{result}");
    let seen = seen_context(&result);
    assert_eq!(seen["header"], json!(null), "{seen}");
    let meta = seen["meta"].as_str().unwrap_or_default();
    assert!(meta.starts_with(&format!("00-{trace_id}-")), "{seen}");
    let trace = receiver
        .trace(
            &trace_id,
            &[("py-stdio", UPSTREAM.1), REQUEST, CALL, CLIENT],
        )
        .await;
    trace.assert_chain(&[
        trace.span(REQUEST),
        trace.span(CALL),
        trace.span(("py-stdio", UPSTREAM.1)),
    ]);

    // JSON log lines: one object a line; those written inside the call carry its ids.
    let lines: Vec<Value> = (bridge.log().iter())
        .map(|line| serde_json::from_str(line).unwrap_or_else(|_| panic!("not JSON: {line}")))
        .collect();
    let inside: Vec<&Value> = (lines.iter())
        .filter(|line| line["trace_id"] == trace_id.as_str())
        .collect();
    assert!(
        !inside.is_empty(),
        "no line of trace {trace_id}: {lines:#?}"
    );
    for line in inside {
        let span = &line["span_id"];
        assert!(
            trace.spans.iter().any(|s| s["span_id"] == *span),
            "{line} names a span the trace does not have:\n{}",
            trace.shown()
        );
    }

    // A tool that is not there: the call's span says why, with the code the agent got.
    let (trace_id, _, header) = traceparent();
    let (status, body) = call_traced(&app, &header, "local__nope", json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let code = body["code"].as_str().unwrap().to_owned();
    let trace = receiver.trace(&trace_id, &[REQUEST, CALL]).await;
    let call = trace.span(CALL);
    assert_eq!(call["status"]["code"], "error", "{}", trace.shown());
    assert_eq!(call["attributes"]["error.type"], code.as_str());
}

/// A `/mcp` client's `_meta.traceparent` is honoured: no header, the trace in the request.
#[tokio::test]
async fn a_mcp_clients_meta_traceparent_is_continued_to_the_upstream() {
    let receiver = Receiver::start().await;
    let upstream = traced_fixture(&receiver).await;
    let (_bridge, app) = traced_bridge(&receiver, &[]).await;
    app.register_server(json!({"server_id": "py", "transport": "http", "url": upstream.url}))
        .await;
    let (trace_id, parent, traceparent) = traceparent();
    let resp = app
        .stateless_mcp_call(
            &app.alice,
            "py__trace_context",
            json!({}),
            json!({"traceparent": traceparent}),
        )
        .await;
    assert_eq!(resp.status(), StatusCode::OK);
    let body = resp.text().await.unwrap();
    assert!(body.contains(&trace_id), "{body}");
    let trace = receiver.trace(&trace_id, &[UPSTREAM, CALL, CLIENT]).await;
    // The bridge's first span of this trace is the one the client's _meta names as parent.
    let first = (trace.spans.iter())
        .find(|span| span["service"] == "mcp-bridge" && span["parent_span_id"] == parent)
        .unwrap_or_else(|| panic!("no bridge span below {parent} in\n{}", trace.shown()));
    trace.assert_chain(&[
        first,
        trace.span(CALL),
        trace.span(CLIENT),
        trace.span(UPSTREAM),
    ]);
}

/// A call that raises sampling: the bridge's wait for the agent's answer is a span below the
/// upstream's own request for it, and the request the agent reads on `/v1/events` carries the
/// wait's trace in `_meta`.
#[tokio::test]
async fn a_sampling_wait_is_a_child_span_and_its_event_carries_the_trace() {
    let receiver = Receiver::start().await;
    let upstream = traced_fixture(&receiver).await;
    let (_bridge, app) = traced_bridge(&receiver, &[]).await;
    app.register_server(json!({"server_id": "py", "transport": "http", "url": upstream.url}))
        .await;
    let mut events = EventStream::open(&app, &app.alice, None).await;
    let (trace_id, _, header) = traceparent();
    let arguments = json!({"question": "2+2?"});
    let call = tokio::spawn(answered(traced_call(
        &app,
        &header,
        "py__ask_llm",
        arguments,
    )));
    let request = events
        .wait_for("mcp/sample/req", WAIT, |m| m.event == "mcp/sample/req")
        .await;
    let carried = request.data["_meta"]["traceparent"]
        .as_str()
        .unwrap_or_default();
    assert!(
        carried.starts_with(&format!("00-{trace_id}-")),
        "{}",
        request.data
    );
    let (status, body) = app
        .post(
            "/v1/sampling/responses",
            &app.alice,
            json!({"req_id": request.data["id"], "content": {"type": "text", "text": "four"}, "model": "m"}),
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let (status, result) = call.await.unwrap();
    assert_eq!(status, StatusCode::OK, "{result}");
    assert_eq!(result["content"][0]["text"], "llm: four");

    let client = ("mcp-bridge", "tools/call ask_llm");
    let upstream_call = ("py-fixture", "tools/call ask_llm");
    let upstream_asks = ("py-fixture", "MCP send sampling/createMessage");
    let wait = ("mcp-bridge", "sampling/createMessage");
    let trace = receiver
        .trace(
            &trace_id,
            &[REQUEST, CALL, client, upstream_call, upstream_asks, wait],
        )
        .await;
    let waited = trace.span(wait);
    assert_eq!(waited["span_id"], parent_of(carried), "{}", trace.shown());
    assert_eq!(waited["attributes"]["mcp_bridge.server.id"], "py");
    assert_eq!(
        waited["attributes"]["mcp.method.name"],
        "sampling/createMessage"
    );
    trace.assert_chain(&[
        trace.span(REQUEST),
        trace.span(CALL),
        trace.span(client),
        trace.span(upstream_call),
        trace.span(upstream_asks),
        waited,
    ]);
    assert_nothing_secret(&trace, &[&app.alice, "2+2?", "four"]);
}
