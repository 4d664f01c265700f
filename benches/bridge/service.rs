//! The service under test: the real `mcp-bridge` binary on a free port over a data dir, and
//! what the sections ask of it (REST, RSS, CPU time, a stop or a `kill -9`).

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use mcp_bridge::http::auth::Auth;
use serde_json::{Value, json};

use crate::SECRET;
use crate::measure::{Cpu, cpu_of, rss_mib};

pub(crate) struct Bridge {
    child: tokio::process::Child,
    pub(crate) base: String,
    pub(crate) client: reqwest::Client,
    pub(crate) admin: String,
}

pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

impl Bridge {
    /// Spawns the real binary over `data_dir` and waits until it answers.
    pub(crate) async fn start(data_dir: &Path, auth: &Auth) -> Bridge {
        Bridge::start_with(data_dir, auth, &[]).await
    }

    /// `start` with more variables in the service's environment.
    pub(crate) async fn start_with(data_dir: &Path, auth: &Auth, env: &[(&str, &str)]) -> Bridge {
        Bridge::start_under(data_dir, auth, env, &[]).await
    }

    /// `start_with`, the binary run by `wrapper` (a command and its arguments, e.g. valgrind)
    /// when it is not empty.
    pub(crate) async fn start_under(
        data_dir: &Path,
        auth: &Auth,
        env: &[(&str, &str)],
        wrapper: &[String],
    ) -> Bridge {
        // `BENCH_BRIDGE` runs another build of the service (a baseline) in the same harness.
        let binary = std::env::var("BENCH_BRIDGE")
            .unwrap_or_else(|_| env!("CARGO_BIN_EXE_mcp-bridge").to_owned());
        Bridge::launch(&binary, data_dir, auth, env, wrapper).await
    }

    /// `start_with`, running the build at `binary` (a section that weighs two builds itself).
    pub(crate) async fn start_binary(
        binary: &str,
        data_dir: &Path,
        auth: &Auth,
        env: &[(&str, &str)],
    ) -> Bridge {
        Bridge::launch(binary, data_dir, auth, env, &[]).await
    }

    async fn launch(
        binary: &str,
        data_dir: &Path,
        auth: &Auth,
        env: &[(&str, &str)],
        wrapper: &[String],
    ) -> Bridge {
        let port = free_port();
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
        // `BENCH_FAST_PATHS=off` weighs the shortcuts past rmcp: every call through the SDK.
        if let Ok(fast_paths) = std::env::var("BENCH_FAST_PATHS") {
            command.env("MCP_BRIDGE_FAST_PATHS", fast_paths);
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

    pub(crate) async fn answers(&self, path: &str) -> bool {
        let resp = self.client.get(format!("{}{path}", self.base)).send().await;
        resp.is_ok_and(|r| r.status().is_success())
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id().expect("mcp-bridge is running")
    }

    pub(crate) fn cpu_time(&self) -> Cpu {
        cpu_of(self.pid())
    }

    /// Resident memory (VmRSS), in MiB.
    pub(crate) fn rss_mib(&self) -> f64 {
        rss_mib(self.pid())
    }

    pub(crate) async fn get(&self, path: &str) -> Value {
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

    pub(crate) async fn register(&self, config: Value) {
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
    pub(crate) async fn server(&self, server_id: &str) -> Option<Value> {
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
    pub(crate) async fn kill9(mut self) {
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
    }

    /// SIGTERM, then waits for the process to end.
    pub(crate) async fn stop(mut self) {
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
