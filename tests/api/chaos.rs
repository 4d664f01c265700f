//! Chaos under load, with a ledger (issue 35, item 5): three replicas behind HAProxy balancing
//! round robin with no stickiness, agents calling tools over REST and `/mcp` all along, an event
//! stream resumed with `Last-Event-ID`, tasks running, configuration written; then in turn
//! `kill -9` of a replica (started again), a restart of NATS, a restart of PostgreSQL and a replica
//! cut off from the bus. Every call is written to a ledger with its outcome and times; at the end
//! each call succeeded or failed retryably within a fault, nothing acknowledged is lost, no call
//! ran twice upstream, and the stream never saw `bridge/events_lost`.
//!
//! NATS and PostgreSQL are the test's own (a `nats-server` and an `initdb` cluster in temp dirs,
//! on free ports), so restarting them touches nothing else on the machine. Runs in scripts/test.sh's
//! PostgreSQL+NATS pass (`MCP_BRIDGE_TEST_POSTGRES` and `MCP_BRIDGE_TEST_NATS` set) and is skipped
//! without them or without `haproxy` (scripts/peers.sh installs it); about 45 s here. The
//! `MCP_BRIDGE_CHAOS_*` variables (ROUNDS, STEADY_MS, OUTAGE_MS, FAULTS, SESSIONS, TASKS_FINISH,
//! EVENTS_EXACT, VERBOSE, LEDGER) make the long version scripts/chaos.sh runs.
//!
//! The bus cut uses a TCP proxy between one replica and NATS, cut and restored, not a network
//! namespace: a namespace per replica needs a veth pair and routes changed in the machine's own
//! namespace while `cargo test` runs beside other tests, and tests/netns.rs runs whole test
//! binaries inside one loopback-only namespace, where a replica cannot be cut from the others.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio_util::sync::CancellationToken;

use crate::cluster::*;
use crate::helpers::*;

/// A failure this long after a fault's end still counts as the fault's (HAProxy's health checks
/// notice a replica back within a second; clients' connections to it are then re-made).
const GRACE: Duration = Duration::from_secs(3);

/// A whole number from the environment, or `default`.
fn knob(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `MCP_BRIDGE_CHAOS_SESSIONS=1` adds agents on `/mcp` sessions of the 2025-11-25 era. Off until
/// a session works on whichever replica a request lands on (issue 35, item 3, branch "sessions"):
/// today a session lives on the replica that answered `initialize`, so a round-robin proxy sends
/// two requests in three to a replica that answers 404, and the ledger fails.
/// Whether `MCP_BRIDGE_CHAOS_FAULTS` (a comma-separated subset of `kill,nats,postgres,cut`; all
/// when unset) names `fault`.
fn fault_on(fault: &str) -> bool {
    std::env::var("MCP_BRIDGE_CHAOS_FAULTS")
        .map(|faults| faults.split(',').any(|f| f.trim() == fault))
        .unwrap_or(true)
}

fn sessions_on() -> bool {
    knob("MCP_BRIDGE_CHAOS_SESSIONS", 0) == 1
}

// ---- the ledger ----

#[derive(Clone, Debug)]
enum Outcome {
    Ok,
    /// An HTTP error: its status, the A2E `code` (empty from the proxy) and `retryable`.
    Refused {
        status: u16,
        code: String,
        retryable: bool,
        message: String,
    },
    /// A JSON-RPC error or a tool result with `isError` on `/mcp`.
    Rpc {
        message: String,
        retryable: bool,
    },
    /// No answer: the connection failed, was reset, or timed out.
    Transport(String),
}

impl Outcome {
    fn retryable(&self) -> bool {
        match self {
            Self::Ok | Self::Transport(_) => true,
            // The bridge says whether; a 502/503/504 without an A2E body is the proxy's.
            Self::Refused {
                status,
                code,
                retryable,
                ..
            } => *retryable || (code.is_empty() && matches!(status, 502..=504)),
            Self::Rpc { retryable, .. } => *retryable,
        }
    }
}

#[derive(Clone, Debug)]
struct Entry {
    id: String,
    kind: &'static str,
    /// The replica that answered (HAProxy's `x-served-by`), empty without an answer.
    replica: String,
    started: Instant,
    ended: Instant,
    outcome: Outcome,
}

#[derive(Clone, Default)]
struct Ledger(Arc<Mutex<Vec<Entry>>>);

impl Ledger {
    fn write(&self, id: String, kind: &'static str, started: Instant, answer: (Outcome, String)) {
        let (outcome, replica) = answer;
        self.0.lock().unwrap().push(Entry {
            id,
            kind,
            replica,
            started,
            ended: Instant::now(),
            outcome,
        });
    }

    fn entries(&self) -> Vec<Entry> {
        self.0.lock().unwrap().clone()
    }
}

/// A fault: from its start until the cluster was whole again.
struct Fault {
    name: String,
    started: Instant,
    ended: Instant,
}

impl Fault {
    fn covers(&self, entry: &Entry) -> bool {
        entry.started <= self.ended + GRACE && entry.ended >= self.started
    }
}

/// The fault a call's failure is put down to: the last one begun before the call ended, if
/// that one covers it.
fn fault_of<'a>(faults: &'a [Fault], entry: &Entry) -> Option<&'a Fault> {
    faults
        .iter()
        .rev()
        .find(|f| f.started <= entry.ended)
        .filter(|f| f.covers(entry))
}

/// A request that got no answer.
fn transport(e: &reqwest::Error) -> Outcome {
    match e.is_timeout() {
        true => Outcome::Transport(format!("timed out: {e}")),
        false => Outcome::Transport(e.to_string()),
    }
}

