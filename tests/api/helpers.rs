//! The test harness: the real service on port 0 with a temporary data dir, typed HTTP helpers,
//! tokens, and the real MCP peers installed by `scripts/test.sh`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use mcp_bridge::config::Config;
use mcp_bridge::http::auth::Auth;
use mcp_bridge::startup::Application;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio_util::sync::CancellationToken;

pub const SECRET: &str = "integration-test-secret";

/// How long a test waits for something that should happen at once (a generous bound for a
/// loaded machine; a passing test waits only as long as it takes).
pub const WAIT: Duration = Duration::from_secs(15);

pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    pub data_dir: Arc<tempfile::TempDir>,
    pub admin: String,
    pub alice: String,
    pub bob: String,
    /// The PostgreSQL database it runs on (`MCP_BRIDGE_TEST_POSTGRES`), dropped with its data dir.
    database: Option<String>,
    shutdown: CancellationToken,
    handle: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

/// The service's config over `data_dir`: its store the SQLite file there, or with
/// `MCP_BRIDGE_TEST_POSTGRES` set a PostgreSQL database of the data dir's own.
pub fn config(data_dir: &Path) -> Config {
    Config {
        bind: "127.0.0.1:0".into(),
        data_dir: data_dir.to_owned(),
        database_url: postgres_server().map(|server| postgres_database(&server, data_dir)),
        jwt_secret: Some(SECRET.to_owned().into()),
        max_body_bytes: 64 * 1024,
        ..Config::default()
    }
}

/// The service on port 0 with a fresh data dir and merged pages of `page_size` entries.
pub async fn spawn_app_paged(page_size: usize) -> TestApp {
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let mut config = config(data_dir.path());
    config.page_size = page_size;
    spawn_app_with(data_dir, config).await
}

/// The service on port 0 with a fresh data dir.
pub async fn spawn_app() -> TestApp {
    spawn_app_in(Arc::new(tempfile::tempdir().unwrap())).await
}

/// The service on port 0 over an existing data dir (a restart).
pub async fn spawn_app_in(data_dir: Arc<tempfile::TempDir>) -> TestApp {
    spawn_app_with(data_dir.clone(), config(data_dir.path())).await
}

pub async fn spawn_app_with(data_dir: Arc<tempfile::TempDir>, config: Config) -> TestApp {
    if std::env::var_os("TEST_LOG").is_some() {
        mcp_bridge::telemetry::init("info,mcp_bridge=debug");
    }
    let auth = Auth::from_config(&config).unwrap();
    let database = config.database_url.clone().filter(|url| is_postgres(url));
    if let Some(url) = &database {
        create_database(url).await;
    }
    let app = Application::build(config)
        .await
        .expect("the service starts");
    let base = format!("http://{}", app.addr());
    let shutdown = app.shutdown_token();
    let handle = tokio::spawn(app.run_until_stopped());
    let hour = Duration::from_secs(3600);
    let test_app = TestApp {
        base,
        client: reqwest::Client::new(),
        admin: auth.mint("root", true, hour).unwrap(),
        alice: auth.mint("alice", false, hour).unwrap(),
        bob: auth.mint("bob", false, hour).unwrap(),
        data_dir,
        database,
        shutdown,
        handle: Some(handle),
    };
    test_app.wait_ready().await;
    test_app
}

impl TestApp {
    /// A handle on the service running elsewhere (a process of its own) at `base`, with tokens
    /// for its [`SECRET`].
    pub fn at(base: &str, data_dir: Arc<tempfile::TempDir>) -> Self {
        let auth = Auth::from_config(&Config {
            jwt_secret: Some(SECRET.to_owned().into()),
            ..Config::default()
        })
        .unwrap();
        let hour = Duration::from_secs(3600);
        Self {
            base: base.to_owned(),
            client: reqwest::Client::new(),
            admin: auth.mint("root", true, hour).unwrap(),
            alice: auth.mint("alice", false, hour).unwrap(),
            bob: auth.mint("bob", false, hour).unwrap(),
            data_dir,
            database: None,
            shutdown: CancellationToken::new(),
            handle: None,
        }
    }
}

/// The service with quick health pings and reconnects.
pub async fn spawn_watchful_app() -> TestApp {
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let mut config = config(data_dir.path());
    config.ping_interval_secs = 1;
    config.ping_timeout_secs = 1;
    config.reconnect_base_ms = 100;
    config.reconnect_max_secs = 1;
    spawn_app_with(data_dir, config).await
}

impl TestApp {
    /// A stateless (2026-07-28) `tools/call` on `/mcp` as `token`, as raw HTTP: `meta` gets the
    /// era's fields added.
    pub async fn stateless_mcp_call(
        &self,
        token: &str,
        name: &str,
        arguments: Value,
        mut meta: Value,
    ) -> reqwest::Response {
        meta["io.modelcontextprotocol/protocolVersion"] = json!("2026-07-28");
        meta["io.modelcontextprotocol/clientCapabilities"] = json!({});
        meta["io.modelcontextprotocol/clientInfo"] = json!({"name": "raw", "version": "1"});
        let body = json!({
            "jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": meta},
        });
        self.client
            .post(format!("{}/mcp", self.base))
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", name)
            .json(&body)
            .send()
            .await
            .unwrap()
    }
}

