//! The spans of the upstream side, made only when spans are exported (`crate::telemetry`):
//! - the client span of each request that asks a server for something (`tools/call`,
//!   `resources/read`, `prompts/get`), whose context the request carries in `_meta`
//!   (SEP-414) on every transport, and in headers over HTTP (copied from `_meta` as it is
//!   posted, [`trace_headers`], on whatever task posts it);
//! - the wait for the answer to a server's request (sampling, elicitation, roots), a server
//!   span of the call that raised it, whose context the request carries on to whoever answers
//!   it ([`put_trace`]).

use axum::http::{HeaderName, HeaderValue};
use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, GetExtensions, GetMeta as _,
    GetPromptRequestParams, JsonRpcMessage, ReadResourceRequestParams, RequestMetaObject,
};
use serde_json::{Map, Value};
use tracing::{Instrument as _, Span};

use super::{CallError, Connection};

/// The `_meta` keys (and headers, W3C trace context) that carry a trace.
const TRACE_KEYS: [&str; 3] = ["traceparent", "tracestate", "baggage"];

/// The params of a request made in a client span of its own.
pub(super) trait Traced {
    /// The span, named as the OpenTelemetry MCP conventions name a client's request.
    fn span(&self, server_id: &str) -> Span;
    fn meta_mut(&mut self) -> &mut Option<RequestMetaObject>;
}

/// The client span of one request to a server; its other attributes are recorded after.
macro_rules! client_span {
    ($name:expr, $method:literal, $server:expr) => {
        tracing::info_span!(
            target: crate::telemetry::SPANS,
            "mcp.client",
            otel.name = %$name,
            otel.kind = "client",
            mcp.method.name = $method,
            mcp_bridge.server.id = $server,
            gen_ai.operation.name = tracing::field::Empty,
            gen_ai.tool.name = tracing::field::Empty,
            gen_ai.prompt.name = tracing::field::Empty,
            mcp.resource.uri = tracing::field::Empty,
            mcp_bridge.round = tracing::field::Empty,
        )
    };
}

impl Traced for CallToolRequestParams {
    fn span(&self, server_id: &str) -> Span {
        let span = client_span!(
            format_args!("tools/call {}", self.name),
            "tools/call",
            server_id
        );
        span.record("gen_ai.operation.name", "execute_tool");
        span.record("gen_ai.tool.name", &*self.name);
        span
    }

    fn meta_mut(&mut self) -> &mut Option<RequestMetaObject> {
        &mut self.meta
    }
}

impl Traced for ReadResourceRequestParams {
    fn span(&self, server_id: &str) -> Span {
        // The URI is an attribute, not the name: one name for every read of a server.
        let span = client_span!("resources/read", "resources/read", server_id);
        span.record("mcp.resource.uri", self.uri.as_str());
        span
    }

    fn meta_mut(&mut self) -> &mut Option<RequestMetaObject> {
        &mut self.meta
    }
}

impl Traced for GetPromptRequestParams {
    fn span(&self, server_id: &str) -> Span {
        let span = client_span!(
            format_args!("prompts/get {}", self.name),
            "prompts/get",
            server_id
        );
        span.record("gen_ai.prompt.name", self.name.as_str());
        span
    }

    fn meta_mut(&mut self) -> &mut Option<RequestMetaObject> {
        &mut self.meta
    }
}

/// Writes the context of `span` into a request's `_meta`.
pub(super) fn inject_into(span: &Span, meta: &mut Option<RequestMetaObject>) {
    if let Some(trace) = trace_of(span) {
        (meta.get_or_insert_default().0).0.extend(trace);
    }
}

/// The context of `span` as `_meta` keys (without an empty `tracestate`), when it has one.
fn trace_of(span: &Span) -> Option<Map<String, Value>> {
    let mut trace = Map::new();
    if !span.in_scope(|| crate::telemetry::inject_meta(&mut trace)) {
        return None;
    }
    trace.retain(|_, value| value.as_str().is_none_or(|value| !value.is_empty()));
    Some(trace)
}

/// Runs `work` (boxed by the caller: a rare path, kept out of the size of every request's
/// future) in `span`, marking the span failed with the A2E code of its error.
pub(super) async fn within<T>(
    span: Span,
    work: std::pin::Pin<Box<impl Future<Output = Result<T, CallError>>>>,
) -> Result<T, CallError> {
    let done = work.instrument(span.clone()).await;
    if let Err(error) = &done {
        crate::telemetry::failed(&span, error.code().as_str(), &error.to_string());
    }
    done
}