/// The replica that answered, as HAProxy names it.
fn served_by(resp: &reqwest::Response) -> String {
    resp.headers()
        .get("x-served-by")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

/// The outcome of a REST answer, and the replica that gave it.
async fn rest_outcome(sent: reqwest::Result<reqwest::Response>) -> (Outcome, String) {
    let resp = match sent {
        Ok(resp) => resp,
        Err(e) => return (transport(&e), String::new()),
    };
    let replica = served_by(&resp);
    (rest_outcome_of(resp).await, replica)
}

async fn rest_outcome_of(resp: reqwest::Response) -> Outcome {
    let status = resp.status();
    let body: Value = match resp.text().await {
        Ok(text) => serde_json::from_str(&text).unwrap_or(Value::Null),
        Err(e) => return transport(&e),
    };
    if status.is_success() {
        return Outcome::Ok;
    }
    Outcome::Refused {
        status: status.as_u16(),
        code: body["code"].as_str().unwrap_or_default().to_owned(),
        retryable: body["retryable"] == true,
        message: body["error"].as_str().unwrap_or_default().to_owned(),
    }
}

/// The JSON-RPC answer in a `/mcp` response body (JSON, or the last `data:` of an SSE stream).
fn rpc_answer(text: &str) -> Option<Value> {
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        return Some(value);
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .rfind(|m| m.get("result").is_some() || m.get("error").is_some())
}

/// The outcome of a `/mcp` answer to `tools/call`, and the replica that gave it.
async fn mcp_outcome(sent: reqwest::Result<reqwest::Response>) -> (Outcome, String) {
    let resp = match sent {
        Ok(resp) => resp,
        Err(e) => return (transport(&e), String::new()),
    };
    let replica = served_by(&resp);
    (mcp_outcome_of(resp).await, replica)
}

async fn mcp_outcome_of(resp: reqwest::Response) -> Outcome {
    let status = resp.status();
    let text = match resp.text().await {
        Ok(text) => text,
        Err(e) => return transport(&e),
    };
    if !status.is_success() {
        let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        return Outcome::Refused {
            status: status.as_u16(),
            code: body["code"].as_str().unwrap_or_default().to_owned(),
            retryable: body["retryable"] == true,
            message: body["error"].as_str().unwrap_or_default().to_owned(),
        };
    }
    let Some(answer) = rpc_answer(&text) else {
        return Outcome::Transport(format!("no JSON-RPC answer in {text:.200}"));
    };
    let failed = |message: String| Outcome::Rpc {
        // A tool error on `/mcp` carries no `retryable`: these are the texts REST answers with
        // 503 `mcp_server_unavailable` (retryable) for a server or bus away.
        retryable: [
            "unavailable",
            "not reachable",
            "try again",
            "connection to the server was lost during the call",
        ]
        .iter()
        .any(|w| message.to_lowercase().contains(w)),
        message,
    };
    if let Some(error) = answer.get("error") {
        return failed(error.to_string());
    }
    match answer["result"]["isError"] == true {
        true => failed(answer["result"].to_string()),
        false => Outcome::Ok,
    }
}

// ---- PostgreSQL of the test's own ----

/// A PostgreSQL cluster in a temp dir on a free port, trust auth, restarted by the test.
struct PrivatePostgres {
    port: u16,
    dir: tempfile::TempDir,
    /// Whether its programs run as Debian's `postgres` user (this is root, which initdb refuses).
    as_postgres: bool,
    running: bool,
}

/// Where Debian's PostgreSQL 15 puts `initdb` and `pg_ctl`.
const PG_BIN: &str = "/usr/lib/postgresql/15/bin";

impl PrivatePostgres {
    async fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let as_postgres = std::process::Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|o| o.stdout.trim_ascii() == b"0");
        if as_postgres {
            // initdb refuses to run as root: the cluster belongs to Debian's `postgres` user.
            let status = std::process::Command::new("chown")
                .args(["postgres:postgres"])
                .arg(dir.path())
                .status()
                .unwrap();
            assert!(status.success(), "chown of the PostgreSQL temp dir");
        }
        let mut pg = Self {
            port: free_port(),
            dir,
            as_postgres,
            running: false,
        };
        pg.pg(
            "initdb",
            &[
                "-D",
                &pg.data(),
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync",
            ],
        )
        .await;
        pg.run().await;
        pg
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}", self.port)
    }

    /// Runs a PostgreSQL program, as `postgres` when this is root.
    async fn pg(&self, program: &str, args: &[&str]) {
        let bin = Path::new(PG_BIN).join(program);
        let mut command = tokio::process::Command::from(self.command(&bin));
        let output = command.args(args).output().await.unwrap();
        assert!(
            output.status.success(),
            "{program} {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    fn command(&self, bin: &Path) -> std::process::Command {
        match self.as_postgres {
            true => {
                let mut command = std::process::Command::new("runuser");
                command.args(["-u", "postgres", "--"]).arg(bin);
                command
            }
            false => std::process::Command::new(bin),
        }
    }

    async fn run(&mut self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("log").display().to_string();
        self.pg(
            "pg_ctl",
            &[
                "-D",
                &self.data(),
                "-l",
                &log,
                "-o",
                &options,
                "-w",
                "start",
            ],
        )
        .await;
        self.running = true;
    }

    async fn stop(&mut self) {
        self.pg("pg_ctl", &["-D", &self.data(), "-m", "fast", "-w", "stop"])
            .await;
        self.running = false;
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        if self.running {
            let data = self.data();
            let _ = self
                .command(&Path::new(PG_BIN).join("pg_ctl"))
                .args(["-D", &data, "-m", "immediate", "stop"])
                .output();
        }
    }
}

