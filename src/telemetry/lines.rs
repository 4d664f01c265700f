//! Each log line as the text or JSON formatter of tracing-subscriber writes it, with the trace
//! and span ids of the span it was written in when spans are exported, so that an operator can go
//! from a line to its trace; and, in JSON, the credentials of any URL hidden as the text
//! format's fields hide them (`fields.rs`).

use std::fmt;

use opentelemetry::trace::TraceContextExt as _;
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::{Format, Full, Json, Writer};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

use super::fields::redacted;

/// The formatter `F` with the ids of the current trace added (when `ids`).
pub(super) struct Traced<F> {
    inner: F,
    ids: bool,
    json: bool,
}

impl Traced<Format<Full>> {
    /// Text lines, as before, with ` trace_id=… span_id=…` at the end inside a traced span.
    pub(super) fn text(ids: bool) -> Self {
        Self {
            inner: Format::default(),
            ids,
            json: false,
        }
    }
}

impl Traced<Format<Json>> {
    /// One JSON object a line: `timestamp`, `level`, `target`, `fields` (the message among
    /// them), the current `span`, and `trace_id` and `span_id` inside a traced span.
    pub(super) fn json(ids: bool) -> Self {
        Self {
            inner: Format::default()
                .json()
                .with_current_span(true)
                .with_span_list(false),
            ids,
            json: true,
        }
    }
}

/// The trace and span ids of the context current on this thread (the OpenTelemetry layer makes
/// an entered span's context current), when it is a valid one.
fn current_ids() -> Option<(String, String)> {
    let context = opentelemetry::Context::current();
    let span = context.span();
    let span = span.span_context();
    span.is_valid()
        .then(|| (span.trace_id().to_string(), span.span_id().to_string()))
}

impl<S, N, F> FormatEvent<S, N> for Traced<F>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
    F: FormatEvent<S, N>,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let ids = if self.ids { current_ids() } else { None };
        if !self.json && ids.is_none() {
            return self.inner.format_event(ctx, writer, event);
        }
        let mut line = String::new();
        self.inner
            .format_event(ctx, Writer::new(&mut line), event)?;
        let line = match self.json {
            // Text fields were redacted as they were formatted.
            false => std::borrow::Cow::Borrowed(line.as_str()),
            true => redacted(&line),
        };
        let body = line.trim_end_matches('\n');
        match (ids, self.json) {
            (None, _) => writer.write_str(body)?,
            (Some((trace, span)), false) => {
                write!(writer, "{body} trace_id={trace} span_id={span}")?
            }
            (Some((trace, span)), true) => match body.strip_prefix('{') {
                Some(rest) => write!(
                    writer,
                    "{{\"trace_id\":\"{trace}\",\"span_id\":\"{span}\",{rest}"
                )?,
                None => writer.write_str(body)?,
            },
        }
        writer.write_char('\n')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines `log` writes through `layer`'s formatter, as JSON.
    fn json_lines(log: impl FnOnce()) -> Vec<serde_json::Value> {
        let (sink, rx) = crate::telemetry::sink::lines();
        let subscriber = tracing_subscriber::fmt()
            .json()
            .event_format(Traced::json(true))
            .with_writer(sink)
            .finish();
        tracing::subscriber::with_default(subscriber, log);
        rx.try_iter()
            .map(|line| serde_json::from_str(&line).expect("one JSON object a line"))
            .collect()
    }

    #[test]
    fn json_lines_hold_level_target_message_fields_and_span_without_credentials() {
        let lines = json_lines(|| {
            let span = tracing::info_span!("request", route = "/v1/tools/call");
            let _in = span.enter();
            tracing::warn!(
                status = 502,
                url = "http://h/mcp?api_key=SECRET1",
                "upstream failed"
            );
        });
        assert_eq!(lines.len(), 1, "{lines:?}");
        let line = &lines[0];
        assert_eq!(line["level"], "WARN");
        assert_eq!(line["fields"]["message"], "upstream failed");
        assert_eq!(line["fields"]["status"], 502);
        assert_eq!(line["fields"]["url"], "http://h/mcp?api_key=***");
        assert_eq!(line["span"]["name"], "request");
        assert_eq!(line["span"]["route"], "/v1/tools/call");
        assert!(line.get("trace_id").is_none(), "no trace: {line}");
        assert!(!line.to_string().contains("SECRET1"));
    }

    #[test]
    fn a_line_inside_a_trace_carries_its_ids() {
        use opentelemetry::trace::{SpanContext, TraceFlags, TraceState};
        let trace =
            opentelemetry::trace::TraceId::from_hex("4bf92f3577b34da6a3ce929d0e0e4736").unwrap();
        let span = opentelemetry::trace::SpanId::from_hex("00f067aa0ba902b7").unwrap();
        let remote = SpanContext::new(
            trace,
            span,
            TraceFlags::SAMPLED,
            true,
            TraceState::default(),
        );
        let lines = json_lines(|| {
            let _attached = opentelemetry::Context::new()
                .with_remote_span_context(remote)
                .attach();
            tracing::info!("inside");
        });
        assert_eq!(lines[0]["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(lines[0]["span_id"], "00f067aa0ba902b7");
        assert_eq!(lines[0]["fields"]["message"], "inside");
    }
}
