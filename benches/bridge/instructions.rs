//! Instructions per call: the bridge run under callgrind, its counters zeroed after a
//! warm-up and dumped after the measured calls.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::Bench;
use crate::clients::KeptAlive;
use crate::peers::{everything_http, http_echo_server};
use crate::report::Report;
use crate::service::Bridge;

impl Bench {
    /// Instructions the bridge executes per call (callgrind), on REST and `/mcp`, each on one
    /// kept-alive connection, to an upstream over Streamable HTTP (the in-process Rust server,
    /// and server-everything when installed) and over stdio (this binary as a server):
    /// counters zeroed after a warm-up, `n` calls, counters dumped, divided by `n`. Instruction
    /// counts repeat within a fraction of a percent on a noisy machine, unlike times. Needs
    /// valgrind (`apt-get install valgrind`).
    pub(crate) async fn instructions(&self, report: &mut Report) {
        if std::process::Command::new("valgrind")
            .arg("--version")
            .output()
            .is_err()
        {
            println!("(valgrind is not installed: the instructions section is skipped)");
            return;
        }
        let (warmup, calls) = if self.full { (50, 500) } else { (2, 5) };
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("callgrind.out");
        let wrapper = [
            "valgrind".to_owned(),
            "--tool=callgrind".to_owned(),
            "--quiet".to_owned(),
            format!("--callgrind-out-file={}", out.display()),
        ];
        // `BENCH_LOG=warn` turns the service's spans off, to weigh what logging costs a call.
        let log = std::env::var("BENCH_LOG").unwrap_or_else(|_| "info".into());
        let bridge = Bridge::start_under(
            dir.path(),
            &self.auth,
            &[("MCP_BRIDGE_LOG", log.as_str())],
            &wrapper,
        )
        .await;
        let (_server, url) = http_echo_server().await;
        bridge
            .register(json!({ "server_id": "rs", "transport": "http", "url": url }))
            .await;
        let me = std::env::current_exe().unwrap().display().to_string();
        let cmd = json!([me, "--stdio-server", "0"]);
        bridge
            .register(json!({ "server_id": "st", "transport": "stdio", "cmd": cmd }))
            .await;
        // server-everything answers a call as an SSE stream, as most servers do: the path the
        // in-process upstream's JSON answers do not take.
        let everything = everything_http().await;
        if let Some((_, url)) = &everything {
            bridge
                .register(json!({ "server_id": "ev", "transport": "http", "url": url }))
                .await;
        }
        let agent = self.token("bench-instructions");
        report.line("## Instructions per call\n");
        report.line(&format!(
            "The bridge's instructions per `echo` call (callgrind; {calls} calls after {warmup} \
             of warm-up, on one kept-alive connection; the upstream's own work is not counted).\n"
        ));
        report.line("| upstream | route | instructions per call |");
        report.line("|---|---|---:|");
        let mut upstreams = vec![
            ("rs", "in-process Rust, Streamable HTTP"),
            ("st", "Rust, stdio"),
        ];
        if everything.is_some() {
            upstreams.push(("ev", "server-everything (Node.js), Streamable HTTP"));
        }
        for (server_id, upstream) in upstreams {
            let name = format!("{server_id}__echo");
            let mut routes = vec![("REST", KeptAlive::rest(&bridge.base, &agent, &name))];
            routes.push(("/mcp", KeptAlive::mcp(&bridge.base, &agent, &name).await));
            for (route, client) in routes {
                for _ in 0..warmup {
                    client.call().await.expect("a warm-up call");
                }
                callgrind_control(&["-z", &bridge.pid().to_string()]);
                for _ in 0..calls {
                    client.call().await.expect("a measured call");
                }
                let dumped = callgrind_control(&["-d", &bridge.pid().to_string()]);
                let total = latest_total(dir.path()).unwrap_or_else(|| {
                    panic!("no callgrind dump in {} ({dumped})", dir.path().display())
                });
                // `BENCH_CALLGRIND_DIR` keeps each dump, for `callgrind_annotate`.
                if let (Ok(keep), Some(dump)) = (
                    std::env::var("BENCH_CALLGRIND_DIR"),
                    latest_dump(dir.path()),
                ) {
                    let route = route.trim_start_matches('/').to_lowercase();
                    let kept = Path::new(&keep).join(format!("{server_id}-{route}.callgrind"));
                    std::fs::copy(dump, &kept).expect("the dump is copied");
                }
                let per_call = total as f64 / f64::from(calls);
                report.line(&format!(
                    "| {upstream} | {route} | {:.1}k |",
                    per_call / 1000.0
                ));
            }
        }
        report.line("");
        bridge.stop().await;
    }
}

/// Runs `callgrind_control` with `args`; what it printed.
fn callgrind_control(args: &[&str]) -> String {
    let output = std::process::Command::new("callgrind_control")
        .args(args)
        .output()
        .expect("callgrind_control (valgrind) runs");
    assert!(output.status.success(), "callgrind_control {args:?} failed");
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The instruction total of the newest callgrind dump in `dir` (its `summary:` line).
fn latest_total(dir: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(latest_dump(dir)?).ok()?;
    text.lines()
        .find_map(|line| {
            line.strip_prefix("summary:")
                .or_else(|| line.strip_prefix("totals:"))
        })
        .and_then(|n| n.split_whitespace().next()?.parse().ok())
}

/// The newest callgrind dump in `dir`.
fn latest_dump(dir: &Path) -> Option<PathBuf> {
    let newest = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("callgrind.out"))
        .max_by_key(|e| e.metadata().and_then(|m| m.modified()).ok())?;
    Some(newest.path())
}