// ---- HAProxy ----

/// HAProxy in front of the replicas, its config written here.
struct Haproxy {
    port: u16,
    _dir: tempfile::TempDir,
    _child: tokio::process::Child,
}

/// What a deployment copies: round robin and no cookie (any replica answers anything), health
/// checks on `/readyz` every 500 ms so a replica without its store or bus is taken out within a
/// second, a short `timeout connect` with `retries` and `option redispatch` so that a request
/// whose replica is dead is sent to another one instead of failing, and long client/server
/// timeouts for event streams (`/v1/events`, `/mcp` GET), which stay open. The `x-served-by`
/// header (the replica that answered, for the ledger) is the test's, not a deployment's.
fn haproxy_config(port: u16, replicas: &[(&str, u16)]) -> String {
    let mut config = format!(
        "global\n  maxconn 4096\n\
         defaults\n  mode http\n  timeout connect 500ms\n  timeout client 120s\n  timeout server 120s\n\
         \x20 retries 2\n  option redispatch\n\
         frontend bridge\n  bind 127.0.0.1:{port}\n  default_backend replicas\n\
         \x20 http-response set-header x-served-by %s\n\
         backend replicas\n  balance roundrobin\n  option httpchk GET /readyz\n  http-check expect status 200\n\
         \x20 default-server inter 500ms fall 2 rise 1\n"
    );
    for (id, port) in replicas {
        config.push_str(&format!("  server {id} 127.0.0.1:{port} check\n"));
    }
    config
}

impl Haproxy {
    fn installed() -> bool {
        std::process::Command::new("haproxy")
            .arg("-v")
            .output()
            .is_ok_and(|o| o.status.success())
    }

