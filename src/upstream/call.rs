//! A tool call on a live connection: posted directly or through rmcp's client, its
//! input-required rounds (2026-07-28) answered, and the server told when its caller drops it.

use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientRequest, InputRequest,
    InputRequests, InputResponses, RequestMetaObject, ServerResult,
};
use rmcp::service::PeerRequestOptions;
use rmcp::{ErrorData, RoleClient};

use super::traced::{self, Traced as _};
use super::{CallError, CallOrigin, Connection, INPUT_HANDED_OVER, Route};

/// Most input-required rounds one call may take.
const MAX_INPUT_ROUNDS: usize = 8;

fn to_json<T: serde::Serialize>(value: T) -> Result<serde_json::Value, ErrorData> {
    serde_json::to_value(value).map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

impl Connection {
    /// Calls a tool for `origin`: what the server asks or reports during the call goes to it.
    /// When spans are exported, in a client span whose context the request carries in
    /// `_meta` (`traceparent`, SEP-414) on every transport, and in headers over HTTP.
    pub async fn call_tool(
        &self,
        params: CallToolRequestParams,
        timeout: Duration,
        origin: CallOrigin,
    ) -> Result<CallToolResult, CallError> {
        self.traced(params, |params| {
            self.call_tool_traced(params, timeout, origin)
        })
        .await
    }

    /// `call_tool`'s work.
    async fn call_tool_traced(
        &self,
        params: CallToolRequestParams,
        timeout: Duration,
        origin: CallOrigin,
    ) -> Result<CallToolResult, CallError> {
        let mut params = params;
        // A 2026-07-28 client answering input requests itself: its answers and the server's state
        // go on to the server, and the server sees what the client can do, not the bridge.
        let rounds = origin.input_rounds();
        let mut client_meta = None;
        if let Some(rounds) = rounds {
            params.input_responses = rounds.responses.clone();
            params.request_state = rounds.request_state.clone();
            if let Some(capabilities) = &rounds.capabilities {
                let mut meta = RequestMetaObject::default();
                meta.set_client_capabilities(capabilities.clone());
                params
                    .meta
                    .get_or_insert_default()
                    .set_client_capabilities(capabilities.clone());
                client_meta = Some(meta);
            }
        }
        // rmcp's own deadline also tells the server the call is cancelled.
        let options = || {
            let mut options = PeerRequestOptions::no_options();
            options.timeout = Some(timeout);
            options.meta = client_meta.clone();
            options
        };
        for round in 0..MAX_INPUT_ROUNDS {
            // The rounds after the first (2026-07-28: the call made again with the answers to
            // the server's input requests) each in a span of their own, when exported.
            let span = (round > 0 && crate::telemetry::exporting())
                .then(|| self.round_span(&params, round + 1));
            if let Some(span) = &span {
                traced::inject_into(span, &mut params.meta);
            }
            let answered = self.round(&mut params, &origin, timeout, &options);
            let answered = match span {
                Some(span) => traced::within(span, Box::pin(answered)).await?,
                None => answered.await?,
            };
            if let Some(result) = answered {
                return Ok(result);
            }
        }
        Err(CallError::Protocol(format!(
            "the server still asked for input after {MAX_INPUT_ROUNDS} rounds"
        )))
    }

    /// One round of a call: its result, or None when the server asked for input, which the
    /// caller gave and `params` now carries for the next round.
    async fn round(
        &self,
        params: &mut CallToolRequestParams,
        origin: &CallOrigin,
        timeout: Duration,
        options: &impl Fn() -> PeerRequestOptions,
    ) -> Result<Option<CallToolResult>, CallError> {
        // Posted without rmcp's client when it can be (`direct.rs`); through it when the
        // server has forgotten the session, or on a connection without a direct way.
        let direct = self
            .direct
            .as_ref()
            .and_then(|direct| Some((direct, direct.session()?)));
        if let Some((direct, session)) = direct {
            let call = self.call_direct(direct, session, params, origin, timeout);
            // Boxed, as rmcp's: see `run`.
            if let Some(answered) = self.watch(Box::pin(call)).await {
                return self.answered(answered?, params, origin).await;
            }
        }
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params.clone()));
        let call = async {
            let handle = self
                .client
                .peer()
                .send_request_with_option(request, options())
                .await?;
            let _tracked =
                self.calls
                    .track(handle.id.clone(), &handle.progress_token, origin.clone());
            let cancel = CancelOnDrop::new(&handle);
            let answer = handle.await_response().await;
            // Answered, or rmcp's own deadline passed (it has told the server then).
            cancel.disarm();
            // What the server sent before its answer reaches the caller first.
            self.delivered().await;
            answer
        };
        let result = self.run(timeout + Duration::from_secs(1), call).await?;
        self.answered(result, params, origin).await
    }

    /// The span of round `n` (from 2) of a call: a client request of its own, named as the
    /// call's with the round's number.
    fn round_span(&self, params: &CallToolRequestParams, n: usize) -> tracing::Span {
        let span = params.span(self.client.service().server_id());
        span.record("otel.name", format!("tools/call {} round {n}", params.name));
        span.record("mcp_bridge.round", n as i64);
        span
    }

    /// A call's answer: its result, or None when the server asked for input, which the caller
    /// gave and `params` now carries for the next round.
    async fn answered(
        &self,
        result: ServerResult,
        params: &mut CallToolRequestParams,
        origin: &CallOrigin,
    ) -> Result<Option<CallToolResult>, CallError> {
        match result {
            ServerResult::CallToolResult(result) => Ok(Some(result)),
            // 2026-07-28: the server needs input first; the caller gives it, then the call is
            // made again with the answers and the server's state.
            ServerResult::InputRequiredResult(required) => {
                if let Some(rounds) = origin.input_rounds() {
                    rounds.hand_over(required);
                    return Err(CallError::Rejected {
                        code: INPUT_HANDED_OVER,
                        message: "the server needs the MCP client's input first".into(),
                    });
                }
                let requests = required.input_requests.unwrap_or_default();
                if requests.is_empty() && required.request_state.is_none() {
                    return Err(CallError::Protocol(
                        "an input-required result asked for nothing".into(),
                    ));
                }
                // Boxed: rare, and large (the agent's answers are awaited in it).
                let answers = Box::pin(self.answer_inputs(requests, origin)).await?;
                params.input_responses = (!answers.is_empty()).then_some(answers);
                params.request_state = required.request_state;
                Ok(None)
            }
            // A server may answer a tool without content with an empty result.
            other => serde_json::to_value(&other)
                .ok()
                .and_then(|v| serde_json::from_value(v).ok())
                .map(Some)
                .ok_or_else(|| {
                    CallError::Protocol(
                        "the server answered a tool call with something else".into(),
                    )
                }),
        }
    }

    /// Answers the input requests of an input-required result through the caller (sampling,
    /// elicitation) or the owner (roots), exactly as a server-initiated request would be.
    pub(super) async fn answer_inputs(
        &self,
        requests: InputRequests,
        origin: &CallOrigin,
    ) -> Result<InputResponses, CallError> {
        let handler = self.client.service();
        let mut answers = InputResponses::new();
        let caller = Route::Caller(origin.as_ref());
        for (key, request) in requests {
            let answer = match request {
                InputRequest::CreateMessage(r) => handler
                    .sample_for(caller, key.clone(), &r.params, traced::meta_of(&r))
                    .await
                    .and_then(to_json),
                InputRequest::Elicitation(r) => handler
                    .elicit_for(caller, key.clone(), &r.params, traced::meta_of(&r))
                    .await
                    .and_then(to_json),
                InputRequest::ListRoots(r) => handler
                    .roots_for_owner(key.clone(), traced::meta_of(&r))
                    .await
                    .and_then(to_json),
                _ => {
                    return Err(CallError::Protocol(format!(
                        "input request \"{key}\" is of a kind this bridge does not know"
                    )));
                }
            };
            let answer = answer.map_err(|e| CallError::Rejected {
                code: e.code.0,
                message: e.message.into_owned(),
            })?;
            answers.insert(key, answer);
        }
        Ok(answers)
    }
}

