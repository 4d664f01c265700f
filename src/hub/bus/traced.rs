//! Requests between replicas in a trace, when spans are exported: a request made within a trace
//! is a client span (`forward {method}`), its trace goes with the message in NATS headers
//! (`traceparent`, `tracestate`), and the replica that serves it does so in a server span
//! (`forwarded {method}`) continuing that trace, so the holder's work (its upstream request,
//! what it asks the agent) is in the caller's trace. A request made outside any trace (nothing
//! is traced where it starts) goes without span or headers, and is served without a span: no
//! trace of its own for each background request. Off, a request costs one load more: no span,
//! no header map.
//!
//! The headers ride outside the seal (`seal.rs`), which covers the payload only. A trace
//! context is no secret: two random ids and a sampled flag (and the caller's `tracestate`,
//! vendor hints it sent to be passed on). It is never what a replica acts on: who may do what
//! is in the sealed message, and a message whose payload does not open under the bus key is
//! refused whatever its headers say. So whoever can write on NATS without the key can make no
//! request taken; what someone able to alter a genuine message in flight can do with forged
//! headers is place the holder's spans in another trace (or in none), and have them sampled or
//! not: a wrong or missing trace, never a different call, answer or identity. `baggage` is NOT
//! sent: it is the caller's own key-value data (a tenant, a user), which the seal keeps from
//! anyone reading NATS as it keeps the call's arguments; the holder's spans go without it.

use tracing::Span;

use super::{BusError, RemoteError, Request};
use crate::telemetry::{self, Carrier, SPANS};

/// The fields of a trace context a message carries in its headers.
const SENT: [&str; 2] = ["traceparent", "tracestate"];

/// What `request` asks for, as its spans are named: an MCP method where it is one.
pub(super) fn method_of(request: &Request) -> &'static str {
    use super::Listing;
    match request {
        Request::CallTool { .. } => "tools/call",
        Request::ReadResource { .. } => "resources/read",
        Request::Subscribe { .. } => "resources/subscribe",
        Request::Unsubscribe { .. } => "resources/unsubscribe",
        Request::GetPrompt { .. } => "prompts/get",
        Request::Complete { .. } => "completion/complete",
        Request::List { what, .. } => match what {
            Listing::Resources => "resources/list",
            Listing::Templates => "resources/templates/list",
            Listing::Prompts => "prompts/list",
        },
        Request::ToCaller { .. } => "to_caller",
        Request::ToSession { .. } => "to_session",
        Request::CancelForwarded { .. } => "cancel_forwarded",
        Request::CancelInFlight { .. } => "cancel_in_flight",
        Request::Ping => "ping",
        Request::Reconnect { .. } => "reconnect",
        Request::DropSession { .. } => "drop_session",
        Request::ApproveTool { .. } => "approve_tool",
    }
}

/// The span of one request on either side: client on the sender (`peer` the replica it goes
/// to), server on the replica `serves` it (`peer` the sender).
fn span(serves: bool, request: &Request, subject: &str, peer: &str) -> Span {
    let method = method_of(request);
    let (name, kind, side) = match serves {
        true => ("forwarded", "server", "mcp_bridge.replica.from"),
        false => ("forward", "client", "mcp_bridge.replica.to"),
    };
    let tool = match request {
        Request::CallTool { name, .. } => Some(name.as_str()),
        _ => None,
    };
    let span = tracing::info_span!(
        target: SPANS,
        "replica.request",
        otel.name = %format_args!("{name} {method}"),
        otel.kind = kind,
        messaging.system = "nats",
        messaging.destination.name = subject,
        mcp.method.name = method.contains('/').then_some(method),
        gen_ai.tool.name = tool,
        mcp_bridge.replica.to = tracing::field::Empty,
        mcp_bridge.replica.from = tracing::field::Empty,
    );
    span.record(side, peer);
    span
}

/// The client span of a request to `replica` on `subject`, when it is made within a trace.
pub(super) fn sending(request: &Request, subject: &str, replica: &str) -> Option<Span> {
    telemetry::current()?;
    Some(span(false, request, subject, replica))
}

/// The headers that carry the current trace (none when nothing is exported or there is none).
pub(super) fn headers() -> Option<async_nats::HeaderMap> {
    let carrier = telemetry::current()?;
    let mut headers = async_nats::HeaderMap::new();
    for (name, value) in carrier
        .iter()
        .filter(|(name, _)| SENT.contains(&name.as_str()))
    {
        if let Ok(value) = value.parse::<async_nats::HeaderValue>() {
            headers.insert(name.as_str(), value);
        }
    }
    Some(headers)
}

/// The trace context a message's headers carry.
fn carrier(headers: &async_nats::HeaderMap) -> Carrier {
    SENT.iter()
        .filter_map(|name| Some((name.to_string(), headers.get(*name)?.as_str().to_owned())))
        .collect()
}

/// The server span of `request` from `from`, continuing the trace its `headers` carry, when
/// spans are exported and they carry one.
pub(super) fn serving(
    request: &Request,
    subject: &str,
    from: &str,
    headers: Option<&async_nats::HeaderMap>,
) -> Option<Span> {
    if !telemetry::exporting() {
        return None;
    }
    let carrier = carrier(headers?);
    if !carrier.contains_key("traceparent") {
        return None;
    }
    let span = span(true, request, subject, from);
    telemetry::continue_from_carrier(&span, &carrier);
    Some(span)
}

/// Marks a request's span failed with the A2E code of `error`.
pub(super) fn failed(span: &Span, error: &BusError) {
    match error {
        BusError::Remote(remote) => failed_there(span, remote),
        error => {
            let code = crate::a2e::ErrorCode::McpServerUnavailable;
            telemetry::failed(span, code.as_str(), &error.to_string());
        }
    }
}

/// Marks a request's span failed with the A2E code it failed with where it was served.
pub(super) fn failed_there(span: &Span, error: &RemoteError) {
    telemetry::failed(span, error.code.as_str(), &error.message);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_trace_ids_and_state_are_read_from_headers() {
        let parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let mut headers = async_nats::HeaderMap::new();
        headers.insert("traceparent", parent);
        headers.insert("tracestate", "vendor=1");
        headers.insert("baggage", "tenant=acme");
        headers.insert("authorization", "Bearer x");
        let read = carrier(&headers);
        assert_eq!(read.len(), 2);
        assert_eq!(read["traceparent"], parent);
        assert_eq!(read["tracestate"], "vendor=1");
        assert!(carrier(&async_nats::HeaderMap::new()).is_empty());
    }

    #[test]
    fn requests_are_named_after_their_mcp_method() {
        let list = Request::List {
            what: super::super::Listing::Templates,
            server_id: "s".into(),
            cursor: None,
        };
        assert_eq!(method_of(&list), "resources/templates/list");
        assert_eq!(method_of(&Request::Ping), "ping");
    }

    #[test]
    fn nothing_is_made_while_nothing_is_exported() {
        assert!(headers().is_none());
        assert!(sending(&Request::Ping, "p.rpc.b", "b").is_none());
        assert!(serving(&Request::Ping, "p.rpc.a", "b", None).is_none());
    }
}
