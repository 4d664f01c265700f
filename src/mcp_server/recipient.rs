//! A `/mcp` client's call as the recipient of what its server sends during it: progress goes back
//! on the call's own stream under the client's token; sampling and elicitation go to the client
//! when it declared it can take them (a 2025-11-25 session by a request of the bridge's own, a
//! stateless 2026-07-28 client through its call's input-required result), else to the agent's
//! channel.
// SEP-2577 deprecates sampling for 2026-07-28; 2025-11-25 clients still take it.
#![allow(deprecated)]

use futures::future::BoxFuture;
use rmcp::model::{
    CreateMessageRequest, ElicitRequest, GetExtensions, InputRequest, LoggingMessageNotification,
    ProgressNotification, ProgressToken, RequestId, ServerNotification,
};
use rmcp::service::OriginatingRequestId;
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use crate::a2e::ServerPush;
use crate::hub::{AgentChannel, Answer, AskKind, InputRounds, LogTaken, Recipient, ServerRequest};

/// The longest a server's log message waits for room on a stateless call's stream.
const LOG_SEND_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// A server's request for a stateless `/mcp` client, and where its answer goes (the client's
/// answer as JSON, or why there is none).
#[derive(Debug)]
pub struct InputAsk {
    pub request: InputRequest,
    pub answer: oneshot::Sender<Result<Value, String>>,
}

/// An MCP client of `/mcp` making a call, and what it declared it can do.
#[derive(Debug)]
pub struct McpCaller {
    pub peer: Peer<RoleServer>,
    pub sampling: bool,
    pub elicitation: bool,
    /// The client's own progress token for the call, when it asked for progress.
    pub progress_token: Option<ProgressToken>,
    /// Where the call's progress and log messages go when the bridge answers the call itself
    /// (direct.rs), not rmcp: the stream of its answer.
    pub sink: Option<mpsc::UnboundedSender<ServerNotification>>,
    /// With a sink: the session's id and the lowest log level it asked for, when it asked.
    pub log: Option<(String, usize)>,
    /// A stateless (2026-07-28) client's lowest log level for this call, when its request's
    /// `_meta` named one (`io.modelcontextprotocol/logLevel`): the server's log messages at or
    /// above it go on the call's own stream, before its result.
    pub stateless_log: Option<usize>,
    /// A stateless client cannot be sent a request: what the server asks during its call goes
    /// here, to come back to the client as the call's input-required result.
    pub inputs: Option<mpsc::UnboundedSender<InputAsk>>,
    /// Where what the client cannot take goes.
    pub channel: AgentChannel,
    /// Across replicas, the session the call was made in: its GET stream may be on another
    /// replica, which then asks the client (shared.rs).
    pub session: Option<SessionRoute>,
    /// The client's request whose call this is: what the client is asked during it goes on
    /// that request's stream, unless the session's GET stream is on another replica.
    pub during: Option<RequestId>,
    /// A stateless client's part in its server's input-required rounds (hub::InputRounds).
    pub rounds: Option<std::sync::Arc<InputRounds>>,
}

/// A shared session, and how to reach the replica that holds its GET stream.
pub struct SessionRoute {
    pub id: String,
    pub shared: super::shared::SharedSessions,
    pub hub: std::sync::Arc<crate::hub::Hub>,
}

impl std::fmt::Debug for SessionRoute {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionRoute")
            .field("id", &self.id)
            .finish()
    }
}

impl Recipient for McpCaller {
    fn agent_id(&self) -> &str {
        self.channel.agent_id()
    }

    /// What the client takes itself (requests it declared, progress it asked for) comes back
    /// here from the replica holding the server.
    fn relayed(&self) -> bool {
        self.sampling || self.elicitation || self.progress_token.is_some()
    }

    fn input_rounds(&self) -> Option<&InputRounds> {
        self.rounds.as_deref()
    }

    fn progress(&self, push: ServerPush) -> BoxFuture<'_, ()> {
        let Some(token) = &self.progress_token else {
            return self.channel.progress(push);
        };
        let mut forwarded = push.params;
        forwarded["progressToken"] = serde_json::to_value(token).unwrap_or_default();
        Box::pin(async move {
            match serde_json::from_value(forwarded) {
                Ok(param) => match &self.sink {
                    Some(sink) => drop(sink.send(ServerNotification::ProgressNotification(
                        ProgressNotification::new(param),
                    ))),
                    None => drop(self.peer.notify_progress(param).await),
                },
                Err(error) => tracing::debug!(%error, "progress that is not MCP progress"),
            }
        })
    }

    fn log(&self, push: &ServerPush) -> BoxFuture<'_, LogTaken> {
        let level = push.params.get("level").and_then(super::log_rank);
        let param = || serde_json::from_value(push.params.clone()).ok();
        if let Some(lowest) = self.stateless_log {
            // rmcp sends a stateless call's notifications on its response stream, in order
            // with the result, which waits for this.
            let param = level.filter(|level| *level >= lowest).and_then(|_| param());
            // Within a bound: the server's notifications wait for this, and a client that does
            // not read its stream must not hold up the others'.
            return Box::pin(async move {
                if let Some(param) = param {
                    let send = self.peer.notify_logging_message(param);
                    match tokio::time::timeout(LOG_SEND_WAIT, send).await {
                        Ok(Ok(())) => {}
                        Ok(Err(error)) => tracing::debug!(%error, "a log message not sent"),
                        Err(_) => {
                            tracing::debug!("a log message dropped: the client reads no more")
                        }
                    }
                }
                LogTaken::Stateless
            });
        }
        let taken = (|| {
            let (sink, (session, lowest)) = (self.sink.as_ref()?, self.log.as_ref()?);
            if level? >= *lowest {
                let note = LoggingMessageNotification::new(param()?);
                sink.send(ServerNotification::LoggingMessageNotification(note))
                    .ok()?;
            }
            Some(LogTaken::Session(session.clone()))
        })();
        Box::pin(std::future::ready(taken.unwrap_or(LogTaken::Not)))
    }

    fn ask(&self, request: ServerRequest) -> BoxFuture<'_, Result<Answer, String>> {
        let takes = match request.kind {
            AskKind::Sampling => self.sampling,
            AskKind::Elicitation => self.elicitation,
        };
        if !takes {
            return self.channel.ask(request);
        }
        Box::pin(async move {
            let answered = match &self.inputs {
                Some(inputs) => self.ask_stateless(inputs, &request).await,
                None => self.ask_session(&request).await,
            };
            answered.map(Answer::Mcp)
        })
    }
}

