//! Prometheus metrics (`GET /metrics`, names prefixed `mcp_bridge_`): tool calls by server and
//! outcome with a latency histogram, and HTTP requests by route and status, counted as they
//! happen; upstream status, reconnects, connected agents, streams and pending requests read from
//! the registry and the hub when scraped.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::time::Duration;

use crate::hub::Hub;
use crate::registry::Registry;

/// Upper bounds of the tool-call latency buckets, in seconds.
const BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0,
];

#[derive(Default)]
struct Histogram {
    buckets: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        for (bucket, bound) in self.buckets.iter_mut().zip(BUCKETS) {
            if seconds <= bound {
                *bucket += 1;
            }
        }
        self.count += 1;
        self.sum += seconds;
    }
}

#[derive(Default)]
pub struct Metrics {
    /// By (server id, outcome).
    tool_calls: Mutex<BTreeMap<(String, String), Histogram>>,
    /// By (route, status).
    http: Mutex<BTreeMap<(String, u16), u64>>,
}

/// A label value with `\`, `"` and newlines escaped.
fn label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

impl Metrics {
    /// One tool call: its server (`a2a` for the agent-bridge tools), outcome (`ok`, `is_error` or
    /// the error code) and how long it took.
    pub fn tool_call(&self, server_id: &str, outcome: &str, took: Duration) {
        let mut calls = self.tool_calls.lock().unwrap_or_else(|e| e.into_inner());
        calls
            .entry((server_id.to_owned(), outcome.to_owned()))
            .or_default()
            .observe(took.as_secs_f64());
    }

    /// One HTTP request answered.
    pub fn http_request(&self, route: &str, status: u16) {
        let mut http = self.http.lock().unwrap_or_else(|e| e.into_inner());
        *http.entry((route.to_owned(), status)).or_default() += 1;
    }

    /// The exposition text.
    pub fn render(&self, registry: &Registry, hub: &Hub) -> String {
        let mut out = String::new();
        out.push_str("# HELP mcp_bridge_tool_calls_total Tool calls by server and outcome.\n# TYPE mcp_bridge_tool_calls_total counter\n");
        let calls = self.tool_calls.lock().unwrap_or_else(|e| e.into_inner());
        for ((server, outcome), h) in calls.iter() {
            let _ = writeln!(
                out,
                "mcp_bridge_tool_calls_total{{server_id=\"{}\",outcome=\"{}\"}} {}",
                label(server),
                label(outcome),
                h.count
            );
        }
        out.push_str("# HELP mcp_bridge_tool_call_duration_seconds Tool call latency by server and outcome.\n# TYPE mcp_bridge_tool_call_duration_seconds histogram\n");
        for ((server, outcome), h) in calls.iter() {
            let labels = format!(
                "server_id=\"{}\",outcome=\"{}\"",
                label(server),
                label(outcome)
            );
            for (bound, count) in BUCKETS.iter().zip(h.buckets) {
                let _ = writeln!(
                    out,
                    "mcp_bridge_tool_call_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {count}"
                );
            }
            let _ = writeln!(
                out,
                "mcp_bridge_tool_call_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(
                out,
                "mcp_bridge_tool_call_duration_seconds_sum{{{labels}}} {}",
                h.sum
            );
            let _ = writeln!(
                out,
                "mcp_bridge_tool_call_duration_seconds_count{{{labels}}} {}",
                h.count
            );
        }
        drop(calls);
        out.push_str("# HELP mcp_bridge_http_requests_total HTTP requests by route and status.\n# TYPE mcp_bridge_http_requests_total counter\n");
        for ((route, status), count) in self.http.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            let _ = writeln!(
                out,
                "mcp_bridge_http_requests_total{{route=\"{}\",status=\"{status}\"}} {count}",
                label(route)
            );
        }
        out.push_str("# HELP mcp_bridge_upstream_status Each server's status (1 for the current one).\n# TYPE mcp_bridge_upstream_status gauge\n");
        out.push_str("# HELP mcp_bridge_upstream_reconnects_total Reconnections of each server since the service started.\n# TYPE mcp_bridge_upstream_reconnects_total counter\n");
        for entry in registry.entries() {
            let state = entry.state();
            let id = label(&entry.id);
            for status in ["connecting", "ready", "error", "disconnected"] {
                let on = u8::from(state.status.as_str() == status);
                let _ = writeln!(
                    out,
                    "mcp_bridge_upstream_status{{server_id=\"{id}\",status=\"{status}\"}} {on}"
                );
            }
            let _ = writeln!(
                out,
                "mcp_bridge_upstream_reconnects_total{{server_id=\"{id}\"}} {}",
                state.connections.saturating_sub(1)
            );
        }
        let (agents, streams) = hub.connections();
        let _ = writeln!(
            out,
            "# HELP mcp_bridge_connected_agents Agents with an event stream open.\n# TYPE mcp_bridge_connected_agents gauge\nmcp_bridge_connected_agents {agents}"
        );
        let _ = writeln!(
            out,
            "# HELP mcp_bridge_event_streams Event streams open.\n# TYPE mcp_bridge_event_streams gauge\nmcp_bridge_event_streams {streams}"
        );
        let _ = writeln!(
            out,
            "# HELP mcp_bridge_pending_requests Server-initiated requests waiting for an agent.\n# TYPE mcp_bridge_pending_requests gauge\nmcp_bridge_pending_requests {}",
            hub.pending_requests()
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_cumulative() {
        let mut h = Histogram::default();
        h.observe(0.007);
        h.observe(3.0);
        assert_eq!(h.buckets[0], 0);
        assert_eq!(h.buckets[1], 1);
        assert_eq!(h.buckets[BUCKETS.len() - 1], 2);
        assert_eq!(h.count, 2);
        assert_eq!(label("a\"b"), "a\\\"b");
    }
}
