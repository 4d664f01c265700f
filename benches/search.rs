//! Tool search quality and latency: recall@1, recall@5 and MRR of `access::search` over the
//! labelled queries of benches/search/ against real servers' tools, then index build time and
//! query latency on that corpus replicated to 10,000 tools. See BENCHMARKS.md, "Tool search".
//!
//! `cargo bench --bench search` (release build); `SEARCH_MISSES=1` also prints each query whose
//! tool is not in the top 5, with what came first.

use std::time::{Duration, Instant};

use mcp_bridge::a2e::ToolInfo;
use mcp_bridge::access::search::Index;
use serde::Deserialize;
use serde_json::Value;

const CATALOGUE: usize = 10_000;

#[derive(Deserialize)]
struct Corpus {
    servers: Vec<Server>,
}

#[derive(Deserialize)]
struct Server {
    key: String,
    package: String,
    version: String,
    registry: String,
    tools: Vec<Value>,
}

#[derive(Deserialize)]
struct Query {
    query: String,
    tool: String,
    #[serde(default)]
    also: Vec<String>,
}

fn main() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/search");
    let corpus: Corpus =
        serde_json::from_str(&std::fs::read_to_string(format!("{dir}/corpus.json")).unwrap())
            .unwrap();
    let load = |file: &str| -> Vec<Query> {
        serde_json::from_str(&std::fs::read_to_string(format!("{dir}/{file}")).unwrap()).unwrap()
    };
    let (queries, heldout) = (load("queries.json"), load("queries-heldout.json"));
    let tools: Vec<ToolInfo> = corpus
        .servers
        .iter()
        .flat_map(|s| s.tools.iter().map(|t| tool(&s.key, t)))
        .collect();
    println!(
        "corpus: {} tools from {} servers",
        tools.len(),
        corpus.servers.len()
    );
    for s in &corpus.servers {
        println!(
            "  {:<20} {:>3} tools  {} {} ({})",
            s.key,
            s.tools.len(),
            s.package,
            s.version,
            s.registry
        );
    }

    let index = Index::build(&tools);
    quality(&index, &tools, "queries.json", &queries);
    quality(&index, &tools, "queries-heldout.json", &heldout);
    latency(&tools, &queries);
}

/// A catalogue entry for one tool of a server's tools/list answer.
fn tool(server_id: &str, t: &Value) -> ToolInfo {
    let text = |key: &str| t.get(key).and_then(Value::as_str).map(str::to_string);
    ToolInfo {
        name: format!("{server_id}__{}", text("name").unwrap()),
        server_id: server_id.to_string(),
        title: text("title").or_else(|| {
            t.pointer("/annotations/title")
                .and_then(Value::as_str)
                .map(str::to_string)
        }),
        description: text("description").unwrap_or_default(),
        input_schema: t.get("inputSchema").cloned().unwrap_or_default(),
        output_schema: t.get("outputSchema").cloned(),
        annotations: t.get("annotations").cloned(),
        ..ToolInfo::default()
    }
}

fn quality(index: &Index, tools: &[ToolInfo], set: &str, queries: &[Query]) {
    let show_misses = std::env::var_os("SEARCH_MISSES").is_some();
    let (mut at1, mut at5, mut reciprocal) = (0, 0, 0.0);
    for q in queries {
        let hits = index.search(&q.query, 10);
        let rank = hits
            .iter()
            .position(|&(i, _)| tools[i].name == q.tool || q.also.contains(&tools[i].name));
        match rank {
            Some(0) => at1 += 1,
            _ if show_misses && rank.is_none_or(|r| r >= 5) => {
                let top: Vec<&str> = hits
                    .iter()
                    .take(3)
                    .map(|&(i, _)| tools[i].name.as_str())
                    .collect();
                println!(
                    "  miss: {:?} wants {} (rank {:?}), got {:?}",
                    q.query,
                    q.tool,
                    rank.map(|r| r + 1),
                    top
                );
            }
            _ => {}
        }
        if rank.is_some_and(|r| r < 5) {
            at5 += 1;
        }
        reciprocal += rank.map_or(0.0, |r| 1.0 / (r + 1) as f64);
    }
    let n = queries.len() as f64;
    println!(
        "{set} ({} queries): recall@1 {:.3}  recall@5 {:.3}  MRR@10 {:.3}",
        queries.len(),
        at1 as f64 / n,
        at5 as f64 / n,
        reciprocal / n
    );
}

fn latency(tools: &[ToolInfo], queries: &[Query]) {
    // The corpus again and again under distinct server ids, as a large host would hold it.
    let big: Vec<ToolInfo> = (0..CATALOGUE)
        .map(|i| {
            let mut t = tools[i % tools.len()].clone();
            let copy = i / tools.len();
            let short = t.name[t.server_id.len() + 2..].to_string();
            t.server_id = format!("{}-{copy}", t.server_id);
            t.name = format!("{}__{short}", t.server_id);
            t
        })
        .collect();
    let started = Instant::now();
    let index = Index::build(&big);
    let build = started.elapsed();

    let rounds = 20;
    let mut times: Vec<Duration> = Vec::with_capacity(rounds * queries.len());
    for _ in 0..rounds {
        for q in queries {
            let started = Instant::now();
            let hits = index.search(&q.query, 10);
            times.push(started.elapsed());
            std::hint::black_box(hits);
        }
    }
    times.sort_unstable();
    let at = |p: f64| times[((times.len() as f64 * p) as usize).min(times.len() - 1)];
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "latency on {} tools: build {:.1} ms; query p50 {:.3} ms  p99 {:.3} ms  max {:.3} ms ({} queries)",
        big.len(),
        ms(build),
        ms(at(0.50)),
        ms(at(0.99)),
        ms(*times.last().unwrap()),
        times.len()
    );
}