impl Connection {
    /// Makes the request `params` describe with `request`: when spans are exported, in a
    /// client span whose context the request carries in `_meta`.
    pub(super) async fn traced<P: Traced, T, F>(
        &self,
        params: P,
        request: impl FnOnce(P) -> F,
    ) -> Result<T, CallError>
    where
        F: Future<Output = Result<T, CallError>>,
    {
        if !crate::telemetry::exporting() {
            return request(params).await;
        }
        let span = params.span(self.client.service().server_id());
        let mut params = params;
        inject_into(&span, params.meta_mut());
        within(span, Box::pin(request(params))).await
    }
}

/// The trace a request carries in its `_meta`, as the headers it is to be posted with: the task
/// that posts it is rmcp's, not the caller's, whose context is not the request's. Empty (and
/// nothing allocated) when spans are not exported or the message carries no trace.
pub(super) fn trace_headers(message: &ClientJsonRpcMessage) -> Vec<(HeaderName, HeaderValue)> {
    if !crate::telemetry::exporting() {
        return Vec::new();
    }
    let JsonRpcMessage::Request(request) = message else {
        return Vec::new();
    };
    // rmcp writes the request's own `_meta` (its extensions: rmcp's progress token, what a
    // caller's options add) over that of its params (where [`Connection::traced`] puts it).
    let own = &request.request.get_meta().0.0;
    let params = match &request.request {
        ClientRequest::CallToolRequest(r) => r.params.meta.as_ref(),
        ClientRequest::ReadResourceRequest(r) => r.params.meta.as_ref(),
        ClientRequest::GetPromptRequest(r) => r.params.meta.as_ref(),
        _ => None,
    };
    match params {
        Some(params) if !own.contains_key(TRACE_KEYS[0]) => headers_of(&params.0.0),
        _ => headers_of(own),
    }
}

/// The trace keys of `meta` as headers (an empty value, or one no header may hold, left out).
fn headers_of(meta: &Map<String, Value>) -> Vec<(HeaderName, HeaderValue)> {
    TRACE_KEYS
        .iter()
        .filter_map(|key| {
            let value = meta.get(*key).and_then(Value::as_str)?;
            let value = HeaderValue::from_str(value)
                .ok()
                .filter(|v| !v.is_empty())?;
            Some((HeaderName::from_static(key), value))
        })
        .collect()
}

/// The `_meta` of a server's request, which rmcp keeps apart from its params.
pub(super) fn meta_of(request: &impl GetExtensions) -> Option<&RequestMetaObject> {
    request.extensions().get::<RequestMetaObject>()
}

/// The names of the waits for an agent's answer to a server's request: the MCP method, as the
/// OpenTelemetry MCP conventions name a request's server span.
pub(super) const SAMPLING: &str = "sampling/createMessage";
pub(super) const ELICITATION: &str = "elicitation/create";
pub(super) const ROOTS: &str = "roots/list";

/// The span of the wait for the answer to the server's request `method` (JSON-RPC id
/// `request_id`), which goes to `route` (`caller` or `owner`). Its parent is the context the
/// server's request carries in `_meta` (an upstream that traces by itself, a child of the
/// call's client span), else the span current (the call's, which the handler makes current).
pub(super) fn wait_span(
    method: &'static str,
    server_id: &str,
    request_id: &str,
    route: &'static str,
    meta: Option<&Map<String, Value>>,
) -> Span {
    let span = tracing::info_span!(
        target: crate::telemetry::SPANS,
        "mcp.wait",
        otel.name = method,
        otel.kind = "server",
        mcp.method.name = method,
        mcp_bridge.server.id = server_id,
        jsonrpc.request.id = request_id,
        mcp_bridge.route = route,
    );
    crate::telemetry::continue_from_meta(&span, meta);
    span
}

/// Puts the context of `span` into `_meta` of `value` (a request's params, or an A2E message,
/// whose `_meta` is that of MCP: extra fields a client ignores), over a context it carried.
pub(super) fn put_trace(span: &Span, value: &mut Value) {
    if let Some(trace) = trace_of(span) {
        merge_trace(value, trace);
    }
}

/// Puts `trace` into `_meta` of `value` (an object), in place of the trace keys it had.
fn merge_trace(value: &mut Value, trace: Map<String, Value>) {
    let Some(object) = value.as_object_mut() else {
        return;
    };
    let meta = object
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    match meta.as_object_mut() {
        Some(meta) => {
            for key in TRACE_KEYS {
                meta.remove(key);
            }
            meta.extend(trace);
        }
        None => *meta = Value::Object(trace),
    }
}

