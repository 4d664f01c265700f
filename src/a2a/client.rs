//! One request to an agent and its answer: a JSON-RPC request, or the HTTP+JSON request of the
//! same operation, with the registrant's headers; the answer read bounded; method names in the
//! agent's protocol version. Exported, each call is a client span (`traced`) whose trace goes
//! with the request in `traceparent`, `tracestate` and `baggage` headers.

use std::time::Duration;

use serde_json::{Value, json};

use super::body::{self, BodyError};
use super::{A2a, A2aAgent, A2aError, Binding, TIMEOUT_BUFFER, rest};
use crate::a2e::A2aProtocol;

impl A2a {
    pub(super) fn too_large(&self, what: &str) -> A2aError {
        A2aError::Protocol(format!(
            "{what} is larger than the {} limit (MCP_BRIDGE_MAX_MESSAGE_BYTES)",
            body::size(self.max_reply_bytes)
        ))
    }

    pub(super) async fn rpc(
        &self,
        agent: &A2aAgent,
        method: &str,
        params: Value,
        timeout_secs: u64,
    ) -> Result<Value, A2aError> {
        let wait = Duration::from_secs(timeout_secs) + TIMEOUT_BUFFER;
        let call = async {
            let resp = self.post(agent, method, params, wait, false).await?;
            self.answer(agent, resp, wait).await
        };
        traced(agent, method, call).await
    }

    /// Sends one request to the agent (asking for a stream when `stream`): a JSON-RPC request,
    /// or the HTTP+JSON request of `method` for an agent that offers only that binding.
    pub(super) async fn post(
        &self,
        agent: &A2aAgent,
        method: &str,
        params: Value,
        wait: Duration,
        stream: bool,
    ) -> Result<reqwest::Response, A2aError> {
        let endpoint = reqwest::Url::parse(&agent.endpoint.url)
            .map_err(|e| A2aError::Protocol(format!("the card's endpoint: {e}")))?;
        // A literal address is not seen by the client's resolver: checked here, on every call.
        self.guard
            .check_url(&endpoint)
            .map_err(|refused| A2aError::Unreachable(refused.to_string()))?;
        let mut request = match agent.endpoint.binding {
            Binding::JsonRpc => {
                let body = json!({"jsonrpc": "2.0", "id": uuid::Uuid::new_v4().to_string(), "method": method, "params": params});
                self.client.post(endpoint).json(&body)
            }
            Binding::HttpJson => {
                let call = rest::request(method, &params)?;
                let mut url = endpoint;
                url.path_segments_mut()
                    .map_err(|()| A2aError::Protocol("the card's endpoint has no path".into()))?
                    .pop_if_empty()
                    .extend(agent.endpoint.tenant.iter())
                    .extend(&call.segments);
                if !call.query.is_empty() {
                    url.query_pairs_mut().extend_pairs(&call.query);
                }
                let request = self.client.request(call.method, url);
                match &call.body {
                    Some(body) => request.json(body),
                    None => request,
                }
            }
        };
        request = request.timeout(wait);
        if stream {
            request = request.header(reqwest::header::ACCEPT, "text/event-stream");
        }
        if agent.endpoint.protocol == A2aProtocol::V1_0 {
            request = request.header("A2A-Version", A2aProtocol::V1_0.as_str());
        }
        for (name, value) in &agent.headers {
            request = request.header(name, value);
        }
        if crate::telemetry::exporting() {
            let mut trace = http::HeaderMap::new();
            crate::telemetry::inject(&mut trace);
            request = request.headers(trace);
        }
        request.send().await.map_err(|e| {
            if e.is_timeout() {
                A2aError::Timeout(wait)
            } else {
                A2aError::Unreachable(e.to_string())
            }
        })
    }

