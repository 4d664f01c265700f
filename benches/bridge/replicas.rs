//! Replicas (with `BENCH_POSTGRES` and `BENCH_NATS`): calls forwarded between replicas, event
//! fan-out across them, and the takeover of a server after `kill -9` of its holder.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_bridge::http::auth::Auth;
use serde_json::{Value, json};

use crate::calls::Route;
use crate::events::open_streams;
use crate::measure::{Tally, ms, percentile, phase};
use crate::peers::{EchoServer, http_echo_server};
use crate::report::Report;
use crate::service::Bridge;
use crate::{Bench, ECHO_ARGS};

/// What replicas of one bridge share: a PostgreSQL database and a NATS subject prefix of their
/// own, dropped and deleted when this is dropped (also when a smoke run fails).
struct Shared {
    server: String,
    name: String,
    database: String,
    nats: String,
    prefix: String,
    lease: String,
    /// The key the replicas seal their bus with (`MCP_BRIDGE_SECRETS_KEY`: 64 hex digits), new
    /// for each run.
    key: String,
}

impl Shared {
    /// A new database on `BENCH_POSTGRES` and a new prefix on `BENCH_NATS`; `None` without them.
    async fn new(lease_secs: u64) -> Option<Shared> {
        use sqlx::Connection;
        let var = |name| std::env::var(name).ok().filter(|v| !v.is_empty());
        let (Some(server), Some(nats)) = (var("BENCH_POSTGRES"), var("BENCH_NATS")) else {
            return None;
        };
        let random = uuid::Uuid::new_v4().simple().to_string();
        let name = format!("b_{}", &random[..16]);
        let mut url = url::Url::parse(&server).expect("BENCH_POSTGRES is a URL");
        url.set_path(&name);
        let mut admin = sqlx::PgConnection::connect(&server)
            .await
            .unwrap_or_else(|e| panic!("BENCH_POSTGRES={server}: {e}"));
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE \"{name}\"")))
            .execute(&mut admin)
            .await
            .expect("CREATE DATABASE");
        let _ = admin.close().await;
        Some(Shared {
            server,
            name,
            database: url.to_string(),
            nats,
            prefix: format!("bench.{}", &random[16..28]),
            lease: lease_secs.to_string(),
            key: format!(
                "{}{}",
                uuid::Uuid::new_v4().simple(),
                uuid::Uuid::new_v4().simple()
            ),
        })
    }

    /// Starts replica `id` over `data_dir` and waits until it is ready (store and NATS).
    async fn start(&self, id: &str, data_dir: &Path, auth: &Auth) -> Bridge {
        let env = [
            ("MCP_BRIDGE_DATABASE_URL", self.database.as_str()),
            ("MCP_BRIDGE_NATS_URL", self.nats.as_str()),
            ("MCP_BRIDGE_NATS_PREFIX", self.prefix.as_str()),
            ("MCP_BRIDGE_REPLICA_ID", id),
            ("MCP_BRIDGE_LEASE_SECS", self.lease.as_str()),
            ("MCP_BRIDGE_SECRETS_KEY", self.key.as_str()),
        ];
        let bridge = Bridge::start_with(data_dir, auth, &env).await;
        let deadline = Instant::now() + Duration::from_secs(30);
        while !bridge.answers("/readyz").await {
            assert!(
                Instant::now() < deadline,
                "replica {id} not ready within 30 s; see {}",
                data_dir.join("bridge.log").display()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        bridge
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        let (server, name) = (self.server.clone(), self.name.clone());
        let (nats, prefix) = (self.nats.clone(), self.prefix.clone());
        // On a thread of its own: `Drop` cannot wait for a future on the bench's runtime.
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a tokio runtime");
            runtime.block_on(async {
                use sqlx::Connection;
                let dropped = async {
                    let mut admin = sqlx::PgConnection::connect(&server).await?;
                    let sql = format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)");
                    sqlx::query(sqlx::AssertSqlSafe(sql))
                        .execute(&mut admin)
                        .await?;
                    admin.close().await
                };
                if let Err(error) = dropped.await {
                    eprintln!("cannot drop the database {name}: {error}");
                }
                let deleted = mcp_bridge::hub::bus::Bus::delete_log(&nats, &prefix).await;
                if let Err(error) = deleted {
                    eprintln!("cannot delete the NATS streams of {prefix}: {error}");
                }
            })
        })
        .join();
    }
}

