//! The server span of each `/mcp` request, as the OpenTelemetry MCP conventions name it
//! (`{mcp.method.name} {target}`, kind server): made only when spans are exported, it continues
//! the trace of the request's `_meta` (`traceparent`, `tracestate`, `baggage`; SEP-414), else
//! is a child of the HTTP request's span. rmcp runs a session's handlers on a task its session
//! started in (the `initialize` request's span), so that span is kept in the request's
//! extensions ([`keep_http_span`]) and named as the parent.

use std::future::Future;

use futures::future::{BoxFuture, Either};

use rmcp::RoleServer;
use rmcp::model::CallToolResult;
use rmcp::model::{
    CallToolResponse, CompleteResult, ErrorData, GetPromptResponse, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, ReadResourceResponse,
};
use rmcp::service::RequestContext;
use serde_json::{Map, Value};
use tracing::{Instrument as _, Span};

use super::{ERROR_META, SESSION_ID, id_text};
use crate::telemetry;

/// The `_meta` key of the protocol version a 2026-07-28 request carries.
const VERSION_META: &str = "io.modelcontextprotocol/protocolVersion";

/// The HTTP request's span, for the handler of an `/mcp` request.
#[derive(Clone)]
pub(super) struct HttpSpan(Span);

/// Keeps the current span (the HTTP request's) in a request's extensions, when spans are
/// exported.
pub(super) fn keep_http_span(extensions: &mut axum::http::Extensions) {
    if telemetry::exporting() {
        extensions.insert(HttpSpan(Span::current()));
    }
}

/// The current span, for work a request spawns on a task of its own; none (at the cost of one
/// load) when spans are not exported.
pub(super) fn current() -> Span {
    match telemetry::exporting() {
        true => Span::current(),
        false => Span::none(),
    }
}

/// What a request names: its span's target, and an attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Target<'a> {
    None,
    Tool(&'a str),
    Prompt(&'a str),
    /// Only an attribute: a URI is not a low-cardinality span name (the conventions leave it
    /// out of the name by default).
    Resource(&'a str),
}

/// An `/mcp` request, as its span shows it.
pub(super) struct Asked<'a> {
    pub method: &'static str,
    pub target: Target<'a>,
    pub id: String,
    pub session: Option<&'a str>,
    pub version: Option<&'a str>,
    /// The request's `_meta`, whose trace context it continues.
    pub meta: Option<&'a Map<String, Value>>,
    /// The span it is a child of when `_meta` names none; the current one when `None`.
    pub parent: Option<&'a Span>,
}

/// The span's name.
fn name_of(method: &str, target: Target<'_>) -> String {
    match target {
        Target::Tool(name) | Target::Prompt(name) => format!("{method} {name}"),
        Target::None | Target::Resource(_) => method.to_owned(),
    }
}

/// The server span of the request rmcp hands a handler (`method` naming `target`); none when
/// spans are not exported.
pub(super) fn span(
    context: &RequestContext<RoleServer>,
    method: &'static str,
    target: Target<'_>,
) -> Span {
    if !telemetry::exporting() {
        return Span::none();
    }
    let parts = context.extensions.get::<axum::http::request::Parts>();
    let header = |name: &str| {
        parts
            .and_then(|parts| parts.headers.get(name))
            .and_then(|v| v.to_str().ok())
    };
    let meta = &context.meta.0.0;
    let version =
        header("mcp-protocol-version").or_else(|| meta.get(VERSION_META).and_then(Value::as_str));
    let parent = parts
        .and_then(|parts| parts.extensions.get::<HttpSpan>())
        .map(|kept| &kept.0);
    made(&Asked {
        method,
        target,
        id: id_text(&context.id),
        session: header(SESSION_ID),
        version,
        meta: Some(meta),
        parent,
    })
}

/// The server span of a request answered in front of rmcp, in the HTTP request's span (`parts`:
/// the request's; `meta`: its `_meta`); none when spans are not exported.
pub(super) fn in_front(
    method: &'static str,
    target: Target<'_>,
    id: impl FnOnce() -> String,
    parts: &axum::http::request::Parts,
    meta: Option<&Map<String, Value>>,
) -> Span {
    if !telemetry::exporting() {
        return Span::none();
    }
    let header = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok());
    made(&Asked {
        method,
        target,
        id: id(),
        session: header(SESSION_ID),
        version: header("mcp-protocol-version"),
        meta,
        parent: None,
    })
}

