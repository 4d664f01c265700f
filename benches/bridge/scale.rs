//! Cost at scale (`scale`): one event fanned out to N agents' streams, K Streamable HTTP servers
//! registered, listed and restored, and the CPU of one call against an upstream in its own
//! process, each size set against the one before it. Full sizes: N = 100, 1,000, 10,000 and
//! K = 10, 100, 1,000; `BENCH_SCALE_STREAMS` and `BENCH_SCALE_SERVERS` (comma-separated) pick
//! others. Everything is timed from outside the bridge: its CPU time and RSS from `/proc`, an
//! event's arrival by the kernel's receive timestamp (streams.rs), so the harness's own work
//! neither adds to the bridge's figures nor hides them.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use futures::StreamExt;
use serde_json::json;

use crate::Bench;
use crate::calls::Route;
use crate::catalogue::{tools_page, tools_walk};
use crate::clients::McpSession;
use crate::measure::{cpu_of, listed, ms, percentile, rss_mib};
use crate::peers::{FanoutFloor, Proxy, everything_http, http_echo_server, http_echo_server_tools};
use crate::raw::Raw;
use crate::report::Report;
use crate::service::Bridge;
use crate::streams::Streams;

/// Tools each server of the servers part lists: 1,000 servers make a catalogue of 17,000.
const TOOLS_PER_SERVER: usize = 16;
/// Registrations in flight at once.
const REGISTERING: usize = 16;
/// What every stream must see once per event.
const MARKER: &[u8] = b"tools/list_changed";

/// The sizes in `variable`, else `default`.
fn sizes(variable: &str, default: &[usize]) -> Vec<usize> {
    match std::env::var(variable) {
        Ok(list) if !list.trim().is_empty() => list
            .split(',')
            .map(|n| n.trim().parse().expect("a size"))
            .collect(),
        _ => default.to_vec(),
    }
}

/// `value`, and its ratio to the value at the size before (`None` for the first size).
fn with_ratio(value: f64, before: Option<f64>, digits: usize) -> String {
    match before.filter(|b| *b > 0.0) {
        Some(before) => format!("{value:.digits$} ({:.2}x)", value / before),
        None => format!("{value:.digits$}"),
    }
}

/// What one size of the fan-out measured.
struct Fanout {
    n: usize,
    p50: f64,
    p99: f64,
    last: f64,
    rss: f64,
    kib_per_stream: f64,
    cpu_per_stream_event: f64,
    opened: f64,
    /// The same events to as many streams of the fan-out floor (`bridge --fanout-floor`).
    floor: Spread,
}

/// What one fan-out measured, from outside the process that fanned out.
struct Spread {
    /// From each event's send to its kernel receive timestamp on each stream, sorted.
    latencies: Vec<Duration>,
    /// The process's CPU per stream per event, µs.
    cpu_per_stream_event: f64,
    /// The process's RSS once the streams were open, MiB.
    rss: f64,
    /// Seconds to open every stream.
    opened: f64,
}

/// What one size of the servers part measured.
struct Servers {
    k: usize,
    per_sec: f64,
    ready: f64,
    kib_per_server: f64,
    page: f64,
    walk: f64,
    restart: f64,
    slow_acquires: usize,
    restart_rss: f64,
}

impl Bench {
    pub(crate) async fn scale(&self, report: &mut Report) {
        report.line("## Cost at scale\n");
        let part = |key: &str| listed("BENCH_ONLY", "scale") || listed("BENCH_ONLY", key);
        if part("scale-streams") {
            self.scale_streams(report).await;
        }
        if part("scale-servers") {
            self.scale_servers(report).await;
        }
        if part("scale-calls") {
            self.call_cpu(report).await;
        }
    }