/// Why the bridge cancels a call it dropped (`notifications/cancelled`'s `reason`).
pub const CANCEL_REASON: &str = "the caller cancelled the call (or closed its request)";

/// Tells the server a request is cancelled when the future awaiting its answer is dropped
/// first: rmcp forgets a dropped request without a word, and the server would work on.
/// Dropping happens whatever stops the caller: its HTTP request closed, `DELETE /v1/calls`,
/// the connection lost (the notification then goes nowhere), on every transport alike.
pub(super) struct CancelOnDrop {
    armed: Option<(rmcp::Peer<RoleClient>, rmcp::model::RequestId)>,
}

impl CancelOnDrop {
    fn new(handle: &rmcp::service::RequestHandle<RoleClient>) -> Self {
        Self::of(handle.peer.clone(), handle.id.clone())
    }

    /// For the request `id`, the notification sent through `peer`.
    pub(super) fn of(peer: rmcp::Peer<RoleClient>, id: rmcp::model::RequestId) -> Self {
        Self {
            armed: Some((peer, id)),
        }
    }

    pub(super) fn disarm(mut self) {
        self.armed = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some((peer, id)) = self.armed.take() else {
            return;
        };
        // Outside a runtime (the process is ending) there is no one to send it.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        tracing::debug!(request_id = %id, "cancelling a dropped call upstream");
        let notification = rmcp::model::CancelledNotification::new(
            rmcp::model::CancelledNotificationParam::new(Some(id), Some(CANCEL_REASON.into())),
        );
        runtime.spawn(async move {
            if let Err(error) = peer.send_notification(notification.into()).await {
                tracing::debug!(%error, "cannot tell the server a call is cancelled");
            }
        });
    }
}