impl TestApp {
    async fn wait_ready(&self) {
        let url = format!("{}/readyz", self.base);
        wait_until(
            "the service becoming ready",
            Duration::from_secs(5),
            async || match self.client.get(&url).send().await {
                Ok(resp) if resp.status() == StatusCode::OK => Ok(()),
                other => Err(format!("{other:?}")),
            },
        )
        .await
    }

    /// Stops the service as SIGTERM would, waiting for every server to stop.
    pub async fn stop(mut self) {
        self.shutdown.cancel();
        if let Some(handle) = self.handle.take() {
            handle.await.unwrap().unwrap();
        }
    }

    pub async fn send(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut req = self.client.request(method, format!("{}{path}", self.base));
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        if let Some(body) = body {
            req = req.json(&body);
        }
        let resp = req.send().await.expect("the service answers");
        let status = resp.status();
        let text = resp.text().await.unwrap();
        let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, value)
    }

    pub async fn get(&self, path: &str, token: &str) -> (StatusCode, Value) {
        self.send(Method::GET, path, Some(token), None).await
    }

    pub async fn post(&self, path: &str, token: &str, body: Value) -> (StatusCode, Value) {
        self.send(Method::POST, path, Some(token), Some(body)).await
    }

    pub async fn patch(&self, path: &str, token: &str, body: Value) -> (StatusCode, Value) {
        self.send(Method::PATCH, path, Some(token), Some(body))
            .await
    }

    pub async fn put(&self, path: &str, token: &str, body: Value) -> (StatusCode, Value) {
        self.send(Method::PUT, path, Some(token), Some(body)).await
    }

    pub async fn delete(&self, path: &str, token: &str) -> (StatusCode, Value) {
        self.send(Method::DELETE, path, Some(token), None).await
    }

    /// Registers `config` as the admin and expects success.
    pub async fn register(&self, config: Value) -> Value {
        let (status, body) = self
            .post("/v1/servers", &self.admin, json!({ "config": config }))
            .await;
        assert_eq!(status, StatusCode::CREATED, "registration failed: {body}");
        body["server"].clone()
    }

    pub async fn call(&self, name: &str, arguments: Value) -> (StatusCode, Value) {
        self.post(
            "/v1/tools/call",
            &self.alice,
            json!({ "name": name, "arguments": arguments }),
        )
        .await
    }

    pub async fn tool_names(&self, query: &str) -> Vec<String> {
        let (status, body) = self.get(&format!("/v1/tools{query}"), &self.alice).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    }

    /// Waits until the server is ready on a connection made after `after` (a `connected_at`).
    pub async fn wait_reconnected(&self, server_id: &str, after: f64, within: Duration) -> Value {
        let what = format!("server {server_id} reconnecting");
        wait_until(&what, within, async || {
            let (_, body) = self.server(server_id).await;
            let server = &body["server"];
            match server["status"] == "ready"
                && server["connected_at"].as_f64().unwrap_or_default() > after
            {
                true => Ok(server.clone()),
                false => Err(body.to_string()),
            }
        })
        .await
    }

    /// Waits until the server's status is `status`.
    pub async fn wait_status(&self, server_id: &str, status: &str, within: Duration) -> Value {
        let what = format!("server {server_id} becoming {status}");
        wait_until(&what, within, async || {
            let (_, body) = self.server(server_id).await;
            match body["server"]["status"] == status {
                true => Ok(body["server"].clone()),
                false => Err(body.to_string()),
            }
        })
        .await
    }

    /// `GET /v1/servers/{server_id}` as the admin.
    pub async fn server(&self, server_id: &str) -> (StatusCode, Value) {
        self.get(&format!("/v1/servers/{server_id}"), &self.admin)
            .await
    }
}