    async fn scale_streams(&self, report: &mut Report) {
        let mut fanouts: Vec<Fanout> = Vec::new();
        for n in sizes("BENCH_SCALE_STREAMS", self.sizes.scale_streams) {
            fanouts.push(self.fanout_to(n).await);
        }
        report.line(&format!(
            "One `notifications/tools/list_changed` from the upstream, re-listed by the bridge and \
             pushed to N agents' `GET /v1/events` streams, {} times a size. Latency: from the \
             upstream's send to the kernel's receive timestamp of the event on each stream \
             (every stream's every event). CPU: the bridge's, per stream per event. Ratios \
             (in brackets) are against the size before. The floor: the same streams and events \
             on the fan-out floor (`bridge --fanout-floor`: hyper streams fed by one broadcast \
             channel, a frame built once for all), timed the same way from its `POST`.\n",
            self.sizes.scale_events
        ));
        report.line(
            "| streams | p50 ms | p99 ms | last ms | bridge CPU µs per stream per event | RSS MiB \
             | KiB per stream | opened in s | floor: p50, p99 ms | floor: CPU µs |",
        );
        report.line("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        let mut before: Option<&Fanout> = None;
        for f in &fanouts {
            report.line(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {:.1} | {:.2}, {:.2} | {:.1} |",
                f.n,
                with_ratio(f.p50, before.map(|b| b.p50), 2),
                with_ratio(f.p99, before.map(|b| b.p99), 2),
                with_ratio(f.last, before.map(|b| b.last), 2),
                with_ratio(
                    f.cpu_per_stream_event,
                    before.map(|b| b.cpu_per_stream_event),
                    1
                ),
                with_ratio(f.rss, before.map(|b| b.rss), 1),
                with_ratio(f.kib_per_stream, before.map(|b| b.kib_per_stream), 1),
                f.opened,
                ms(percentile(&f.floor.latencies, 0.5)),
                ms(percentile(&f.floor.latencies, 0.99)),
                f.floor.cpu_per_stream_event,
            ));
            before = Some(f);
        }
        report.line("");
    }

    async fn scale_servers(&self, report: &mut Report) {
        let mut servers: Vec<Servers> = Vec::new();
        for k in sizes("BENCH_SCALE_SERVERS", self.sizes.scale_servers) {
            servers.push(self.servers_of(k).await);
        }
        report.line(&format!(
            "K Streamable HTTP servers, all on one in-process Rust upstream, {} tools each, \
             registered over REST {REGISTERING} at a time; ready = every server `ready` in \
             `GET /v1/servers`. RSS per server: once idle, against the bridge before them. The \
             catalogue: `GET /v1/tools`, its first page and the whole walk, p50. Restart: \
             SIGTERM, then a start on the same data dir until every server is ready, and the \
             store pool's slow-acquire warnings it logged.\n",
            TOOLS_PER_SERVER + 1
        ));
        report.line(
            "| servers | registered a s | all ready after s | KiB per idle server | first page ms \
             | walk ms | restart: ready after s | slow acquires | RSS after restart MiB |",
        );
        report.line("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        let mut before: Option<&Servers> = None;
        for s in &servers {
            report.line(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                s.k,
                with_ratio(s.per_sec, before.map(|b| b.per_sec), 0),
                with_ratio(s.ready, before.map(|b| b.ready), 2),
                with_ratio(s.kib_per_server, before.map(|b| b.kib_per_server), 0),
                with_ratio(s.page, before.map(|b| b.page), 2),
                with_ratio(s.walk, before.map(|b| b.walk), 1),
                with_ratio(s.restart, before.map(|b| b.restart), 2),
                s.slow_acquires,
                with_ratio(s.restart_rss, before.map(|b| b.restart_rss), 1),
            ));
            before = Some(s);
        }
        report.line("");
    }

    async fn fanout_to(&self, n: usize) -> Fanout {
        let dir = tempfile::tempdir().unwrap();
        let cap = (n + 1000).to_string();
        let env = [
            ("MCP_BRIDGE_MAX_CONNECTIONS", cap.as_str()),
            // Quiet streams: nothing but the events measured.
            ("MCP_BRIDGE_KEEPALIVE_SECS", "3600"),
        ];
        let bridge = Bridge::start_with(dir.path(), &self.auth, &env).await;
        let (server, url) = http_echo_server().await;
        bridge
            .register(json!({ "server_id": "rs", "transport": "http", "url": url }))
            .await;
        let rss_before = bridge.rss_mib();
        let tokens: Vec<String> = (0..n)
            .map(|i| self.token(&format!("scale-agent-{i}")))
            .collect();
        let addr = bridge.base.trim_start_matches("http://").parse().unwrap();
        let measured = self
            .spread(addr, tokens.clone(), bridge.pid(), || {
                server.notify_tools_changed()
            })
            .await;
        bridge.stop().await;
        let floor = FanoutFloor::start().await;
        let client = reqwest::Client::new();
        let floor_spread = self
            .spread(floor.addr, tokens, floor.pid(), || floor.publish(&client))
            .await;
        let latencies = &measured.latencies;
        Fanout {
            n,
            p50: ms(percentile(latencies, 0.5)),
            p99: ms(percentile(latencies, 0.99)),
            last: ms(*latencies.last().unwrap()),
            rss: measured.rss,
            kib_per_stream: (measured.rss - rss_before) * 1024.0 / n as f64,
            cpu_per_stream_event: measured.cpu_per_stream_event,
            opened: measured.opened,
            floor: floor_spread,
        }
    }

