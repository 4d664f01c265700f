//! Benchmarks of mcp-bridge side by side with a direct MCP client and with mcpo (BENCHMARKS.md).
//!
//! `scripts/bench.sh` (`cargo bench --bench bridge`) runs the full sizes against the release
//! build of the service. Without `--bench`, as `cargo test --all-targets` runs it, it is a smoke
//! run with tiny sizes on the debug build, so the harness cannot rot; it fails on any error but
//! asserts no timing. `BENCH_ONLY=idle,calls,keepalive,hooks,traces,instructions,fanout,catalogue,replicas,scale`
//! (or one part of it: `scale-streams`, `scale-servers`, `scale-calls`) picks
//! sections, `BENCH_UPSTREAMS=rs,ev` the upstreams and
//! `BENCH_ROUTES=direct,floor,proxy,rest,rest-raw,mcp,mcp-raw,mcpo` the routes of the tool-call
//! section (`floor`, `proxy`, `rest-raw` and `mcp-raw` are a raw HTTP/1.1 client that parses
//! nothing, to the upstream, to it through a bare hyper proxy, and to the bridge). The
//! `replicas` section runs only when `BENCH_POSTGRES` (a PostgreSQL server's URL, where it
//! creates and drops a database of its own) and `BENCH_NATS` (a NATS server with JetStream) are
//! set. `BENCH_BRIDGE=path` runs that build of the service instead of this one's, so two commits
//! are measured by one harness; `BENCH_FAST_PATHS=off` runs it with `MCP_BRIDGE_FAST_PATHS=off`;
//! `BENCH_TRACES_BASELINE=path` adds that build to the `traces` section.
//!
//! This binary is also the minimal stdio MCP server the catalogue and boot benchmarks register:
//! `bridge --stdio-server N` serves `echo` and N more tools on stdin/stdout; the bare proxy of the
//! `proxy` route: `bridge --proxy URL` forwards every request to URL and prints its port; and the
//! fan-out floor of the `scale` section: `bridge --fanout-floor` serves SSE streams one shared
//! event at a time and prints its port.
//!
//! | module | measures (the `BENCH_ONLY` section) or owns |
//! |---|---|
//! | `idle` | the RSS of a fresh service with no servers (`idle`) |
//! | `calls` | tool calls by route against the two floors (`calls`); calls one after another on |
//! | | one kept-alive connection, Nagle on and off (`keepalive`) |
//! | `hooks` | a call through one allow interceptor against one without (`hooks`) |
//! | `traces` | a call with traces exported (all, 1 %) against export off (`traces`) |
//! | `instructions` | the bridge's instructions per call, under callgrind (`instructions`) |
//! | `events` | one `tools/list_changed` pushed to many `GET /v1/events` streams (`fanout`) |
//! | `catalogue` | `GET /v1/tools` over many stdio servers, RSS, a boot on their data dir |
//! | | (`catalogue`) |
//! | `replicas` | calls forwarded between replicas, fan-out across them, the takeover after |
//! | | `kill -9` (`replicas`) |
//! | `scale` | one event to 100 to 10,000 streams, 10 to 1,000 servers (registered, listed, |
//! | | restored), the CPU of a call against a real upstream (`scale`); BENCHMARKS.md opens with it |
//! | `streams` | event streams read after the fact, timed by the kernel's receive timestamps |
//! | `service` | the service under test: the real binary, started, asked, stopped |
//! | `peers` | the upstreams (the echo server, server-everything), mcpo, the bare proxy, the |
//! | | fan-out floor |
//! | `clients` | rmcp's client, an MCP session opened by hand, a kept-alive client |
//! | `raw` | the raw HTTP/1.1 client of the floor and of the raw routes |
//! | `measure` | load phases, latency statistics, CPU time from `/proc` |
//! | `report` | the report, printed and written to `target/bench/` |
//!
//! One section, quickly: `BENCH_ONLY=calls cargo bench --bench bridge` (full sizes) or
//! `BENCH_ONLY=calls cargo test --bench bridge` (the smoke run).

#[path = "bridge/calls.rs"]
mod calls;
#[path = "bridge/catalogue.rs"]
mod catalogue;
#[path = "bridge/clients.rs"]
mod clients;
#[path = "bridge/events.rs"]
mod events;
#[path = "bridge/hooks.rs"]
mod hooks;
#[path = "bridge/idle.rs"]
mod idle;
#[path = "bridge/instructions.rs"]
mod instructions;
#[path = "bridge/measure.rs"]
mod measure;
#[path = "bridge/peers.rs"]
mod peers;
#[path = "bridge/raw.rs"]
mod raw;
#[path = "bridge/replicas.rs"]
mod replicas;
#[path = "bridge/report.rs"]
mod report;
#[path = "bridge/scale.rs"]
mod scale;
#[path = "bridge/service.rs"]
mod service;
#[path = "bridge/streams.rs"]
mod streams;
#[path = "bridge/traces.rs"]
mod traces;

use std::time::Duration;

use mcp_bridge::config::Config;
use mcp_bridge::http::auth::Auth;