/// Marks a wait failed with the A2E code a refusal carries (`data.code`).
pub(super) fn wait_failed(span: &Span, error: &rmcp::ErrorData) {
    crate::telemetry::failed(span, code_of(error), &error.message);
}

/// The A2E code of a refusal (`data.code`), else `internal_error`.
fn code_of(error: &rmcp::ErrorData) -> &str {
    error
        .data
        .as_ref()
        .and_then(|data| data.get("code"))
        .and_then(Value::as_str)
        .unwrap_or("internal_error")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2e::SamplingRequest;
    use serde_json::json;

    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    fn trace() -> Map<String, Value> {
        json!({"traceparent": PARENT, "baggage": "tenant=acme"})
            .as_object()
            .cloned()
            .unwrap()
    }

    #[test]
    fn a_trace_replaces_the_one_params_carried_and_keeps_the_rest() {
        let mut params = json!({"messages": [], "_meta": {
            "progressToken": 7, "traceparent": "00-old-old-01", "tracestate": "up=1"
        }});
        merge_trace(&mut params, trace());
        assert_eq!(
            params["_meta"],
            json!({"progressToken": 7, "traceparent": PARENT, "baggage": "tenant=acme"})
        );
        let mut bare = json!({"message": "m"});
        merge_trace(&mut bare, trace());
        assert_eq!(bare["_meta"]["traceparent"], PARENT);
        let mut odd = json!({"_meta": "not an object"});
        merge_trace(&mut odd, trace());
        assert_eq!(odd["_meta"], Value::Object(trace()));
    }

    #[test]
    fn an_agent_event_with_a_trace_still_reads_as_the_a2e_request() {
        let request = SamplingRequest {
            server_id: "s1".into(),
            mcp_request_id: "3".into(),
            max_tokens: 12,
            ..Default::default()
        };
        let mut event = serde_json::to_value(&request).unwrap();
        merge_trace(&mut event, trace());
        // `_meta` beside the A2E fields, as MCP puts it beside a request's params.
        assert_eq!(event["_meta"]["traceparent"], PARENT);
        assert_eq!(event["type"], "mcp/sample/req");
        let read: SamplingRequest = serde_json::from_value(event).unwrap();
        assert_eq!(read, request);
    }

    #[test]
    #[allow(deprecated)] // Sampling: 2025-11-25 clients still take it.
    fn a_mcp_client_asked_gets_the_trace_in_the_requests_meta() {
        // As mcp_server/recipient.rs asks a `/mcp` client: the params parsed, then sent.
        let mut params = json!({"messages": [], "maxTokens": 5});
        merge_trace(&mut params, trace());
        let params: rmcp::model::CreateMessageRequestParams =
            serde_json::from_value(params).unwrap();
        let request = rmcp::model::ServerRequest::CreateMessageRequest(
            rmcp::model::CreateMessageRequest::new(params),
        );
        let message =
            rmcp::model::ServerJsonRpcMessage::request(request, rmcp::model::RequestId::Number(1));
        let wire = serde_json::to_value(message).unwrap();
        assert_eq!(wire["params"]["_meta"]["traceparent"], PARENT);
        assert_eq!(wire["params"]["_meta"]["baggage"], "tenant=acme");
    }

    #[test]
    fn only_the_trace_of_meta_goes_into_headers() {
        let mut meta = trace();
        meta.insert("progressToken".into(), json!("t1"));
        meta.insert("tracestate".into(), json!("bad\nvalue"));
        meta.insert("baggage".into(), json!(""));
        let headers = headers_of(&meta);
        let names: Vec<&str> = headers.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["traceparent"]);
        assert_eq!(headers[0].1, PARENT);
        assert_eq!(headers_of(&trace()).len(), 2);
        assert!(headers_of(&Map::new()).is_empty());
    }

    #[test]
    fn a_refused_wait_fails_with_the_refusal_code() {
        let refused = super::super::handler::refuse(
            crate::hub::AskKind::Elicitation,
            "agent \"a\" did not answer within 1s",
        );
        assert_eq!(code_of(&refused), "mcp_elicitation_refused");
        let other = rmcp::ErrorData::internal_error("x", None);
        assert_eq!(code_of(&other), "internal_error");
    }

    #[test]
    fn nothing_is_traced_while_nothing_is_exported() {
        let mut value = json!({"a": 1});
        put_trace(&Span::none(), &mut value);
        assert_eq!(value, json!({"a": 1}));
        let mut meta = None;
        inject_into(&Span::none(), &mut meta);
        assert!(meta.is_none());
    }
}
