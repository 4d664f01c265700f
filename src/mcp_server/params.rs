//! SEP-2243's `Mcp-Param-*` headers on `/mcp` (2026-07-28). rmcp checks a `tools/call`'s headers
//! against the `x-mcp-header` parameters of the tool it names (the header present exactly when
//! the argument is, Base64 decoded when wrapped in `=?base64?…?=`, equal to it; else HTTP 400
//! with -32020) before the request reaches a handler, asking the server for the tool by name
//! with no caller at hand. Which tool a name is on `/mcp` depends on who asks and on which
//! path, so [`seen_by`] names them for the request's task and [`tool`] answers only what that
//! caller sees there: a tool hidden from it is as unknown to the header check as to the call.

use std::future::Future;

use axum::http::{HeaderMap, Uri};
use rmcp::model::Tool;

use super::{ScopePath, scope_of};
use crate::caller::Caller;
use crate::http::state::AppState;
use crate::naming;

tokio::task_local! {
    static SEEN_BY: Seen;
}

/// Who asks, and on which path.
pub struct Seen {
    caller: Caller,
    scope: ScopePath,
}

impl Seen {
    /// For a 2026-07-28 `tools/call` (the one request whose headers restate a tool's
    /// arguments) to `uri` with `headers`: its caller and path; None for any other.
    pub fn of(headers: &HeaderMap, uri: &Uri, caller: &Caller) -> Option<Seen> {
        let calls_a_tool = headers
            .get("mcp-method")
            .is_some_and(|method| method.as_bytes().trim_ascii() == b"tools/call");
        calls_a_tool.then(|| Seen {
            caller: caller.clone(),
            scope: scope_of(uri),
        })
    }
}

/// Runs `work` (the rest of the request) with its caller and path, when `seen` has them,
/// known to [`tool`].
pub async fn seen_by<F: Future>(seen: Option<Seen>, work: F) -> F::Output {
    match seen {
        Some(seen) => SEEN_BY.scope(seen, work).await,
        None => work.await,
    }
}

/// The tool the current request's caller sees as `name` on its path (`unprefixed`: the server
/// whose tools `/mcp` shows without their prefix); None outside [`seen_by`], on a deferred
/// path (its tools are the meta-tools, which restate nothing) and for a tool it does not see.
pub fn tool(state: &AppState, unprefixed: Option<&str>, name: &str) -> Option<Tool> {
    SEEN_BY
        .try_with(|seen| {
            let tools = &state.tools;
            let scope = seen.scope.scope();
            if tools.deferred(scope) {
                return None;
            }
            let members = tools.members(scope).ok()?;
            let view = tools.access().view(&seen.caller);
            if let Some(item) = members.find(&view, name) {
                return Some(item.definition.clone());
            }
            let full = format!("{}{}{name}", unprefixed?, naming::SEPARATOR);
            members
                .visible(&view)
                .find(|item| item.full == full)
                .map(|item| item.definition.clone())
        })
        .ok()
        .flatten()
}