use measure::{Stats, listed};
use peers::{bare_proxy, fanout_floor, stdio_server};
use report::{Report, machine};

const SECRET: &str = "benchmark-secret-benchmark-secret";
const ECHO_ARGS: &str = r#"{"message":"hello from the benchmark"}"#;

/// How much of everything one run does.
struct Sizes {
    warmup: Duration,
    /// Measured time per route, in `rounds` turns.
    run: Duration,
    rounds: u32,
    concurrency: &'static [usize],
    fanout_agents: usize,
    servers: usize,
    tools_per_server: usize,
    list_samples: usize,
    /// Concurrencies of the tool calls through replicas.
    replica_concurrency: &'static [usize],
    /// `kill -9` takeovers measured, and the lease of the replicas.
    takeovers: usize,
    lease_secs: u64,
    /// Event streams and servers of the scale section, and events pushed a size.
    scale_streams: &'static [usize],
    scale_servers: &'static [usize],
    scale_events: usize,
}

const FULL: Sizes = Sizes {
    warmup: Duration::from_secs(1),
    run: Duration::from_secs(6),
    rounds: 6,
    concurrency: &[1, 32],
    fanout_agents: 1000,
    servers: 100,
    tools_per_server: 100,
    list_samples: 300,
    replica_concurrency: &[1, 8],
    takeovers: 10,
    lease_secs: 10,
    scale_streams: &[100, 1000, 10000],
    scale_servers: &[10, 100, 1000],
    scale_events: 10,
};

const SMOKE: Sizes = Sizes {
    warmup: Duration::from_millis(20),
    run: Duration::from_millis(200),
    rounds: 2,
    concurrency: &[1, 4],
    fanout_agents: 8,
    servers: 3,
    tools_per_server: 5,
    list_samples: 3,
    replica_concurrency: &[1, 2],
    takeovers: 1,
    lease_secs: 2,
    scale_streams: &[4, 8],
    scale_servers: &[2, 4],
    scale_events: 2,
};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    if let Some(at) = args.iter().position(|a| a == "--stdio-server") {
        let tools = args.get(at + 1).and_then(|n| n.parse().ok()).unwrap_or(0);
        return runtime.block_on(stdio_server(tools));
    }
    if let Some(at) = args.iter().position(|a| a == "--proxy") {
        let upstream = args.get(at + 1).expect("--proxy URL");
        return runtime.block_on(bare_proxy(upstream));
    }
    if args.iter().any(|a| a == "--fanout-floor") {
        return runtime.block_on(fanout_floor());
    }
    let full = args.iter().any(|a| a == "--bench");
    let wanted = |section: &str| listed("BENCH_ONLY", section);
    let _ = rustls::crypto::ring::default_provider().install_default();
    runtime.block_on(async {
        let bench = Bench::new(if full { FULL } else { SMOKE }, full);
        let mut report = Report::default();
        report.line(&format!(
            "# mcp-bridge benchmarks ({})\n",
            if full {
                "full"
            } else {
                "smoke run, tiny sizes"
            }
        ));
        report.line(&machine());
        if wanted("idle") {
            bench.idle(&mut report).await;
        }
        if wanted("calls") {
            bench.calls(&mut report).await;
        }
        if wanted("keepalive") {
            bench.kept_alive(&mut report).await;
        }
        if wanted("hooks") {
            bench.hooks(&mut report).await;
        }
        if wanted("traces") {
            bench.traces(&mut report).await;
        }
        if wanted("instructions") {
            bench.instructions(&mut report).await;
        }
        if wanted("fanout") {
            bench.fanout(&mut report).await;
        }
        if wanted("catalogue") {
            bench.catalogue_and_boot(&mut report).await;
        }
        if wanted("replicas") {
            bench.replicas(&mut report).await;
        }
        if ["scale", "scale-streams", "scale-servers", "scale-calls"]
            .iter()
            .any(|part| wanted(part))
        {
            bench.scale(&mut report).await;
        }
        report.finish(full);
    });
}

/// The harness: the sizes of this run, and the key that signs its tokens.
struct Bench {
    sizes: Sizes,
    full: bool,
    auth: Auth,
}

impl Bench {
    fn new(sizes: Sizes, full: bool) -> Self {
        let config = Config {
            jwt_secret: Some(SECRET.to_owned().into()),
            ..Config::default()
        };
        let auth = Auth::from_config(&config).expect("an HS256 key");
        Bench { sizes, full, auth }
    }

    fn token(&self, sub: &str) -> String {
        self.auth
            .mint(sub, false, Duration::from_secs(86400))
            .unwrap()
    }

    fn check(&self, what: &str, stats: &Stats) {
        if let Some(error) = &stats.first_error {
            let message = format!(
                "{what}: {} of {} calls failed, first: {error}",
                stats.errors,
                stats.calls + stats.errors
            );
            // A smoke run is a test: any failure fails it. A full run reports it and goes on.
            assert!(self.full, "{message}");
            println!("WARNING {message}");
        }
    }
}
