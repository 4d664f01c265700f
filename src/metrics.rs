//! Prometheus metrics (`GET /metrics`, names prefixed `mcp_bridge_`): tool calls by server and
//! outcome with a latency histogram, and HTTP requests by route and status, counted as they
//! happen; upstream status, reconnects, connected agents, streams and pending requests read from
//! the registry and the hub when scraped. Kept and written by `prometheus-client` (the
//! Prometheus project's crate) in the Prometheus text format 0.0.4.

use std::borrow::Borrow;
use std::sync::RwLock;
use std::time::Duration;

use foldhash::HashMap;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::prometheus_text;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;

use crate::hub::Hub;
use crate::registry::Registry;

/// The content type of [`Metrics::render`]'s text.
pub const CONTENT_TYPE: &str = prometheus_text::CONTENT_TYPE;

/// Upper bounds of the tool-call latency buckets, in seconds.
const BUCKETS: [f64; 14] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0,
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    server_id: String,
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HookLabels {
    hook: String,
    decision: &'static str,
}

/// Upper bounds of the hook latency buckets, in seconds: an allow should take well under 1 ms.
const HOOK_BUCKETS: [f64; 14] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HttpLabels {
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StatusLabels {
    server_id: String,
    status: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReplicaLabels {
    replica: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ServerLabels {
    server_id: String,
}

/// Handles on a family's series by their two labels, found without making a label set (a
/// `String` per label and a SipHash of them, for every request and call). The families keep the
/// values: a handle shares its series'. Both labels take few values.
struct Handles<K, V>(RwLock<HashMap<Box<str>, Row<K, V>>>);

/// The handles under one first label, by the second.
type Row<K, V> = Vec<(K, V)>;

impl<K, V> Default for Handles<K, V> {
    fn default() -> Self {
        Self(RwLock::default())
    }
}

impl<K, V: Clone> Handles<K, V> {
    /// The handle for `first` and `second`, made by `make` the first time.
    fn get_or_make<Q>(&self, first: &str, second: &Q, make: impl FnOnce() -> V) -> V
    where
        K: Borrow<Q>,
        Q: PartialEq + ToOwned<Owned = K> + ?Sized,
    {
        let find = |row: &[(K, V)]| {
            let (_, handle) = row.iter().find(|(known, _)| known.borrow() == second)?;
            Some(handle.clone())
        };
        let known = self.0.read().unwrap_or_else(|e| e.into_inner());
        if let Some(handle) = known.get(first).and_then(|row| find(row)) {
            return handle;
        }
        drop(known);
        let made = make();
        let mut known = self.0.write().unwrap_or_else(|e| e.into_inner());
        let row = known.entry(first.into()).or_default();
        if let Some(handle) = find(row) {
            return handle;
        }
        row.push((second.to_owned(), made.clone()));
        made
    }
}

fn latency() -> Histogram {
    Histogram::new(BUCKETS)
}

/// What is counted as it happens. Each family is a handle on shared values: a scrape registers
/// clones of them beside the gauges it reads.
pub struct Metrics {
    tool_calls: Family<CallLabels, Counter>,
    tool_call_duration: Family<CallLabels, Histogram>,
    http: Family<HttpLabels, Counter>,
    /// The counters of `http` by route and status.
    http_counters: Handles<u16, Counter>,
    /// The series of `tool_calls` and `tool_call_duration` by server and outcome.
    call_series: Handles<String, (Counter, Histogram)>,
    hook_decisions: Family<HookLabels, Counter>,
    hook_duration: Family<HookLabels, Histogram>,
    /// Their series by hook and decision.
    hook_series: Handles<&'static str, (Counter, Histogram)>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self {
            tool_calls: Family::default(),
            tool_call_duration: Family::new_with_constructor(latency),
            http: Family::default(),
            http_counters: Handles::default(),
            call_series: Handles::default(),
            hook_decisions: Family::default(),
            hook_duration: Family::new_with_constructor(|| Histogram::new(HOOK_BUCKETS)),
            hook_series: Handles::default(),
        }
    }
}

impl Metrics {
    /// One tool call: its server (`a2a` for the agent-bridge tools), outcome (`ok`, `is_error` or
    /// the error code) and how long it took.
    pub fn tool_call(&self, server_id: &str, outcome: &str, took: Duration) {
        let (calls, latency) = self.call_series.get_or_make(server_id, outcome, || {
            let labels = CallLabels {
                server_id: server_id.to_owned(),
                outcome: outcome.to_owned(),
            };
            let calls = self.tool_calls.get_or_create(&labels).clone();
            (
                calls,
                self.tool_call_duration.get_or_create(&labels).clone(),
            )
        });
        calls.inc();
        latency.observe(took.as_secs_f64());
    }

    /// One decision of a hook (`allow`, `deny`, `modify`, or after a failure of the hook
    /// `failed_deny` / `failed_allow`) and how long the hook took.
    pub fn hook_decision(&self, hook: &str, decision: &'static str, took: Duration) {
        let (count, latency) = self.hook_series.get_or_make(hook, &decision, || {
            let labels = HookLabels {
                hook: hook.to_owned(),
                decision,
            };
            (
                self.hook_decisions.get_or_create(&labels).clone(),
                self.hook_duration.get_or_create(&labels).clone(),
            )
        });
        count.inc();
        latency.observe(took.as_secs_f64());
    }

    /// One HTTP request answered.
    pub fn http_request(&self, route: &str, status: u16) {
        let counter = self.http_counters.get_or_make(route, &status, || {
            let labels = HttpLabels {
                route: route.to_owned(),
                status,
            };
            self.http.get_or_create(&labels).clone()
        });
        counter.inc();
    }

    /// The exposition text ([`CONTENT_TYPE`]). The crate writes a counter's name with `_total`
    /// appended, so counters are registered without it.
    pub fn render(&self, registry: &Registry, hub: &Hub) -> String {
        let mut scrape = prometheus_client::registry::Registry::default();
        scrape.register(
            "mcp_bridge_tool_calls",
            "Tool calls by server and outcome",
            self.tool_calls.clone(),
        );
        scrape.register(
            "mcp_bridge_tool_call_duration_seconds",
            "Tool call latency by server and outcome",
            self.tool_call_duration.clone(),
        );
        scrape.register(
            "mcp_bridge_http_requests",
            "HTTP requests by route and status",
            self.http.clone(),
        );
        scrape.register(
            "mcp_bridge_hook_decisions",
            "Decisions of the interceptors (hooks) by hook and decision",
            self.hook_decisions.clone(),
        );
        scrape.register(
            "mcp_bridge_hook_duration_seconds",
            "How long each interceptor (hook) took to decide, by hook and decision",
            self.hook_duration.clone(),
        );
        register_upstreams(&mut scrape, registry);
        register_hub(&mut scrape, hub);
        register_replicas(&mut scrape, registry);
        register_runtime(&mut scrape);
        let mut out = String::new();
        // Writing to a String does not fail.
        let _ = prometheus_text::encode(&mut out, &scrape);
        out
    }
}

/// Each server's status and reconnections, as they are now.
fn register_upstreams(scrape: &mut prometheus_client::registry::Registry, registry: &Registry) {
    let status = Family::<StatusLabels, Gauge>::default();
    let reconnects = Family::<ServerLabels, Counter>::default();
    for entry in registry.entries() {
        let state = entry.state();
        for each in crate::a2e::McpServerStatus::ALL {
            let labels = StatusLabels {
                server_id: entry.id.to_string(),
                status: each.as_str(),
            };
            let on = state.status == each;
            status.get_or_create(&labels).set(i64::from(on));
        }
        let labels = ServerLabels {
            server_id: entry.id.to_string(),
        };
        let count = state.connections.saturating_sub(1);
        reconnects.get_or_create(&labels).inc_by(count);
    }
    scrape.register(
        "mcp_bridge_upstream_status",
        "Each server's status (1 for the current one)",
        status,
    );
    scrape.register(
        "mcp_bridge_upstream_reconnects",
        "Reconnections of each server since the service started",
        reconnects,
    );
}

/// Across replicas: requests forwarded to the replica holding a server, leases taken or lost
/// here, and how many servers each replica holds.
fn register_replicas(scrape: &mut prometheus_client::registry::Registry, registry: &Registry) {
    let Some(cluster) = registry.cluster() else {
        return;
    };
    for (name, help, value) in [
        (
            "mcp_bridge_forwarded_calls",
            "Calls and other requests forwarded to the replica holding their server",
            &cluster.forwarded,
        ),
        (
            "mcp_bridge_lease_changes",
            "Server leases this replica took or lost",
            &cluster.lease_changes,
        ),
    ] {
        let counter = Counter::<u64>::default();
        counter.inc_by(value.load(std::sync::atomic::Ordering::Relaxed));
        scrape.register(name, help, counter);
    }
    let held = Family::<ReplicaLabels, Gauge>::default();
    for (replica, count) in cluster.held_counts() {
        held.get_or_create(&ReplicaLabels { replica })
            .set(i64::try_from(count).unwrap_or(i64::MAX));
    }
    scrape.register(
        "mcp_bridge_servers_held",
        "Servers each replica holds, as this replica last read the leases",
        held,
    );
}

/// The tokio tasks alive now: a count that only grows under a steady load is a leak (the soak
/// script in BENCHMARKS.md watches it).
fn register_runtime(scrape: &mut prometheus_client::registry::Registry) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let tasks = Gauge::<i64>::default();
    tasks.set(i64::try_from(runtime.metrics().num_alive_tasks()).unwrap_or(i64::MAX));
    scrape.register(
        "mcp_bridge_runtime_tasks",
        "Tokio tasks alive in the service",
        tasks,
    );
}