/// Asks `probe` every 50 ms until it answers `Ok`, for at most `within` (a probe still running
/// then is dropped); `Err` holds what `probe` saw last (for the failure message).
pub async fn poll_until<T>(
    within: Duration,
    mut probe: impl AsyncFnMut() -> Result<T, String>,
) -> Result<T, String> {
    let deadline = tokio::time::Instant::now() + within;
    let mut seen = String::from("no answer from the first probe");
    loop {
        match tokio::time::timeout_at(deadline, probe()).await {
            Ok(Ok(done)) => return Ok(done),
            Ok(Err(now)) => seen = now,
            Err(_) => return Err(format!("{seen} (then a probe ran past the deadline)")),
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(seen);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// [`poll_until`], failing the test with "`what` did not happen" and what was seen instead.
pub async fn wait_until<T>(
    what: &str,
    within: Duration,
    probe: impl AsyncFnMut() -> Result<T, String>,
) -> T {
    match poll_until(within, probe).await {
        Ok(done) => done,
        Err(seen) => panic!("{what} did not happen within {within:?}; last seen: {seen}"),
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.shutdown.cancel();
        if let Some(url) = &self.database {
            match Arc::strong_count(&self.data_dir) {
                // The last user of the data dir: nothing restarts over it any more.
                1 => drop_database(url),
                _ => drop_database_after(self.data_dir.path(), url),
            }
        }
    }
}

// ---- the store on PostgreSQL (`MCP_BRIDGE_TEST_POSTGRES`) ----

/// The variable naming a PostgreSQL server (`postgres://user@host:port`) to run the suite on;
/// `MCP_BRIDGE_TEST_RUN` prefixes the databases of one run, so that what a run leaves behind can
/// be found and dropped (scripts/test.sh does).
const POSTGRES_VAR: &str = "MCP_BRIDGE_TEST_POSTGRES";
const RUN_VAR: &str = "MCP_BRIDGE_TEST_RUN";
/// The file in a data dir naming its PostgreSQL database: a restart over the same data dir gets
/// the same database back.
const DATABASE_FILE: &str = "test-postgres-database";

/// The PostgreSQL server the suite runs on, when it does.
pub fn postgres_server() -> Option<String> {
    std::env::var(POSTGRES_VAR).ok().filter(|s| !s.is_empty())
}

/// Whether the suite runs on PostgreSQL: tests of what only SQLite has (its files) skip then.
pub fn on_postgres() -> bool {
    postgres_server().is_some()
}

fn is_postgres(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

/// The URL of `data_dir`'s database on `server` (named in the data dir; not created yet).
pub fn postgres_database(server: &str, data_dir: &Path) -> String {
    let file = data_dir.join(DATABASE_FILE);
    let name = match std::fs::read_to_string(&file) {
        Ok(name) => name.trim().to_owned(),
        Err(_) => {
            let run = std::env::var(RUN_VAR).unwrap_or_default();
            let random = uuid::Uuid::new_v4().simple().to_string();
            let name = match run.is_empty() {
                true => format!("t_{}", &random[..16]),
                false => format!("t_{run}_{}", &random[..16]),
            };
            // A data dir the service is to make itself may not exist yet.
            std::fs::create_dir_all(data_dir).unwrap();
            std::fs::write(&file, &name).unwrap();
            name
        }
    };
    let mut url = url::Url::parse(server).unwrap();
    url.set_path(&name);
    url.to_string()
}

/// The server to administer the database at `url` through (`MCP_BRIDGE_TEST_POSTGRES`, never a
/// proxy the URL may go through), and the database's name.
fn server_and_name(url: &str) -> (String, String) {
    let name = url::Url::parse(url)
        .unwrap()
        .path()
        .trim_start_matches('/')
        .to_owned();
    let server = postgres_server().expect("a PostgreSQL database needs MCP_BRIDGE_TEST_POSTGRES");
    (server, name)
}

/// Creates the database at `url` unless it exists (a restart).
pub async fn create_database(url: &str) {
    use sqlx::Connection;
    let (server, name) = server_and_name(url);
    let mut admin = sqlx::PgConnection::connect(&server)
        .await
        .unwrap_or_else(|e| panic!("{POSTGRES_VAR}={server}: {e}"));
    let exists: Option<i32> = sqlx::query_scalar("SELECT 1 FROM pg_database WHERE datname = $1")
        .bind(&name)
        .fetch_optional(&mut admin)
        .await
        .unwrap();
    if exists.is_none() {
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE \"{name}\"")))
            .execute(&mut admin)
            .await
            .unwrap();
    }
    let _ = admin.close().await;
}

/// Drops the database at `url` (closing what still uses it), best effort, on a thread of its
/// own: `Drop` cannot wait for a future.
pub fn drop_database(url: &str) {
    let (server, name) = server_and_name(url);
    let dropped = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            use sqlx::Connection;
            let mut admin = sqlx::PgConnection::connect(&server).await?;
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"
            )))
            .execute(&mut admin)
            .await?;
            admin.close().await
        })
    })
    .join();
    if let Ok(Err(error)) = dropped {
        eprintln!("cannot drop the test database {url}: {error}");
    }
}

/// Drops the database at `url` once `data_dir` is gone (the test may restart over it until
/// then). A process that ends first leaves it to scripts/test.sh.
fn drop_database_after(data_dir: &Path, url: &str) {
    let (data_dir, url) = (data_dir.to_owned(), url.to_owned());
    std::thread::spawn(move || {
        while data_dir.exists() {
            std::thread::sleep(Duration::from_millis(200));
        }
        drop_database(&url);
    });
}

