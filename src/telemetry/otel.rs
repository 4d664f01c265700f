//! The OpenTelemetry SDK, set up from the standard environment variables: spans exported over
//! OTLP/HTTP in protobuf by the SDK's batch processor, on a thread of its own.
//!
//! Export is on when `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT` is
//! set, or `OTEL_TRACES_EXPORTER=otlp` asks for the SDK's default endpoint; off with
//! `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`. The SDK itself reads the rest: the
//! sampler (`OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG`), the resource
//! (`OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`), the exporter's headers and timeout
//! (`OTEL_EXPORTER_OTLP_HEADERS`, `…_TIMEOUT`) and the batches (`OTEL_BSP_*`).

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing::Subscriber;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::registry::LookupSpan;

use super::SPANS;

/// The variables that turn export on, the signal's own first.
const ENDPOINTS: [&str; 2] = [
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
];

fn var(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|value| value.trim().to_owned())
        .filter(|value| !value.is_empty())
}

/// Whether the environment asks for export, or an error when it asks
/// for what this build cannot do.
pub(super) fn wanted(var: impl Fn(&str) -> Option<String>) -> Result<bool, String> {
    if var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        return Ok(false);
    }
    let exporter = var("OTEL_TRACES_EXPORTER").map(|v| v.to_ascii_lowercase());
    match exporter.as_deref() {
        Some("none") => return Ok(false),
        None | Some("otlp") => {}
        Some(other) => {
            return Err(format!(
                "OTEL_TRACES_EXPORTER={other}: this build exports traces over OTLP only (otlp or none)"
            ));
        }
    }
    let endpoint = ENDPOINTS.iter().any(|name| var(name).is_some());
    if !endpoint && exporter.is_none() {
        return Ok(false);
    }
    let protocol =
        var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").or_else(|| var("OTEL_EXPORTER_OTLP_PROTOCOL"));
    match protocol.as_deref() {
        None | Some("http/protobuf") => Ok(true),
        Some(other) => Err(format!(
            "OTEL_EXPORTER_OTLP_PROTOCOL={other}: this build exports traces over http/protobuf only; \
             point OTEL_EXPORTER_OTLP_ENDPOINT at the collector's OTLP/HTTP port (4318 by default)"
        )),
    }
}

/// The tracer provider the environment asks for, or none.
pub(super) fn from_env() -> Result<Option<SdkTracerProvider>, String> {
    if !wanted(var)? {
        return Ok(None);
    }
    // The exporter's reqwest client needs the process's rustls provider (the start installs the
    // same one later for the upstream clients).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .build()
        .map_err(|e| format!("cannot export traces: {e}"))?;
    let resource = Resource::builder();
    let named = var("OTEL_SERVICE_NAME").is_some()
        || var("OTEL_RESOURCE_ATTRIBUTES").is_some_and(|a| a.contains("service.name="));
    let resource = match named {
        true => resource,
        false => resource.with_service_name("mcp-bridge"),
    }
    .with_attribute(opentelemetry::KeyValue::new(
        "service.version",
        env!("CARGO_PKG_VERSION"),
    ))
    .build();
    Ok(Some(
        SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource)
            .build(),
    ))
}

/// The layer that turns the spans of [`SPANS`] into OpenTelemetry spans, and warnings and errors
/// logged inside them into their events.
pub(super) fn layer<S>(provider: &SdkTracerProvider) -> impl Layer<S> + Send + Sync + 'static
where
    S: Subscriber + for<'a> LookupSpan<'a> + Send + Sync,
{
    let tracer = provider.tracer("mcp-bridge");
    let traced = Targets::new()
        .with_target(SPANS, LevelFilter::TRACE)
        .with_target("mcp_bridge", LevelFilter::WARN);
    tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_location(false)
        .with_target(false)
        .with_threads(false)
        .with_tracked_inactivity(false)
        .with_filter(traced)
}

/// Where spans go, for the start's log line: the endpoint without its credentials.
pub(super) fn endpoint_shown() -> String {
    let endpoint = ENDPOINTS
        .iter()
        .find_map(|name| var(name))
        .unwrap_or_else(|| "http://localhost:4318 (the default)".to_owned());
    crate::a2e::redact_text(&endpoint, &[])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn export_is_off_unless_an_endpoint_or_the_exporter_asks() {
        assert_eq!(wanted(env(&[])), Ok(false));
        let at = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318");
        assert_eq!(wanted(env(&[at])), Ok(true));
        let traces = (
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "http://c:4318/v1/traces",
        );
        assert_eq!(wanted(env(&[traces])), Ok(true));
        assert_eq!(wanted(env(&[("OTEL_TRACES_EXPORTER", "otlp")])), Ok(true));
        assert_eq!(
            wanted(env(&[at, ("OTEL_TRACES_EXPORTER", "none")])),
            Ok(false)
        );
        assert_eq!(wanted(env(&[at, ("OTEL_SDK_DISABLED", "TRUE")])), Ok(false));
        assert_eq!(
            wanted(env(&[at, ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")])),
            Ok(true)
        );
    }

    #[test]
    fn what_this_build_cannot_export_is_refused_with_the_way_out() {
        let at = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4317");
        let grpc = wanted(env(&[at, ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")])).unwrap_err();
        assert!(
            grpc.contains("http/protobuf") && grpc.contains("4318"),
            "{grpc}"
        );
        let zipkin = wanted(env(&[("OTEL_TRACES_EXPORTER", "zipkin")])).unwrap_err();
        assert!(zipkin.contains("OTLP only"), "{zipkin}");
    }
}
