//! Tool calls: the routes to the echo tool (direct, the raw floor, the bare proxy, the
//! bridge's REST and `/mcp`, mcpo), the tool-call section that sets them side by side, and
//! the kept-alive calls that would show a delayed-ACK stall.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::RoleClient;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use serde_json::{Value, json};

use crate::clients::{McpSession, mcp_client};
use crate::measure::{Stats, Tally, cpu_of, listed, ms, phase};
use crate::peers::{Proxy, everything_http, http_echo_server, http_echo_server_with, mcpo};
use crate::raw::{Raw, RawConn};
use crate::report::Report;
use crate::service::Bridge;
use crate::{Bench, ECHO_ARGS};

/// One way to call the echo tool.
#[derive(Clone)]
pub(crate) enum Route {
    Direct(Arc<RunningService<RoleClient, ()>>),
    Rest {
        client: reqwest::Client,
        url: String,
        token: String,
        body: Arc<Value>,
    },
    Mcp(Arc<RunningService<RoleClient, ()>>, String),
    Mcpo {
        client: reqwest::Client,
        url: String,
    },
    /// The raw client straight to the upstream's MCP endpoint: the floor.
    Floor(Arc<Raw>),
    /// The raw client to the upstream through the bare proxy (`bridge --proxy`).
    Proxy(Arc<Raw>),
    /// The raw client to the bridge's REST and `/mcp`.
    RestRaw(Arc<Raw>),
    McpRaw(Arc<Raw>),
}

/// What one load worker calls with: a route's shared client, or a raw connection of its own.
pub(crate) enum Caller {
    Shared(Route),
    Raw(RawConn),
}

impl Caller {
    pub(crate) async fn call(&mut self) -> Result<(), String> {
        match self {
            Caller::Shared(route) => route.clone().call().await,
            Caller::Raw(conn) => conn.call().await,
        }
    }
}

impl Route {
    /// The name `BENCH_ROUTES` picks it by.
    fn key(&self) -> &'static str {
        match self {
            Route::Direct(_) => "direct",
            Route::Rest { .. } => "rest",
            Route::Mcp(..) => "mcp",
            Route::Mcpo { .. } => "mcpo",
            Route::Floor(_) => "floor",
            Route::Proxy(_) => "proxy",
            Route::RestRaw(_) => "rest-raw",
            Route::McpRaw(_) => "mcp-raw",
        }
    }

    pub(crate) fn name(&self) -> &'static str {
        match self {
            Route::Direct(_) => "direct MCP",
            Route::Rest { .. } => "mcp-bridge REST",
            Route::Mcp(..) => "mcp-bridge /mcp",
            Route::Mcpo { .. } => "mcpo REST",
            Route::Floor(_) => "floor (raw HTTP)",
            Route::Proxy(_) => "bare hyper proxy, raw",
            Route::RestRaw(_) => "mcp-bridge REST, raw",
            Route::McpRaw(_) => "mcp-bridge /mcp, raw",
        }
    }

    /// A load worker's caller: raw routes give each worker a connection of its own.
    pub(crate) fn caller(&self) -> Caller {
        match self {
            Route::Floor(raw) | Route::Proxy(raw) | Route::RestRaw(raw) | Route::McpRaw(raw) => {
                Caller::Raw(RawConn::new(raw.clone()))
            }
            _ => Caller::Shared(self.clone()),
        }
    }

    /// Whether the call goes through a process whose CPU time is measured: the bridge, or the
    /// bare proxy.
    fn measured(&self) -> bool {
        matches!(
            self,
            Route::Rest { .. }
                | Route::Mcp(..)
                | Route::RestRaw(_)
                | Route::McpRaw(_)
                | Route::Proxy(_)
        )
    }

    async fn call(self) -> Result<(), String> {
        let args = || serde_json::from_str(ECHO_ARGS).unwrap_or_default();
        let mcp_call = |client: Arc<RunningService<RoleClient, ()>>, name: String| async move {
            let params = CallToolRequestParams::new(name).with_arguments(args());
            let result = client.call_tool(params).await.map_err(|e| e.to_string())?;
            if result.is_error == Some(true) || result.content.is_empty() {
                return Err(format!("unexpected result: {result:?}"));
            }
            Ok(())
        };
        match self {
            Route::Direct(client) => mcp_call(client, "echo".into()).await,
            Route::Mcp(client, name) => mcp_call(client, name).await,
            Route::Rest {
                client,
                url,
                token,
                body,
            } => {
                let resp = client.post(url).bearer_auth(token).json(&*body).send();
                let resp = resp.await.map_err(|e| e.to_string())?;
                let status = resp.status();
                let bytes = resp.bytes().await.map_err(|e| e.to_string())?;
                let answer: Value = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
                if status != 200 || answer["is_error"] != false {
                    return Err(format!("{status}: {answer}"));
                }
                Ok(())
            }
            Route::Mcpo { client, url } => {
                let resp = client
                    .post(url)
                    .header("content-type", "application/json")
                    .body(ECHO_ARGS)
                    .send();
                let resp = resp.await.map_err(|e| e.to_string())?;
                let status = resp.status();
                let text = resp.text().await.map_err(|e| e.to_string())?;
                if status != 200 {
                    return Err(format!("{status}: {text}"));
                }
                Ok(())
            }
            Route::Floor(raw) | Route::Proxy(raw) | Route::RestRaw(raw) | Route::McpRaw(raw) => {
                RawConn::new(raw).call().await
            }
        }
    }
}