/// Everything the store holds, as text: every byte of the SQLite files in `data_dir`, or
/// every row of every table of its PostgreSQL database.
pub async fn stored_text(data_dir: &Path) -> String {
    let Some(server) = postgres_server() else {
        let mut all = Vec::new();
        for entry in std::fs::read_dir(data_dir).unwrap().flatten() {
            if entry
                .file_name()
                .to_string_lossy()
                .starts_with("mcp-bridge.db")
            {
                // A `-wal` or `-shm` file may go between the listing and the read (the store is
                // closing): what is gone holds nothing.
                if let Ok(bytes) = std::fs::read(entry.path()) {
                    all.extend(bytes);
                }
            }
        }
        return String::from_utf8_lossy(&all).into_owned();
    };
    use sqlx::Connection;
    let url = postgres_database(&server, data_dir);
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public'",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    let mut all = String::new();
    for table in tables {
        let rows: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT t::text FROM \"{table}\" t"
        )))
        .fetch_all(&mut conn)
        .await
        .unwrap();
        all.extend(rows.into_iter().map(|row| row + "\n"));
    }
    let _ = conn.close().await;
    all
}

// ---- real peers ----

pub fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers")
}

fn installed(path: PathBuf) -> String {
    assert!(
        path.exists(),
        "{} is missing: run scripts/test.sh, which installs the test peers",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

pub fn everything_bin() -> String {
    installed(peers_dir().join("node_modules/.bin/mcp-server-everything"))
}

pub fn python() -> String {
    installed(peers_dir().join(".venv/bin/python"))
}

pub fn py_server() -> String {
    installed(peers_dir().join("py_server.py"))
}

/// The stdio config of server-everything.
pub fn everything_stdio(server_id: &str) -> Value {
    json!({ "server_id": server_id, "transport": "stdio", "cmd": [everything_bin(), "stdio"] })
}

/// The stdio config of the Python fixture, with a marker in its environment to find its process.
pub fn py_stdio(server_id: &str, marker: &str) -> Value {
    json!({
        "server_id": server_id,
        "transport": "stdio",
        "cmd": [python(), py_server(), "stdio"],
        "env": { "FIXTURE_MARKER": marker },
    })
}

/// The stdio config of the Python fixture listing `items` extra resources, `page` per upstream
/// page (0: unpaged).
pub fn py_paged(server_id: &str, items: usize, page: usize) -> Value {
    let mut config = py_stdio(server_id, &unique(server_id));
    config["env"]["FIXTURE_ITEMS"] = json!(items.to_string());
    config["env"]["FIXTURE_PAGE"] = json!(page.to_string());
    config
}

/// A stdio config of an installed npm server binary.
pub fn npm_stdio(server_id: &str, bin: &str, args: &[&str]) -> Value {
    let mut cmd = vec![installed(peers_dir().join("node_modules/.bin").join(bin))];
    cmd.extend(args.iter().map(|a| a.to_string()));
    json!({ "server_id": server_id, "transport": "stdio", "cmd": cmd })
}

/// Pids of processes whose environment holds `FIXTURE_MARKER=<marker>`.
pub fn pids_with_marker(marker: &str) -> Vec<u32> {
    let needle = format!("FIXTURE_MARKER={marker}");
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if environ
            .split(|b| *b == 0)
            .any(|var| var == needle.as_bytes())
        {
            pids.push(pid);
        }
    }
    pids
}

/// Waits until no process carries `marker`.
pub async fn wait_no_process(marker: &str, within: Duration) {
    let what = format!("the exit of every process with marker {marker}");
    wait_until(&what, within, async || match pids_with_marker(marker) {
        pids if pids.is_empty() => Ok(()),
        pids => Err(format!("still running: {pids:?}")),
    })
    .await
}

/// A path the fixtures' `slow` tool creates as it starts (its `started` argument), in a directory
/// of its own removed on drop.
pub struct StartMark {
    _dir: tempfile::TempDir,
    pub path: String,
}

impl Default for StartMark {
    fn default() -> Self {
        Self::new()
    }
}

impl StartMark {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("started").to_string_lossy().into_owned();
        Self { _dir: dir, path }
    }

    /// Waits until the fixture has created it: the call has reached the server.
    pub async fn wait(&self) {
        wait_until(
            "the upstream starting the call",
            WAIT,
            async || match Path::new(&self.path).exists() {
                true => Ok(()),
                false => Err(format!("no file {}", self.path)),
            },
        )
        .await
    }
}

pub fn unique(prefix: &str) -> String {
    format!(
        "{prefix}-{}",
        &uuid::Uuid::new_v4().simple().to_string()[..8]
    )
}

/// A child process killed (with its group) when dropped.
pub struct Peer {
    child: tokio::process::Child,
    pub url: String,
}

impl Peer {
    /// Stops the peer and waits until it has exited.
    pub async fn stop(mut self) {
        let _ = self.child.kill().await;
    }