    async fn start(replicas: &[(&str, u16)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let path = dir.path().join("haproxy.cfg");
        std::fs::write(&path, haproxy_config(port, replicas)).unwrap();
        let child = tokio::process::Command::new("haproxy")
            .arg("-db")
            .arg("-f")
            .arg(&path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("haproxy runs");
        let proxy = Self {
            port,
            _dir: dir,
            _child: child,
        };
        let ready = format!("{}/readyz", proxy.base());
        wait_until(
            "HAProxy serving /readyz",
            WAIT,
            async || match reqwest::get(&ready).await.map(|r| r.status()) {
                Ok(StatusCode::OK) => Ok(()),
                other => Err(format!("{other:?}")),
            },
        )
        .await;
        proxy
    }

    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

// ---- upstreams ----

/// The Python fixture over Streamable HTTP writing each echo to `log`.
async fn recording_http(log: &Path) -> (tokio::process::Child, String) {
    let mut child = tokio::process::Command::new(python())
        .args([py_server().as_str(), "http", "--port", "0"])
        .env("FIXTURE_CALL_LOG", log)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .expect("the Python fixture reports its port")
        .unwrap()
        .expect("a PORT= line");
    let port = line
        .trim()
        .strip_prefix("PORT=")
        .expect("PORT=<n>")
        .to_owned();
    (child, format!("http://127.0.0.1:{port}/mcp"))
}

/// How many times the upstreams ran each echo text.
fn upstream_counts(logs: &[PathBuf]) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for log in logs {
        for line in std::fs::read_to_string(log).unwrap_or_default().lines() {
            *counts.entry(line.to_owned()).or_default() += 1;
        }
    }
    counts
}

// ---- load ----

struct Load {
    base: String,
    alice: String,
    admin: String,
    client: reqwest::Client,
    ledger: Ledger,
    stop: CancellationToken,
    workers: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

impl Load {
    fn id(kind: &str, n: u64) -> String {
        format!(
            "{kind}-{n}-{}",
            &uuid::Uuid::new_v4().simple().to_string()[..6]
        )
    }

    /// `POST /v1/tools/call` of `tool` with the arguments `args` makes of the call's id, until
    /// stopped.
    fn rest(self: &Arc<Self>, kind: &'static str, tool: String, args: fn(&str) -> Value) {
        let load = self.clone();
        let worker = tokio::spawn(async move {
            for n in 0.. {
                if load.stop.is_cancelled() {
                    break;
                }
                let id = Self::id(kind, n);
                let started = Instant::now();
                let sent = load
                    .client
                    .post(format!("{}/v1/tools/call", load.base))
                    .bearer_auth(&load.alice)
                    .json(&json!({"name": tool, "arguments": args(&id)}))
                    .send()
                    .await;
                let outcome = rest_outcome(sent).await;
                load.ledger.write(id, kind, started, outcome);
                tokio::time::sleep(Duration::from_millis(30)).await;
            }
        });
        self.workers.lock().unwrap().push(worker);
    }

    /// A stateless (2026-07-28) `tools/call` on `/mcp` of `tool` with `{"text": id}`, until stopped.
    fn stateless(self: &Arc<Self>, kind: &'static str, tool: String) {
        let load = self.clone();
        let worker = tokio::spawn(async move {
            for n in 0.. {
                if load.stop.is_cancelled() {
                    break;
                }
                let id = Self::id(kind, n);
                let started = Instant::now();
                let body = json!({
                    "jsonrpc": "2.0", "id": n, "method": "tools/call",
                    "params": {"name": tool, "arguments": {"text": id}, "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": {},
                        "io.modelcontextprotocol/clientInfo": {"name": "chaos", "version": "1"},
                    }},
                });
                let sent = load
                    .client
                    .post(format!("{}/mcp", load.base))
                    .bearer_auth(&load.alice)
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-protocol-version", "2026-07-28")
                    .header("mcp-method", "tools/call")
                    .header("mcp-name", &tool)
                    .json(&body)
                    .send()
                    .await;
                let outcome = mcp_outcome(sent).await;
                load.ledger.write(id, kind, started, outcome);
                tokio::time::sleep(Duration::from_millis(30)).await;
            }
        });
        self.workers.lock().unwrap().push(worker);
    }

    /// A `/mcp` session of the 2025-11-25 era calling `tool` with `{"text": id}`, until stopped;
    /// a session refused (404) is initialised again, as the specification asks of a client.
    fn session(self: &Arc<Self>, kind: &'static str, tool: String) {
        let load = self.clone();
        let worker = tokio::spawn(async move {
            let mut session: Option<String> = None;
            for n in 0.. {
                if load.stop.is_cancelled() {
                    break;
                }
                let Some(id_header) = session.clone() else {
                    session = load.initialize().await;
                    if session.is_none() {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                    continue;
                };
                let id = Self::id(kind, n);
                let started = Instant::now();
                let sent = load
                    .client
                    .post(format!("{}/mcp", load.base))
                    .bearer_auth(&load.alice)
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-protocol-version", "2025-11-25")
                    .header("mcp-session-id", &id_header)
                    .json(&json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                        "params": {"name": tool, "arguments": {"text": id}}}))
                    .send()
                    .await;
                let outcome = mcp_outcome(sent).await;
                if matches!(outcome.0, Outcome::Refused { status: 404, .. }) {
                    session = None;
                }
                load.ledger.write(id, kind, started, outcome);
                tokio::time::sleep(Duration::from_millis(30)).await;
            }
        });
        self.workers.lock().unwrap().push(worker);
    }

    async fn initialize(&self) -> Option<String> {
        let resp = self
            .client
            .post(format!("{}/mcp", self.base))
            .bearer_auth(&self.alice)
            .header("accept", "application/json, text/event-stream")
            .json(
                &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "chaos", "version": "1"}}}),
            )
            .send()
            .await
            .ok()?;
        let session = resp
            .headers()
            .get("mcp-session-id")?
            .to_str()
            .ok()?
            .to_owned();
        let _ = resp.text().await;
        self.client
            .post(format!("{}/mcp", self.base))
            .bearer_auth(&self.alice)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", &session)
            .json(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .send()
            .await
            .ok()?;
        Some(session)
    }

    /// Registers a server (an HTTP one at `url`) and a policy naming it every `every`, until
    /// stopped; what was acknowledged (201) goes to `acked`.
    fn configure(self: &Arc<Self>, url: String, every: Duration, acked: Arc<Mutex<Vec<String>>>) {
        let load = self.clone();
        let worker = tokio::spawn(async move {
            for n in 0.. {
                if load.stop.is_cancelled() {
                    break;
                }
                let id = Self::id("cfg", n);
                let started = Instant::now();
                let sent = load
                    .client
                    .post(format!("{}/v1/servers", load.base))
                    .bearer_auth(&load.admin)
                    .json(&json!({"config": {"server_id": id, "transport": "http", "url": url}}))
                    .send()
                    .await;
                let outcome = rest_outcome(sent).await;
                if matches!(outcome.0, Outcome::Ok) {
                    acked.lock().unwrap().push(format!("/v1/servers/{id}"));
                }
                load.ledger
                    .write(id.clone(), "config-server", started, outcome);
                let started = Instant::now();
                let sent = load
                    .client
                    .put(format!("{}/v1/policies/{id}", load.base))
                    .bearer_auth(&load.admin)
                    .json(&json!({"match": {"subs": ["bob"]}, "deny": {"tools": [format!("{id}__echo")]}}))
                    .send()
                    .await;
                let outcome = rest_outcome(sent).await;
                if matches!(outcome.0, Outcome::Ok) {
                    acked.lock().unwrap().push(format!("policy {id}"));
                }
                load.ledger.write(id, "config-policy", started, outcome);
                tokio::time::sleep(every).await;
            }
        });
        self.workers.lock().unwrap().push(worker);
    }
}

/// What the agent's event stream saw: pushes of resource updates, resumes and losses.
#[derive(Default)]
struct StreamSeen {
    updates: std::collections::HashSet<String>,
    resumes: u32,
    lost: Vec<Value>,
    first_open: bool,
    /// The replica serving the stream now.
    replica: String,
}