impl McpCaller {
    /// Asks a 2025-11-25 session by a request of the bridge's own: from the replica that holds
    /// its GET stream, where the client listens.
    async fn ask_session(&self, request: &ServerRequest) -> Result<Value, String> {
        if let Some(route) = &self.session
            && let Some(me) = route.hub.replica()
            && let Some(replica) = route.shared.stream_elsewhere(&route.id, me).await
        {
            return route.hub.ask_session(&replica, &route.id, request).await;
        }
        ask_peer(&self.peer, request, self.during.as_ref()).await
    }

    /// Asks a stateless client through its call's input-required result.
    async fn ask_stateless(
        &self,
        inputs: &mpsc::UnboundedSender<InputAsk>,
        request: &ServerRequest,
    ) -> Result<Value, String> {
        let params = request.params.clone();
        let input = match request.kind {
            AskKind::Sampling => {
                InputRequest::CreateMessage(CreateMessageRequest::new(parse(params)?))
            }
            AskKind::Elicitation => InputRequest::Elicitation(ElicitRequest::new(parse(params)?)),
        };
        let (answer, answered) = oneshot::channel();
        inputs
            .send(InputAsk {
                request: input,
                answer,
            })
            .map_err(|_| "the MCP client's call has ended".to_owned())?;
        match tokio::time::timeout(request.deadline, answered).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err("the MCP client did not come back for it".into()),
            Err(_) => Err("the MCP client did not answer in time".into()),
        }
    }
}

/// Asks the client of session `peer` a server's request; its MCP result. With `during`, the
/// client's request whose call it is, the request goes on that request's own stream, so that a
/// session without a GET stream is asked too. It is sent from a task of its own: rmcp marks a
/// request with the request its task serves, and the task asking is the one in which the
/// bridge's upstream client serves its server's request (whose id means nothing here).
pub async fn ask_peer(
    peer: &Peer<RoleServer>,
    request: &ServerRequest,
    during: Option<&RequestId>,
) -> Result<Value, String> {
    let mut asked = match request.kind {
        AskKind::Sampling => {
            // What rmcp's `create_message` checks before it asks, since it is not used here.
            let params: rmcp::model::CreateMessageRequestParams = parse(request.params.clone())?;
            if (params.tools.is_some() || params.tool_choice.is_some())
                && !peer.supports_sampling_tools()
            {
                return Err(
                    "tools or toolChoice provided but the MCP client does not support \
                            the sampling tools capability"
                        .into(),
                );
            }
            params.validate()?;
            rmcp::model::ServerRequest::CreateMessageRequest(CreateMessageRequest::new(params))
        }
        AskKind::Elicitation => rmcp::model::ServerRequest::ElicitRequest(ElicitRequest::new(
            parse(request.params.clone())?,
        )),
    };
    if let Some(during) = during {
        asked
            .extensions_mut()
            .insert(OriginatingRequestId(during.clone()));
    }
    // The deadline is the task's own, so that it ends with it even when this caller is
    // dropped (its call cancelled) before the client answers.
    let (peer, deadline) = (peer.clone(), request.deadline);
    let sending =
        tokio::spawn(async move { tokio::time::timeout(deadline, peer.send_request(asked)).await });
    match sending.await {
        Ok(Ok(Ok(result))) => match (&request.kind, &result) {
            (AskKind::Sampling, rmcp::model::ClientResult::CreateMessageResult(_))
            | (AskKind::Elicitation, rmcp::model::ClientResult::ElicitResult(_)) => {
                serde_json::to_value(result).map_err(|e| e.to_string())
            }
            _ => Err("the MCP client answered with a result of another kind".into()),
        },
        Ok(Ok(Err(error))) => Err(error.to_string()),
        Ok(Err(_)) => Err("the MCP client did not answer in time".into()),
        Err(error) => Err(error.to_string()),
    }
}

/// A server's request params as the MCP type they are.
fn parse<T: serde::de::DeserializeOwned>(params: Value) -> Result<T, String> {
    serde_json::from_value(params).map_err(|e| format!("the server's request: {e}"))
}