    /// The port the peer listens on.
    pub fn port(&self) -> u16 {
        reqwest::Url::parse(&self.url).unwrap().port().unwrap()
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// server-everything over Streamable HTTP on a free port (it cannot take port 0).
pub async fn everything_http() -> Peer {
    everything_http_on(free_port()).await
}

/// server-everything over Streamable HTTP on `port`.
pub async fn everything_http_on(port: u16) -> Peer {
    let child = tokio::process::Command::new(everything_bin())
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    wait_listening(port).await;
    Peer {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    }
}

/// The Python fixture over Streamable HTTP; it reports its port.
pub async fn py_http() -> Peer {
    py_http_with(&[]).await
}

/// The Python fixture over stateless Streamable HTTP (the 2026-07-28 era).
pub async fn py_http_stateless() -> Peer {
    py_http_with(&["--stateless"]).await
}

async fn py_http_with(extra: &[&str]) -> Peer {
    py_http_on(0, extra).await
}

/// The Python fixture over Streamable HTTP on `port` (0: any).
pub async fn py_http_on(port: u16, extra: &[&str]) -> Peer {
    let port = port.to_string();
    let mut command = tokio::process::Command::new(python());
    command
        .args([py_server().as_str(), "http", "--port", &port])
        .args(extra);
    reporting_peer(command, "/mcp", "http").await
}

/// The Python fixture over legacy HTTP+SSE (`/sse`); it reports its port.
pub async fn py_sse() -> Peer {
    let mut command = tokio::process::Command::new(python());
    command.args([py_server().as_str(), "sse", "--port", "0"]);
    reporting_peer(command, "/sse", "http").await
}

/// The 1.x Python SDK's WebSocket server; `required_header` (`Name=value`) must be on the upgrade.
pub async fn ws_server(required_header: Option<&str>) -> Peer {
    let mut command =
        tokio::process::Command::new(installed(peers_dir().join(".venv-ws/bin/python")));
    command.args([
        installed(peers_dir().join("ws_server.py")).as_str(),
        "--port",
        "0",
    ]);
    if let Some(header) = required_header {
        command.env("WS_REQUIRE_HEADER", header);
    }
    reporting_peer(command, "/ws", "ws").await
}

/// The MCP tasks fixture (`tasks_server.py`, the 1.x SDK's experimental tasks) over `transport`
/// (`http`, `sse` or `ws`); each `tasks/cancel` it gets appends the task id to `cancelled`.
pub async fn tasks_server(transport: &str, cancelled: &Path) -> Peer {
    let mut command =
        tokio::process::Command::new(installed(peers_dir().join(".venv-ws/bin/python")));
    command
        .args([
            installed(peers_dir().join("tasks_server.py")).as_str(),
            "--transport",
            transport,
            "--port",
            "0",
        ])
        .env("TASKS_CANCELLED", cancelled);
    match transport {
        "http" => reporting_peer(command, "/mcp/", "http").await,
        "sse" => reporting_peer(command, "/sse", "http").await,
        _ => reporting_peer(command, "/ws", "ws").await,
    }
}

/// The stdio config of the MCP tasks fixture (see `tasks_server`).
pub fn tasks_stdio(server_id: &str, cancelled: &Path) -> Value {
    json!({
        "server_id": server_id,
        "transport": "stdio",
        "cmd": [installed(peers_dir().join(".venv-ws/bin/python")),
            installed(peers_dir().join("tasks_server.py")), "--transport", "stdio"],
        "env": { "TASKS_CANCELLED": cancelled.display().to_string() },
    })
}

/// The a2a-sdk (Python) echo agent.
pub async fn a2a_agent_py() -> Peer {
    let mut command = tokio::process::Command::new(python());
    command.args([
        installed(peers_dir().join("a2a_agent.py")).as_str(),
        "--port",
        "0",
    ]);
    reporting_peer(command, "/", "http").await
}

/// The a2a-sdk (Python) agent that offers only A2A 1.0's HTTP+JSON binding.
pub async fn a2a_rest_agent_py() -> Peer {
    let mut command = tokio::process::Command::new(python());
    command.args([
        installed(peers_dir().join("a2a_rest_agent.py")).as_str(),
        "--port",
        "0",
    ]);
    reporting_peer(command, "/", "http").await
}

/// The 2026-07-28 server of `listen_server.py` (Python `mcp` 2.x, stateless) on `port` (0: any).
pub async fn listen_server_on(port: u16) -> Peer {
    let port = port.to_string();
    let mut command = tokio::process::Command::new(python());
    command.args([
        installed(peers_dir().join("listen_server.py")).as_str(),
        "--port",
        &port,
    ]);
    reporting_peer(command, "/mcp", "http").await
}

/// Calls a tool as `token` in the background.
pub fn call_in_background(
    app: &TestApp,
    token: &str,
    name: &str,
    arguments: Value,
) -> tokio::task::JoinHandle<(StatusCode, Value)> {
    let client = app.client.clone();
    let url = format!("{}/v1/tools/call", app.base);
    let token = token.to_owned();
    let body = json!({"name": name, "arguments": arguments});
    tokio::spawn(async move {
        let resp = client
            .post(url)
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = resp.status();
        (status, resp.json().await.unwrap())
    })
}

/// The 2026-07-28 server of `tasks_server_2026.py` (Python `mcp` 2.x, stateless, with a tasks
/// extension of its own); each `tasks/cancel` it is sent is noted in `cancelled`.
pub async fn tasks_server_2026(cancelled: &Path) -> Peer {
    let mut command = tokio::process::Command::new(python());
    command
        .args([
            installed(peers_dir().join("tasks_server_2026.py")).as_str(),
            "--port",
            "0",
        ])
        .env("TASKS_CANCELLED", cancelled);
    reporting_peer(command, "/mcp", "http").await
}

/// Our fixture for conformance 0.2 (`conformance_server_2026.py`, Python `mcp` 2.3.0) over
/// Streamable HTTP: both eras, and the 2026-07-28 input-required tools.
pub async fn conformance_2026() -> Peer {
    let mut command = tokio::process::Command::new(python());
    command.args([
        installed(peers_dir().join("conformance_server_2026.py")).as_str(),
        "--port",
        "0",
    ]);
    // It says its port once it listens.
    reporting_peer(command, "/mcp", "http").await
}

/// The @a2a-js/sdk echo agent.
pub async fn a2a_agent_js() -> Peer {
    let mut command = tokio::process::Command::new("node");
    command.args([
        installed(peers_dir().join("a2a_agent.mjs")).as_str(),
        "--port",
        "0",
    ]);
    reporting_peer(command, "/", "http").await
}

/// server-everything over legacy HTTP+SSE on a free port.
pub async fn everything_sse() -> Peer {
    let port = free_port();
    let child = tokio::process::Command::new(everything_bin())
        .arg("sse")
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    wait_listening(port).await;
    Peer {
        child,
        url: format!("http://127.0.0.1:{port}/sse"),
    }
}

async fn wait_listening(port: u16) {
    let what = format!("a listener on port {port}");
    wait_until(&what, Duration::from_secs(15), async || {
        let connected = tokio::net::TcpStream::connect(("127.0.0.1", port)).await;
        connected.map(drop).map_err(|error| error.to_string())
    })
    .await
}

/// Starts a server that prints `PORT=<n>` once it listens.
async fn reporting_peer(mut command: tokio::process::Command, path: &str, scheme: &str) -> Peer {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .expect("the Python fixture reports its port within 20 s")
        .unwrap()
        .expect("a PORT= line");
    let port = line
        .strip_prefix("PORT=")
        .expect("PORT=<n>")
        .trim()
        .to_owned();
    Peer {
        child,
        url: format!("{scheme}://127.0.0.1:{port}{path}"),
    }
}

// ---- event streams ----

/// One server-sent event.
#[derive(Debug, Clone)]
pub struct SseMessage {
    pub id: Option<String>,
    pub event: String,
    pub data: Value,
}

/// A reader of an SSE response.
pub struct EventStream {
    resp: reqwest::Response,
    buffer: String,
}

impl EventStream {
    /// Opens the agent's `/v1/events`, optionally resuming after `last_event_id`.
    pub async fn open(app: &TestApp, token: &str, last_event_id: Option<&str>) -> Self {
        let mut req = app
            .client
            .get(format!("{}/v1/events", app.base))
            .bearer_auth(token);
        if let Some(id) = last_event_id {
            req = req.header("Last-Event-ID", id);
        }
        let resp = req.send().await.expect("the event stream opens");
        assert_eq!(resp.status(), StatusCode::OK);
        assert!(
            resp.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/event-stream")
        );
        Self::from_response(resp)
    }

    pub fn from_response(resp: reqwest::Response) -> Self {
        Self {
            resp,
            buffer: String::new(),
        }
    }

    /// The next event, or `None` when none comes within `within` or the stream ends.
    pub async fn next(&mut self, within: Duration) -> Option<SseMessage> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                if let Some(message) = parse_block(&block) {
                    return Some(message);
                }
                continue;
            }
            let chunk = tokio::time::timeout_at(deadline, self.resp.chunk())
                .await
                .ok()?
                .ok()??;
            self.buffer
                .push_str(&String::from_utf8_lossy(&chunk).replace("\r\n", "\n"));
        }
    }

    /// The first event that `wanted` accepts, skipping others; panics naming `what` after `within`.
    pub async fn wait_for(
        &mut self,
        what: &str,
        within: Duration,
        wanted: impl Fn(&SseMessage) -> bool,
    ) -> SseMessage {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match self.next(left).await {
                Some(message) if wanted(&message) => return message,
                Some(_) => {}
                None => panic!("{what} did not arrive within {within:?}"),
            }
        }
    }

    /// Whether the stream ends (the server closes it) within `within`.
    pub async fn ends_within(&mut self, within: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            match tokio::time::timeout_at(deadline, self.resp.chunk()).await {
                Ok(Ok(Some(_))) => continue,
                Ok(Ok(None)) | Ok(Err(_)) => return true,
                Err(_) => return false,
            }
        }
    }

    /// Every event that arrives within `within`.
    pub async fn drain(&mut self, within: Duration) -> Vec<SseMessage> {
        let deadline = tokio::time::Instant::now() + within;
        let mut all = Vec::new();
        while let Some(message) = self
            .next(deadline.saturating_duration_since(tokio::time::Instant::now()))
            .await
        {
            all.push(message);
        }
        all
    }
}

