//! Benchmarks of mcp-bridge side by side with a direct MCP client and with mcpo (BENCHMARKS.md).
//!
//! `scripts/bench.sh` (`cargo bench --bench bridge`) runs the full sizes against the release
//! build of the service. Without `--bench`, as `cargo test --all-targets` runs it, it is a smoke
//! run with tiny sizes on the debug build, so the harness cannot rot; it fails on any error but
//! asserts no timing. `BENCH_ONLY=idle,calls,keepalive,instructions,fanout,catalogue,replicas` picks
//! sections, `BENCH_UPSTREAMS=rs,ev` the upstreams and
//! `BENCH_ROUTES=direct,floor,proxy,rest,rest-raw,mcp,mcp-raw,mcpo` the routes of the tool-call
//! section (`floor`, `proxy`, `rest-raw` and `mcp-raw` are a raw HTTP/1.1 client that parses
//! nothing, to the upstream, to it through a bare hyper proxy, and to the bridge). The
//! `replicas` section runs only when `BENCH_POSTGRES` (a PostgreSQL server's URL, where it
//! creates and drops a database of its own) and `BENCH_NATS` (a NATS server with JetStream) are
//! set. `BENCH_BRIDGE=path` runs that build of the service instead of this one's, so two commits
//! are measured by one harness.
//!
//! This binary is also the minimal stdio MCP server the catalogue and boot benchmarks register:
//! `bridge --stdio-server N` serves `echo` and N more tools on stdin/stdout; and the bare proxy
//! of the `proxy` route: `bridge --proxy URL` forwards every request to URL and prints its port.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use mcp_bridge::config::Config;
use mcp_bridge::http::auth::Auth;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{
    StreamableHttpClientTransport, StreamableHttpServerConfig, StreamableHttpService,
};
use rmcp::{ErrorData, Peer, RoleClient, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

const SECRET: &str = "benchmark-secret-benchmark-secret";
const ECHO_ARGS: &str = r#"{"message":"hello from the benchmark"}"#;

/// How much of everything one run does.
struct Sizes {
    warmup: Duration,
    /// Measured time per route, in `rounds` turns.
    run: Duration,
    rounds: u32,
    concurrency: &'static [usize],
    fanout_agents: usize,
    servers: usize,
    tools_per_server: usize,
    list_samples: usize,
    /// Concurrencies of the tool calls through replicas.
    replica_concurrency: &'static [usize],
    /// `kill -9` takeovers measured, and the lease of the replicas.
    takeovers: usize,
    lease_secs: u64,
}

const FULL: Sizes = Sizes {
    warmup: Duration::from_secs(1),
    run: Duration::from_secs(6),
    rounds: 6,
    concurrency: &[1, 32],
    fanout_agents: 1000,
    servers: 100,
    tools_per_server: 100,
    list_samples: 300,
    replica_concurrency: &[1, 8],
    takeovers: 10,
    lease_secs: 10,
};

const SMOKE: Sizes = Sizes {
    warmup: Duration::from_millis(20),
    run: Duration::from_millis(200),
    rounds: 2,
    concurrency: &[1, 4],
    fanout_agents: 8,
    servers: 3,
    tools_per_server: 5,
    list_samples: 3,
    replica_concurrency: &[1, 2],
    takeovers: 1,
    lease_secs: 2,
};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    if let Some(at) = args.iter().position(|a| a == "--stdio-server") {
        let tools = args.get(at + 1).and_then(|n| n.parse().ok()).unwrap_or(0);
        return runtime.block_on(stdio_server(tools));
    }
    if let Some(at) = args.iter().position(|a| a == "--proxy") {
        let upstream = args.get(at + 1).expect("--proxy URL");
        return runtime.block_on(bare_proxy(upstream));
    }
    let full = args.iter().any(|a| a == "--bench");
    let wanted = |section: &str| listed("BENCH_ONLY", section);
    let _ = rustls::crypto::ring::default_provider().install_default();
    runtime.block_on(async {
        let bench = Bench::new(if full { FULL } else { SMOKE }, full);
        let mut report = Report::default();
        report.line(&format!(
            "# mcp-bridge benchmarks ({})\n",
            if full {
                "full"
            } else {
                "smoke run, tiny sizes"
            }
        ));
        report.line(&machine());
        if wanted("idle") {
            bench.idle(&mut report).await;
        }
        if wanted("calls") {
            bench.calls(&mut report).await;
        }
        if wanted("keepalive") {
            bench.kept_alive(&mut report).await;
        }
        if wanted("instructions") {
            bench.instructions(&mut report).await;
        }
        if wanted("fanout") {
            bench.fanout(&mut report).await;
        }
        if wanted("catalogue") {
            bench.catalogue_and_boot(&mut report).await;
        }
        if wanted("replicas") {
            bench.replicas(&mut report).await;
        }
        report.finish(full);
    });
}

// ---- the report ----

#[derive(Default)]
struct Report {
    text: String,
}

impl Report {
    fn line(&mut self, line: &str) {
        println!("{line}");
        self.text.push_str(line);
        self.text.push('\n');
    }

