//! A plain `tools/call` on a Streamable HTTP connection, posted from the caller's own task in the
//! session rmcp's client keeps. Through rmcp, a call went from the caller to the service's task,
//! to the transport worker's task, to a task of its own for the POST, and its answer back to
//! the worker, the service and the caller: four hops between tasks and some 40k instructions a
//! call (BENCHMARKS.md). rmcp's client and the transport under it (`http/streamable.rs`) still
//! make and keep the session (initialize, the standalone stream, a new session when the server
//! forgets this one, the session's DELETE), and send everything but these calls; a call posted
//! here is posted as the transport would post it, with the session, token and headers its last
//! request went with ([`http::Session`]).
//!
//! What a server sends on a call's stream before the answer is handled as rmcp's client would:
//! the call's progress goes to its caller, in order before the answer, other notifications to
//! the connection's pump, and the server's requests (sampling, elicitation, roots, ping) to the
//! call's caller, their answers posted back. A stream that ends before the answer is resumed
//! after its last event. A server that no longer knows the session (404) gets the call through
//! rmcp, which makes a new session and posts it there.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, ClientJsonRpcMessage, ClientResult, ErrorCode, JsonRpcMessage,
    JsonRpcRequest, NumberOrString, ProgressToken, RequestId, ServerNotification, ServerRequest,
    ServerResult,
};
use rmcp::service::ServiceError;
use rmcp::transport::streamable_http_client::{
    StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};

use super::call::CancelOnDrop;
use super::decode::decode_answer;
use super::handler::Route;
use super::http::{self, Events, Session};
use super::notify;
use super::traced;
use super::{CallError, CallOrigin, Connection};

/// The first id of the bridge's own calls: far above the ids rmcp's client counts from 0 in
/// the same session, so the two never meet.
const FIRST_ID: i64 = 1 << 32;
/// Resumptions of a call's stream in a row that bring no event before the call fails.
const RESUMPTIONS: u32 = 3;

/// A `tools/call` request as rmcp's client writes it, without its detour through a JSON value
/// (rmcp serializes a request's params to a `Value` to merge their `_meta` with its own).
#[derive(serde::Serialize)]
struct CallMessage<'a> {
    jsonrpc: &'static str,
    id: i64,
    method: &'static str,
    params: &'a CallToolRequestParams,
}

impl<'a> CallMessage<'a> {
    fn new(id: i64, params: &'a CallToolRequestParams) -> Self {
        Self {
            jsonrpc: "2.0",
            id,
            method: "tools/call",
            params,
        }
    }
}

/// The way to post calls on one Streamable HTTP connection.
pub struct Direct {
    http: http::Bounded,
    /// The server's URL, parsed once for every call.
    uri: axum::http::Uri,
    limits: StreamableHttpResponseLimits,
    next_id: AtomicI64,
}

impl Direct {
    /// Over `http` (a clone of the client rmcp's transport has), to `uri`, taking messages of
    /// up to `limit` bytes as rmcp's transport does; None when `http` does not post over its
    /// pool (a proxy is set) or `uri` is not one hyper takes.
    pub fn new(http: http::Bounded, uri: &str, limit: usize) -> Option<Self> {
        let uri = uri.parse().ok().filter(|_| http.pooled())?;
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_json_response_size = limit;
        limits.max_sse_event_size = limit;
        Some(Self {
            http,
            uri,
            limits,
            next_id: AtomicI64::new(FIRST_ID),
        })
    }

    /// The session to post in, once rmcp's client has posted a request in one whose headers
    /// are valid (else rmcp's client posts, and fails as it does).
    pub fn session(&self) -> Option<Arc<Session>> {
        self.http.session().filter(|session| session.postable())
    }
}

