//! One trace through every hop (issue 41): the real binary exporting OpenTelemetry spans over
//! OTLP/HTTP to a loopback receiver that decodes them as a collector does
//! (tests/peers/otlp_receiver.py, `opentelemetry-proto`), in front of the Python fixture, which
//! exports its own spans there too (the Python SDK's server span continues a request's
//! `_meta.traceparent`). A call made with a W3C `traceparent` yields spans that all share its
//! trace id, from the bridge's request span to the upstream server's.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

mod flows;
mod replicas;

/// The loopback OTLP/HTTP receiver, and what it has been sent.
pub struct Receiver {
    peer: Peer,
}

impl Receiver {
    pub async fn start() -> Self {
        let mut command = tokio::process::Command::new(python());
        command.args([
            installed(peers_dir().join("otlp_receiver.py")).as_str(),
            "--port",
            "0",
        ]);
        Self {
            peer: reporting_peer(command, "", "http").await,
        }
    }

    /// Where an exporter sends (`OTEL_EXPORTER_OTLP_ENDPOINT`: the exporter adds `/v1/traces`).
    pub fn endpoint(&self) -> &str {
        &self.peer.url
    }

    /// Every span received so far.
    async fn spans(&self) -> Vec<Value> {
        let url = format!("{}/spans", self.peer.url);
        let body: Value = reqwest::get(url).await.unwrap().json().await.unwrap();
        body.as_array().unwrap().clone()
    }

    /// The spans of trace `trace_id`, once it holds a span of each (service, name) `wanted`
    /// (within 15 s).
    pub async fn trace(&self, trace_id: &str, wanted: &[(&str, &str)]) -> Trace {
        wait_until(
            &format!("the spans of trace {trace_id}"),
            WAIT,
            async || {
                let trace = Trace {
                    spans: (self.spans().await.into_iter())
                        .filter(|span| span["trace_id"] == trace_id)
                        .collect(),
                };
                let complete = (wanted.iter()).all(|wanted| trace.find(*wanted).is_some());
                match complete {
                    true => Ok(trace),
                    false => Err(trace.shown()),
                }
            },
        )
        .await
    }
}

/// The spans of one trace, as the receiver decoded them.
pub struct Trace {
    pub spans: Vec<Value>,
}

impl Trace {
    /// The span of `service` named `name`, if one was received.
    pub fn find(&self, (service, name): (&str, &str)) -> Option<&Value> {
        (self.spans.iter()).find(|span| span["service"] == service && span["name"] == name)
    }

    /// The span of `service` named `name`; fails the test, showing the trace, when there is none.
    pub fn span(&self, (service, name): (&str, &str)) -> &Value {
        self.find((service, name))
            .unwrap_or_else(|| panic!("no span {service}/{name} in\n{}", self.shown()))
    }

    /// Whether `span` is `ancestor` or below it (following parent span ids within the trace).
    pub fn descends(&self, span: &Value, ancestor: &Value) -> bool {
        let mut at = span;
        for _ in 0..self.spans.len() + 1 {
            if at["span_id"] == ancestor["span_id"] {
                return true;
            }
            let parent = &at["parent_span_id"];
            match self.spans.iter().find(|span| span["span_id"] == *parent) {
                Some(up) => at = up,
                None => return false,
            }
        }
        false
    }

    /// Fails the test unless each span is below the one before it.
    pub fn assert_chain(&self, chain: &[&Value]) {
        for pair in chain.windows(2) {
            assert!(
                self.descends(pair[1], pair[0]),
                "{} is not below {} in\n{}",
                pair[1]["name"],
                pair[0]["name"],
                self.shown()
            );
        }
    }

    /// The trace, a line a span, for a failing test's message.
    pub fn shown(&self) -> String {
        let line = |span: &Value| {
            format!(
                "{} {} [{}] id={} parent={} {} {}",
                span["service"],
                span["name"],
                span["kind"],
                span["span_id"],
                span["parent_span_id"],
                span["attributes"],
                span["status"]
            )
        };
        self.spans.iter().map(line).collect::<Vec<_>>().join("\n")
    }
}