    /// The `result` of a JSON-RPC answer, or the body of an HTTP+JSON one, read bounded; an
    /// HTTP+JSON error's `google.rpc.Status` as `A2aError::Status`.
    pub(super) async fn answer(
        &self,
        agent: &A2aAgent,
        resp: reqwest::Response,
        wait: Duration,
    ) -> Result<Value, A2aError> {
        let status = resp.status();
        let bytes = body::read(resp, self.max_reply_bytes)
            .await
            .map_err(|e| match e {
                BodyError::TooLarge => self.too_large("the agent's answer"),
                BodyError::Read(e) if e.is_timeout() => A2aError::Timeout(wait),
                BodyError::Read(e) => A2aError::Unreachable(e.to_string()),
            })?;
        if agent.endpoint.binding == Binding::HttpJson {
            // A `DELETE` answers with no body.
            if status.is_success() && bytes.iter().all(u8::is_ascii_whitespace) {
                return Ok(json!({}));
            }
            let answer: Value = serde_json::from_slice(&bytes)
                .map_err(|e| A2aError::Protocol(format!("HTTP {status}, not JSON: {e}")))?;
            if let Some(error) = rest::status_of(&answer) {
                return Err(A2aError::Status(error));
            }
            if !status.is_success() {
                return Err(A2aError::Protocol(format!("HTTP {status}: {answer}")));
            }
            return Ok(answer);
        }
        let answer: Value = serde_json::from_slice(&bytes)
            .map_err(|e| A2aError::Protocol(format!("HTTP {status}, not JSON-RPC: {e}")))?;
        if let Some(error) = answer.get("error") {
            return Err(A2aError::Rpc(error.clone()));
        }
        answer
            .get("result")
            .cloned()
            .ok_or_else(|| A2aError::Protocol(format!("HTTP {status}, no result: {answer}")))
    }
}

/// Runs `call`, a call of `method` to `agent`, in a client span when spans are exported: named
/// after the method as sent, with the agent (`gen_ai.agent.id`, `gen_ai.agent.name`), where it
/// is (`server.address`, `server.port`) and `rpc.system` `jsonrpc` for a JSON-RPC agent; a
/// failure marked with its A2E code. Never the message, its parts or the answer.
pub(super) async fn traced<T>(
    agent: &A2aAgent,
    method: &str,
    call: impl std::future::Future<Output = Result<T, A2aError>>,
) -> Result<T, A2aError> {
    if !crate::telemetry::exporting() {
        return call.await;
    }
    use tracing::Instrument as _;
    let span = span_of(agent, method);
    // Boxed, as the other rare paths: kept out of the size of every call's future.
    let called = Box::pin(call.instrument(span.clone())).await;
    if let Err(error) = &called {
        crate::telemetry::failed(&span, error.code().as_str(), &error.to_string());
    }
    called
}

/// The client span of a call of `method` to `agent`.
fn span_of(agent: &A2aAgent, method: &str) -> tracing::Span {
    let url = reqwest::Url::parse(&agent.endpoint.url).ok();
    let rpc = (agent.endpoint.binding == Binding::JsonRpc).then_some("jsonrpc");
    tracing::info_span!(
        target: crate::telemetry::SPANS,
        "a2a.client",
        otel.name = method,
        otel.kind = "client",
        rpc.system = rpc,
        rpc.method = method,
        server.address = url.as_ref().and_then(|url| url.host_str()),
        server.port = url
            .as_ref()
            .and_then(reqwest::Url::port_or_known_default)
            .map(i64::from),
        gen_ai.agent.id = agent.agent_id.as_str(),
        gen_ai.agent.name = agent.card.name.as_deref(),
    )
}

/// A method name in the agent's protocol version: A2A 1.0 names are PascalCase, 0.3 names are
/// slash-separated; any other name is passed on as it is.
pub(super) fn translate(method: &str, protocol: A2aProtocol) -> &str {
    const PAIRS: [(&str, &str); 6] = [
        ("message/send", "SendMessage"),
        ("message/stream", "SendStreamingMessage"),
        ("tasks/get", "GetTask"),
        ("tasks/cancel", "CancelTask"),
        ("tasks/resubscribe", "SubscribeToTask"),
        ("agent/getAuthenticatedExtendedCard", "GetExtendedAgentCard"),
    ];
    for (old, new) in PAIRS {
        match protocol {
            A2aProtocol::V1_0 if method == old => return new,
            A2aProtocol::V0_3 if method == new => return old,
            _ => {}
        }
    }
    method
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn method_names_follow_the_agent_protocol() {
        assert_eq!(translate("tasks/get", A2aProtocol::V1_0), "GetTask");
        assert_eq!(translate("GetTask", A2aProtocol::V1_0), "GetTask");
        assert_eq!(translate("GetTask", A2aProtocol::V0_3), "tasks/get");
        assert_eq!(translate("custom/thing", A2aProtocol::V1_0), "custom/thing");
    }
}
