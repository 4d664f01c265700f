//! Logs and traces. [`init`] installs the tracing subscriber: a filter from `MCP_BRIDGE_LOG` (or
//! `RUST_LOG`-style directives), lines on stderr, as text or one JSON object a line
//! (`MCP_BRIDGE_LOG_FORMAT`), with the credentials of any URL hidden (`fields.rs`) and, inside a
//! traced span, its `trace_id` and `span_id` (`lines.rs`); and, when OTLP export is configured by
//! the standard `OTEL_*` variables (`otel.rs`), an OpenTelemetry layer that exports the spans of
//! target [`SPANS`].
//!
//! The spans worth a trace are declared with `target: SPANS` wherever they happen. The text log
//! leaves that target out, and without export nothing else takes it, so each of those spans is
//! a callsite that is never enabled: off, tracing costs a call what it did before. W3C trace
//! context (`traceparent`, `tracestate`, `baggage`) is read from callers and passed on to every
//! upstream, A2A agent, replica and event by the functions of `context.rs`, which do nothing when
//! export is off. A number goes into a span field as an `i64`: the OpenTelemetry layer exports
//! the other integer types as text.

mod context;
mod fields;
mod lines;
mod otel;

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};

use tracing::Subscriber;
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer};

pub use crate::config::LogFormat;
pub use context::{
    Carrier, continue_from, continue_from_carrier, continue_from_meta, current, failed, inject,
    inject_meta, link_to,
};

/// The target of the spans that make a trace (and of the span events only a trace shows).
pub const SPANS: &str = "mcp_bridge::otel";

/// Whether spans are exported: set once by [`init`].
static EXPORTING: AtomicBool = AtomicBool::new(false);

/// Whether spans are exported (the context functions do nothing when they are not).
pub fn exporting() -> bool {
    EXPORTING.load(Ordering::Relaxed)
}

/// What keeps the exporter running; dropped (or [`Telemetry::shutdown`]) at the end, it sends
/// the spans still queued.
#[must_use = "the exporter stops when this is dropped"]
pub struct Telemetry {
    provider: Option<opentelemetry_sdk::trace::SdkTracerProvider>,
}

impl Telemetry {
    /// Sends what is queued and stops the exporter (at most a few seconds).
    pub fn shutdown(mut self) {
        if let Some(provider) = self.provider.take()
            && let Err(error) = provider.shutdown()
        {
            eprintln!("mcp-bridge: the last spans were not exported: {error}");
        }
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Some(provider) = self.provider.take() {
            let _ = provider.shutdown();
        }
    }
}

/// Installs the global subscriber, exporting spans when the environment says so. A second call
/// (as in tests) installs nothing and exports nothing. An export that is asked for but cannot
/// be made (an unsupported protocol, say) is an error: the start should stop and say why.
pub fn init(filter: &str, format: LogFormat) -> Result<Telemetry, String> {
    let filter = EnvFilter::try_new(directives(filter)).unwrap_or_else(|_| EnvFilter::new("info"));
    let provider = otel::from_env()?;
    let ids = provider.is_some();
    let installed = match &provider {
        // The log's filter on the log alone; the exporter takes the spans of SPANS and warnings.
        Some(provider) => tracing_subscriber::registry()
            .with(lines(format, ids).with_filter(filter))
            .with(otel::layer(provider))
            .try_init(),
        None => tracing_subscriber::registry()
            .with(filter)
            .with(lines(format, ids))
            .try_init(),
    };
    if installed.is_err() {
        if let Some(provider) = provider {
            let _ = provider.shutdown();
        }
        return Ok(Telemetry { provider: None });
    }
    if ids {
        EXPORTING.store(true, Ordering::Relaxed);
        tracing::info!(
            endpoint = %otel::endpoint_shown(),
            "exporting traces over OTLP/HTTP"
        );
    }
    Ok(Telemetry { provider })
}

/// The layer that writes log lines on stderr.
fn lines<S>(format: LogFormat, ids: bool) -> Box<dyn Layer<S> + Send + Sync>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    match format {
        LogFormat::Text => tracing_subscriber::fmt::layer()
            .fmt_fields(fields::PlainFields)
            .event_format(lines::Traced::text(ids))
            .with_writer(std::io::stderr)
            .with_ansi(std::io::stderr().is_terminal())
            .boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .event_format(lines::Traced::json(ids))
            .with_writer(std::io::stderr)
            .boxed(),
    }
}

/// The filter's directives, with the MCP SDK's own at `warn` unless the filter names it (rmcp
/// logs several `info` lines for each `/mcp` request: a whole service starts and stops for each
/// stateless call, which would drown the gateway's log and cost a few percent of the call), and
/// without the spans of a trace unless it names them.
fn directives(filter: &str) -> String {
    let mut directives = filter.trim().to_owned();
    for (name, added) in [("rmcp", "rmcp=warn"), (SPANS, "mcp_bridge::otel=off")] {
        if !directives.contains(name) {
            if !directives.is_empty() {
                directives.push(',');
            }
            directives.push_str(added);
        }
    }
    directives
}

/// Where the formatting tests of `fields` and `lines` read what a subscriber wrote.
#[cfg(test)]
mod sink {
    use std::sync::mpsc::{Receiver, Sender, channel};

    /// A writer that sends each write on as one string.
    pub(super) struct LineWriter(Sender<String>);

    impl std::io::Write for LineWriter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let _ = self.0.send(String::from_utf8_lossy(buf).into_owned());
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// A writer maker for a test subscriber, and the lines it receives.
    pub(super) fn lines() -> (impl Fn() -> LineWriter + 'static, Receiver<String>) {
        let (tx, rx) = channel();
        (move || LineWriter(tx.clone()), rx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sdk_logs_warnings_and_spans_stay_out_unless_the_filter_names_them() {
        let off = "mcp_bridge::otel=off";
        assert_eq!(directives("info"), format!("info,rmcp=warn,{off}"));
        assert_eq!(
            directives("debug,mcp_bridge=trace"),
            format!("debug,mcp_bridge=trace,rmcp=warn,{off}")
        );
        assert_eq!(directives(""), format!("rmcp=warn,{off}"));
        assert_eq!(
            directives("info,rmcp=debug"),
            format!("info,rmcp=debug,{off}")
        );
        assert_eq!(
            directives("rmcp::service=info"),
            format!("rmcp::service=info,{off}")
        );
        assert_eq!(
            directives("info,mcp_bridge::otel=info"),
            "info,mcp_bridge::otel=info,rmcp=warn"
        );
    }
}