/// The hub's agents, streams, pending requests and replay bytes, as they are now.
fn register_hub(scrape: &mut prometheus_client::registry::Registry, hub: &Hub) {
    let (agents, streams) = hub.connections();
    for (name, help, value) in [
        (
            "mcp_bridge_connected_agents",
            "Agents with an event stream open",
            agents,
        ),
        ("mcp_bridge_event_streams", "Event streams open", streams),
        (
            "mcp_bridge_pending_requests",
            "Server-initiated requests waiting for an agent",
            hub.pending_requests(),
        ),
        (
            "mcp_bridge_replay_bytes",
            "Bytes of event data the replay buffers hold (a payload shared by agents counted once)",
            hub.replay_bytes(),
        ),
    ] {
        let gauge = Gauge::<i64>::default();
        gauge.set(i64::try_from(value).unwrap_or(i64::MAX));
        scrape.register(name, help, gauge);
    }
    if let Some(bus) = hub.bus() {
        let errors = Counter::<u64>::default();
        errors.inc_by(bus.errors());
        scrape.register(
            "mcp_bridge_bus_errors",
            "Errors between replicas on NATS: appends given up, relays and requests that failed",
            errors,
        );
        let refused = Counter::<u64>::default();
        refused.inc_by(bus.refused());
        scrape.register(
            "mcp_bridge_bus_refused",
            "Messages between replicas refused: of a protocol version or kind not understood here, or not sealed with the bus key",
            refused,
        );
        let dropped = Counter::<u64>::default();
        dropped.inc_by(bus.dropped());
        scrape.register(
            "mcp_bridge_bus_dropped_events",
            "Log entries dropped because NATS was away past MCP_BRIDGE_BUS_OUTBOX_BYTES",
            dropped,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_keeps_the_names_labels_and_buckets() {
        let metrics = Metrics::default();
        metrics.tool_call("s\"q", "ok", Duration::from_millis(7));
        metrics.tool_call("s\"q", "ok", Duration::from_secs(3));
        metrics.tool_call("s\"q", "timeout", Duration::from_secs(3));
        for status in [200, 404, 200, 200] {
            metrics.http_request("/v1/tools/call", status);
        }
        metrics.http_request("unmatched", 404);
        let mut scrape = prometheus_client::registry::Registry::default();
        scrape.register("mcp_bridge_tool_calls", "", metrics.tool_calls.clone());
        scrape.register(
            "mcp_bridge_tool_call_duration_seconds",
            "",
            metrics.tool_call_duration.clone(),
        );
        scrape.register("mcp_bridge_http_requests", "", metrics.http.clone());
        let mut text = String::new();
        prometheus_text::encode(&mut text, &scrape).unwrap();
        let series = r#"{server_id="s\"q",outcome="ok""#;
        for line in [
            "# TYPE mcp_bridge_tool_calls_total counter".to_owned(),
            format!("mcp_bridge_tool_calls_total{series}}} 2"),
            format!("mcp_bridge_tool_call_duration_seconds_bucket{series},le=\"0.005\"}} 0"),
            format!("mcp_bridge_tool_call_duration_seconds_bucket{series},le=\"0.01\"}} 1"),
            format!("mcp_bridge_tool_call_duration_seconds_bucket{series},le=\"1\"}} 1"),
            format!("mcp_bridge_tool_call_duration_seconds_bucket{series},le=\"300\"}} 2"),
            format!("mcp_bridge_tool_call_duration_seconds_bucket{series},le=\"+Inf\"}} 2"),
            format!("mcp_bridge_tool_call_duration_seconds_count{series}}} 2"),
            r#"mcp_bridge_tool_calls_total{server_id="s\"q",outcome="timeout"} 1"#.to_owned(),
            r#"mcp_bridge_http_requests_total{route="/v1/tools/call",status="200"} 3"#.to_owned(),
            r#"mcp_bridge_http_requests_total{route="/v1/tools/call",status="404"} 1"#.to_owned(),
            r#"mcp_bridge_http_requests_total{route="unmatched",status="404"} 1"#.to_owned(),
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
        assert!(!text.contains("# EOF"), "Prometheus text, not OpenMetrics");
    }
}