/// Polls `bridge` until it shows `server_id` ready and held by `holder`.
async fn wait_held(
    bridge: &Bridge,
    server_id: &str,
    holder: &str,
    within: Duration,
) -> Result<(), String> {
    let deadline = Instant::now() + within;
    let mut last = Value::Null;
    while Instant::now() < deadline {
        if let Some(server) = bridge.server(server_id).await {
            if server["status"] == "ready" && server["replica"] == holder {
                return Ok(());
            }
            last = server;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Err(format!(
        "{server_id} not ready on {holder} within {within:?}; last seen: {last}"
    ))
}

/// A counter's value in `bridge`'s `/metrics` (the sum over its labels).
async fn metric(bridge: &Bridge, name: &str) -> f64 {
    let resp = bridge
        .client
        .get(format!("{}/metrics", bridge.base))
        .send()
        .await;
    let text = match resp {
        Ok(resp) => resp.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    };
    text.lines()
        .filter(|l| l.starts_with(name))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

impl Bench {
    pub(crate) async fn replicas(&self, report: &mut Report) {
        report.line("## Replicas\n");
        // Declared first, so dropped last: after the replicas it serves.
        let Some(shared) = Shared::new(self.sizes.lease_secs).await else {
            report.line(
                "Skipped: set `BENCH_POSTGRES` (a PostgreSQL server's URL) and `BENCH_NATS` \
                 (NATS with JetStream) to run it.\n",
            );
            return;
        };
        let ids = ["a", "b", "c"];
        let dirs: Vec<tempfile::TempDir> =
            ids.iter().map(|_| tempfile::tempdir().unwrap()).collect();
        let mut replicas = Vec::new();
        for (id, dir) in ids.iter().zip(&dirs) {
            replicas.push(shared.start(id, dir.path(), &self.auth).await);
        }
        let (server, url) = http_echo_server().await;
        replicas[0]
            .register(json!({ "server_id": "rs", "transport": "http", "url": url }))
            .await;
        for (id, replica) in ids.iter().zip(&replicas) {
            let held = wait_held(replica, "rs", "a", Duration::from_secs(30)).await;
            held.unwrap_or_else(|e| panic!("replica {id}: {e}"));
        }
        report.line(&format!(
            "Three replicas `a`, `b`, `c` (the real binary, each with a data dir of its own) \
             sharing one PostgreSQL database and one NATS JetStream, lease {} s. The in-process \
             echo server (Streamable HTTP) is registered on `a`, so `a` holds it.\n",
            self.sizes.lease_secs
        ));
        self.replica_calls(report, &replicas[0], &replicas[1]).await;
        // Side by side: every stream on the holder alone, then spread over the three.
        self.replica_fanout(report, &replicas[..1], &server).await;
        self.replica_fanout(report, &replicas, &server).await;
        // The takeovers run between a and b alone: c would compete for the lease.
        if let Some(c) = replicas.pop() {
            c.stop().await;
        }
        let resp = replicas[0]
            .client
            .delete(format!("{}/v1/servers/rs", replicas[0].base))
            .bearer_auth(&replicas[0].admin)
            .send()
            .await;
        assert!(
            resp.is_ok_and(|r| r.status().is_success()),
            "DELETE /v1/servers/rs"
        );
        self.takeover(report, &shared, replicas, &dirs).await;
        drop(shared);
    }

    /// The echo tool through its holder `a` and through `b`, which forwards to `a` over NATS.
    async fn replica_calls(&self, report: &mut Report, a: &Bridge, b: &Bridge) {
        let agent = self.token("bench-agent");
        let client = reqwest::Client::new();
        let body = Arc::new(json!({
            "name": "rs__echo",
            "arguments": serde_json::from_str::<Value>(ECHO_ARGS).unwrap(),
        }));
        let routes: Vec<(&str, Route)> = [("through a (holder)", a), ("through b (forwarded)", b)]
            .into_iter()
            .map(|(name, bridge)| {
                let route = Route::Rest {
                    client: client.clone(),
                    url: format!("{}/v1/tools/call", bridge.base),
                    token: agent.clone(),
                    body: body.clone(),
                };
                (name, route)
            })
            .collect();
        report.line("### Tool calls through the holder and through another replica\n");
        report.line(&format!(
            "`rs__echo` over REST (`POST /v1/tools/call` on kept-alive connections of one \
             client) by c workers in a closed loop for {:?} per row, in {} rounds where the two \
             routes take turns (after {:?} of warm-up each); overhead = p50 minus the p50 \
             through the holder; CPU = the CPU time of `a` and `b` together (user and system) \
             per call.\n",
            self.sizes.run, self.sizes.rounds, self.sizes.warmup
        ));
        report.line("| route | c | calls/s | p50 ms | p99 ms | overhead ms | CPU a+b µs |");
        report.line("|---|---:|---:|---:|---:|---:|---:|");
        let cpu = || a.cpu_time() + b.cpu_time();
        let forwarded = metric(b, "mcp_bridge_forwarded_calls_total").await;
        let mut through_b = 0;
        for &c in self.sizes.replica_concurrency {
            let mut tallies: Vec<Tally> = routes.iter().map(|_| Tally::default()).collect();
            for round in 0..=self.sizes.rounds {
                for ((_, route), tally) in routes.iter().zip(&mut tallies) {
                    let caller = || route.caller();
                    if round == 0 {
                        phase(c, self.sizes.warmup, caller).await;
                        continue;
                    }
                    let (started, before) = (Instant::now(), cpu());
                    let measured = phase(c, self.sizes.run / self.sizes.rounds, caller).await;
                    tally.add(measured, started.elapsed(), cpu() - before);
                }
            }
            let mut holder: Option<Duration> = None;
            for ((name, _), tally) in routes.iter().zip(tallies) {
                let stats = tally.stats();
                self.check(&format!("replicas, {name}, c={c}"), &stats);
                let overhead =
                    holder.map_or(String::new(), |h| format!("{:+.3}", ms(stats.p50) - ms(h)));
                report.line(&format!(
                    "| {name} | {c} | {:.0} | {:.3} | {:.3} | {overhead} | {:.0} |",
                    stats.per_sec,
                    ms(stats.p50),
                    ms(stats.p99),
                    stats.bridge_cpu.as_secs_f64() * 1e6
                ));
                match holder {
                    None => holder = Some(stats.p50),
                    Some(_) => through_b += stats.calls,
                }
            }
        }
        let forwarded = metric(b, "mcp_bridge_forwarded_calls_total").await - forwarded;
        report.line(&format!(
            "\n`b` counted {forwarded:.0} forwarded calls (`mcp_bridge_forwarded_calls_total`) \
             for the {through_b} measured calls through it (and its warm-up).\n"
        ));
        assert!(
            forwarded >= through_b as f64,
            "b forwarded {forwarded} calls of {through_b}"
        );
    }

    /// One `notifications/tools/list_changed` from the server `a` holds, to agents whose event
    /// streams are spread evenly over every replica.
    async fn replica_fanout(&self, report: &mut Report, replicas: &[Bridge], server: &EchoServer) {
        let n = self.sizes.fanout_agents;
        let streams = (0..n).map(|i| {
            let on = i % replicas.len();
            let url = format!("{}/v1/events", replicas[on].base);
            (on, url, self.token(&format!("replica-agent-{i}")))
        });
        let (streams, mut got_rx) = open_streams(streams.collect()).await;
        let pushed = Instant::now();
        server.notify_tools_changed().await;
        let mut by_replica = vec![Vec::new(); replicas.len()];
        let mut all = Vec::with_capacity(n);
        for _ in 0..n {
            let got = tokio::time::timeout(Duration::from_secs(30), got_rx.recv()).await;
            let (on, at) = got
                .expect("every agent gets the push within 30 s")
                .expect("an arrival");
            by_replica[on].push(at - pushed);
            all.push(at - pushed);
        }
        drop(streams);
        let names = ["`a` (holder)", "`b`", "`c`"];
        let over = names[..replicas.len()].join(", ");
        report.line(&match replicas.len() {
            1 => "### SSE fan-out on one replica\n".to_owned(),
            k => format!("### SSE fan-out across {k} replicas\n"),
        });
        report.line(&format!(
            "{n} agents, each with its own `GET /v1/events` stream, spread evenly over {over}; \
             the echo server (held by `a`) sends one `notifications/tools/list_changed`; `a` \
             re-lists, appends the event to the log on NATS, and each replica pushes it to its \
             streams. Time from the upstream's notification to each agent's receipt:\n"
        ));
        report.line("| streams on | agents | p50 ms | p99 ms | last ms |");
        report.line("|---|---:|---:|---:|---:|");
        let rows = by_replica.iter_mut().zip(names).map(|(l, name)| (name, l));
        for (name, latencies) in rows.chain([("all", &mut all)]) {
            latencies.sort_unstable();
            report.line(&format!(
                "| {name} | {} | {:.2} | {:.2} | {:.2} |",
                latencies.len(),
                ms(percentile(latencies, 0.5)),
                ms(percentile(latencies, 0.99)),
                ms(latencies.last().copied().unwrap_or_default())
            ));
        }
        report.line("");
    }

    /// `kill -9` of the replica holding a stdio server, then the time until the survivor shows
    /// it ready and held by itself; the killed replica restarts and holds the next one's server.
    async fn takeover(
        &self,
        report: &mut Report,
        shared: &Shared,
        replicas: Vec<Bridge>,
        dirs: &[tempfile::TempDir],
    ) {
        let ids = ["a", "b"];
        let mut replicas: Vec<Option<Bridge>> = replicas.into_iter().map(Some).collect();
        let me = std::env::current_exe().expect("this binary's path");
        fn replica(r: &Option<Bridge>) -> &Bridge {
            r.as_ref().expect("a running replica")
        }
        replica(&replicas[0])
            .register(json!({
                "server_id": "st", "transport": "stdio", "cmd": [me, "--stdio-server", "0"],
            }))
            .await;
        let within = Duration::from_secs(self.sizes.lease_secs + 30);
        let mut holder = 0;
        let mut took = Vec::new();
        for run in 1..=self.sizes.takeovers {
            let survivor = 1 - holder;
            for (id, r) in ids.iter().zip(&replicas) {
                let held = wait_held(replica(r), "st", ids[holder], within).await;
                held.unwrap_or_else(|e| panic!("before takeover {run}, replica {id}: {e}"));
            }
            // The survivor saw the holder's state change at a tick of its lease loop, and a
            // restarted replica's first tick is when it sees it: killing now would always hit
            // the same phase of that loop (and time a lease plus a few ms). A random wait of up
            // to one renewal period makes the phase of the kill random, as a crash's is.
            let period = (self.sizes.lease_secs as f64 / 3.0).min(1.0);
            let wait = Duration::from_secs_f64(period * rand::random::<f64>());
            tokio::time::sleep(wait).await;
            let victim = replicas[holder].take().expect("the holder");
            let killed = Instant::now();
            victim.kill9().await;
            let held = wait_held(replica(&replicas[survivor]), "st", ids[survivor], within).await;
            held.unwrap_or_else(|e| panic!("takeover {run}: {e}"));
            took.push(killed.elapsed());
            println!(
                "takeover {run}: {} -> {} in {:.3} s",
                ids[holder],
                ids[survivor],
                took.last().unwrap().as_secs_f64()
            );
            let dir = dirs[holder].path();
            replicas[holder] = Some(shared.start(ids[holder], dir, &self.auth).await);
            holder = survivor;
        }
        for r in replicas.into_iter().flatten() {
            r.stop().await;
        }
        let runs: Vec<String> = took
            .iter()
            .map(|t| format!("{:.2}", t.as_secs_f64()))
            .collect();
        took.sort_unstable();
        report.line("### Takeover after `kill -9`\n");
        report.line(&format!(
            "A stdio server (this harness as a minimal MCP server) held by one of two replicas; \
             `kill -9` of the holder; time until the survivor's `GET /v1/servers/st` shows it \
             `ready` with itself as `replica` (polled every 5 ms). The kill comes at a random \
             moment within one renewal period; the killed replica restarts between runs, so the \
             holder alternates. Lease `MCP_BRIDGE_LEASE_SECS={}`, renewed \
             every {:.2} s.\n",
            self.sizes.lease_secs,
            (self.sizes.lease_secs as f64 / 3.0).min(1.0)
        ));
        report.line("| runs | lease s | p50 s | max s | min s |");
        report.line("|---:|---:|---:|---:|---:|");
        report.line(&format!(
            "| {} | {} | {:.2} | {:.2} | {:.2} |\n",
            took.len(),
            self.sizes.lease_secs,
            percentile(&took, 0.5).as_secs_f64(),
            took.last().copied().unwrap_or_default().as_secs_f64(),
            took.first().copied().unwrap_or_default().as_secs_f64()
        ));
        report.line(&format!("Each run, in order: {} s.\n", runs.join(", ")));
    }
}