impl Connection {
    /// Calls a tool through `direct` in `session`: its answer, or None when the server no
    /// longer knows the session (the call was not made; rmcp is to make it). `params` are
    /// given back as they came.
    pub(super) async fn call_direct(
        &self,
        direct: &Direct,
        session: Arc<Session>,
        params: &mut CallToolRequestParams,
        origin: &CallOrigin,
        timeout: Duration,
    ) -> Option<Result<ServerResult, CallError>> {
        let number = direct.next_id.fetch_add(1, Ordering::Relaxed);
        let id = RequestId::Number(number);
        // As rmcp: every request carries a progress token, so the server may report progress.
        let token = ProgressToken(NumberOrString::Number(number));
        let body = {
            let meta = params.meta.clone();
            let with_token = params.meta.get_or_insert_default();
            with_token.set_progress_token(token.clone());
            let body = serde_json::to_vec(&CallMessage::new(number, params));
            params.meta = meta;
            match body {
                Ok(body) => Bytes::from(body),
                Err(error) => return Some(Err(CallError::Protocol(error.to_string()))),
            }
        };
        let _tracked = self.calls.track(id.clone(), &token, origin.clone());
        // Dropped before the answer (the caller gone, the deadline passed): the server is told.
        let cancel = CancelOnDrop::of(self.client.peer().clone(), id.clone());
        let call = async {
            let posted = direct
                .http
                .post_call_in(&session, &direct.uri, body, id.clone(), direct.limits)
                .await;
            match posted {
                Ok(StreamableHttpPostResponse::Json(answer, _)) => {
                    Some(self.answer_of(answer, &id).unwrap_or_else(|| {
                        Err(CallError::Protocol(
                            "the server answered a tool call with another message".into(),
                        ))
                    }))
                }
                Ok(StreamableHttpPostResponse::Sse(events, _)) => {
                    // Rare (the server sent something before the answer): boxed.
                    let follow = self.follow(direct, &session, events, &id, &token, origin);
                    let answered = Box::pin(follow).await;
                    // The call's own progress went inline; the rest went to the pump.
                    self.delivered().await;
                    Some(answered)
                }
                Ok(_) => Some(Err(CallError::Protocol(
                    "the server accepted the tool call without answering it (HTTP 202)".into(),
                ))),
                Err(StreamableHttpError::SessionExpired) => {
                    direct.http.forget(&session);
                    if crate::telemetry::exporting() {
                        tracing::info!(
                            target: crate::telemetry::SPANS,
                            "the server no longer knows the session: the call goes again \
                             through rmcp's client, in a new session"
                        );
                    }
                    None
                }
                Err(error) => Some(Err(self.failed(error))),
            }
        };
        let answered = match tokio::time::timeout(timeout, call).await {
            Ok(answered) => answered,
            Err(_) => return Some(Err(CallError::Timeout(timeout))),
        };
        cancel.disarm();
        answered
    }

    /// `message` as the answer (or error) of the call `id`, or None when it is neither.
    fn answer_of(
        &self,
        message: rmcp::model::ServerJsonRpcMessage,
        id: &RequestId,
    ) -> Option<Result<ServerResult, CallError>> {
        match message {
            JsonRpcMessage::Response(response) if &response.id == id => Some(Ok(response.result)),
            JsonRpcMessage::Error(error) if error.id.as_ref() == Some(id) => {
                let error = ServiceError::McpError(error.error);
                Some(Err(CallError::from_service(error, &self.lost)))
            }
            _ => None,
        }
    }

    /// A POST that failed, as the call's error (rmcp's client reports the same failures).
    fn failed(&self, error: StreamableHttpError<reqwest::Error>) -> CallError {
        if self.lost.is_cancelled() {
            return CallError::Lost;
        }
        CallError::Transport(error.to_string())
    }