    fn finish(&self, full: bool) {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench");
        let path = dir.join(if full { "report.md" } else { "smoke.md" });
        if std::fs::create_dir_all(&dir).is_ok() && std::fs::write(&path, &self.text).is_ok() {
            println!("report written to {}", path.display());
        }
    }
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    format!("Machine: {cpu}, {cores} cores; bridge and harness built with the {profile} profile.\n")
}

// ---- measuring ----

struct Stats {
    calls: usize,
    errors: usize,
    first_error: Option<String>,
    per_sec: f64,
    p50: Duration,
    p99: Duration,
    /// The bridge's CPU time (user and system, all threads) per successful call.
    bridge_cpu: Duration,
    /// The part of `bridge_cpu` spent in the kernel (system time).
    bridge_system: Duration,
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((sorted.len() as f64) * p).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// What the rounds of one route measured so far.
#[derive(Default)]
struct Tally {
    latencies: Vec<Duration>,
    errors: usize,
    first_error: Option<String>,
    elapsed: Duration,
    bridge_cpu: Cpu,
}

impl Tally {
    fn add(&mut self, (latencies, errors, first_error): Measured, elapsed: Duration, cpu: Cpu) {
        self.latencies.extend(latencies);
        self.bridge_cpu = self.bridge_cpu + cpu;
        self.errors += errors;
        self.first_error = self.first_error.take().or(first_error);
        self.elapsed += elapsed;
    }

    fn stats(mut self) -> Stats {
        self.latencies.sort_unstable();
        Stats {
            calls: self.latencies.len(),
            errors: self.errors,
            per_sec: self.latencies.len() as f64 / self.elapsed.as_secs_f64(),
            p50: percentile(&self.latencies, 0.50),
            p99: percentile(&self.latencies, 0.99),
            bridge_cpu: self.bridge_cpu.total() / self.latencies.len().max(1) as u32,
            bridge_system: self.bridge_cpu.system / self.latencies.len().max(1) as u32,
            first_error: self.first_error,
        }
    }
}

/// Latencies of the calls that succeeded, how many failed, and the first failure.
type Measured = (Vec<Duration>, usize, Option<String>);

/// CPU time of a process: in its own code (user) and in the kernel on its behalf (system).
#[derive(Clone, Copy, Default)]
struct Cpu {
    user: Duration,
    system: Duration,
}

impl Cpu {
    fn total(self) -> Duration {
        self.user + self.system
    }
}

impl std::ops::Add for Cpu {
    type Output = Cpu;

    fn add(self, other: Cpu) -> Cpu {
        Cpu {
            user: self.user + other.user,
            system: self.system + other.system,
        }
    }
}

impl std::ops::Sub for Cpu {
    type Output = Cpu;

    fn sub(self, before: Cpu) -> Cpu {
        Cpu {
            user: self.user.saturating_sub(before.user),
            system: self.system.saturating_sub(before.system),
        }
    }
}

/// CPU time process `pid` has used so far (every thread), from `/proc/<pid>/stat`.
fn cpu_of(pid: u32) -> Cpu {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid)).expect("/proc/<pid>/stat");
    // Fields after the command name (which may hold spaces): utime and stime are the 12th
    // and 13th, in clock ticks of 1/100 s (USER_HZ, fixed for /proc on Linux).
    let mut ticks = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().skip(11).take(2))
        .into_iter()
        .flatten()
        .map(|t| Duration::from_millis(t.parse::<u64>().expect("a tick count") * 10));
    Cpu {
        user: ticks.next().expect("utime"),
        system: ticks.next().expect("stime"),
    }
}

/// Runs calls from `concurrency` workers in a closed loop for `run`, each with a `Caller` of
/// its own from `caller`; every worker makes at least one call.
async fn phase(concurrency: usize, run: Duration, caller: impl Fn() -> Caller) -> Measured {
    let deadline = Instant::now() + run;
    let workers: Vec<_> = (0..concurrency)
        .map(|_| {
            let mut caller = caller();
            tokio::spawn(async move {
                let (mut latencies, mut errors, mut first) = (Vec::new(), 0, None);
                loop {
                    let sent = Instant::now();
                    match caller.call().await {
                        Ok(()) => latencies.push(sent.elapsed()),
                        Err(error) => {
                            errors += 1;
                            first.get_or_insert(error);
                        }
                    }
                    if Instant::now() >= deadline {
                        return (latencies, errors, first);
                    }
                }
            })
        })
        .collect();
    let mut all = (Vec::new(), 0, None);
    for worker in workers {
        let (latencies, errors, first) = worker.await.expect("a load worker");
        all.0.extend(latencies);
        all.1 += errors;
        all.2 = all.2.or(first);
    }
    all
}

/// Whether the comma-separated list in `variable` names `key` (an unset list names everything).
fn listed(variable: &str, key: &str) -> bool {
    let list = std::env::var(variable).unwrap_or_default();
    list.is_empty() || list.split(',').any(|k| k.trim() == key)
}

// ---- the service under test ----

