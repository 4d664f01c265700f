//! The stdio transport: the server runs as a child process in a process group of its own, with
//! the configured `cwd`, and an environment made of a safe base taken from the bridge's own
//! (`BASE_ENV`) plus the configured `env` (never anything else of the bridge's: not its
//! `MCP_BRIDGE_*` settings, nor any secret it was started with); its stderr is
//! drained into the log and its last lines kept for error messages. Where util-linux `setpriv`
//! is installed, the child is started through it with a parent-death signal, so it dies with
//! the bridge even when the bridge is killed outright. Its stdout is read through
//! [`BoundedLines`], so a message over `max_message_bytes` fails its call alone, and each line
//! parsed knowing the calls in flight ([`Calls`]).

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use process_wrap::tokio::{ChildWrapper, CommandWrap, KillOnDrop, ProcessGroup};
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};
use tokio_util::sync::CancellationToken;

use super::ConnectError;
use super::decode::Calls;
use super::lines::BoundedLines;
use crate::a2e::McpServerConfig;

/// How many stderr lines are kept for error messages.
const TAIL_LINES: usize = 20;
/// Longest stderr line kept, in bytes.
const MAX_LINE: usize = 1000;

/// The last lines a child wrote to stderr.
#[derive(Debug, Default)]
pub struct StderrTail {
    lines: Mutex<VecDeque<String>>,
    /// The server's secret values, hidden in each line as it is read (it may print its key).
    secrets: Vec<String>,
    /// Fired when stderr reaches end of file.
    done: CancellationToken,
}

impl StderrTail {
    fn new(secrets: Vec<String>) -> Self {
        Self {
            secrets,
            ..Default::default()
        }
    }

    /// `line` with the server's secrets hidden.
    fn redact(&self, line: &str) -> String {
        crate::a2e::redact_text(line, &self.secrets)
    }

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

/// Variables a stdio server's `env` may not set unless `MCP_BRIDGE_STDIO_ALLOWED_ENV` names
/// them: they change which program runs or inject code into it, which would get round
/// `MCP_BRIDGE_STDIO_ALLOWED_COMMANDS` (the dynamic loader, the shells, Node, Python, Perl,
/// Ruby and Java). Besides these, every name starting with `LD_` or `DYLD_`.
pub const LOADER_ENV: &[&str] = &[
    "PATH",
    "BASH_ENV",
    "ENV",
    "SHELLOPTS",
    "PS4",
    "NODE_OPTIONS",
    "NODE_PATH",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "PYTHONUSERBASE",
    "PERL5OPT",
    "PERL5LIB",
    "PERLLIB",
    "RUBYOPT",
    "RUBYLIB",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "GCONV_PATH",
];

/// Whether `name` is one of the variables of [`LOADER_ENV`] (or `LD_*`, `DYLD_*`).
pub fn is_loader_variable(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    upper.starts_with("LD_") || upper.starts_with("DYLD_") || LOADER_ENV.contains(&upper.as_str())
}

/// Where `program` is: itself when it names a path (has a `/`), else the first executable file
/// of that name on the bridge's own `PATH`, never on one the server's `env` sets.
pub fn resolve(program: &str, path: Option<&std::ffi::OsStr>) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    if program.contains('/') {
        return Some(program.into());
    }
    if program.is_empty() {
        return None;
    }
    std::env::split_paths(path?)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(program))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// Starts the child and its stderr drain; no line over `max_message_bytes` is taken from it.
pub fn spawn(
    config: &McpServerConfig,
    max_message_bytes: usize,
) -> Result<(StdioTransport, Arc<StderrTail>), ConnectError> {
    let (program, args) = config
        .cmd
        .split_first()
        .ok_or_else(|| ConnectError::Config("a stdio server needs a command in `cmd`".into()))?;
    // Resolved here, with the bridge's PATH: a PATH in the server's `env` would otherwise choose
    // the program (the child's PATH is what exec searches).
    let resolved = resolve(program, std::env::var_os("PATH").as_deref()).ok_or_else(|| {
        ConnectError::Spawn {
            command: program.clone(),
            source: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "not found on the bridge's PATH",
            ),
            stderr: String::new(),
        }
    })?;
    let program_path = resolved.as_os_str();
    let mut command = match setpriv() {
        Some(setpriv) => {
            let mut command = tokio::process::Command::new(setpriv);
            command
                .args(["--pdeathsig", "KILL", "--"])
                .arg(program_path);
            command
        }
        None => tokio::process::Command::new(program_path),
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
    wrapped
        .command_mut()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let spawn_error = |source| ConnectError::Spawn {
        command: program.clone(),
        source,
        stderr: String::new(),
    };
    let mut child = wrapped.spawn().map_err(spawn_error)?;
    let (Some(stdin), Some(stdout)) = (
        child.inner_mut().stdin().take(),
        child.inner_mut().stdout().take(),
    ) else {
        return Err(spawn_error(std::io::Error::other("no pipes to the child")));
    };
    let stderr = child.inner_mut().stderr().take();
    let lines = BoundedLines::new(stdout, max_message_bytes, &config.server_id);
    let transport = StdioTransport {
        child: Some(child),
        io: AsyncRwTransport::new(tokio::io::empty(), stdin),
        lines: BufReader::new(lines),
        line: Vec::new(),
        calls: Calls::default(),
    };
    let tail = Arc::new(StderrTail::new(config.secret_values()));
    match stderr {
        Some(stderr) => {
            tokio::spawn(drain(stderr, config.server_id.clone(), tail.clone()));
        }
        None => tail.done.cancel(),
    }
    Ok((transport, tail))
}