    /// Reads a call's stream up to its answer: the server's notifications go to the pump, its
    /// requests are answered meanwhile, and a stream that ends first is resumed.
    async fn follow(
        &self,
        direct: &Direct,
        session: &Session,
        mut events: Events,
        id: &RequestId,
        token: &ProgressToken,
        origin: &CallOrigin,
    ) -> Result<ServerResult, CallError> {
        let mut replies = FuturesUnordered::new();
        let mut last_event: Option<String> = None;
        let mut retry: Option<Duration> = None;
        let mut resumptions = 0;
        loop {
            let ended = match replying(&mut replies, events.next()).await {
                Some(Ok(event)) => {
                    resumptions = 0;
                    if let Some(event_id) = event.id.filter(|id| !id.is_empty()) {
                        last_event = Some(event_id);
                    }
                    if let Some(ms) = event.retry {
                        retry = Some(Duration::from_millis(ms));
                    }
                    let Some(data) = event.data.filter(|data| !data.trim().is_empty()) else {
                        continue;
                    };
                    if !matches!(event.event.as_deref(), None | Some("message")) {
                        continue;
                    }
                    let message = match decode_answer(data.as_bytes(), true) {
                        Ok(message) => message,
                        Err(error) => {
                            tracing::warn!(%error, "a message on a call's stream is not JSON-RPC; ignored");
                            continue;
                        }
                    };
                    match message {
                        JsonRpcMessage::Notification(notification) => {
                            match notification.notification {
                                // The call's own progress, to its caller before the answer.
                                ServerNotification::ProgressNotification(progress)
                                    if &progress.params.progress_token == token =>
                                {
                                    let server_id = self.client.service().server_id();
                                    let params = serde_json::to_value(&progress.params);
                                    let params = params.unwrap_or_default();
                                    // The call's span is current here.
                                    let span =
                                        crate::telemetry::exporting().then(tracing::Span::current);
                                    let told =
                                        notify::progress(server_id, origin, params, span.as_ref());
                                    replying(&mut replies, told).await;
                                }
                                other => self.notified(other),
                            }
                        }
                        JsonRpcMessage::Request(request) => {
                            replies.push(self.reply(direct, session, request, origin));
                        }
                        message => match self.answer_of(message, id) {
                            Some(answer) => return answer,
                            None => tracing::debug!(
                                "an answer to another request on a call's stream; ignored"
                            ),
                        },
                    }
                    continue;
                }
                Some(Err(error)) => error.to_string(),
                None => "the server ended the call's stream without answering".to_owned(),
            };
            // Resumed after its last event, as rmcp's client resumes a stream: a server may end
            // one and expect the client to come back for the rest.
            let Some(after) = last_event.clone() else {
                return Err(CallError::Transport(ended));
            };
            resumptions += 1;
            if resumptions > RESUMPTIONS {
                return Err(CallError::Transport(format!(
                    "{ended} (resumed {RESUMPTIONS} times without an event)"
                )));
            }
            let pause = retry.unwrap_or(Duration::from_secs(u64::from(resumptions)));
            if crate::telemetry::exporting() {
                tracing::info!(
                    target: crate::telemetry::SPANS,
                    resumption = i64::from(resumptions),
                    pause_ms = pause.as_millis() as i64,
                    "the call's stream ended before its answer: resumed after its last event"
                );
            }
            replying(&mut replies, tokio::time::sleep(pause)).await;
            let limit = direct.limits.max_sse_event_size;
            let uri = direct.uri.to_string();
            let resumed = direct.http.resume(session, &uri, after, limit);
            events = match replying(&mut replies, resumed).await {
                Ok(events) => events,
                Err(error) => {
                    tracing::debug!(%error, "cannot resume a call's stream yet");
                    futures::stream::empty().boxed()
                }
            };
        }
    }

    /// A notification on a call's stream, handed to the pump as the transport hands the others.
    fn notified(&self, notification: ServerNotification) {
        let Some(pump) = self.notifications.upgrade() else {
            return;
        };
        if let Ok(value) = serde_json::to_value(&notification) {
            let _ = pump.send(notify::Note::Notified(value));
        }
    }