/// Keeps alice's `/v1/events` open through the proxy, resuming with `Last-Event-ID` whenever it
/// ends, until stopped.
fn follow_events(base: String, token: String, stop: CancellationToken) -> Arc<Mutex<StreamSeen>> {
    let seen = Arc::new(Mutex::new(StreamSeen::default()));
    let out = seen.clone();
    tokio::spawn(async move {
        let client = reqwest::Client::new();
        let mut last: Option<String> = None;
        while !stop.is_cancelled() {
            let mut request = client.get(format!("{base}/v1/events")).bearer_auth(&token);
            if let Some(id) = &last {
                request = request.header("Last-Event-ID", id);
            }
            let resp = match request.send().await {
                Ok(resp) if resp.status() == StatusCode::OK => resp,
                _ => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            {
                let mut seen = seen.lock().unwrap();
                seen.replica = served_by(&resp);
                match seen.first_open {
                    true => seen.resumes += 1,
                    false => seen.first_open = true,
                }
            }
            let mut stream = EventStream::from_response(resp);
            loop {
                let message = tokio::select! {
                    m = stream.next(Duration::from_secs(3600)) => m,
                    () = stop.cancelled() => None,
                };
                let Some(message) = message else { break };
                if let Some(id) = &message.id {
                    last = Some(id.clone());
                }
                let mut seen = seen.lock().unwrap();
                if is_push(&message, "bridge/events_lost") || message.event.contains("events_lost")
                {
                    seen.lost.push(message.data.clone());
                } else if is_push(&message, "notifications/resources/updated") {
                    seen.updates.insert(message.id.clone().unwrap_or_default());
                }
            }
        }
    });
    out
}

// ---- the test ----

#[tokio::test]
async fn three_replicas_behind_round_robin_survive_kills_and_outages_with_a_ledger() {
    if postgres_server().is_none() || std::env::var("MCP_BRIDGE_TEST_NATS").is_err() {
        eprintln!("skipped: needs MCP_BRIDGE_TEST_POSTGRES and MCP_BRIDGE_TEST_NATS");
        return;
    }
    if !Haproxy::installed() {
        eprintln!("skipped: haproxy is not installed (scripts/peers.sh installs Debian's haproxy)");
        return;
    }
    let rounds = knob("MCP_BRIDGE_CHAOS_ROUNDS", 1);
    let steady = Duration::from_millis(knob("MCP_BRIDGE_CHAOS_STEADY_MS", 1500));
    let outage = Duration::from_millis(knob("MCP_BRIDGE_CHAOS_OUTAGE_MS", 1500));
    let test_started = Instant::now();

    // Declared first, dropped last: after the replicas that use them.
    let mut pg = PrivatePostgres::start().await;
    let mut nats = PrivateNats::start().await;
    let mut bus_cut = Proxy::start(&format!("127.0.0.1:{}", nats.port)).await;
    let calls = tempfile::tempdir().unwrap();
    let (stdio_log, http_log) = (calls.path().join("stdio"), calls.path().join("http"));
    let (_http_peer, http_url) = recording_http(&http_log).await;

    let first = Arc::new(tempfile::tempdir().unwrap());
    // The private cluster's own `postgres` database. `Replicas` is never dropped: its `Drop` drops
    // a database of that name on `MCP_BRIDGE_TEST_POSTGRES`'s server and deletes the NATS prefix,
    // and both of these servers go with their temp dirs.
    let mut replicas = std::mem::ManuallyDrop::new(Replicas {
        database: format!("{}/postgres", pg.url()),
        nats: nats.url(),
        prefix: unique("t.chaos").replace('-', "_"),
        dirs: vec![first],
    });
    let ids = ["a", "b", "c"];
    let ports: Vec<u16> = ids.iter().map(|_| free_port()).collect();
    let binds: Vec<String> = ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
    // `c` reaches NATS through a proxy the test cuts: the replica cut off from the bus.
    let cut_url = format!("nats://127.0.0.1:{}", bus_cut.port);
    let env_of = |i: usize| -> Vec<(&str, String)> {
        let mut env = vec![("MCP_BRIDGE_BIND", binds[i].clone())];
        if i == 2 {
            env.push(("MCP_BRIDGE_NATS_URL", cut_url.clone()));
        }
        env
    };
    let mut running: Vec<Option<Replica>> = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let env = env_of(i);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        running.push(Some(replicas.start_with(id, &env).await));
    }
    let named: Vec<(&str, u16)> = ids.iter().copied().zip(ports.iter().copied()).collect();
    let proxy = Haproxy::start(&named).await;
    let front = TestApp::at(&proxy.base(), replicas.dirs[0].clone());

    // Servers: a recording stdio fixture, the recording HTTP one, server-everything over stdio.
    let mut stdio = py_stdio("ps", &unique("chaos"));
    stdio["env"]["FIXTURE_CALL_LOG"] = json!(stdio_log.display().to_string());
    front.register(stdio).await;
    front
        .register(json!({"server_id": "ph", "transport": "http", "url": http_url}))
        .await;
    front.register(everything_stdio("ev")).await;
    for server in ["ps", "ph", "ev"] {
        wait_until(&format!("{server} ready"), WAIT, async || {
            let (_, body) = front.server(server).await;
            match body["server"]["status"] == "ready" {
                true => Ok(()),
                false => Err(body.to_string()),
            }
        })
        .await;
    }
    let acked = Arc::new(Mutex::new(vec![
        "/v1/servers/ps".to_owned(),
        "/v1/servers/ph".to_owned(),
        "/v1/servers/ev".to_owned(),
    ]));
    // A subscription, checked at the end on the upstream that holds it then.
    let doc = "fixture://doc/1";
    let (status, body) = front
        .post(
            "/v1/resources/subscribe",
            &front.alice,
            json!({"uri": doc, "server_id": "ps"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    let stop = CancellationToken::new();
    let load = Arc::new(Load {
        base: proxy.base(),
        alice: front.alice.clone(),
        admin: front.admin.clone(),
        client: reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap(),
        ledger: Ledger::default(),
        stop: stop.clone(),
        workers: Mutex::default(),
    });
    let seen = follow_events(proxy.base(), front.alice.clone(), stop.clone());
    // A second agent's stream, which only sees the list changes the registrations make.
    let bob_seen = follow_events(proxy.base(), front.bob.clone(), stop.clone());
    wait_until("the event stream open", WAIT, async || {
        match seen.lock().unwrap().first_open {
            true => Ok(()),
            false => Err("not yet".to_owned()),
        }
    })
    .await;
    load.rest("rest-stdio", "ps__echo".into(), |id| json!({"text": id}));
    load.rest("rest-http", "ph__echo".into(), |id| json!({"text": id}));
    load.rest(
        "rest-everything",
        "ev__echo".into(),
        |id| json!({"message": id}),
    );
    // Each touch makes the upstream send alice an update of the subscribed resource.
    load.rest(
        "touch",
        "ps__touch".into(),
        |_| json!({"uri": "fixture://doc/1"}),
    );
    load.stateless("mcp-stdio", "ps__echo".into());
    load.stateless("mcp-http", "ph__echo".into());
    if sessions_on() {
        load.session("session-stdio", "ps__echo".into());
        load.session("session-http", "ph__echo".into());
    }
    load.configure(http_url.clone(), Duration::from_secs(2), acked.clone());

    // Durable tasks: one started now, one after the first fault.
    let mut tasks = Vec::new();
    let start_task = async |front: &TestApp| -> String {
        let (status, created) = front
            .post(
                "/v1/tools/call",
                &front.alice,
                json!({"name": "ps__slow", "arguments": {"seconds": 4}, "task": {"ttl": 600_000}}),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{created}");
        created["task_id"].as_str().unwrap().to_owned()
    };
    tasks.push(start_task(&front).await);
    tokio::time::sleep(steady).await;

    let mut faults: Vec<Fault> = Vec::new();
    for round in 0..rounds {
        // 1. kill -9 of the replica holding the stdio server, then started again.
        if fault_on("kill") {
            let (_, body) = front.server("ps").await;
            let holder = body["server"]["replica"].as_str().unwrap_or("a").to_owned();
            let i = ids.iter().position(|id| *id == holder).unwrap_or(0);
            let started = Instant::now();
            let mut killed = running[i].take().unwrap();
            killed.bridge.signal("KILL");
            let _ = killed.bridge.exited_within(WAIT).await;
            let survivor = running.iter().flatten().next().unwrap();
            wait_until("a survivor holding ps", WAIT + WAIT, async || {
                let (_, body) = survivor.app.server("ps").await;
                let server = &body["server"];
                match server["status"] == "ready" && server["replica"] != holder.as_str() {
                    true => Ok(()),
                    false => Err(body.to_string()),
                }
            })
            .await;
            tokio::time::sleep(outage.saturating_sub(started.elapsed())).await;
            drop(killed);
            let env = env_of(i);
            let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
            running[i] = Some(replicas.start_with(ids[i], &env).await);
            faults.push(Fault {
                name: format!("kill -9 of {holder} (round {round})"),
                started,
                ended: Instant::now(),
            });
            tokio::time::sleep(steady).await;
        }
        if round == 0 {
            tasks.push(start_task(&front).await);
        }

        // 1b. kill -9 of the replica serving the event stream, if that was another one: the
        // stream resumes elsewhere with `Last-Event-ID`.
        let streaming = seen.lock().unwrap().replica.clone();
        if fault_on("kill") && ids.contains(&streaming.as_str()) {
            let i = ids.iter().position(|id| *id == streaming).unwrap();
            let started = Instant::now();
            let mut killed = running[i].take().unwrap();
            killed.bridge.signal("KILL");
            let _ = killed.bridge.exited_within(WAIT).await;
            let resumes = seen.lock().unwrap().resumes;
            wait_until("the event stream resumed", WAIT, async || {
                match seen.lock().unwrap().resumes > resumes {
                    true => Ok(()),
                    false => Err("not yet".to_owned()),
                }
            })
            .await;
            tokio::time::sleep(outage.saturating_sub(started.elapsed())).await;
            drop(killed);
            let env = env_of(i);
            let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
            running[i] = Some(replicas.start_with(ids[i], &env).await);
            faults.push(Fault {
                name: format!("kill -9 of {streaming}, serving the event stream (round {round})"),
                started,
                ended: Instant::now(),
            });
            tokio::time::sleep(steady).await;
        }

        // 2. NATS restarted.
        if fault_on("nats") {
            let started = Instant::now();
            nats.stop().await;
            tokio::time::sleep(outage).await;
            nats.run().await;
            for replica in running.iter().flatten() {
                replica.wait_ready().await;
            }
            faults.push(Fault {
                name: format!("NATS restart (round {round})"),
                started,
                ended: Instant::now(),
            });
            tokio::time::sleep(steady).await;
        }

        // 3. PostgreSQL restarted.
        if fault_on("postgres") {
            let started = Instant::now();
            pg.stop().await;
            tokio::time::sleep(outage).await;
            pg.run().await;
            for replica in running.iter().flatten() {
                replica.wait_ready().await;
            }
            faults.push(Fault {
                name: format!("PostgreSQL restart (round {round})"),
                started,
                ended: Instant::now(),
            });
            tokio::time::sleep(steady).await;
        }

        // 4. `c` cut off from the bus, then reconnected.
        if fault_on("cut") {
            let started = Instant::now();
            bus_cut.cut().await;
            tokio::time::sleep(outage).await;
            bus_cut.restore().await;
            for replica in running.iter().flatten() {
                replica.wait_ready().await;
            }
            faults.push(Fault {
                name: format!("c cut off from NATS (round {round})"),
                started,
                ended: Instant::now(),
            });
            tokio::time::sleep(steady).await;
        }
    }
    stop.cancel();
    // Every worker ends its call in flight within the client's timeout (10 s): every call
    // started is in the ledger with an outcome.
    let workers = std::mem::take(&mut *load.workers.lock().unwrap());
    for worker in workers {
        worker.await.unwrap();
    }

    let entries = load.ledger.entries();
    report(&entries, &faults);
    if let Ok(path) = std::env::var("MCP_BRIDGE_CHAOS_LEDGER") {
        write_ledger(Path::new(&path), test_started, &entries, &faults);
    }

    // 1. Each call succeeded, or failed retryably within a fault.
    let unexcused: Vec<&Entry> = entries
        .iter()
        .filter(|e| !matches!(e.outcome, Outcome::Ok))
        .filter(|e| !(e.outcome.retryable() && fault_of(&faults, e).is_some()))
        .collect();
    assert!(
        unexcused.is_empty(),
        "{} calls failed outside a fault or not retryably, e.g. {:?}",
        unexcused.len(),
        &unexcused[..unexcused.len().min(5)]
    );
    for kind in ["rest-stdio", "rest-http", "mcp-stdio", "mcp-http"] {
        let ok = entries
            .iter()
            .filter(|e| e.kind == kind && matches!(e.outcome, Outcome::Ok))
            .count();
        assert!(ok > 0, "no {kind} call succeeded");
    }

    // 2. No call ran twice upstream, and every call answered ran exactly once.
    let counts = upstream_counts(&[stdio_log.clone(), http_log.clone()]);
    let twice: Vec<(&String, &usize)> = counts.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "calls ran more than once: {twice:?}");
    let echoes = ["rest-stdio", "rest-http", "mcp-stdio", "mcp-http"];
    let missing: Vec<&String> = entries
        .iter()
        .filter(|e| echoes.contains(&e.kind) || e.kind.starts_with("session-"))
        .filter(|e| matches!(e.outcome, Outcome::Ok) && !counts.contains_key(&e.id))
        .map(|e| &e.id)
        .collect();
    assert!(
        missing.is_empty(),
        "answered calls the upstream never saw: {missing:?}"
    );

    // 3. Nothing acknowledged is lost: servers and policies on every replica, the subscription
    // on the upstream holding it now, the tasks in the store and finished.
    let acked = acked.lock().unwrap().clone();
    for replica in running.iter().flatten() {
        // Policies reach every replica within its refresh (2 s); servers are read from the store.
        wait_until(
            &format!("every policy on {}", replica.id),
            WAIT,
            async || {
                let (_, listed) = replica.app.get("/v1/policies", &replica.app.admin).await;
                let named: Vec<&str> = listed["policies"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|p| p["name"].as_str())
                    .collect();
                let lost: Vec<&String> = acked
                    .iter()
                    .filter_map(|what| what.strip_prefix("policy "))
                    .filter(|policy| !named.contains(policy))
                    .map(|_| &acked[0])
                    .collect();
                match lost.is_empty() {
                    true => Ok(()),
                    false => Err(format!("{} policies missing: {listed}", lost.len())),
                }
            },
        )
        .await;
        for what in acked.iter().filter(|w| w.starts_with('/')) {
            let (status, body) = replica.app.get(what, &replica.app.admin).await;
            assert_eq!(status, StatusCode::OK, "{} lost {what}: {body}", replica.id);
        }
    }
    eprintln!(
        "acknowledged and found on every replica: {} servers and policies",
        acked.len()
    );
    wait_until("the subscription on the upstream", WAIT, async || {
        let (status, body) = front.call("ps__subscriptions", json!({})).await;
        match status == StatusCode::OK && body.to_string().contains(doc) {
            true => Ok(()),
            false => Err(format!("{status} {body}")),
        }
    })
    .await;
    for task in &tasks {
        let path = format!("/v1/tasks/{task}");
        let (status, body) = front.get(&path, &front.alice).await;
        assert_eq!(status, StatusCode::OK, "task {task} lost: {body}");
        // A task whose server's holder died or whose answer crossed a NATS outage stays
        // `working` (its call was in flight on the dead replica or on the bus) instead of ending
        // `failed` with a retryable message or being run again by the new holder: waited for
        // only with MCP_BRIDGE_CHAOS_TASKS_FINISH=1 until that is fixed (issue 35, item 3/4).
        if knob("MCP_BRIDGE_CHAOS_TASKS_FINISH", 0) != 1 {
            eprintln!("task {task}: {} (not waited for)", body["status"]);
            continue;
        }
        let last = wait_until(&format!("task {task} finished"), WAIT, async || {
            let (status, body) = front.get(&path, &front.alice).await;
            match status == StatusCode::OK
                && ["completed", "failed", "cancelled"]
                    .contains(&body["status"].as_str().unwrap_or(""))
            {
                true => Ok(body),
                false => Err(format!("{status} {body}")),
            }
        })
        .await;
        eprintln!(
            "task {task}: {} {}",
            last["status"], last["task"]["status_message"]
        );
    }

    // 4. The stream resumed without loss, and saw every update a touch acknowledged.
    let touched = entries
        .iter()
        .filter(|e| e.kind == "touch" && matches!(e.outcome, Outcome::Ok))
        .count();
    // Some updates sent by the upstream while its holder was killed or NATS was away never reach
    // the stream, and no `bridge/events_lost` says so (an event is published after the call is
    // answered; one in flight on a dead replica, or past the retries, is gone). Asserted only
    // with MCP_BRIDGE_CHAOS_EVENTS_EXACT=1 until that is fixed; the figure is printed always.
    if knob("MCP_BRIDGE_CHAOS_EVENTS_EXACT", 0) == 1 {
        wait_until("every touch's update on the stream", WAIT, async || {
            let got = seen.lock().unwrap().updates.len();
            match got >= touched {
                true => Ok(()),
                false => Err(format!("{got} updates for {touched} touches")),
            }
        })
        .await;
    }
    let seen = seen.lock().unwrap();
    eprintln!(
        "event stream: {} resumes, {} updates for {touched} touches, {} events_lost",
        seen.resumes,
        seen.updates.len(),
        seen.lost.len()
    );
    assert!(seen.lost.is_empty(), "bridge/events_lost: {:?}", seen.lost);
    let bob_seen = bob_seen.lock().unwrap();
    eprintln!(
        "bob's event stream: {} resumes, {} events_lost",
        bob_seen.resumes,
        bob_seen.lost.len()
    );
    assert!(
        bob_seen.lost.is_empty(),
        "bridge/events_lost: {:?}",
        bob_seen.lost
    );
    eprintln!("chaos test took {:?}", test_started.elapsed());
    drop(std::mem::take(&mut replicas.dirs));
}

/// Writes the ledger as JSON lines: each fault, then each call, times in ms since the start.
fn write_ledger(path: &Path, zero: Instant, entries: &[Entry], faults: &[Fault]) {
    let ms = |t: Instant| t.saturating_duration_since(zero).as_secs_f64() * 1000.0;
    let mut lines = Vec::new();
    for fault in faults {
        let line = json!({"fault": fault.name, "started_ms": ms(fault.started), "ended_ms": ms(fault.ended)});
        lines.push(line.to_string());
    }
    for e in entries {
        let (outcome, detail) = match &e.outcome {
            Outcome::Ok => ("ok".to_owned(), String::new()),
            Outcome::Refused {
                status,
                code,
                message,
                ..
            } => (format!("{status} {code}"), message.clone()),
            Outcome::Rpc { message, .. } => ("rpc error".to_owned(), message.clone()),
            Outcome::Transport(error) => ("transport".to_owned(), error.clone()),
        };
        let line = json!({
            "id": e.id, "kind": e.kind, "replica": e.replica, "started_ms": ms(e.started),
            "ended_ms": ms(e.ended), "outcome": outcome, "retryable": e.outcome.retryable(),
            "detail": detail,
        });
        lines.push(line.to_string());
    }
    std::fs::write(path, lines.join("\n") + "\n").unwrap();
    eprintln!("ledger: {} lines in {}", lines.len(), path.display());
}

/// Prints the ledger's figures: calls by kind and outcome, and per fault the calls in flight
/// lost, the calls failed and the time to recover.
fn report(entries: &[Entry], faults: &[Fault]) {
    let mut kinds: Vec<&str> = entries.iter().map(|e| e.kind).collect();
    kinds.sort();
    kinds.dedup();
    eprintln!("== ledger: {} calls", entries.len());
    for kind in kinds {
        let of: Vec<&Entry> = entries.iter().filter(|e| e.kind == kind).collect();
        let ok = of
            .iter()
            .filter(|e| matches!(e.outcome, Outcome::Ok))
            .count();
        let mut failures: HashMap<String, usize> = HashMap::new();
        for e in of.iter().filter(|e| !matches!(e.outcome, Outcome::Ok)) {
            let key = match &e.outcome {
                Outcome::Ok => unreachable!(),
                Outcome::Refused {
                    status,
                    code,
                    message,
                    ..
                } => format!("{status} {code} via {:?}: {message:.50}", e.replica),
                Outcome::Rpc { message, .. } => format!("rpc {message:.60}"),
                Outcome::Transport(e) => format!("transport {e:.60}"),
            };
            *failures.entry(key).or_default() += 1;
        }
        eprintln!("{kind}: {} calls, {ok} ok, failed: {failures:?}", of.len());
    }
    for fault in faults {
        let in_flight = entries
            .iter()
            .filter(|e| e.started < fault.started && e.ended > fault.started)
            .filter(|e| !matches!(e.outcome, Outcome::Ok))
            .count();
        let failed: Vec<&Entry> = entries
            .iter()
            .filter(|e| !matches!(e.outcome, Outcome::Ok))
            .filter(|e| fault_of(faults, e).is_some_and(|f| std::ptr::eq(f, fault)))
            .collect();
        let recovered = match failed.iter().map(|e| e.started).max() {
            None => "no call failed".to_owned(),
            Some(last) => entries
                .iter()
                .filter(|e| matches!(e.outcome, Outcome::Ok) && e.started >= last)
                .map(|e| e.ended)
                .min()
                .map(|t| format!("{:?}", t.saturating_duration_since(fault.started)))
                .unwrap_or_else(|| "never".to_owned()),
        };
        if knob("MCP_BRIDGE_CHAOS_VERBOSE", 0) == 1 {
            for e in &failed {
                let at = e.started.saturating_duration_since(fault.started);
                eprintln!("  +{at:.1?} {} via {:?} {:?}", e.kind, e.replica, e.outcome);
            }
        }
        // Failures by half second since the fault began: where the window's failures fall.
        let mut timeline = Vec::new();
        for e in &failed {
            let at = e
                .started
                .saturating_duration_since(fault.started)
                .as_millis()
                / 500;
            let at = usize::try_from(at).unwrap_or(0);
            if timeline.len() <= at {
                timeline.resize(at + 1, 0);
            }
            timeline[at] += 1;
        }
        eprintln!(
            "fault {}: lasted {:?}; {in_flight} calls in flight lost, {} failed; recovered after {recovered}; failures per 0.5 s: {timeline:?}",
            fault.name,
            fault.ended - fault.started,
            failed.len()
        );
    }
}