    /// Opens a stream per token on `addr` (the process `pid`), then sends `push` events one at a
    /// time, each read by every stream after the fact.
    async fn spread<F: Future<Output = ()>>(
        &self,
        addr: std::net::SocketAddr,
        tokens: Vec<String>,
        pid: u32,
        push: impl Fn() -> F,
    ) -> Spread {
        let opening = Instant::now();
        let streams = Streams::open(addr, tokens).await;
        let opened = opening.elapsed().as_secs_f64();
        tokio::time::sleep(Duration::from_millis(500)).await;
        let rss = rss_mib(pid);
        let (mut latencies, mut cpu) = (Vec::new(), Duration::ZERO);
        for _ in 0..self.sizes.scale_events {
            streams.drain();
            let before = cpu_of(pid);
            let pushed = SystemTime::now();
            push().await;
            let deadline = Instant::now() + Duration::from_secs(60);
            // The CPU is read once the process is done (idle for a while), before the harness
            // reads a byte.
            quiet(pid, Duration::from_millis(200)).await;
            let spent = cpu_of(pid) - before;
            cpu += spent.user + spent.system;
            let arrivals = streams.arrivals(MARKER, deadline).await;
            assert_eq!(
                arrivals.len(),
                streams.len(),
                "every stream gets every event within 60 s"
            );
            latencies.extend(
                arrivals
                    .iter()
                    .map(|at| at.duration_since(pushed).unwrap_or_default()),
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        latencies.sort_unstable();
        let events = (streams.len() * self.sizes.scale_events) as f64;
        Spread {
            latencies,
            cpu_per_stream_event: cpu.as_secs_f64() * 1e6 / events,
            rss,
            opened,
        }
    }

    async fn servers_of(&self, k: usize) -> Servers {
        let dir = tempfile::tempdir().unwrap();
        let bridge = Bridge::start(dir.path(), &self.auth).await;
        let (_server, url) = http_echo_server_tools(TOOLS_PER_SERVER).await;
        let rss_before = bridge.rss_mib();
        let started = Instant::now();
        futures::stream::iter(0..k)
            .map(|i| {
                bridge.register(json!({
                    "server_id": format!("s{i:04}"), "transport": "http", "url": url,
                }))
            })
            .buffer_unordered(REGISTERING)
            .collect::<Vec<()>>()
            .await;
        let per_sec = k as f64 / started.elapsed().as_secs_f64();
        let ready = all_ready(&bridge, k, started).await;
        tokio::time::sleep(Duration::from_secs(1)).await;
        let kib_per_server = (bridge.rss_mib() - rss_before) * 1024.0 / k as f64;
        let (page, walk) = self.catalogue_times(&bridge, k).await;
        bridge.stop().await;
        let started = Instant::now();
        let bridge = Bridge::start(dir.path(), &self.auth).await;
        let restart = all_ready(&bridge, k, started).await;
        let restart_rss = bridge.rss_mib();
        bridge.stop().await;
        let log = std::fs::read_to_string(dir.path().join("bridge.log")).unwrap_or_default();
        Servers {
            k,
            per_sec,
            ready,
            kib_per_server,
            page,
            walk,
            restart,
            slow_acquires: log.matches("slow threshold").count(),
            restart_rss,
        }
    }

    /// The first page of `GET /v1/tools` and the whole walk, p50 ms, checked to hold every tool.
    async fn catalogue_times(&self, bridge: &Bridge, k: usize) -> (f64, f64) {
        let agent = self.token("scale-agent");
        let samples = self.sizes.list_samples.min(100);
        let (mut pages, mut walks) = (Vec::new(), Vec::new());
        for i in 0..samples {
            let sent = Instant::now();
            tools_page(bridge, &agent, String::new()).await;
            pages.push(sent.elapsed());
            if i % 10 == 0 {
                let sent = Instant::now();
                let (total, _) = tools_walk(bridge, &agent).await;
                walks.push(sent.elapsed());
                assert_eq!(
                    total,
                    k * (TOOLS_PER_SERVER + 1),
                    "the walk lists every tool"
                );
            }
        }
        pages.sort_unstable();
        walks.sort_unstable();
        (ms(percentile(&pages, 0.5)), ms(percentile(&walks, 0.5)))
    }

    /// The bridge's CPU per call against server-everything in its own process and against the
    /// in-process upstream, REST and `/mcp`, by the raw client (which costs the cores little).
    async fn call_cpu(&self, report: &mut Report) {
        let dir = tempfile::tempdir().unwrap();
        let bridge = Bridge::start(dir.path(), &self.auth).await;
        let (_server, rust_url) = http_echo_server().await;
        let mut upstreams = vec![("in-process Rust", "rs", rust_url, None)];
        if let Some((peer, url)) = everything_http().await {
            upstreams.push(("server-everything", "ev", url, Some(peer)));
        }
        let agent = self.token("scale-caller");
        let mcp_url = format!("{}/mcp", bridge.base);
        let client = reqwest::Client::new();
        let session = McpSession::open(&client, &mcp_url, Some(&agent)).await;
        report.line(
            "The bridge's CPU per `echo` call (user and system, from `/proc`), REST and `/mcp`, by \
             the raw client (kept-alive connections, nothing parsed), against server-everything \
             over Streamable HTTP (a Node.js process of its own) and against the in-process Rust \
             upstream; c workers in a closed loop, the routes taking turns. The floor: the bare \
             hyper proxy (`bridge --proxy`: each request forwarded on a kept-alive connection, \
             the answer streamed back unread), its own CPU, the least a proxy costs here.\n",
        );
        report.line(
            "| upstream | route | c | calls/s | p50 ms | CPU µs a call (kernel) | over the floor |",
        );
        report.line("|---|---|---:|---:|---:|---:|---:|");
        for (label, server_id, url, _peer) in &upstreams {
            bridge
                .register(json!({ "server_id": server_id, "transport": "http", "url": url }))
                .await;
            let name = format!("{server_id}__echo");
            let proxy = Proxy::start(url).await;
            let upstream_session = McpSession::open(&client, url, None).await;
            let routes = [
                (
                    Route::Proxy(Arc::new(Raw::mcp(
                        &proxy.url,
                        None,
                        &upstream_session,
                        "echo",
                    ))),
                    proxy.pid(),
                ),
                (
                    Route::RestRaw(Arc::new(Raw::rest(&bridge.base, &agent, &name))),
                    bridge.pid(),
                ),
                (
                    Route::McpRaw(Arc::new(Raw::mcp(&mcp_url, Some(&agent), &session, &name))),
                    bridge.pid(),
                ),
            ];
            for &c in self.sizes.concurrency {
                let pairs: Vec<_> = routes.iter().map(|(r, pid)| (r, *pid)).collect();
                let all = self.in_turns(c, &pairs).await;
                let floor = all[0].bridge_cpu.as_secs_f64();
                for (row, ((route, _), stats)) in routes.iter().zip(&all).enumerate() {
                    self.check(&format!("{label}, {}, c={c}", route.name()), stats);
                    let cpu = stats.bridge_cpu.as_secs_f64();
                    let over = match row {
                        0 => String::new(),
                        _ => format!("{:.2}x", cpu / floor),
                    };
                    report.line(&format!(
                        "| {label} | {} | {c} | {:.0} | {:.3} | {:.0} ({:.0}) | {over} |",
                        route.name(),
                        stats.per_sec,
                        ms(stats.p50),
                        cpu * 1e6,
                        stats.bridge_system.as_secs_f64() * 1e6,
                    ));
                }
            }
        }
        report.line("");
        bridge.stop().await;
    }
}

/// Waits until every one of `k` servers is `ready`: the time since `since`, in s.
async fn all_ready(bridge: &Bridge, k: usize, since: Instant) -> f64 {
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let servers = bridge.get("/v1/servers").await;
        let ready = servers["servers"]
            .as_array()
            .map_or(0, |s| s.iter().filter(|s| s["status"] == "ready").count());
        if ready == k {
            return since.elapsed().as_secs_f64();
        }
        assert!(
            Instant::now() < deadline,
            "{ready} of {k} servers ready after 300 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until the process `pid` has used no CPU for `still` (CPU time is counted in ticks of
/// 10 ms, so `still` should be several of them).
async fn quiet(pid: u32, still: Duration) {
    let mut last = cpu_of(pid);
    let mut since = Instant::now();
    while since.elapsed() < still {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let now = cpu_of(pid);
        if now != last {
            (last, since) = (now, Instant::now());
        }
    }
}