struct Bridge {
    child: tokio::process::Child,
    base: String,
    client: reqwest::Client,
    admin: String,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

impl Bridge {
    /// Spawns the real binary over `data_dir` and waits until it answers.
    async fn start(data_dir: &Path, auth: &Auth) -> Bridge {
        Bridge::start_with(data_dir, auth, &[]).await
    }

    /// `start` with more variables in the service's environment.
    async fn start_with(data_dir: &Path, auth: &Auth, env: &[(&str, &str)]) -> Bridge {
        Bridge::start_under(data_dir, auth, env, &[]).await
    }

    /// `start_with`, the binary run by `wrapper` (a command and its arguments, e.g. valgrind)
    /// when it is not empty.
    async fn start_under(
        data_dir: &Path,
        auth: &Auth,
        env: &[(&str, &str)],
        wrapper: &[String],
    ) -> Bridge {
        let port = free_port();
        // `BENCH_BRIDGE` runs another build of the service (a baseline) in the same harness.
        let binary = std::env::var("BENCH_BRIDGE")
            .unwrap_or_else(|_| env!("CARGO_BIN_EXE_mcp-bridge").to_owned());
        let mut command = match wrapper.split_first() {
            Some((program, args)) => {
                let mut command = tokio::process::Command::new(program);
                command.args(args).arg(binary);
                command
            }
            None => tokio::process::Command::new(binary),
        };
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("MCP_BRIDGE_") {
                command.env_remove(name);
            }
        }
        let log = std::fs::File::create(data_dir.join("bridge.log")).expect("a log file");
        let child = command
            .arg("serve")
            .env("MCP_BRIDGE_BIND", format!("127.0.0.1:{port}"))
            .env("MCP_BRIDGE_DATA_DIR", data_dir)
            .env("MCP_BRIDGE_JWT_SECRET", SECRET)
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .expect("the mcp-bridge binary starts");
        let bridge = Bridge {
            child,
            base: format!("http://127.0.0.1:{port}"),
            client: reqwest::Client::new(),
            admin: auth
                .mint("bench-admin", true, Duration::from_secs(86400))
                .unwrap(),
        };
        let bound = Duration::from_secs(if wrapper.is_empty() { 30 } else { 300 });
        let deadline = Instant::now() + bound;
        while !bridge.answers("/healthz").await {
            assert!(
                Instant::now() < deadline,
                "mcp-bridge did not answer within {bound:?}; see {}",
                data_dir.join("bridge.log").display()
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        bridge
    }

    async fn answers(&self, path: &str) -> bool {
        let resp = self.client.get(format!("{}{path}", self.base)).send().await;
        resp.is_ok_and(|r| r.status().is_success())
    }

    fn pid(&self) -> u32 {
        self.child.id().expect("mcp-bridge is running")
    }

    fn cpu_time(&self) -> Cpu {
        cpu_of(self.pid())
    }

    /// Resident memory (VmRSS), in MiB.
    fn rss_mib(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .expect("/proc/<pid>/status");
        let kib: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS in /proc/<pid>/status");
        kib / 1024.0
    }

    async fn get(&self, path: &str) -> Value {
        let resp = self
            .client
            .get(format!("{}{path}", self.base))
            .bearer_auth(&self.admin)
            .send()
            .await
            .expect("mcp-bridge answers");
        assert!(resp.status().is_success(), "GET {path}: {}", resp.status());
        resp.json().await.expect("a JSON answer")
    }

    async fn register(&self, config: Value) {
        let resp = self
            .client
            .post(format!("{}/v1/servers", self.base))
            .bearer_auth(&self.admin)
            .json(&json!({ "config": config }))
            .send()
            .await
            .expect("mcp-bridge answers");
        let status = resp.status();
        let body = resp.text().await.unwrap_or_default();
        assert_eq!(status.as_u16(), 201, "registering failed: {body}");
    }

    /// `GET /v1/servers/{server_id}`'s `server`, when it answers 200.
    async fn server(&self, server_id: &str) -> Option<Value> {
        let resp = self
            .client
            .get(format!("{}/v1/servers/{server_id}", self.base))
            .bearer_auth(&self.admin)
            .send()
            .await
            .ok()
            .filter(|r| r.status().is_success())?;
        let mut body: Value = resp.json().await.ok()?;
        Some(body["server"].take())
    }

    /// SIGKILL, then waits for the process to end.
    async fn kill9(mut self) {
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
    }

    /// SIGTERM, then waits for the process to end.
    async fn stop(mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status();
        if tokio::time::timeout(Duration::from_secs(20), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

// ---- upstreams ----

/// The minimal MCP server: `echo` and `tools` more, over Streamable HTTP in this process or
/// over stdio as a child of the bridge.
#[derive(Clone)]
struct EchoServer {
    tools: Arc<Vec<Tool>>,
    peers: Arc<Mutex<Vec<Peer<RoleServer>>>>,
}

impl EchoServer {
    fn new(tools: usize) -> Self {
        let schema = |props: Value| {
            let schema = json!({ "type": "object", "properties": props });
            Arc::new(schema.as_object().cloned().unwrap_or_default())
        };
        let mut list = vec![Tool::new(
            "echo",
            "Echoes back the message",
            schema(json!({ "message": { "type": "string" } })),
        )];
        list.extend((0..tools).map(|i| {
            Tool::new(
                format!("tool_{i:04}"),
                format!("Synthetic tool number {i} of a large catalogue"),
                schema(json!({ "value": { "type": "integer" } })),
            )
        }));
        EchoServer {
            tools: Arc::new(list),
            peers: Arc::default(),
        }
    }

    /// Tells every connected client that the tool list changed.
    async fn notify_tools_changed(&self) {
        let peers = self.peers.lock().unwrap().clone();
        for peer in peers {
            let _ = peer.notify_tool_list_changed().await;
        }
    }
}

impl ServerHandler for EchoServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities: ServerCapabilities =
            serde_json::from_value(json!({ "tools": { "listChanged": true } })).unwrap_or_default();
        ServerConfig::new(capabilities).with_server_info(Implementation::new("bench-echo", "1.0"))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.peers.lock().unwrap().push(context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let message = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("message"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let text = format!("Echo: {message}");
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

async fn stdio_server(tools: usize) {
    let transport = (tokio::io::stdin(), tokio::io::stdout());
    if let Ok(running) = EchoServer::new(tools).serve(transport).await {
        let _ = running.waiting().await;
    }
}

/// The echo server over Streamable HTTP on a port of its own, in this process.
async fn http_echo_server() -> (EchoServer, String) {
    http_echo_server_with(true).await
}

/// The in-process server, with Nagle's algorithm off (`nodelay`) or left on, as many servers
/// written with hyper or axum leave it.
async fn http_echo_server_with(nodelay: bool) -> (EchoServer, String) {
    let server = EchoServer::new(0);
    let handler = server.clone();
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let app = axum::Router::new().route_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let listener = axum::serve::ListenerExt::tap_io(listener, move |tcp| {
        let _ = tcp.set_nodelay(nodelay);
    });
    tokio::spawn(async move { axum::serve(listener, app).await });
    (server, format!("http://{addr}/mcp"))
}

/// `bridge --proxy URL`: the least a proxy of these calls can do on this stack (tokio, hyper
/// on both sides). Each connection accepted gets one kept-alive connection to the upstream of
/// its own; each request goes there as it came (its `Host` made the upstream's), and its answer
/// comes back as it came, streamed, neither read nor parsed. No pool, no lock between
/// connections, no JSON, no authentication: what it costs a call is the kernel's work on two
/// connections and hyper's on both ends. It prints its port on stdout, then serves until killed.
async fn bare_proxy(upstream: &str) {
    use hyper::body::Incoming;
    use hyper_util::rt::TokioIo;
    let url = url::Url::parse(upstream).expect("a URL");
    let addr = url.socket_addrs(|| None).expect("a socket address")[0];
    let path: hyper::Uri = url.path().parse().expect("a path");
    let host = hyper::header::HeaderValue::from_str(
        &url[url::Position::BeforeHost..url::Position::AfterPort],
    )
    .expect("a host");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    println!("{}", listener.local_addr().unwrap().port());
    loop {
        let Ok((downstream, _)) = listener.accept().await else {
            continue;
        };
        let (path, host) = (path.clone(), host.clone());
        tokio::spawn(async move {
            let Ok(upstream) = tokio::net::TcpStream::connect(addr).await else {
                return;
            };
            let _ = (downstream.set_nodelay(true), upstream.set_nodelay(true));
            let handshake =
                hyper::client::conn::http1::handshake::<_, Incoming>(TokioIo::new(upstream));
            let Ok((sender, connection)) = handshake.await else {
                return;
            };
            tokio::spawn(connection);
            let sender = Arc::new(tokio::sync::Mutex::new(sender));
            let service =
                hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
                    let sender = sender.clone();
                    *request.uri_mut() = path.clone();
                    request
                        .headers_mut()
                        .insert(hyper::header::HOST, host.clone());
                    async move {
                        let answer = {
                            let mut sender = sender.lock().await;
                            sender.ready().await?;
                            sender.send_request(request)
                        };
                        answer.await
                    }
                });
            let served = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(downstream), service);
            let _ = served.await;
        });
    }
}

/// The bare proxy (`bridge --proxy URL`) in a process of its own, killed when dropped.
struct Proxy {
    child: tokio::process::Child,
    url: String,
}

impl Proxy {
    /// The proxy in front of `upstream`, an MCP endpoint; its `url` takes the same requests.
    async fn start(upstream: &str) -> Proxy {
        use tokio::io::AsyncBufReadExt;
        let mut child = tokio::process::Command::new(std::env::current_exe().expect("this binary"))
            .args(["--proxy", upstream])
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the bare proxy starts");
        let stdout = child.stdout.take().expect("its stdout");
        let mut port = String::new();
        let mut stdout = tokio::io::BufReader::new(stdout);
        let read = stdout.read_line(&mut port);
        tokio::time::timeout(Duration::from_secs(30), read)
            .await
            .expect("the bare proxy prints its port within 30 s")
            .expect("its port");
        let url = format!("http://127.0.0.1:{}/mcp", port.trim());
        Proxy { child, url }
    }

    fn cpu_time(&self) -> Cpu {
        cpu_of(self.child.id().expect("the bare proxy is running"))
    }
}

/// A peer's process, killed when dropped.
struct Process {
    _child: tokio::process::Child,
}

fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers")
}

/// server-everything over Streamable HTTP, when `scripts/test.sh` has installed it.
async fn everything_http() -> Option<(Process, String)> {
    let bin = peers_dir().join("node_modules/.bin/mcp-server-everything");
    if !bin.exists() {
        println!("(server-everything is not installed: run scripts/test.sh; skipped)");
        return None;
    }
    let port = free_port();
    let mut command = tokio::process::Command::new(bin);
    command.arg("streamableHttp").env("PORT", port.to_string());
    // Its /mcp answers a GET without a session with 400, so wait on a port that is open.
    let peer = spawn_until_open(command, port).await?;
    Some((peer, format!("http://127.0.0.1:{port}/mcp")))
}

async fn spawn_until_open(mut command: tokio::process::Command, port: u16) -> Option<Process> {
    let child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .ok()?;
    let deadline = Instant::now() + Duration::from_secs(60);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            Instant::now() < deadline,
            "port {port} did not open in 60 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Some(Process { _child: child })
}

/// mcpo in front of `upstream`, when `scripts/bench.sh` (or `scripts/test.sh`) has installed it.
async fn mcpo(upstream: &str) -> Option<(Process, String)> {
    let bin = peers_dir().join(".venv-mcpo/bin/mcpo");
    if !bin.exists() {
        println!("(mcpo is not installed: run scripts/bench.sh; skipped)");
        return None;
    }
    let port = free_port();
    let mut command = tokio::process::Command::new(bin);
    command.args([
        "--host",
        "127.0.0.1",
        "--port",
        &port.to_string(),
        "--server-type",
        "streamable-http",
        "--",
        upstream,
    ]);
    // uvicorn opens its port once mcpo's start-up, which connects to the upstream, is done.
    let peer = spawn_until_open(command, port).await?;
    Some((peer, format!("http://127.0.0.1:{port}")))
}

async fn mcp_client(url: &str, token: Option<&str>) -> Arc<RunningService<RoleClient, ()>> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    Arc::new(().serve(transport).await.expect("an MCP session"))
}

/// Opens one `GET /v1/events` stream per (tag, URL, token), each on a client (so a connection)
/// of its own, and waits until every one has answered 200. Each stream sends its tag and the
/// time it saw `notifications/tools/list_changed`, and stays open until the set is dropped.
async fn open_streams(
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

// ---- the benchmarks ----

struct Bench {
    sizes: Sizes,
    full: bool,
    auth: Auth,
}

/// One way to call the echo tool.
#[derive(Clone)]
enum Route {
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
enum Caller {
    Shared(Route),
    Raw(RawConn),
}

impl Caller {
    async fn call(&mut self) -> Result<(), String> {
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

    fn name(&self) -> &'static str {
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
    fn caller(&self) -> Caller {
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
    fn new(sizes: Sizes, full: bool) -> Self {
        let config = Config {
            jwt_secret: Some(SECRET.to_owned().into()),
            ..Config::default()
        };
        let auth = Auth::from_config(&config).expect("an HS256 key");
        Bench { sizes, full, auth }
    }

    fn token(&self, sub: &str) -> String {
        self.auth
            .mint(sub, false, Duration::from_secs(86400))
            .unwrap()
    }

    fn check(&self, what: &str, stats: &Stats) {
        if let Some(error) = &stats.first_error {
            let message = format!(
                "{what}: {} of {} calls failed, first: {error}",
                stats.errors,
                stats.calls + stats.errors
            );
            // A smoke run is a test: any failure fails it. A full run reports it and goes on.
            assert!(self.full, "{message}");
            println!("WARNING {message}");
        }
    }

    async fn idle(&self, report: &mut Report) {
        let dir = tempfile::tempdir().unwrap();
        let bridge = Bridge::start(dir.path(), &self.auth).await;
        tokio::time::sleep(Duration::from_secs(if self.full { 3 } else { 1 })).await;
        report.line("## Idle memory\n");
        report.line(&format!(
            "Fresh service, no servers, ready and idle: **{:.1} MiB** RSS.\n",
            bridge.rss_mib()
        ));
        bridge.stop().await;
    }

    async fn calls(&self, report: &mut Report) {
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
    async fn kept_alive(&self, report: &mut Report) {
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

    /// Instructions the bridge executes per call (callgrind), on REST and `/mcp`, each on one
    /// kept-alive connection, to an upstream over Streamable HTTP (the in-process Rust server)
    /// and over stdio (this binary as a server): counters zeroed after a warm-up, `n` calls,
    /// counters dumped, divided by `n`. Instruction counts repeat within a fraction of a percent
    /// on a noisy machine, unlike times. Needs valgrind (`apt-get install valgrind`).
    async fn instructions(&self, report: &mut Report) {
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
        let agent = self.token("bench-instructions");
        report.line("## Instructions per call\n");
        report.line(&format!(
            "The bridge's instructions per `echo` call (callgrind; {calls} calls after {warmup} \
             of warm-up, on one kept-alive connection; the upstream's own work is not counted).\n"
        ));
        report.line("| upstream | route | instructions per call |");
        report.line("|---|---|---:|");
        for (server_id, upstream) in [
            ("rs", "in-process Rust, Streamable HTTP"),
            ("st", "Rust, stdio"),
        ] {
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

    async fn fanout(&self, report: &mut Report) {
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

    async fn catalogue_and_boot(&self, report: &mut Report) {
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
        let list = |cursor: String| {
            let request = bridge
                .client
                .get(
                    url::Url::parse_with_params(
                        &format!("{}/v1/tools", bridge.base),
                        [("cursor", cursor)],
                    )
                    .unwrap(),
                )
                .bearer_auth(&agent);
            async move {
                let resp = request.send().await.expect("GET /v1/tools");
                assert_eq!(resp.status(), 200, "GET /v1/tools");
                let body: Value = resp.json().await.expect("a tool list");
                // Server tools only: the agent-bridge tools close the last page.
                let count = body["tools"].as_array().map_or(0, |tools| {
                    tools
                        .iter()
                        .filter(|t| t["name"].as_str().is_some_and(|n| n.contains("__")))
                        .count()
                });
                (count, body["next_cursor"].as_str().unwrap_or("").to_owned())
            }
        };
        // The whole catalogue, page by page.
        let walk = || async {
            let (mut total, mut cursor, mut pages) = (0, String::new(), 0);
            loop {
                let (count, next) = list(cursor).await;
                total += count;
                pages += 1;
                if next.is_empty() {
                    return (total, pages);
                }
                cursor = next;
            }
        };
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

// ---- replicas ----

/// What replicas of one bridge share: a PostgreSQL database and a NATS subject prefix of their
/// own, dropped and deleted when this is dropped (also when a smoke run fails).
struct Shared {
    server: String,
    name: String,
    database: String,
    nats: String,
    prefix: String,
    lease: String,
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
    async fn replicas(&self, report: &mut Report) {
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

// ---- instruction counts ----

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

/// An MCP session opened by hand: its id and the protocol version the server chose.
struct McpSession {
    id: String,
    version: String,
}

impl McpSession {
    /// `initialize` (asking for 2025-11-25), then `notifications/initialized`, at `url`.
    async fn open(client: &reqwest::Client, url: &str, token: Option<&str>) -> McpSession {
        let post = |body: Value, session: Option<&McpSession>| {
            let mut request = client
                .post(url)
                .header("accept", "application/json, text/event-stream")
                .json(&body);
            if let Some(token) = token {
                request = request.bearer_auth(token);
            }
            if let Some(session) = session {
                request = request
                    .header("mcp-session-id", &session.id)
                    .header("mcp-protocol-version", &session.version);
            }
            request.send()
        };
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"}}});
        let resp = post(init, None).await.expect("initialize");
        let id = resp
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .expect("a session id")
            .to_owned();
        let text = resp.text().await.expect("the initialize answer");
        // A JSON body, or an event stream whose `data:` line holds it.
        let version = text
            .lines()
            .map(|line| line.strip_prefix("data:").unwrap_or(line))
            .filter_map(|json| serde_json::from_str::<Value>(json).ok())
            .find_map(|answer| Some(answer["result"]["protocolVersion"].as_str()?.to_owned()))
            .unwrap_or_else(|| panic!("no protocol version in the initialize answer: {text}"));
        let session = McpSession { id, version };
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let resp = post(initialized, Some(&session)).await;
        resp.expect("initialized")
            .bytes()
            .await
            .expect("the initialized answer");
        session
    }
}

/// A client of the bridge on one kept-alive connection: `POST /v1/tools/call`, or `/mcp`
/// `tools/call` in a 2025-11-25 session, both read to the end and checked.
struct KeptAlive {
    client: reqwest::Client,
    url: String,
    token: String,
    body: Value,
    session: Option<String>,
}

impl KeptAlive {
    fn rest(base: &str, token: &str, name: &str) -> Self {
        KeptAlive {
            client: reqwest::Client::new(),
            url: format!("{base}/v1/tools/call"),
            token: token.to_owned(),
            body: json!({ "name": name, "arguments": serde_json::from_str::<Value>(ECHO_ARGS).unwrap() }),
            session: None,
        }
    }

    async fn mcp(base: &str, token: &str, name: &str) -> Self {
        let client = reqwest::Client::new();
        let url = format!("{base}/mcp");
        let session = McpSession::open(&client, &url, Some(token)).await;
        let arguments: Value = serde_json::from_str(ECHO_ARGS).unwrap();
        KeptAlive {
            body: json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": name, "arguments": arguments}}),
            client,
            url,
            token: token.to_owned(),
            session: Some(session.id),
        }
    }

    async fn call(&self) -> Result<(), String> {
        let mut request = self
            .client
            .post(&self.url)
            .bearer_auth(&self.token)
            .json(&self.body);
        // `/mcp` wants both; on REST, text/event-stream would ask for the call streamed.
        if let Some(session) = &self.session {
            request = request
                .header("accept", "application/json, text/event-stream")
                .header("mcp-session-id", session);
        }
        let resp = request.send().await.map_err(|e| e.to_string())?;
        let status = resp.status();
        let text = resp.text().await.map_err(|e| e.to_string())?;
        match status.is_success() && text.contains("hello from the benchmark") {
            true => Ok(()),
            false => Err(format!("{status}: {text}")),
        }
    }
}

// ---- a raw HTTP/1.1 client, the floor ----

/// One raw route's request, built once, and the idle connections of its workers. Its client
/// parses no JSON and keeps every connection alive, so it costs the shared cores close to
/// nothing: what is left of a call's time is the server's.
struct Raw {
    addr: std::net::SocketAddr,
    request: Vec<u8>,
    /// Where the JSON-RPC id's digits are in `request`: requests in flight in one MCP session
    /// need ids of their own, so each call writes the next number there.
    id_digits: Option<std::ops::Range<usize>>,
    next_id: std::sync::atomic::AtomicU64,
    /// Kept between phases, so a phase's workers reuse the connections of the one before.
    idle: Mutex<Vec<tokio::net::TcpStream>>,
}

/// What a successful answer holds: the echo tool's text.
const ECHOED: &[u8] = b"Echo: hello from the benchmark";
/// The JSON-RPC id of a raw `tools/call`, rewritten per call.
const RAW_ID: &str = "000000000000";

impl Raw {
    /// `POST url` with `headers` and `body`; `body` may hold the JSON string `RAW_ID` once, as
    /// the request's id.
    fn new(url: &str, headers: &[(&str, &str)], body: &str) -> Raw {
        let url = url::Url::parse(url).expect("a URL");
        let addr = url.socket_addrs(|| None).expect("a socket address")[0];
        let mut request = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n",
            url.path(),
            &url[url::Position::BeforeHost..url::Position::AfterPort],
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        let id_digits = body.find(&format!("\"{RAW_ID}\"")).map(|at| {
            let start = request.len() + at + 1;
            start..start + RAW_ID.len()
        });
        request.push_str(body);
        Raw {
            addr,
            request: request.into_bytes(),
            id_digits,
            next_id: Default::default(),
            idle: Mutex::default(),
        }
    }

    /// `tools/call` of `name` with the echo arguments, in MCP `session`.
    fn mcp(url: &str, token: Option<&str>, session: &McpSession, name: &str) -> Raw {
        let bearer = token.map(|t| format!("Bearer {t}"));
        let mut headers = vec![
            ("Accept", "application/json, text/event-stream"),
            ("Mcp-Session-Id", session.id.as_str()),
            ("MCP-Protocol-Version", session.version.as_str()),
        ];
        headers.extend(bearer.as_deref().map(|b| ("Authorization", b)));
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":"{RAW_ID}","method":"tools/call","params":{{"name":"{name}","arguments":{ECHO_ARGS}}}}}"#
        );
        Raw::new(url, &headers, &body)
    }

    /// The bridge's `POST /v1/tools/call` of `name`.
    fn rest(base: &str, token: &str, name: &str) -> Raw {
        let bearer = format!("Bearer {token}");
        let headers = [
            ("Accept", "application/json"),
            ("Authorization", bearer.as_str()),
        ];
        let body = format!(r#"{{"name":"{name}","arguments":{ECHO_ARGS}}}"#);
        Raw::new(&format!("{base}/v1/tools/call"), &headers, &body)
    }
}

/// A load worker's connection of a raw route, given back to the route's idle ones when dropped.
struct RawConn {
    raw: Arc<Raw>,
    stream: Option<tokio::net::TcpStream>,
    request: Vec<u8>,
    /// The answer being read, reused from call to call.
    buf: Vec<u8>,
}

impl Drop for RawConn {
    fn drop(&mut self) {
        if let Some(stream) = self.stream.take() {
            self.raw.idle.lock().unwrap().push(stream);
        }
    }
}

/// How a raw exchange failed; `Closed` before any byte of the answer on a connection kept from
/// before means the server closed it while idle, and the call is sent again on a new one.
enum RawError {
    Closed,
    Failed(String),
}

impl From<std::io::Error> for RawError {
    fn from(error: std::io::Error) -> Self {
        RawError::Failed(error.to_string())
    }
}

impl RawConn {
    fn new(raw: Arc<Raw>) -> RawConn {
        let stream = raw.idle.lock().unwrap().pop();
        RawConn {
            stream,
            request: raw.request.clone(),
            buf: Vec::with_capacity(16 * 1024),
            raw,
        }
    }

    async fn call(&mut self) -> Result<(), String> {
        if let Some(digits) = self.raw.id_digits.clone() {
            let mut id = self
                .raw
                .next_id
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            for digit in self.request[digits].iter_mut().rev() {
                *digit = b'0' + (id % 10) as u8;
                id /= 10;
            }
        }
        let kept = self.stream.is_some();
        let mut result = self.exchange().await;
        if kept && matches!(result, Err(RawError::Closed)) {
            self.stream = None;
            result = self.exchange().await;
        }
        result.map_err(|error| {
            self.stream = None;
            match error {
                RawError::Closed => "the server closed the connection".to_owned(),
                RawError::Failed(error) => error,
            }
        })
    }

    /// Sends the request and reads the answer: status line and headers, then the body by its
    /// length or its chunks (the event stream of a Streamable HTTP answer ends with the call's).
    async fn exchange(&mut self) -> Result<(), RawError> {
        use tokio::io::AsyncWriteExt;
        let stream = match self.stream.take() {
            Some(stream) => stream,
            None => {
                let stream = tokio::net::TcpStream::connect(self.raw.addr).await?;
                stream.set_nodelay(true)?;
                stream
            }
        };
        let stream = self.stream.insert(stream);
        if stream.write_all(&self.request).await.is_err() {
            return Err(RawError::Closed);
        }
        self.buf.clear();
        let head = fill_until(stream, &mut self.buf, 0, b"\r\n\r\n").await?;
        let (status, length, chunked, close) = response_head(&self.buf[..head])?;
        let body = match (length, chunked) {
            (Some(length), _) => {
                fill_to(stream, &mut self.buf, head + length).await?;
                head..head + length
            }
            (None, true) => head..dechunk(stream, &mut self.buf, head).await?,
            (None, false) => return Err(RawError::Failed("an answer without framing".into())),
        };
        if close {
            self.stream = None;
        }
        let text = &self.buf[body];
        match status == 200 && memchr::memmem::find(text, ECHOED).is_some() {
            true => Ok(()),
            false => Err(RawError::Failed(format!(
                "{status}: {}",
                String::from_utf8_lossy(text)
            ))),
        }
    }
}

/// The status and the framing of an answer's head: content length, chunked, connection close.
fn response_head(head: &[u8]) -> Result<(u16, Option<usize>, bool, bool), RawError> {
    let text = std::str::from_utf8(head).map_err(|e| RawError::Failed(e.to_string()))?;
    let mut lines = text.split("\r\n");
    let status = lines
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| RawError::Failed(format!("not an HTTP answer: {text}")))?;
    let (mut length, mut chunked, mut close) = (None, false, false);
    for (name, value) in lines.filter_map(|line| line.split_once(':')) {
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = value.parse().ok();
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.eq_ignore_ascii_case("chunked");
        } else if name.eq_ignore_ascii_case("connection") {
            close = value.eq_ignore_ascii_case("close");
        }
    }
    Ok((status, length, chunked, close))
}

/// Reads until `buf` holds `needle` at or after `from`; the index just past it.
async fn fill_until(
    stream: &mut tokio::net::TcpStream,
    buf: &mut Vec<u8>,
    from: usize,
    needle: &[u8],
) -> Result<usize, RawError> {
    loop {
        if let Some(at) = memchr::memmem::find(&buf[from..], needle) {
            return Ok(from + at + needle.len());
        }
        read_more(stream, buf).await?;
    }
}

/// Reads until `buf` holds at least `len` bytes.
async fn fill_to(
    stream: &mut tokio::net::TcpStream,
    buf: &mut Vec<u8>,
    len: usize,
) -> Result<(), RawError> {
    while buf.len() < len {
        read_more(stream, buf).await?;
    }
    Ok(())
}

async fn read_more(stream: &mut tokio::net::TcpStream, buf: &mut Vec<u8>) -> Result<(), RawError> {
    use tokio::io::AsyncReadExt;
    buf.reserve(4096);
    match stream.read_buf(buf).await {
        Ok(0) | Err(_) if buf.is_empty() => Err(RawError::Closed),
        Ok(0) => Err(RawError::Failed("the answer ended early".into())),
        Ok(_) => Ok(()),
        Err(error) => Err(error.into()),
    }
}

/// Reads a chunked body that starts at `start` up to its last, empty chunk, moving the chunks'
/// data together in place (so a text split over two chunks is found whole); the end of the data.
async fn dechunk(
    stream: &mut tokio::net::TcpStream,
    buf: &mut Vec<u8>,
    start: usize,
) -> Result<usize, RawError> {
    let (mut data_end, mut at) = (start, start);
    loop {
        let line_end = fill_until(stream, buf, at, b"\r\n").await?;
        let line = &buf[at..line_end - 2];
        let size = line.split(|&b| b == b';').next().unwrap_or_default();
        let size = std::str::from_utf8(size)
            .ok()
            .and_then(|s| usize::from_str_radix(s.trim(), 16).ok())
            .ok_or_else(|| RawError::Failed("a bad chunk size".into()))?;
        if size == 0 {
            // No trailers are sent here: the empty chunk's line and one more CRLF.
            fill_to(stream, buf, line_end + 2).await?;
            return Ok(data_end);
        }
        fill_to(stream, buf, line_end + size + 2).await?;
        buf.copy_within(line_end..line_end + size, data_end);
        data_end += size;
        at = line_end + size + 2;
    }
}
