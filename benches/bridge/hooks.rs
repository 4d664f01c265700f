//! What an interceptor costs a call (`hooks`): the echo tool called over REST through a server
//! no hook applies to and through the same upstream registered again under a server a hook
//! applies to, before and after (two round trips to the hook a call), the hook an in-process
//! axum endpoint answering allow. The routes take turns, so the difference of their p50 is the
//! hook's own cost (the goal: under 1 ms).

use std::sync::Arc;

use serde_json::json;

use crate::Bench;
use crate::calls::Route;
use crate::measure::ms;
use crate::peers::http_echo_server;
use crate::raw::Raw;
use crate::report::Report;
use crate::service::Bridge;

/// A hook answering allow to every question, on a free port of this process: its URL.
async fn allow_hook() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let app = axum::Router::new().route(
        "/allow",
        axum::routing::post(|| async { axum::Json(json!({"decision": "allow"})) }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://127.0.0.1:{port}/allow")
}

impl Bench {
    pub(crate) async fn hooks(&self, report: &mut Report) {
        let dir = tempfile::tempdir().unwrap();
        let hook = allow_hook().await;
        let config = dir.path().join("bridge.toml");
        let toml =
            format!("[[hooks]]\nname = \"allow\"\nurl = \"{hook}\"\nservers = [\"hooked\"]\n");
        std::fs::write(&config, toml).unwrap();
        let config = config.to_string_lossy().into_owned();
        let bridge =
            Bridge::start_with(dir.path(), &self.auth, &[("MCP_BRIDGE_CONFIG", &config)]).await;
        let (_server, url) = http_echo_server().await;
        for server_id in ["plain", "hooked"] {
            bridge
                .register(json!({ "server_id": server_id, "transport": "http", "url": url }))
                .await;
        }
        let agent = self.token("bench-hooks");
        report.line("## Interceptors\n");
        report.line(&format!(
            "`echo` over REST (the raw client) to the in-process Rust upstream, through a server \
             no hook applies to and through the same upstream registered as a server one allow \
             hook applies to, before and after the call (two POSTs to the hook a call, on the \
             bridge's pooled connections; the hook is an axum endpoint in the harness's \
             process). c workers in a closed loop for {:?} per row in {} rounds where the two \
             take turns. added = p50 with the hook minus p50 without.\n",
            self.sizes.run, self.sizes.rounds
        ));
        report.line("| path | c | calls/s | p50 ms | p99 ms | added p50 ms | bridge CPU µs |");
        report.line("|---|---:|---:|---:|---:|---:|---:|");
        let routes = [
            (
                "no hook",
                Route::RestRaw(Arc::new(Raw::rest(&bridge.base, &agent, "plain__echo"))),
            ),
            (
                "one allow hook",
                Route::RestRaw(Arc::new(Raw::rest(&bridge.base, &agent, "hooked__echo"))),
            ),
        ];
        for &c in self.sizes.concurrency {
            let turns: Vec<_> = routes
                .iter()
                .map(|(_, route)| (route, bridge.pid()))
                .collect();
            let all = self.in_turns(c, &turns).await;
            for ((name, _), stats) in routes.iter().zip(&all) {
                self.check(&format!("hooks, {name}, c={c}"), stats);
                let added = match *name {
                    "no hook" => String::new(),
                    _ => format!("{:+.3}", ms(stats.p50) - ms(all[0].p50)),
                };
                report.line(&format!(
                    "| {name} | {c} | {:.0} | {:.3} | {:.3} | {added} | {:.0} |",
                    stats.per_sec,
                    ms(stats.p50),
                    ms(stats.p99),
                    stats.bridge_cpu.as_secs_f64() * 1e6
                ));
            }
        }
        report.line("");
        bridge.stop().await;
    }
}