/// A request's span, made: continuing the trace of its `_meta` and linked to the HTTP
/// request's span when `_meta` names a trace, else a child of that span.
pub(super) fn made(asked: &Asked<'_>) -> Span {
    let parent = match asked.parent {
        Some(parent) => parent.id(),
        None => Span::current().id(),
    };
    let (tool, prompt, uri) = match asked.target {
        Target::Tool(name) => (Some(name), None, None),
        Target::Prompt(name) => (None, Some(name), None),
        Target::Resource(uri) => (None, None, Some(uri)),
        Target::None => (None, None, None),
    };
    let span = tracing::info_span!(
        target: telemetry::SPANS,
        parent: parent,
        "mcp.server",
        otel.name = name_of(asked.method, asked.target),
        otel.kind = "server",
        mcp.method.name = asked.method,
        mcp.session.id = asked.session,
        mcp.protocol.version = asked.version,
        jsonrpc.request.id = asked.id.as_str(),
        jsonrpc.protocol.version = "2.0",
        network.transport = "tcp",
        network.protocol.name = "http",
        gen_ai.operation.name = tool.map(|_| "execute_tool"),
        gen_ai.tool.name = tool,
        gen_ai.prompt.name = prompt,
        mcp.resource.uri = uri,
        rpc.response.status_code = tracing::field::Empty,
    );
    telemetry::continue_from_meta(&span, asked.meta);
    if asked
        .meta
        .is_some_and(|meta| meta.contains_key("traceparent"))
    {
        // The HTTP request's span is not in the trace `_meta` names (unless the client sent the
        // same context in both): linked, so one leads to the other.
        let http = match asked.parent {
            Some(parent) => parent.in_scope(telemetry::current),
            None => telemetry::current(),
        };
        if let Some(http) = http {
            telemetry::link_to(&span, &http);
        }
    }
    span
}

/// `work`, a request's handling, in its `span` (none: not exported), which an error answer or
/// a tool's error result marks failed. Not exported, the future is `work` itself: an `async fn`
/// would hold `work` twice (as its argument and as what it awaits), and every move of a
/// request's future would copy both.
pub(super) fn within<'a, T, F>(
    span: Span,
    work: F,
) -> Either<F, BoxFuture<'a, Result<T, ErrorData>>>
where
    T: Outcome + Send + 'a,
    F: Future<Output = Result<T, ErrorData>> + Send + 'a,
{
    if span.is_none() {
        return Either::Left(work);
    }
    Either::Right(Box::pin(async move {
        let answered = work.instrument(span.clone()).await;
        ended(&span, &answered);
        answered
    }))
}

/// Marks `span` failed by an error answer or a tool's error result (nothing when it is none).
pub(super) fn ended<T: Outcome>(span: &Span, answered: &Result<T, ErrorData>) {
    if span.is_none() {
        return;
    }
    match answered {
        Ok(answer) => {
            if let Some(code) = answer.tool_error() {
                telemetry::failed(span, &code, "the tool answered an error");
            }
        }
        Err(error) => refused(span, error),
    }
}

/// Marks `span` failed by the error answer `error` (nothing when it is not traced).
pub(super) fn refused(span: &Span, error: &ErrorData) {
    if span.is_disabled() {
        return;
    }
    span.record("rpc.response.status_code", error.code.0.to_string());
    telemetry::failed(span, &error_type(error), &error.message);
}

/// An error answer's `error.type`: the A2E code it carries, else its JSON-RPC code.
fn error_type(error: &ErrorData) -> String {
    let code = error.data.as_ref().and_then(|data| data.get("code"));
    match code.and_then(Value::as_str) {
        Some(code) => code.to_owned(),
        None => error.code.0.to_string(),
    }
}

/// What an answer says of a failure that is not a JSON-RPC error.
pub(super) trait Outcome {
    /// A tool's error result: its `error.type` (the A2E code the bridge gave it, else
    /// `tool_error`).
    fn tool_error(&self) -> Option<String> {
        None
    }
}

impl Outcome for CallToolResponse {
    fn tool_error(&self) -> Option<String> {
        match self {
            CallToolResponse::Complete(result) => tool_error(result),
            _ => None,
        }
    }
}

/// The `error.type` of a tool's error result.
fn tool_error(result: &CallToolResult) -> Option<String> {
    if result.is_error != Some(true) {
        return None;
    }
    let code = result
        .meta
        .as_ref()
        .and_then(|meta| meta.0.get(ERROR_META))
        .and_then(|what| what.get("code"))
        .and_then(Value::as_str);
    Some(code.unwrap_or("tool_error").to_owned())
}