fn parse_block(block: &str) -> Option<SseMessage> {
    let (mut id, mut event, mut data) = (None, String::from("message"), String::new());
    for line in block.lines() {
        if let Some(v) = line.strip_prefix("id:") {
            id = Some(v.trim().to_owned());
        } else if let Some(v) = line.strip_prefix("event:") {
            event = v.trim().to_owned();
        } else if let Some(v) = line.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(v.strip_prefix(' ').unwrap_or(v));
        }
    }
    if data.is_empty() {
        return None; // a keep-alive comment
    }
    Some(SseMessage {
        id,
        event,
        data: serde_json::from_str(&data).unwrap_or(Value::String(data)),
    })
}

/// A push of `method` (optionally from `server_id`).
pub fn is_push(message: &SseMessage, method: &str) -> bool {
    message.event == "mcp/server/push" && message.data["method"] == method
}

// ---- the real binary ----

/// The `mcp-bridge` binary running as a process of its own.
pub struct Bridge {
    pub child: tokio::process::Child,
    pub base: String,
    /// Every line it has logged so far.
    log: Arc<std::sync::Mutex<Vec<String>>>,
}

/// Starts the binary over `data_dir` with `MCP_BRIDGE_JWT_SECRET` set to [`SECRET`].
pub async fn start_bridge(data_dir: &Path) -> Bridge {
    start_bridge_with(data_dir, &[]).await
}

