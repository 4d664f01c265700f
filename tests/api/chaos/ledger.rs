//! The chaos test's ledger: every call with its outcome, the replica that answered and its
//! times; the faults; and the figures printed and written from them.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{Value, json};

use super::{GRACE, knob};

#[derive(Clone, Debug)]
pub enum Outcome {
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
    pub fn retryable(&self) -> bool {
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
pub struct Entry {
    pub id: String,
    pub kind: &'static str,
    /// The replica that answered (HAProxy's `x-served-by`), empty without an answer.
    pub replica: String,
    pub started: Instant,
    pub ended: Instant,
    pub outcome: Outcome,
}

#[derive(Clone, Default)]
pub struct Ledger(Arc<Mutex<Vec<Entry>>>);

impl Ledger {
    pub fn write(
        &self,
        id: String,
        kind: &'static str,
        started: Instant,
        answer: (Outcome, String),
    ) {
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

    pub fn entries(&self) -> Vec<Entry> {
        self.0.lock().unwrap().clone()
    }
}

/// A fault: from its start until the cluster was whole again.
pub struct Fault {
    pub name: String,
    pub started: Instant,
    pub ended: Instant,
}

impl Fault {
    pub fn covers(&self, entry: &Entry) -> bool {
        entry.started <= self.ended + GRACE && entry.ended >= self.started
    }
}

/// The fault a call's failure is put down to: the last one begun before the call ended, if
/// that one covers it.
pub fn fault_of<'a>(faults: &'a [Fault], entry: &Entry) -> Option<&'a Fault> {
    faults
        .iter()
        .rev()
        .find(|f| f.started <= entry.ended)
        .filter(|f| f.covers(entry))
}

/// A request that got no answer.
pub fn transport(e: &reqwest::Error) -> Outcome {
    match e.is_timeout() {
        true => Outcome::Transport(format!("timed out: {e}")),
        false => Outcome::Transport(e.to_string()),
    }
}

/// The replica that answered, as HAProxy names it.
pub fn served_by(resp: &reqwest::Response) -> String {
    resp.headers()
        .get("x-served-by")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

/// The outcome of a REST answer, and the replica that gave it.
pub async fn rest_outcome(sent: reqwest::Result<reqwest::Response>) -> (Outcome, String) {
    let resp = match sent {
        Ok(resp) => resp,
        Err(e) => return (transport(&e), String::new()),
    };
    let replica = served_by(&resp);
    (rest_outcome_of(resp).await, replica)
}

pub async fn rest_outcome_of(resp: reqwest::Response) -> Outcome {
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
pub fn rpc_answer(text: &str) -> Option<Value> {
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        return Some(value);
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .rfind(|m| m.get("result").is_some() || m.get("error").is_some())
}

/// The outcome of a `/mcp` answer to `tools/call`, and the replica that gave it.
pub async fn mcp_outcome(sent: reqwest::Result<reqwest::Response>) -> (Outcome, String) {
    let resp = match sent {
        Ok(resp) => resp,
        Err(e) => return (transport(&e), String::new()),
    };
    let replica = served_by(&resp);
    (mcp_outcome_of(resp).await, replica)
}

pub async fn mcp_outcome_of(resp: reqwest::Response) -> Outcome {
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

/// Writes the ledger as JSON lines: each fault, then each call, times in ms since the start.
pub fn write_ledger(path: &Path, zero: Instant, entries: &[Entry], faults: &[Fault]) {
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
pub fn report(entries: &[Entry], faults: &[Fault]) {
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
