//! The spans of a call's work that every front end shares (REST, `/v1/a2e`, `/mcp`, a task):
//! `resource.read` and `prompt.get` beside `tool.call` (`call_member`), and `authorize` for the
//! decision of the caller's policies on a tool, resource or prompt. Each is made only when spans
//! are exported; otherwise the work runs as it is, at the cost of one load.

use rmcp::model::{GetPromptResult, ReadResourceResult};
use serde_json::{Map, Value};
use tracing::{Instrument as _, Span};

use super::{CallRequest, Resolved, Tools};
use crate::access::Kind;
use crate::caller::Caller;
use crate::hub::InputRounds;
use crate::naming::SEPARATOR;
use crate::registry;
use crate::telemetry::{self, SPANS};

impl Tools {
    /// Reads the resource `target` (as [`Tools::resolve_item`] let it through) for `caller`,
    /// its hooks asked; answers its server and the result as MCP has it. In a `resource.read`
    /// span when spans are exported.
    pub async fn read_resource(
        &self,
        caller: &Caller,
        target: &Resolved,
    ) -> Result<(String, ReadResourceResult), registry::Error> {
        if !telemetry::exporting() {
            return self.read_resource_hooked(caller, target).await;
        }
        let span = tracing::info_span!(
            target: SPANS,
            "resource.read",
            mcp.method.name = "resources/read",
            mcp.resource.uri = target.item.as_str(),
            mcp_bridge.server.id = tracing::field::Empty,
        );
        let read = self.read_resource_hooked(caller, target);
        let read = Box::pin(read.instrument(span.clone())).await;
        ended(&span, &read);
        read
    }

    /// Renders the prompt `target` for `caller`, its hooks asked; `rounds`: a stateless `/mcp`
    /// client's input rounds (see `Registry::get_prompt_for`). In a `prompt.get` span when
    /// spans are exported, which names the prompt canonically (`{server_id}__{prompt}`).
    pub async fn get_prompt(
        &self,
        caller: &Caller,
        target: &Resolved,
        arguments: Map<String, Value>,
        rounds: Option<&InputRounds>,
    ) -> Result<(String, GetPromptResult), registry::Error> {
        if !telemetry::exporting() {
            return self
                .get_prompt_hooked(caller, target, arguments, rounds)
                .await;
        }
        let span = tracing::info_span!(
            target: SPANS,
            "prompt.get",
            mcp.method.name = "prompts/get",
            gen_ai.prompt.name = prompt_name(&target.server_id, &target.item),
            mcp_bridge.server.id = tracing::field::Empty,
        );
        let rendered = self.get_prompt_hooked(caller, target, arguments, rounds);
        let rendered = Box::pin(rendered.instrument(span.clone())).await;
        if let Ok((server, _)) = &rendered {
            span.record("gen_ai.prompt.name", prompt_name(server, &target.item));
        }
        ended(&span, &rendered);
        rendered
    }

    /// Resolves `item` (a resource URI, a URI template, or a prompt name) of `server_id` (may
    /// be "") to the canonical (server, item) it stands for, then applies the caller's
    /// policies to that: a refused item is missing (and audited), as one that does not exist.
    /// In an `authorize` span when spans are exported.
    pub async fn resolve_item(
        &self,
        caller: &Caller,
        kind: Kind,
        server_id: &str,
        item: &str,
    ) -> Result<Resolved, registry::Error> {
        if !telemetry::exporting() {
            return self.resolve_visible(caller, kind, server_id, item).await;
        }
        let span = authorize_span(caller, kind, item);
        let resolved = self.resolve_visible(caller, kind, server_id, item);
        let resolved = Box::pin(resolved.instrument(span.clone())).await;
        decided(&span, &resolved);
        resolved
    }

    /// The catalogue name of the tool `req` calls, if the caller's policies let the call run
    /// now (see `permit_call`). In an `authorize` span when spans are exported.
    pub(super) async fn permit(&self, req: &CallRequest<'_>) -> Result<String, registry::Error> {
        if !telemetry::exporting() {
            return self.permit_call(req).await;
        }
        let span = authorize_span(req.caller, Kind::Tool, req.name);
        let permitted = Box::pin(self.permit_call(req).instrument(span.clone())).await;
        if let Ok(full) = &permitted {
            span.record("gen_ai.tool.name", full.as_str());
        }
        decided(&span, &permitted);
        permitted
    }
}

/// A prompt's canonical name, when its server is known.
fn prompt_name(server_id: &str, prompt: &str) -> String {
    match server_id.is_empty() {
        true => prompt.to_owned(),
        false => format!("{server_id}{SEPARATOR}{prompt}"),
    }
}

/// Marks the span of a call, read or get with the server that answered, or failed with the
/// A2E code of its error.
pub(super) fn ended<T>(span: &Span, outcome: &Result<(String, T), registry::Error>) {
    match outcome {
        Ok((server, _)) => {
            span.record("mcp_bridge.server.id", server.as_str());
        }
        Err(error) => telemetry::failed(span, error.code().as_str(), &error.to_string()),
    }
}

/// The span of a policy decision on `caller`'s use of the `kind` `name` (as the caller named it).
fn authorize_span(caller: &Caller, kind: Kind, name: &str) -> Span {
    let (tool, uri, prompt) = match kind {
        Kind::Tool => (Some(name), None, None),
        Kind::Resource => (None, Some(name), None),
        Kind::Prompt => (None, None, Some(name)),
    };
    tracing::info_span!(
        target: SPANS,
        "authorize",
        mcp_bridge.agent.id = caller.id.as_str(),
        gen_ai.tool.name = tool,
        mcp.resource.uri = uri,
        gen_ai.prompt.name = prompt,
        mcp_bridge.authorize.outcome = tracing::field::Empty,
    )
}

/// Marks a policy decision's span with its outcome (`allowed`, or `denied` and failed with
/// the A2E code of the refusal).
fn decided<T>(span: &Span, decision: &Result<T, registry::Error>) {
    match decision {
        Ok(_) => {
            span.record("mcp_bridge.authorize.outcome", "allowed");
        }
        Err(error) => {
            span.record("mcp_bridge.authorize.outcome", "denied");
            telemetry::failed(span, error.code().as_str(), &error.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_is_named_canonically_once_its_server_is_known() {
        assert_eq!(prompt_name("", "greet"), "greet");
        assert_eq!(prompt_name("docs", "greet"), "docs__greet");
    }
}