/// [`start_bridge`], with more variables in the bridge's environment.
pub async fn start_bridge_with(data_dir: &Path, env: &[(&str, &str)]) -> Bridge {
    // The test's own HTTP clients need a TLS provider even for http:// (no in-process service
    // has installed one when this test runs alone).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp-bridge"));
    // A caller naming its own database (replicas share one) gets no database of its own.
    let named = env.iter().any(|(k, _)| *k == "MCP_BRIDGE_DATABASE_URL");
    if let Some(server) = postgres_server().filter(|_| !named) {
        let url = postgres_database(&server, data_dir);
        create_database(&url).await;
        command.env("MCP_BRIDGE_DATABASE_URL", &url);
        drop_database_after(data_dir, &url);
    }
    // The caller's variables win (a more verbose log, an empty secret to have one generated).
    let mut child = command
        .env("MCP_BRIDGE_LOG", "info")
        .env("MCP_BRIDGE_BIND", "127.0.0.1:0")
        .env("MCP_BRIDGE_DATA_DIR", data_dir)
        .env("MCP_BRIDGE_JWT_SECRET", SECRET)
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let log = Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = log.clone();
    let addr = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            kept.lock().unwrap().push(line.clone());
            if !line.contains("mcp-bridge listening") {
                continue;
            }
            if let Some(at) = line.find("addr=") {
                return line[at + 5..].split_whitespace().next().unwrap().to_owned();
            }
        }
        let log = kept.lock().unwrap().join("\n");
        panic!("the bridge exited before listening; its log:\n{log}");
    })
    .await
    .expect("the bridge listens within 20 s");
    // Keep draining its log so it never blocks on a full pipe.
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            kept.lock().unwrap().push(line);
        }
    });
    Bridge {
        child,
        base: format!("http://{addr}"),
        log,
    }
}

impl Bridge {
    /// The lines it has logged so far.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    /// Sends a signal to the bridge process.
    pub fn signal(&self, signal: &str) {
        let pid = self.child.id().expect("running").to_string();
        let status = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &pid])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits for the process to exit; its exit status.
    pub async fn exited_within(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        tokio::time::timeout(within, self.child.wait())
            .await
            .ok()
            .map(Result::unwrap)
    }
}

// ---- OAuth to upstreams ----

/// A plain HTTP client that follows no redirect (a TLS provider installed first: reqwest is built
/// without one, and no in-process service may have installed it yet).
fn browser() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

pub fn oauth_server() -> String {
    installed(peers_dir().join("oauth_server.py"))
}

/// `tests/peers/oauth_server.py` (an OAuth-protected MCP server and its auto-approving authorization
/// server, one origin) on `port` (0: any) with `extra` flags; its `url` is the MCP endpoint `/mcp`.
pub async fn oauth_peer_on(port: u16, extra: &[&str]) -> Peer {
    let port = port.to_string();
    let mut command = tokio::process::Command::new(python());
    command
        .args([oauth_server().as_str(), "--port", &port])
        .args(extra);
    reporting_peer(command, "/mcp", "http").await
}

/// [`oauth_peer_on`] on a free port.
pub async fn oauth_peer(extra: &[&str]) -> Peer {
    oauth_peer_on(0, extra).await
}

impl Peer {
    /// The peer's origin (`http://127.0.0.1:<port>`).
    pub fn origin(&self) -> String {
        let url = reqwest::Url::parse(&self.url).unwrap();
        url.origin().ascii_serialization()
    }

