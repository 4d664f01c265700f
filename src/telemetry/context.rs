//! W3C trace context (`traceparent`, `tracestate`, `baggage`) in and out: read from a caller's
//! headers, a `/mcp` request's `_meta` or a message between replicas, and written into every
//! upstream request, A2A call, message and event. Each function does nothing when spans are not
//! exported (see [`super::exporting`]), at the cost of one load.

use std::collections::HashMap;
use std::sync::LazyLock;

use opentelemetry::propagation::{
    Extractor, Injector, TextMapCompositePropagator, TextMapPropagator,
};
use opentelemetry::trace::{Status, TraceContextExt as _};
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use serde_json::{Map, Value};
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

use super::exporting;

/// A trace context as text fields (`traceparent`, and `tracestate` and `baggage` when they are
/// set): what a message between replicas or a stored task carries.
pub type Carrier = HashMap<String, String>;

/// The header and `_meta` key that says a context is there at all.
const TRACEPARENT: &str = "traceparent";

static PROPAGATOR: LazyLock<TextMapCompositePropagator> = LazyLock::new(|| {
    TextMapCompositePropagator::new(vec![
        Box::new(TraceContextPropagator::new()),
        Box::new(BaggagePropagator::new()),
    ])
});

struct Headers<'a>(&'a http::HeaderMap);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(|value| value.to_str().ok())
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(http::HeaderName::as_str).collect()
    }
}

struct HeadersMut<'a>(&'a mut http::HeaderMap);

impl Injector for HeadersMut<'_> {
    fn set(&mut self, key: &str, value: String) {
        if let (Ok(name), Ok(value)) = (
            http::HeaderName::from_bytes(key.as_bytes()),
            http::HeaderValue::from_str(&value),
        ) {
            self.0.insert(name, value);
        }
    }
}

/// `_meta` read as a carrier: its string values.
struct Meta<'a>(&'a Map<String, Value>);

impl Extractor for Meta<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

struct MetaMut<'a>(&'a mut Map<String, Value>);

impl Injector for MetaMut<'_> {
    fn set(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), Value::String(value));
    }
}

/// Makes `span` continue the trace `extractor` carries, when it carries one.
fn continue_with(span: &Span, extractor: &dyn Extractor) {
    if extractor.get(TRACEPARENT).is_none() && extractor.get("baggage").is_none() {
        return;
    }
    let context = PROPAGATOR.extract(extractor);
    // Fails only when the span is already started or not traced: it then stays where it is.
    let _ = span.set_parent(context);
}

/// Makes `span` (just made, not yet entered) continue the trace of a caller's headers.
pub fn continue_from(span: &Span, headers: &http::HeaderMap) {
    if exporting() && !span.is_disabled() {
        continue_with(span, &Headers(headers));
    }
}

/// Makes `span` continue the trace of a `/mcp` request's `_meta` (SEP-414: `traceparent`,
/// `tracestate`, `baggage` as strings).
pub fn continue_from_meta(span: &Span, meta: Option<&Map<String, Value>>) {
    if let Some(meta) = meta
        && exporting()
        && !span.is_disabled()
    {
        continue_with(span, &Meta(meta));
    }
}

/// Makes `span` continue the trace a message or a stored task carries.
pub fn continue_from_carrier(span: &Span, carrier: &Carrier) {
    if exporting() && !span.is_disabled() {
        continue_with(span, carrier);
    }
}

/// Links `span` to the trace `carrier` names (a durable task resumed after a restart links to
/// the trace that started it, which has ended).
pub fn link_to(span: &Span, carrier: &Carrier) {
    if !exporting() || span.is_disabled() || carrier.get(TRACEPARENT).is_none() {
        return;
    }
    let context = PROPAGATOR.extract(carrier);
    let linked = context.span().span_context().clone();
    if linked.is_valid() {
        span.add_link(linked);
    }
}

/// The context current on this thread, when there is a trace to pass on.
fn traced() -> Option<opentelemetry::Context> {
    if !exporting() {
        return None;
    }
    let context = opentelemetry::Context::current();
    context.span().span_context().is_valid().then_some(context)
}

/// The current trace as a carrier (for a message between replicas, a stored task, an event).
pub fn current() -> Option<Carrier> {
    let context = traced()?;
    let mut carrier = Carrier::new();
    PROPAGATOR.inject_context(&context, &mut carrier);
    Some(carrier)
}

/// Writes the current trace into an outgoing request's headers.
pub fn inject(headers: &mut http::HeaderMap) {
    if let Some(context) = traced() {
        PROPAGATOR.inject_context(&context, &mut HeadersMut(headers));
    }
}

/// Writes the current trace into an outgoing MCP message's `_meta`; false when there is none.
pub fn inject_meta(meta: &mut Map<String, Value>) -> bool {
    match traced() {
        Some(context) => {
            PROPAGATOR.inject_context(&context, &mut MetaMut(meta));
            true
        }
        None => false,
    }
}

/// Marks `span` failed with an A2E error `code` (`error.type`) and what the caller was told.
pub fn failed(span: &Span, code: &str, message: &str) {
    if exporting() && !span.is_disabled() {
        span.set_attribute("error.type", code.to_owned());
        span.set_status(Status::error(message.to_owned()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_context_read_from_headers_is_written_out_again() {
        let mut headers = http::HeaderMap::new();
        headers.insert("traceparent", PARENT.parse().unwrap());
        headers.insert("tracestate", "vendor=1".parse().unwrap());
        headers.insert("baggage", "tenant=acme".parse().unwrap());
        let context = PROPAGATOR.extract(&Headers(&headers));
        assert!(context.span().span_context().is_valid());
        let mut carrier = Carrier::new();
        PROPAGATOR.inject_context(&context, &mut carrier);
        assert_eq!(carrier["traceparent"], PARENT);
        assert_eq!(carrier["tracestate"], "vendor=1");
        assert_eq!(carrier["baggage"], "tenant=acme");
        let mut meta = Map::new();
        PROPAGATOR.inject_context(&context, &mut MetaMut(&mut meta));
        assert_eq!(meta["traceparent"], PARENT);
        let back = PROPAGATOR.extract(&Meta(&meta));
        assert_eq!(
            back.span().span_context().trace_id(),
            context.span().span_context().trace_id()
        );
    }

    #[test]
    fn nothing_is_written_while_nothing_is_exported() {
        let mut headers = http::HeaderMap::new();
        inject(&mut headers);
        assert!(headers.is_empty());
        let mut meta = Map::new();
        assert!(!inject_meta(&mut meta));
        assert!(current().is_none());
    }
}
