//! A task in a trace, when spans are exported: the trace it was created in is stored with it
//! (`trace`, W3C fields as JSON), its call runs in a `task.run` span under the request that
//! created it, a task polled again after a restart (or taken over, or handed over by another
//! replica) runs in a `task.resume` span of a trace of its own, linked to the one it was created
//! in (that trace has ended), and its wait for a slot of its agent's concurrency is a `queue`
//! span. Off, each of these is one load: no span, no carrier, no allocation.

use std::future::Future;

use tokio::task::JoinHandle;
use tracing::{Instrument as _, Span};

use crate::store::StoredTask;
use crate::telemetry::{self, Carrier, SPANS};

/// The current trace, as a task stores it (none when nothing is exported or there is none).
pub(super) fn stored() -> Option<String> {
    telemetry::current().and_then(|carrier| serde_json::to_string(&carrier).ok())
}

/// Spawns `run` in `span` (from [`span`]), or as it is without one.
pub(super) fn spawn<F>(span: Option<Span>, run: F) -> JoinHandle<()>
where
    F: Future<Output = ()> + Send + 'static,
{
    match span {
        None => tokio::spawn(run),
        Some(span) => tokio::spawn(run.instrument(span)),
    }
}

/// The span of the work of `task`, when spans are exported: a `task.run` under the current
/// span, or (`resumed`) a `task.resume` starting a trace linked to the stored one.
pub(super) fn span(task: &StoredTask, resumed: bool) -> Option<Span> {
    if !telemetry::exporting() {
        return None;
    }
    Some(match resumed {
        false => tracing::info_span!(
            target: SPANS,
            "task.run",
            mcp_bridge.task.id = task.task_id.as_str(),
            gen_ai.tool.name = task.name.as_str(),
        ),
        true => {
            let span = tracing::info_span!(
                target: SPANS,
                parent: None,
                "task.resume",
                mcp_bridge.task.id = task.task_id.as_str(),
                gen_ai.tool.name = task.name.as_str(),
                mcp_bridge.server.id = task.server_id.as_str(),
            );
            if let Some(carrier) = carrier(task) {
                telemetry::link_to(&span, &carrier);
            }
            span
        }
    })
}

/// The trace `task` was created in, as stored.
fn carrier(task: &StoredTask) -> Option<Carrier> {
    serde_json::from_str(task.trace.as_deref()?).ok()
}

/// A span for the time `task` waits for a slot, when spans are exported (dropped once it has
/// one: its length is the wait).
pub(super) fn queue(task: &StoredTask) -> Option<Span> {
    telemetry::exporting().then(|| {
        tracing::info_span!(
            target: SPANS,
            "queue",
            mcp_bridge.task.id = task.task_id.as_str(),
        )
    })
}

/// Marks the current span (a task's) failed with the A2E `code` its call ended with.
pub(super) fn failed(code: &str, message: &str) {
    if telemetry::exporting() {
        telemetry::failed(&Span::current(), code, message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_trace_is_read_back_and_a_bad_one_is_none() {
        let parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let mut task = StoredTask {
            trace: Some(format!(r#"{{"traceparent":"{parent}","baggage":"k=v"}}"#)),
            ..Default::default()
        };
        let read = carrier(&task).unwrap();
        assert_eq!(read["traceparent"], parent);
        assert_eq!(read["baggage"], "k=v");
        task.trace = Some("not json".into());
        assert!(carrier(&task).is_none());
        task.trace = None;
        assert!(carrier(&task).is_none());
    }

    #[test]
    fn nothing_is_stored_or_made_while_nothing_is_exported() {
        assert!(stored().is_none());
        assert!(queue(&StoredTask::default()).is_none());
        assert!(span(&StoredTask::default(), true).is_none());
    }
}
