//! What tracing costs a call (`traces`): `echo` over REST (the raw client) to the in-process Rust
//! upstream through bridges that differ only in their traces: export off; export on with every
//! trace sampled and with 1 % of them (`traceidratio`), the spans sent over OTLP/HTTP to a sink in
//! this process that reads each batch whole and answers it as a collector does, without decoding;
//! and, given `BENCH_TRACES_BASELINE=path`, the build at that path (one from before tracing) with
//! nothing set. The bridges run side by side and take turns, so their figures share the machine's
//! noise.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::json;

use crate::Bench;
use crate::calls::Route;
use crate::measure::ms;
use crate::peers::http_echo_server;
use crate::raw::Raw;
use crate::report::Report;
use crate::service::Bridge;

/// What the sink has been sent: export requests and bytes.
#[derive(Default)]
struct Received {
    requests: AtomicU64,
    bytes: AtomicU64,
}

/// An OTLP/HTTP endpoint on a free port of this process that takes every batch (an empty
/// `ExportTraceServiceResponse` is an empty protobuf body): its base URL, and what it received.
async fn otlp_sink() -> (String, Arc<Received>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let received = Arc::new(Received::default());
    let counted = received.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |body: axum::body::Bytes| async move {
            counted.requests.fetch_add(1, Ordering::Relaxed);
            counted
                .bytes
                .fetch_add(body.len() as u64, Ordering::Relaxed);
            (
                [("content-type", "application/x-protobuf")],
                Vec::<u8>::new(),
            )
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://127.0.0.1:{port}"), received)
}

const BEFORE: &str = "before tracing";
const OFF: &str = "export off";

/// One bridge of the comparison: its name in the report, its build, its variables.
struct Variant<'a> {
    name: &'static str,
    binary: String,
    env: Vec<(&'a str, &'a str)>,
}

impl<'a> Variant<'a> {
    fn new(name: &'static str, binary: String, env: Vec<(&'a str, &'a str)>) -> Self {
        Variant { name, binary, env }
    }
}

impl Bench {
    pub(crate) async fn traces(&self, report: &mut Report) {
        let (sink, received) = otlp_sink().await;
        let (_server, url) = http_echo_server().await;
        let exporting = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", sink.as_str()),
            ("OTEL_SERVICE_NAME", "bench"),
        ];
        let sampled = |sampler: &'static str, arg: &'static str| {
            let mut env = exporting.to_vec();
            env.extend([
                ("OTEL_TRACES_SAMPLER", sampler),
                ("OTEL_TRACES_SAMPLER_ARG", arg),
            ]);
            env
        };
        let this = env!("CARGO_BIN_EXE_mcp-bridge").to_owned();
        let mut variants = Vec::new();
        if let Ok(baseline) = std::env::var("BENCH_TRACES_BASELINE") {
            variants.push(Variant::new(BEFORE, baseline, Vec::new()));
        }
        variants.push(Variant::new(OFF, this.clone(), Vec::new()));
        let all = sampled("always_on", "1");
        variants.push(Variant::new("export on, 100 %", this.clone(), all));
        let some = sampled("traceidratio", "0.01");
        variants.push(Variant::new("export on, 1 %", this, some));
        let agent = self.token("bench-traces");
        let mut dirs = Vec::new();
        let mut bridges = Vec::new();
        let mut routes = Vec::new();
        for variant in &variants {
            let dir = tempfile::tempdir().unwrap();
            let bridge =
                Bridge::start_binary(&variant.binary, dir.path(), &self.auth, &variant.env).await;
            bridge
                .register(json!({ "server_id": "rs", "transport": "http", "url": url }))
                .await;
            routes.push(Route::RestRaw(Arc::new(Raw::rest(
                &bridge.base,
                &agent,
                "rs__echo",
            ))));
            bridges.push(bridge);
            dirs.push(dir);
        }
        report.line("## Traces\n");
        report.line(&format!(
            "`echo` over REST (the raw client) to the in-process Rust upstream through bridges \
             side by side: export off, export on to an OTLP/HTTP sink in the harness's process \
             (every trace sampled, then 1 %){}. c workers in a closed loop for {:?} per row in \
             {} rounds where the bridges take turns; the ratio is calls/s against export off.\n",
            match variants[0].name {
                BEFORE => ", and the build of BENCH_TRACES_BASELINE",
                _ => "",
            },
            self.sizes.run,
            self.sizes.rounds
        ));
        report.line("| bridge | c | calls/s | p50 ms | p99 ms | bridge CPU µs | calls/s ratio |");
        report.line("|---|---:|---:|---:|---:|---:|---:|");
        let off = variants.iter().position(|variant| variant.name == OFF);
        for &c in self.sizes.concurrency {
            let turns: Vec<_> = routes.iter().zip(bridges.iter().map(Bridge::pid)).collect();
            let all = self.in_turns(c, &turns).await;
            let base = off.map_or(1.0, |at| all[at].per_sec);
            for (Variant { name, .. }, stats) in variants.iter().zip(&all) {
                self.check(&format!("traces, {name}, c={c}"), stats);
                report.line(&format!(
                    "| {name} | {c} | {:.0} | {:.3} | {:.3} | {:.0} | {:.3} |",
                    stats.per_sec,
                    ms(stats.p50),
                    ms(stats.p99),
                    stats.bridge_cpu.as_secs_f64() * 1e6,
                    stats.per_sec / base
                ));
            }
        }
        for bridge in bridges {
            bridge.stop().await;
        }
        report.line(&format!(
            "\nThe sink took {} export requests, {:.1} MiB of spans.\n",
            received.requests.load(Ordering::Relaxed),
            received.bytes.load(Ordering::Relaxed) as f64 / (1024.0 * 1024.0)
        ));
    }
}
