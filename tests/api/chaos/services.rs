//! What the chaos test runs around the replicas: a PostgreSQL cluster and HAProxy of its own,
//! and a Python fixture over Streamable HTTP that logs every call it runs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::StatusCode;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::helpers::*;

// ---- PostgreSQL of the test's own ----

/// A PostgreSQL cluster in a temp dir on a free port, trust auth, restarted by the test.
pub struct PrivatePostgres {
    pub port: u16,
    dir: tempfile::TempDir,
    /// Whether its programs run as Debian's `postgres` user (this is root, which initdb refuses).
    as_postgres: bool,
    running: bool,
}

/// Where Debian's PostgreSQL 15 puts `initdb` and `pg_ctl`.
pub const PG_BIN: &str = "/usr/lib/postgresql/15/bin";

impl PrivatePostgres {
    pub async fn start() -> Self {
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

    pub fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}", self.port)
    }

    /// Runs a PostgreSQL program, as `postgres` when this is root.
    pub async fn pg(&self, program: &str, args: &[&str]) {
        let bin = Path::new(PG_BIN).join(program);
        let mut command = tokio::process::Command::from(self.command(&bin));
        let output = command.args(args).output().await.unwrap();
        assert!(
            output.status.success(),
            "{program} {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    pub fn command(&self, bin: &Path) -> std::process::Command {
        match self.as_postgres {
            true => {
                let mut command = std::process::Command::new("runuser");
                command.args(["-u", "postgres", "--"]).arg(bin);
                command
            }
            false => std::process::Command::new(bin),
        }
    }

    pub async fn run(&mut self) {
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

    pub async fn stop(&mut self) {
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
pub struct Haproxy {
    pub port: u16,
    _dir: tempfile::TempDir,
    _child: tokio::process::Child,
}

/// What a deployment copies: round robin and no cookie (any replica answers anything), health
/// checks on `/readyz` every 500 ms so a replica that is down, or without its store for a lease,
/// is taken out within a second of it, a short `timeout connect` with `retries` and `option redispatch` so that a request
/// whose replica is dead is sent to another one instead of failing, and long client/server
/// timeouts for event streams (`/v1/events`, `/mcp` GET), which stay open. The `x-served-by`
/// header (the replica that answered, for the ledger) is the test's, not a deployment's.
pub fn haproxy_config(port: u16, replicas: &[(&str, u16)]) -> String {
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
    pub fn installed() -> bool {
        std::process::Command::new("haproxy")
            .arg("-v")
            .output()
            .is_ok_and(|o| o.status.success())
    }

    pub async fn start(replicas: &[(&str, u16)]) -> Self {
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

    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

// ---- upstreams ----

/// The Python fixture over Streamable HTTP writing each echo to `log`.
pub async fn recording_http(log: &Path) -> (tokio::process::Child, String) {
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
pub fn upstream_counts(logs: &[PathBuf]) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for log in logs {
        for line in std::fs::read_to_string(log).unwrap_or_default().lines() {
            *counts.entry(line.to_owned()).or_default() += 1;
        }
    }
    counts
}
