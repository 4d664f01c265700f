//! Event fan-out: `GET /v1/events` streams opened by many agents, and the time one
//! `notifications/tools/list_changed` takes to reach each of them through one bridge.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::Bench;
use crate::measure::{ms, percentile};
use crate::peers::http_echo_server;
use crate::report::Report;
use crate::service::Bridge;

/// Opens one `GET /v1/events` stream per (tag, URL, token), each on a client (so a connection)
/// of its own, and waits until every one has answered 200. Each stream sends its tag and the
/// time it saw `notifications/tools/list_changed`, and stays open until the set is dropped.
pub(crate) async fn open_streams(
    streams: Vec<(usize, String, String)>,
) -> (
    tokio::task::JoinSet<()>,
    tokio::sync::mpsc::UnboundedReceiver<(usize, Instant)>,
) {
    let n = streams.len();
    let (opened_tx, mut opened_rx) = tokio::sync::mpsc::unbounded_channel();
    let (got_tx, got_rx) = tokio::sync::mpsc::unbounded_channel();
    let mut set = tokio::task::JoinSet::new();
    for (tag, url, token) in streams {
        let (opened_tx, got_tx) = (opened_tx.clone(), got_tx.clone());
        let request = reqwest::Client::new().get(url).bearer_auth(token);
        set.spawn(async move {
            let mut resp = match request.send().await {
                Ok(resp) if resp.status() == 200 => resp,
                other => return drop(opened_tx.send(Err(format!("{other:?}")))),
            };
            let _ = opened_tx.send(Ok(()));
            let mut seen = String::new();
            while let Ok(Some(chunk)) = resp.chunk().await {
                seen.push_str(&String::from_utf8_lossy(&chunk));
                if seen.contains("notifications/tools/list_changed") {
                    let _ = got_tx.send((tag, Instant::now()));
                    // Stay connected until the whole measurement is over.
                    std::future::pending::<()>().await;
                }
            }
        });
    }
    for _ in 0..n {
        let opened = tokio::time::timeout(Duration::from_secs(60), opened_rx.recv()).await;
        let opened = opened.expect("every stream opens within 60 s");
        opened.expect("a stream").expect("a 200 stream");
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    (set, got_rx)
}

impl Bench {
    pub(crate) async fn fanout(&self, report: &mut Report) {
        let n = self.sizes.fanout_agents;
        let dir = tempfile::tempdir().unwrap();
        let bridge = Bridge::start(dir.path(), &self.auth).await;
        let (server, url) = http_echo_server().await;
        bridge
            .register(json!({ "server_id": "rs", "transport": "http", "url": url }))
            .await;
        let before = bridge.rss_mib();
        let streams = (0..n).map(|i| {
            let url = format!("{}/v1/events", bridge.base);
            (0, url, self.token(&format!("fanout-agent-{i}")))
        });
        let (streams, mut got_rx) = open_streams(streams.collect()).await;
        let after = bridge.rss_mib();
        let pushed = Instant::now();
        server.notify_tools_changed().await;
        let mut latencies = Vec::with_capacity(n);
        for _ in 0..n {
            let got = tokio::time::timeout(Duration::from_secs(30), got_rx.recv()).await;
            let got = got.expect("every agent gets the push within 30 s");
            latencies.push(got.expect("an arrival").1 - pushed);
        }
        latencies.sort_unstable();
        drop(streams);
        report.line("## SSE fan-out\n");
        report.line(&format!(
            "{n} agents, each with its own `GET /v1/events` stream; the upstream sends one \
             `notifications/tools/list_changed`; the bridge re-lists and pushes it to every agent. \
             Time from the upstream's notification to each agent's receipt:\n"
        ));
        report.line("| agents | p50 ms | p99 ms | last ms | RSS before MiB | RSS with streams MiB | KiB per stream |");
        report.line("|---:|---:|---:|---:|---:|---:|---:|");
        report.line(&format!(
            "| {n} | {:.2} | {:.2} | {:.2} | {before:.1} | {after:.1} | {:.1} |\n",
            ms(percentile(&latencies, 0.5)),
            ms(percentile(&latencies, 0.99)),
            ms(*latencies.last().unwrap()),
            (after - before) * 1024.0 / n as f64
        ));
        bridge.stop().await;
    }
}