impl Outcome for ListToolsResult {}
impl Outcome for ListResourcesResult {}
impl Outcome for ListResourceTemplatesResult {}
impl Outcome for ListPromptsResult {}
impl Outcome for ReadResourceResponse {}
impl Outcome for GetPromptResponse {}
impl Outcome for CompleteResult {}
impl Outcome for rmcp::model::GetTaskResult {}
impl Outcome for () {}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use rmcp::model::{ContentBlock, MetaObject};
    use serde_json::json;
    use tracing::field::{Field, Visit};
    use tracing_subscriber::layer::{Context, SubscriberExt as _};

    use super::*;

    /// The fields of the spans made under it, by name.
    #[derive(Clone, Default)]
    struct Fields(Arc<Mutex<Vec<(String, String)>>>);

    impl Visit for Fields {
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            let value = format!("{value:?}").trim_matches('"').to_owned();
            self.0
                .lock()
                .unwrap()
                .push((field.name().to_owned(), value));
        }
    }

    impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Fields {
        fn on_new_span(
            &self,
            attrs: &tracing::span::Attributes<'_>,
            _: &tracing::span::Id,
            _: Context<'_, S>,
        ) {
            attrs.record(&mut self.clone());
        }
    }

    fn fields_of(asked: &Asked<'_>) -> Vec<(String, String)> {
        let fields = Fields::default();
        let subscriber = tracing_subscriber::registry().with(fields.clone());
        tracing::subscriber::with_default(subscriber, || drop(made(asked)));
        fields.0.lock().unwrap().clone()
    }

    fn asked(target: Target<'static>) -> Asked<'static> {
        Asked {
            method: "tools/call",
            target,
            id: "7".to_owned(),
            session: Some("s-1"),
            version: Some("2025-11-25"),
            meta: None,
            parent: None,
        }
    }

    #[test]
    fn a_request_span_is_named_by_its_tool_or_prompt_but_not_its_uri() {
        assert_eq!(
            name_of("tools/call", Target::Tool("a__echo")),
            "tools/call a__echo"
        );
        assert_eq!(
            name_of("prompts/get", Target::Prompt("a__hi")),
            "prompts/get a__hi"
        );
        assert_eq!(
            name_of("resources/read", Target::Resource("file:///x")),
            "resources/read"
        );
        assert_eq!(name_of("tools/list", Target::None), "tools/list");
    }

    #[test]
    fn a_call_span_has_the_conventions_attributes() {
        let seen = fields_of(&asked(Target::Tool("a__echo")));
        let field = |name: &str| {
            seen.iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(field("otel.name"), Some("tools/call a__echo"));
        assert_eq!(field("otel.kind"), Some("server"));
        assert_eq!(field("mcp.method.name"), Some("tools/call"));
        assert_eq!(field("mcp.session.id"), Some("s-1"));
        assert_eq!(field("mcp.protocol.version"), Some("2025-11-25"));
        assert_eq!(field("jsonrpc.request.id"), Some("7"));
        assert_eq!(field("gen_ai.tool.name"), Some("a__echo"));
        assert_eq!(field("gen_ai.operation.name"), Some("execute_tool"));
        assert_eq!(field("mcp.resource.uri"), None);
        let mut read = asked(Target::Resource("file:///x"));
        read.method = "resources/read";
        read.session = None;
        let seen = fields_of(&read);
        let names: Vec<&str> = seen.iter().map(|(n, _)| n.as_str()).collect();
        assert!(names.contains(&"mcp.resource.uri"), "{names:?}");
        for absent in [
            "mcp.session.id",
            "gen_ai.tool.name",
            "gen_ai.operation.name",
        ] {
            assert!(!names.contains(&absent), "{absent} in {names:?}");
        }
    }

    #[test]
    fn nothing_is_made_while_nothing_is_exported() {
        let (parts, ()) = axum::http::Request::new(()).into_parts();
        let meta =
            json!({"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"});
        let span = in_front(
            "tools/call",
            Target::Tool("a"),
            || unreachable!("no id is written while nothing is exported"),
            &parts,
            meta.as_object(),
        );
        assert!(span.is_none());
        assert!(current().is_none());
        let mut extensions = axum::http::Extensions::new();
        keep_http_span(&mut extensions);
        assert!(extensions.get::<HttpSpan>().is_none());
    }

    #[test]
    fn a_failure_is_typed_by_its_a2e_code() {
        let refused = ErrorData::invalid_params("no", Some(json!({"code": "tool_not_found"})));
        assert_eq!(error_type(&refused), "tool_not_found");
        assert_eq!(error_type(&ErrorData::invalid_params("no", None)), "-32602");
        let ok = CallToolResponse::Complete(CallToolResult::success(vec![]));
        assert_eq!(ok.tool_error(), None);
        let failed = CallToolResult::error(vec![ContentBlock::text("boom")]);
        let plain = CallToolResponse::Complete(failed.clone());
        assert_eq!(plain.tool_error().as_deref(), Some("tool_error"));
        let mut coded = failed;
        let mut meta = Map::new();
        meta.insert(ERROR_META.to_owned(), json!({"code": "upstream_timeout"}));
        coded.meta = Some(MetaObject(meta));
        let coded = CallToolResponse::Complete(coded);
        assert_eq!(coded.tool_error().as_deref(), Some("upstream_timeout"));
    }
}
