//! The stdio transport: the server runs as a child process in a process group of its own, with
//! the configured `cwd`, and an environment made of a safe base taken from the bridge's own
//! (`BASE_ENV`) plus the configured `env` (never anything else of the bridge's: not its
//! `MCP_BRIDGE_*` settings, nor any secret it was started with); its stderr is
//! drained into the log and its last lines kept for error messages. Where util-linux `setpriv`
//! is installed, the child is started through it with a parent-death signal, so it dies with
//! the bridge even when the bridge is killed outright.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use process_wrap::tokio::{CommandWrap, KillOnDrop, ProcessGroup};
use rmcp::transport::TokioChildProcess;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::ChildStderr;
use tokio_util::sync::CancellationToken;

use super::ConnectError;
use crate::a2e::McpServerConfig;

/// How many stderr lines are kept for error messages.
const TAIL_LINES: usize = 20;
/// Longest stderr line kept, in bytes.
const MAX_LINE: usize = 1000;

/// The last lines a child wrote to stderr.
#[derive(Debug, Default)]
pub struct StderrTail {
    lines: Mutex<VecDeque<String>>,
    /// Fired when stderr reaches end of file.
    done: CancellationToken,
}

impl StderrTail {
    fn push(&self, mut line: String) {
        if line.len() > MAX_LINE {
            let mut end = MAX_LINE;
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            line.truncate(end);
        }
        let mut lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        if lines.len() == TAIL_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// The kept lines as a suffix for an error message (empty when there are none).
    pub fn render(&self) -> String {
        let lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        if lines.is_empty() {
            return String::new();
        }
        let joined: Vec<&str> = lines.iter().map(String::as_str).collect();
        format!("; last stderr lines: {}", joined.join(" | "))
    }

    /// Like [`render`](Self::render), after giving a dying child a moment to finish writing.
    pub async fn settled_tail(&self) -> String {
        let _ = tokio::time::timeout(Duration::from_millis(500), self.done.cancelled()).await;
        self.render()
    }
}

/// What a stdio server inherits of the bridge's environment: what programs need to find
/// themselves, their home and their locale. Anything else it needs goes in the server's `env`.
pub const BASE_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TERM",
    "TMPDIR",
    "TZ",
    "XDG_RUNTIME_DIR",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
];

/// Starts the child and its stderr drain.
pub fn spawn(
    config: &McpServerConfig,
) -> Result<(TokioChildProcess, Arc<StderrTail>), ConnectError> {
    let (program, args) = config
        .cmd
        .split_first()
        .ok_or_else(|| ConnectError::Config("a stdio server needs a command in `cmd`".into()))?;
    let mut command = match setpriv() {
        Some(setpriv) => {
            let mut command = tokio::process::Command::new(setpriv);
            command.args(["--pdeathsig", "KILL", "--"]).arg(program);
            command
        }
        None => tokio::process::Command::new(program),
    };
    command.args(args);
    if !config.cwd.is_empty() {
        command.current_dir(&config.cwd);
    }
    command.env_clear();
    for name in BASE_ENV {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    command.envs(&config.env);
    let mut wrapped = CommandWrap::from(command);
    wrapped.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
    let (transport, stderr) = TokioChildProcess::builder(wrapped)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| ConnectError::Spawn {
            command: program.clone(),
            source,
            stderr: String::new(),
        })?;
    let tail = Arc::new(StderrTail::default());
    match stderr {
        Some(stderr) => {
            tokio::spawn(drain(stderr, config.server_id.clone(), tail.clone()));
        }
        None => tail.done.cancel(),
    }
    Ok((transport, tail))
}

/// The `setpriv` program, when this machine has one.
fn setpriv() -> Option<&'static std::path::Path> {
    static SETPRIV: std::sync::OnceLock<Option<std::path::PathBuf>> = std::sync::OnceLock::new();
    SETPRIV
        .get_or_init(|| {
            let found = std::env::var_os("PATH")
                .map(|path| std::env::split_paths(&path).map(|dir| dir.join("setpriv")).find(|p| p.is_file()))
                .unwrap_or_default();
            if found.is_none() {
                tracing::warn!("setpriv is not installed: stdio servers outlive a bridge that is killed outright");
            }
            found
        })
        .as_deref()
}

async fn drain(stderr: ChildStderr, server_id: String, tail: Arc<StderrTail>) {
    let mut lines = BufReader::new(stderr).lines();
    loop {
        match lines.next_line().await {
            Ok(Some(line)) => {
                tracing::info!(target: "mcp_bridge::upstream::stderr", %server_id, "{line}");
                tail.push(line);
            }
            Ok(None) => break,
            Err(error) => {
                tracing::debug!(%server_id, %error, "stderr of the server is not readable");
                break;
            }
        }
    }
    tail.done.cancel();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_last_lines() {
        let tail = StderrTail::default();
        assert_eq!(tail.render(), "");
        for i in 0..30 {
            tail.push(format!("line {i}"));
        }
        let shown = tail.render();
        assert!(
            shown.starts_with("; last stderr lines: line 10 |"),
            "{shown}"
        );
        assert!(shown.ends_with("line 29"));
        tail.push("é".repeat(MAX_LINE));
        assert!(tail.render().len() < 30 * MAX_LINE);
    }
}
