//! The real MCP and A2A peers installed by `scripts/test.sh`: their stdio configs, and
//! server-everything, the Python fixtures and the A2A agents started as processes (`Peer`).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use super::wait::{WAIT, wait_until};

pub fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers")
}

pub fn installed(path: PathBuf) -> String {
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

/// The command that runs the Python fixture in `mode` (`http`, `sse`, ...) on `port` (0: any),
/// for a [`reporting_peer`].
pub fn py_command(mode: &str, port: u16) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(python());
    command.args([py_server().as_str(), mode, "--port", &port.to_string()]);
    command
}

/// The Python fixture over Streamable HTTP on `port` (0: any).
pub async fn py_http_on(port: u16, extra: &[&str]) -> Peer {
    let mut command = py_command("http", port);
    command.args(extra);
    reporting_peer(command, "/mcp", "http").await
}

/// The Python fixture over legacy HTTP+SSE (`/sse`); it reports its port.
pub async fn py_sse() -> Peer {
    reporting_peer(py_command("sse", 0), "/sse", "http").await
}

/// The command that runs the 1.x Python SDK's WebSocket server on any port, for a
/// [`reporting_peer`].
pub fn ws_command() -> tokio::process::Command {
    let mut command =
        tokio::process::Command::new(installed(peers_dir().join(".venv-ws/bin/python")));
    command.args([
        installed(peers_dir().join("ws_server.py")).as_str(),
        "--port",
        "0",
    ]);
    command
}

/// The 1.x Python SDK's WebSocket server; `required_header` (`Name=value`) must be on the upgrade.
pub async fn ws_server(required_header: Option<&str>) -> Peer {
    let mut command = ws_command();
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
pub async fn reporting_peer(
    mut command: tokio::process::Command,
    path: &str,
    scheme: &str,
) -> Peer {
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