    /// Answers a request of the server's made during the call `origin` made, as the handler
    /// answers those rmcp receives, and posts the answer back.
    async fn reply(
        &self,
        direct: &Direct,
        session: &Session,
        request: JsonRpcRequest<ServerRequest>,
        origin: &CallOrigin,
    ) {
        let handler = self.client.service();
        let key = match &request.id {
            NumberOrString::String(id) => id.to_string(),
            NumberOrString::Number(id) => id.to_string(),
        };
        let caller = Route::Caller(origin.as_ref());
        let answer = match request.request {
            ServerRequest::PingRequest(_) => Ok(ClientResult::empty(())),
            ServerRequest::CreateMessageRequest(asked) => handler
                .sample_for(caller, key, &asked.params, traced::meta_of(&asked))
                .await
                .map(|result| ClientResult::CreateMessageResult(Box::new(result))),
            ServerRequest::ElicitRequest(asked) => handler
                .elicit_for(caller, key, &asked.params, traced::meta_of(&asked))
                .await
                .map(ClientResult::ElicitResult),
            ServerRequest::ListRootsRequest(asked) => handler
                .roots_for_owner(key, traced::meta_of(&asked))
                .await
                .map(ClientResult::ListRootsResult),
            ServerRequest::CustomRequest(custom) => Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("the bridge does not take `{}`", custom.method),
                None,
            )),
            _ => Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                "the bridge does not take this request",
                None,
            )),
        };
        let message = match answer {
            Ok(result) => ClientJsonRpcMessage::response(result, request.id),
            Err(error) => ClientJsonRpcMessage::error(error, Some(request.id)),
        };
        let posted = direct
            .http
            .post_in(session, &direct.uri.to_string(), &message, direct.limits)
            .await;
        if let Err(error) = posted {
            tracing::warn!(%error, "cannot answer a server's request made during a call");
        }
    }
}

/// `step`, with the answers to the server's requests in `replies` made meanwhile.
async fn replying<T>(
    replies: &mut FuturesUnordered<impl Future<Output = ()>>,
    step: impl Future<Output = T>,
) -> T {
    let mut step = std::pin::pin!(step);
    loop {
        tokio::select! {
            out = &mut step => return out,
            Some(()) = replies.next(), if !replies.is_empty() => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{CallToolRequest, ClientRequest, GetMeta};
    use serde_json::json;

    /// rmcp's client's request, with its progress token in the request's own `_meta`.
    fn as_rmcp_writes_it(params: &CallToolRequestParams, id: i64) -> serde_json::Value {
        let mut request = ClientRequest::CallToolRequest(CallToolRequest::new(params.clone()));
        let token = ProgressToken(NumberOrString::Number(id));
        request.get_meta_mut().set_progress_token(token);
        let message = ClientJsonRpcMessage::request(request, RequestId::Number(id));
        serde_json::to_value(message).unwrap()
    }

    #[test]
    fn a_call_is_written_as_rmcp_writes_it() {
        let arguments = json!({"message": "hi", "n": [1, 2.5, null]});
        let plain = CallToolRequestParams::new("echo")
            .with_arguments(arguments.as_object().unwrap().clone());
        let mut with_meta = plain.clone();
        with_meta.meta = Some(serde_json::from_value(json!({"trace": "t1"})).unwrap());
        let mut with_token = plain.clone();
        with_token.meta = Some(serde_json::from_value(json!({"progressToken": "theirs"})).unwrap());
        for params in [plain, with_meta, with_token] {
            let expected = as_rmcp_writes_it(&params, 1 << 32);
            let mut ours = params.clone();
            let token = ProgressToken(NumberOrString::Number(1 << 32));
            ours.meta.get_or_insert_default().set_progress_token(token);
            let written = serde_json::to_value(CallMessage::new(1 << 32, &ours)).unwrap();
            assert_eq!(written, expected);
        }
    }
}