    /// The OAuth peer's `GET /_stats`: its counters, grants and every token it issued.
    pub async fn oauth_stats(&self) -> Value {
        let resp = browser()
            .get(format!("{}/_stats", self.origin()))
            .send()
            .await
            .expect("the OAuth peer answers /_stats");
        assert_eq!(resp.status(), StatusCode::OK);
        resp.json().await.unwrap()
    }

    /// The OAuth peer's `POST /_expire`: every access token it issued expires now.
    pub async fn oauth_expire(&self) {
        let resp = browser()
            .post(format!("{}/_expire", self.origin()))
            .send()
            .await
            .expect("the OAuth peer answers /_expire");
        assert_eq!(resp.status(), StatusCode::OK);
    }
}

/// The service on 127.0.0.1:`port` over `data_dir`, with `MCP_BRIDGE_PUBLIC_URL` at that address,
/// so its OAuth redirect URI stays the same across a restart on the same port.
pub async fn spawn_app_at(data_dir: Arc<tempfile::TempDir>, port: u16) -> TestApp {
    let mut config = config(data_dir.path());
    config.bind = format!("127.0.0.1:{port}");
    config.public_url = Some(format!("http://127.0.0.1:{port}"));
    spawn_app_with(data_dir, config).await
}

/// What a browser sees opening an authorization URL whose authorization server approves at once:
/// the redirect it was sent to (the bridge's callback) and the callback's answer.
pub struct Consent {
    pub callback_url: String,
    pub status: StatusCode,
    pub body: String,
}

/// Opens `authorization_url` as a person's browser would: GET it, follow the authorization server's
/// redirect to the callback, and read the callback's answer (no bridge token on either request).
pub async fn approve(authorization_url: &str) -> Consent {
    let resp = browser()
        .get(authorization_url)
        .send()
        .await
        .expect("the authorization server answers");
    assert!(
        resp.status().is_redirection(),
        "the authorization server redirects at once, not {} {:?}",
        resp.status(),
        resp.text().await
    );
    let location = resp.headers()["location"].to_str().unwrap().to_owned();
    let callback_url = reqwest::Url::parse(authorization_url)
        .unwrap()
        .join(&location)
        .unwrap()
        .to_string();
    let (status, body) = open_callback(&callback_url).await;
    Consent {
        callback_url,
        status,
        body,
    }
}

/// GET `url` (a bridge OAuth callback) without a bridge token and without following redirects.
pub async fn open_callback(url: &str) -> (StatusCode, String) {
    let resp = browser()
        .get(url)
        .send()
        .await
        .expect("the bridge answers its callback");
    let status = resp.status();
    (status, resp.text().await.unwrap())
}

impl TestApp {
    /// `POST /v1/servers/{server_id}/authorize` as `token`: the status and the answer.
    pub async fn authorize(&self, server_id: &str, token: &str) -> (StatusCode, Value) {
        self.post(
            &format!("/v1/servers/{server_id}/authorize"),
            token,
            json!({}),
        )
        .await
    }

    /// [`Self::authorize`] as `token`, expecting success; the `authorization_url`.
    pub async fn authorization_url(&self, server_id: &str, token: &str) -> String {
        let (status, body) = self.authorize(server_id, token).await;
        assert_eq!(status, StatusCode::OK, "authorize failed: {body}");
        body["authorization_url"]
            .as_str()
            .unwrap_or_else(|| panic!("no authorization_url in {body}"))
            .to_owned()
    }

    /// `POST /v1/tools/call` of `name` as `token`.
    pub async fn call_as(&self, token: &str, name: &str, arguments: Value) -> (StatusCode, Value) {
        self.post(
            "/v1/tools/call",
            token,
            json!({ "name": name, "arguments": arguments }),
        )
        .await
    }
}

/// A TCP proxy from a port of its own to `target` that can be cut (every connection closed, new
/// ones refused) and brought back on the same port: a database going down and coming back.
pub struct Proxy {
    pub port: u16,
    target: String,
    serving: Option<tokio::task::JoinHandle<()>>,
}

impl Proxy {
    pub async fn start(target: &str) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let mut proxy = Self {
            port,
            target: target.to_owned(),
            serving: None,
        };
        proxy.serve(listener);
        proxy
    }

    fn serve(&mut self, listener: tokio::net::TcpListener) {
        let target = self.target.clone();
        self.serving = Some(tokio::spawn(async move {
            // Dropped with this task, which aborts every connection.
            let mut connections = tokio::task::JoinSet::new();
            while let Ok((mut inbound, _)) = listener.accept().await {
                let target = target.clone();
                connections.spawn(async move {
                    if let Ok(mut outbound) = tokio::net::TcpStream::connect(&target).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
            }
        }));
    }

    /// Closes every connection and refuses new ones.
    pub async fn cut(&mut self) {
        if let Some(serving) = self.serving.take() {
            serving.abort();
            let _ = serving.await;
        }
    }

    /// Accepts connections again, on the same port.
    pub async fn restore(&mut self) {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", self.port))
            .await
            .unwrap();
        self.serve(listener);
    }
}