/// How long a closing child gets to exit, first after its stdin closes, then after SIGTERM: 2 s
/// as in the Python and TypeScript SDKs, so that a bridge told to stop has ended its children
/// within 5 s (`docker stop` waits 10 before it kills).
const EXIT_WAIT: Duration = Duration::from_secs(2);

/// Whether the child exits within [`EXIT_WAIT`].
async fn exited(child: &mut Box<dyn ChildWrapper>) -> bool {
    matches!(
        tokio::time::timeout(EXIT_WAIT, child.wait()).await,
        Ok(Ok(_))
    )
}

/// A child process speaking MCP on its stdin and stdout, as rmcp's `TokioChildProcess` (whose
/// stdout reader cannot be replaced): closing it closes stdin and waits for the child to exit,
/// then sends SIGTERM to its group, then kills the group; dropping it kills the group.
pub struct StdioTransport {
    child: Option<Box<dyn ChildWrapper>>,
    /// rmcp's writer of messages to stdin (its reader, of nothing, is not used).
    io: AsyncRwTransport<RoleClient, tokio::io::Empty, ChildStdin>,
    lines: BufReader<BoundedLines<ChildStdout>>,
    /// The line being read. `receive` is cancelled whenever rmcp's loop has something else to
    /// do: what was read of a line stays here until the rest comes.
    line: Vec<u8>,
    calls: Calls,
}

impl StdioTransport {
    /// The tools the server offers to run as tasks, as its `tools/list` answers say.
    pub fn task_tools(&self) -> std::sync::Arc<super::decode::TaskTools> {
        self.calls.task_tools()
    }

    /// What to do with a line that is JSON but no message rmcp knows, as rmcp's own reader
    /// does: a request (or anything that is not a notification) is answered "Invalid request";
    /// a notification, which takes no answer, is dropped. The answer is written apart: were
    /// `receive` cancelled halfway through writing it, the child would get half a line.
    fn refuse(&mut self, line: &[u8], error: &serde_json::Error) {
        let notification = serde_json::from_slice::<serde_json::Value>(line)
            .is_ok_and(|v| v.get("method").is_some() && v.get("id").is_none());
        tracing::debug!(%error, notification, "a message of the server is not MCP");
        if notification {
            return;
        }
        let invalid = rmcp::ErrorData::invalid_request("Invalid request", None);
        let answer = self
            .io
            .send(TxJsonRpcMessage::<RoleClient>::error(invalid, None));
        tokio::spawn(async move {
            if let Err(error) = answer.await {
                tracing::debug!(%error, "cannot answer a stdio server");
            }
        });
    }
}

impl Transport<RoleClient> for StdioTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.calls.sent(&item);
        self.io.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            // Cancel-safe: bytes read stay in `self.line`, and the next call reads on.
            match self.lines.read_until(b'\n', &mut self.line).await {
                Ok(0) => return None,
                Ok(_) if self.line.last() != Some(&b'\n') => return None,
                Ok(_) => {}
                Err(error) => {
                    tracing::debug!(%error, "cannot read a stdio server's stdout");
                    return None;
                }
            }
            let mut line = std::mem::take(&mut self.line);
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
            let parsed = match text.is_empty() {
                true => None,
                false => Some(self.calls.decode(text)),
            };
            match parsed {
                None => {}
                Some(Ok(message)) => {
                    line.clear();
                    self.line = line;
                    return Some(message);
                }
                Some(Err(error)) if error.is_data() => self.refuse(text, &error),
                // Not JSON: nothing to answer, as in the other SDKs.
                Some(Err(error)) => tracing::debug!(%error, "a line of a stdio server is not JSON"),
            }
            line.clear();
            self.line = line;
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // The child stays here until it has exited, so a close given up still kills it (drop).
        let Some(child) = self.child.as_mut() else {
            return Ok(());
        };
        self.io.close().await?;
        if exited(child).await {
            self.child = None;
            return Ok(());
        }
        match child.signal(libc::SIGTERM) {
            Ok(()) if exited(child).await => {
                self.child = None;
                return Ok(());
            }
            Ok(()) => {}
            Err(error) => tracing::warn!(%error, "cannot send SIGTERM to a stdio server"),
        }
        let killed = Box::into_pin(child.kill()).await;
        self.child = None;
        killed
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // kill() waits for the child, so it is not left a zombie.
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    if let Err(error) = Box::into_pin(child.kill()).await {
                        tracing::warn!(%error, "cannot kill a stdio server");
                    }
                });
            } else {
                let _ = child.start_kill();
            }
        }
    }
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
                let line = tail.redact(&line);
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
    fn commands_are_found_on_the_given_path_only() {
        let sh = resolve("sh", Some("/nonexistent:/bin:/usr/bin".as_ref())).unwrap();
        assert!(sh.is_absolute() && sh.ends_with("sh"), "{sh:?}");
        assert_eq!(resolve("sh", Some("/nonexistent".as_ref())), None);
        assert_eq!(resolve("sh", None), None);
        // Not executable, or a directory: not a command.
        assert_eq!(resolve("passwd", Some("/etc".as_ref())), None);
        assert_eq!(resolve("bin", Some("/".as_ref())), None);
        assert_eq!(
            resolve("./run.sh", None),
            Some(std::path::PathBuf::from("./run.sh"))
        );
    }

    #[test]
    fn loader_variables() {
        for name in [
            "PATH",
            "LD_PRELOAD",
            "ld_audit",
            "DYLD_INSERT_LIBRARIES",
            "NODE_OPTIONS",
            "BASH_ENV",
        ] {
            assert!(is_loader_variable(name), "{name}");
        }
        for name in ["HOME", "API_KEY", "PATHNAME", "FIXTURE_MARKER"] {
            assert!(!is_loader_variable(name), "{name}");
        }
    }

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
