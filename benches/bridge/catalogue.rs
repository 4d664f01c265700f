//! Catalogue and boot: many stdio servers registered over REST, `GET /v1/tools` page by
//! page, RSS, and a restart on the same data dir timed until every server is ready.

use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{Value, json};

use crate::Bench;
use crate::measure::{ms, percentile};
use crate::report::Report;
use crate::service::Bridge;

/// One page of `GET /v1/tools` as `token` sees it, from `cursor`: how many server tools it
/// lists (the agent-bridge tools close the last page) and the next cursor ("" at the end).
pub(crate) async fn tools_page(bridge: &Bridge, token: &str, cursor: String) -> (usize, String) {
    let url =
        url::Url::parse_with_params(&format!("{}/v1/tools", bridge.base), [("cursor", cursor)])
            .unwrap();
    let resp = bridge.client.get(url).bearer_auth(token).send().await;
    let resp = resp.expect("GET /v1/tools");
    assert_eq!(resp.status(), 200, "GET /v1/tools");
    let body: Value = resp.json().await.expect("a tool list");
    let count = body["tools"].as_array().map_or(0, |tools| {
        tools
            .iter()
            .filter(|t| t["name"].as_str().is_some_and(|n| n.contains("__")))
            .count()
    });
    (count, body["next_cursor"].as_str().unwrap_or("").to_owned())
}

/// The whole catalogue, page by page: the server tools it lists, and the pages.
pub(crate) async fn tools_walk(bridge: &Bridge, token: &str) -> (usize, usize) {
    let (mut total, mut cursor, mut pages) = (0, String::new(), 0);
    loop {
        let (count, next) = tools_page(bridge, token, cursor).await;
        total += count;
        pages += 1;
        if next.is_empty() {
            return (total, pages);
        }
        cursor = next;
    }
}

impl Bench {
    pub(crate) async fn catalogue_and_boot(&self, report: &mut Report) {
        let (k, tools) = (self.sizes.servers, self.sizes.tools_per_server);
        let dir = tempfile::tempdir().unwrap();
        let bridge = Bridge::start(dir.path(), &self.auth).await;
        let me = std::env::current_exe().expect("this binary's path");
        let before = bridge.rss_mib();
        let registered = Instant::now();
        futures::stream::iter(0..k)
            .map(|i| {
                let cmd = json!([me, "--stdio-server", tools.to_string()]);
                bridge.register(json!({
                    "server_id": format!("s{i:03}"), "transport": "stdio", "cmd": cmd,
                }))
            })
            .buffer_unordered(8)
            .collect::<Vec<()>>()
            .await;
        let registered = registered.elapsed();
        tokio::time::sleep(Duration::from_millis(500)).await;
        let after = bridge.rss_mib();
        let agent = self.token("bench-agent");
        let list = |cursor: String| tools_page(&bridge, &agent, cursor);
        let walk = || tools_walk(&bridge, &agent);
        let (total, pages) = walk().await;
        assert_eq!(total, k * (tools + 1), "the catalogue lists every tool");
        let mut first_page = Vec::new();
        for _ in 0..self.sizes.list_samples {
            let sent = Instant::now();
            list(String::new()).await;
            first_page.push(sent.elapsed());
        }
        first_page.sort_unstable();
        let mut walks = Vec::new();
        for _ in 0..self.sizes.list_samples.div_ceil(10) {
            let sent = Instant::now();
            walk().await;
            walks.push(sent.elapsed());
        }
        walks.sort_unstable();
        bridge.stop().await;

        // Boot: the same data dir, so every server is restored from the store.
        let started = Instant::now();
        let bridge = Bridge::start(dir.path(), &self.auth).await;
        let answering = started.elapsed();
        let deadline = started + Duration::from_secs(120);
        let all_ready = loop {
            let servers = bridge.get("/v1/servers").await;
            let ready = servers["servers"]
                .as_array()
                .map_or(0, |s| s.iter().filter(|s| s["status"] == "ready").count());
            if ready == k {
                break started.elapsed();
            }
            assert!(
                Instant::now() < deadline,
                "{ready} of {k} servers ready after 120 s"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        let readyz = bridge.answers("/readyz").await;
        assert!(readyz, "/readyz answers 200 once every server is restored");
        let booted_rss = bridge.rss_mib();
        bridge.stop().await;

        report.line("## Catalogue and boot\n");
        report.line(&format!(
            "{k} stdio servers (this harness as a minimal Rust MCP server) with {} tools each: \
             {total} tools, {pages} pages of the default size. Registered over REST, 8 at a time, \
             in {:.2} s.\n",
            tools + 1,
            registered.as_secs_f64()
        ));
        report.line("| measure | value |");
        report.line("|---|---:|");
        report.line(&format!(
            "| `GET /v1/tools` first page p50 / p99 | {:.3} / {:.3} ms |",
            ms(percentile(&first_page, 0.5)),
            ms(percentile(&first_page, 0.99))
        ));
        report.line(&format!(
            "| whole catalogue ({pages} pages) p50 / p99 | {:.2} / {:.2} ms |",
            ms(percentile(&walks, 0.5)),
            ms(percentile(&walks, 0.99))
        ));
        report.line(&format!(
            "| RSS before / with the {k} servers | {before:.1} / {after:.1} MiB |"
        ));
        report.line(&format!(
            "| boot: process start to answering | {:.3} s |",
            answering.as_secs_f64()
        ));
        report.line(&format!(
            "| boot: process start to all {k} servers ready | {:.3} s |",
            all_ready.as_secs_f64()
        ));
        report.line(&format!("| RSS after boot | {booted_rss:.1} MiB |\n"));
    }
}
