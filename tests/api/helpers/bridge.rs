//! The real `mcp-bridge` binary as a process of its own (`Bridge`): started, its log read,
//! signalled.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};

use super::app::SECRET;
use super::store::{create_database, drop_database_after, postgres_database, postgres_server};

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
            if let Some(addr) = listening_on(&line) {
                return addr;
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

/// The address a "listening" line names, in the text log format or the JSON one.
fn listening_on(line: &str) -> Option<String> {
    if !line.contains("mcp-bridge listening") {
        return None;
    }
    if let Ok(json) = serde_json::from_str::<serde_json::Value>(line) {
        return json["fields"]["addr"].as_str().map(str::to_owned);
    }
    let at = line.find("addr=")?;
    Some(line[at + 5..].split_whitespace().next()?.to_owned())
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