impl Bench {
    /// Calls each route by `c` workers, the routes taking turns for `rounds` rounds after a
    /// warm-up (so their figures share the machine's noise), each route's CPU read off the
    /// process given with it (the bridge it goes through, or the bare proxy): their statistics,
    /// in order.
    pub(crate) async fn in_turns(&self, c: usize, routes: &[(&Route, u32)]) -> Vec<Stats> {
        let mut tallies: Vec<Tally> = routes.iter().map(|_| Tally::default()).collect();
        for round in 0..=self.sizes.rounds {
            for (&(route, pid), tally) in routes.iter().zip(&mut tallies) {
                let caller = || route.caller();
                if round == 0 {
                    phase(c, self.sizes.warmup, caller).await;
                    continue;
                }
                let (started, cpu) = (Instant::now(), cpu_of(pid));
                let measured = phase(c, self.sizes.run / self.sizes.rounds, caller).await;
                tally.add(measured, started.elapsed(), cpu_of(pid) - cpu);
            }
        }
        tallies.into_iter().map(Tally::stats).collect()
    }

    pub(crate) async fn calls(&self, report: &mut Report) {
        let dir = tempfile::tempdir().unwrap();
        let bridge = Bridge::start(dir.path(), &self.auth).await;
        let (_server, rust_url) = http_echo_server().await;
        let mut upstreams = vec![("in-process Rust (Streamable HTTP)", "rs", rust_url, None)];
        if let Some((peer, url)) = everything_http().await {
            upstreams.push(("server-everything (Streamable HTTP)", "ev", url, Some(peer)));
        }
        let agent = self.token("bench-agent");
        let client = reqwest::Client::new();
        let bridge_url = format!("{}/mcp", bridge.base);
        let bridge_mcp = mcp_client(&bridge_url, Some(&agent)).await;
        let bridge_session = McpSession::open(&client, &bridge_url, Some(&agent)).await;
        report.line("## Tool calls\n");
        report.line(&format!(
            "`echo` called by c workers in a closed loop for {:?} per row, in {} rounds where the \
             routes take turns (after {:?} of warm-up each). Two floors: direct MCP is an rmcp \
             client to the upstream, whose own CPU on the shared cores lowers it; floor is a \
             raw HTTP/1.1 client to the upstream's MCP endpoint (a kept-alive connection per \
             worker, a request built once, the answer read by its framing and checked by a \
             byte search, no JSON parsed), so about the upstream's own cost. The raw routes \
             are that client to the bridge; the bare hyper proxy is that client to the \
             upstream through a proxy that forwards each request on a kept-alive connection \
             and streams the answer back unread (`bridge --proxy`), the least a proxy on this \
             stack costs. ratio = throughput against a floor at the same concurrency; \
             overhead = p50 minus the floor's p50; bridge CPU = the service's CPU time (user \
             and system) per call on its routes, and the bare proxy's on its route, the \
             system (kernel) part in brackets.\n",
            self.sizes.run, self.sizes.rounds, self.sizes.warmup
        ));
        report.line(
            "| upstream | path | c | calls/s | p50 ms | p99 ms | ratio (rmcp) | ratio (floor) \
             | overhead ms (rmcp) | overhead ms (floor) | bridge CPU µs (kernel) |",
        );
        report.line("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        upstreams.retain(|u| listed("BENCH_UPSTREAMS", u.1));
        for (label, server_id, url, _peer) in &upstreams {
            bridge
                .register(json!({ "server_id": server_id, "transport": "http", "url": url }))
                .await;
            let mcpo = mcpo(url).await;
            let name = format!("{server_id}__echo");
            let upstream_session = McpSession::open(&client, url, None).await;
            let proxy = Proxy::start(url).await;
            let mut paths = vec![
                Route::Direct(mcp_client(url, None).await),
                Route::Floor(Arc::new(Raw::mcp(url, None, &upstream_session, "echo"))),
                Route::Proxy(Arc::new(Raw::mcp(
                    &proxy.url,
                    None,
                    &upstream_session,
                    "echo",
                ))),
                Route::Rest {
                    client: client.clone(),
                    url: format!("{}/v1/tools/call", bridge.base),
                    token: agent.clone(),
                    body: Arc::new(json!({
                        "name": name,
                        "arguments": serde_json::from_str::<Value>(ECHO_ARGS).unwrap(),
                    })),
                },
                Route::RestRaw(Arc::new(Raw::rest(&bridge.base, &agent, &name))),
                Route::Mcp(bridge_mcp.clone(), name.clone()),
                Route::McpRaw(Arc::new(Raw::mcp(
                    &bridge_url,
                    Some(&agent),
                    &bridge_session,
                    &name,
                ))),
            ];
            if let Some((_, base)) = &mcpo {
                paths.push(Route::Mcpo {
                    client: client.clone(),
                    url: format!("{base}/echo"),
                });
            }
            paths.retain(|p| listed("BENCH_ROUTES", p.key()));
            for &c in self.sizes.concurrency {
                // Routes take turns in short rounds, so a drift of the machine (or of the
                // upstream) over the run weighs on every route alike.
                let mut tallies: Vec<Tally> = paths.iter().map(|_| Tally::default()).collect();
                for round in 0..=self.sizes.rounds {
                    for (path, tally) in paths.iter().zip(&mut tallies) {
                        let caller = || path.caller();
                        if round == 0 {
                            phase(c, self.sizes.warmup, caller).await;
                            continue;
                        }
                        let cpu_time = || match path {
                            Route::Proxy(_) => proxy.cpu_time(),
                            _ => bridge.cpu_time(),
                        };
                        let (started, cpu) = (Instant::now(), cpu_time());
                        let measured = phase(c, self.sizes.run / self.sizes.rounds, caller).await;
                        tally.add(measured, started.elapsed(), cpu_time() - cpu);
                    }
                }
                let all: Vec<Stats> = tallies.into_iter().map(Tally::stats).collect();
                let row_of = |key| paths.iter().position(|p| p.key() == key);
                let (rmcp, raw) = (row_of("direct"), row_of("floor"));
                for (row, (path, stats)) in paths.iter().zip(&all).enumerate() {
                    let name = path.name();
                    self.check(&format!("{label}, {name}, c={c}"), stats);
                    // Each floor is also given against the other, but not against itself.
                    let against = |floor: Option<usize>| match floor.filter(|&f| f != row) {
                        Some(f) => (
                            format!("{:.2}x", stats.per_sec / all[f].per_sec),
                            format!("{:+.3}", ms(stats.p50) - ms(all[f].p50)),
                        ),
                        None => (String::new(), String::new()),
                    };
                    let ((ratio_rmcp, over_rmcp), (ratio_raw, over_raw)) =
                        (against(rmcp), against(raw));
                    let cpu = match path.measured() {
                        true => format!(
                            "{:.0} ({:.0})",
                            stats.bridge_cpu.as_secs_f64() * 1e6,
                            stats.bridge_system.as_secs_f64() * 1e6
                        ),
                        false => String::new(),
                    };
                    report.line(&format!(
                        "| {label} | {name} | {c} | {:.0} | {:.3} | {:.3} | {ratio_rmcp} | \
                         {ratio_raw} | {over_rmcp} | {over_raw} | {cpu} |",
                        stats.per_sec,
                        ms(stats.p50),
                        ms(stats.p99)
                    ));
                }
            }
            drop((mcpo, proxy));
        }
        report.line(&format!(
            "\nRSS of the service after these calls: {:.1} MiB.\n",
            bridge.rss_mib()
        ));
        bridge.stop().await;
    }

    /// Calls one after another on one rmcp client, so on one kept-alive connection, through
    /// `/mcp` and directly: were Nagle's algorithm on at the service's end, each answer would
    /// wait for the client's delayed ACK, some 40 ms a call (20 calls took 840 ms; with it off,
    /// 46 ms). This figure was a wall-clock assertion in tests/api/mcp.rs.
    pub(crate) async fn kept_alive(&self, report: &mut Report) {
        const CALLS: u32 = 20;
        let dir = tempfile::tempdir().unwrap();
        let bridge = Bridge::start(dir.path(), &self.auth).await;
        let bridge_mcp = format!("{}/mcp", bridge.base);
        let agent = self.token("bench-keepalive");
        report.line("## Kept-alive calls\n");
        report.line(&format!(
            "{CALLS} `echo` calls one after another on one rmcp client (one kept-alive \
             connection), after one warm-up call, to the in-process Rust upstream with Nagle's \
             algorithm off and on; a delayed-ACK stall would add some 40 ms a call. rmcp's own \
             client (direct) opens a connection per call; the bridge reuses its connections to \
             the upstream, and acknowledges at once (`TCP_QUICKACK`) so that an upstream with \
             Nagle on does not stall.\n"
        ));
        report.line("| upstream | path | calls | total ms | per call ms | ratio |");
        report.line("|---|---|---:|---:|---:|---:|");
        for (label, server_id, nodelay) in [("Nagle off", "rs", true), ("Nagle on", "rn", false)] {
            let (_server, url) = http_echo_server_with(nodelay).await;
            bridge
                .register(json!({ "server_id": server_id, "transport": "http", "url": url }))
                .await;
            let routes = [
                Route::Direct(mcp_client(&url, None).await),
                Route::Mcp(
                    mcp_client(&bridge_mcp, Some(&agent)).await,
                    format!("{server_id}__echo"),
                ),
            ];
            let mut direct = None;
            for route in routes {
                let name = route.name();
                let mut result = route.clone().call().await;
                let started = Instant::now();
                for _ in 0..CALLS {
                    result = result.and(route.clone().call().await);
                }
                let took = started.elapsed();
                if let Err(error) = result {
                    let message = format!("kept-alive calls, {label}, {name}: {error}");
                    assert!(self.full, "{message}");
                    println!("WARNING {message}");
                }
                let ratio = direct.map_or(String::new(), |d: Duration| {
                    format!("{:.2}x", took.as_secs_f64() / d.as_secs_f64())
                });
                report.line(&format!(
                    "| {label} | {name} | {CALLS} | {:.1} | {:.2} | {ratio} |",
                    ms(took),
                    ms(took) / f64::from(CALLS)
                ));
                direct.get_or_insert(took);
            }
        }
        report.line("");
        bridge.stop().await;
    }
}