/// A fresh W3C trace id and parent span id, and the `traceparent` that carries them, sampled.
pub fn traceparent() -> (String, String, String) {
    let trace_id = uuid::Uuid::new_v4().simple().to_string();
    let parent = uuid::Uuid::new_v4().simple().to_string()[..16].to_owned();
    let header = format!("00-{trace_id}-{parent}-01");
    (trace_id, parent, header)
}

/// The variables that make a bridge (or the Python fixture) export to `receiver` quickly.
pub fn exporting_to<'a>(receiver: &'a Receiver, service: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint()),
        ("OTEL_SERVICE_NAME", service),
        ("OTEL_BSP_SCHEDULE_DELAY", "100"),
    ]
}

/// The Python fixture over Streamable HTTP, exporting its own spans to `receiver`.
pub async fn traced_fixture(receiver: &Receiver) -> Peer {
    let mut command = tokio::process::Command::new(python());
    command
        .args([py_server().as_str(), "http", "--port", "0"])
        .envs(exporting_to(receiver, "py-fixture"));
    reporting_peer(command, "/mcp", "http").await
}

/// A bridge process exporting to `receiver` as `mcp-bridge`, and the test's handle on it.
pub async fn traced_bridge(receiver: &Receiver, more: &[(&str, &str)]) -> (Bridge, TestApp) {
    let dir = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let mut env = exporting_to(receiver, "mcp-bridge");
    env.extend_from_slice(more);
    let bridge = start_bridge_with(dir.path(), &env).await;
    let app = TestApp::at(&bridge.base, dir);
    (bridge, app)
}

/// `POST /v1/tools/call` of `name` as alice with `traceparent` (and a baggage), to be sent.
pub fn traced_call(
    app: &TestApp,
    traceparent: &str,
    name: &str,
    arguments: Value,
) -> reqwest::RequestBuilder {
    (app.client.post(format!("{}/v1/tools/call", app.base)))
        .bearer_auth(&app.alice)
        .header("traceparent", traceparent)
        .header("baggage", "tenant=acme")
        .json(&json!({"name": name, "arguments": arguments}))
}

/// A request's status and JSON answer.
pub async fn answered(request: reqwest::RequestBuilder) -> (StatusCode, Value) {
    let resp = request.send().await.unwrap();
    let status = resp.status();
    (status, resp.json().await.unwrap())
}

/// [`traced_call`], answered.
pub async fn call_traced(
    app: &TestApp,
    traceparent: &str,
    name: &str,
    arguments: Value,
) -> (StatusCode, Value) {
    answered(traced_call(app, traceparent, name, arguments)).await
}

/// What the fixture's `trace_context` tool saw: the traceparent header and `_meta.traceparent`.
pub fn seen_context(result: &Value) -> Value {
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    serde_json::from_str(text).unwrap_or_else(|_| panic!("trace_context's answer: {result}"))
}

/// The span id a `traceparent` names.
pub fn parent_of(traceparent: &str) -> &str {
    traceparent.split('-').nth(2).unwrap_or_default()
}

/// No span holds a credential or an argument the test sent.
pub fn assert_nothing_secret(trace: &Trace, secrets: &[&str]) {
    let text = serde_json::to_string(&trace.spans).unwrap();
    for secret in secrets {
        assert!(!text.contains(secret), "{secret} is in a span:\n{text}");
    }
    assert!(!text.contains("Bearer"), "{text}");
}

/// A bridge exporting nothing writes nothing into an upstream's request: the default costs no
/// header and no `_meta`.
#[tokio::test]
async fn a_bridge_that_exports_nothing_passes_no_context_on() {
    let receiver = Receiver::start().await;
    let upstream = traced_fixture(&receiver).await;
    let dir = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let bridge = start_bridge_with(dir.path(), &[]).await;
    let app = TestApp::at(&bridge.base, dir);
    app.register_server(json!({"server_id": "py", "transport": "http", "url": upstream.url}))
        .await;
    let (_, _, header) = traceparent();
    let (status, result) = call_traced(&app, &header, "py__trace_context", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{result}");
    assert_eq!(seen_context(&result), json!({"header": null, "meta": null}));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let spans = receiver.spans().await;
    assert!(
        spans.iter().all(|span| span["service"] != "mcp-bridge"),
        "{spans:#?}"
    );
}
