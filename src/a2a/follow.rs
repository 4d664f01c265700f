//! A streamed call followed for its caller, within its timeout: each event passed on as a
//! `bridge/a2a_update` push on the caller's event channel, and put together into the answer.

use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};

use super::client::{traced, translate};
use super::stream::{self, Assembly, Kind, StreamError, Update};
use super::{A2a, A2aAgent, A2aError, Origin, TIMEOUT_BUFFER, UPDATE_METHOD};
use crate::a2e::{Message, ServerPush};
use crate::store::Owned;

impl A2a {
    /// Calls a streaming method and follows its events for at most `timeout_secs`: each goes to
    /// the caller's event channel as a `bridge/a2a_update` push; the answer is the final task
    /// or message put together from them.
    pub(super) async fn stream(
        &self,
        origin: Origin<'_>,
        agent: &A2aAgent,
        method: &str,
        params: Value,
        timeout_secs: u64,
    ) -> Result<Value, A2aError> {
        let streamed = self.stream_within(origin, agent, method, params, timeout_secs);
        traced(agent, method, streamed).await
    }

    /// [`A2a::stream`]'s work (in its span when spans are exported).
    async fn stream_within(
        &self,
        origin: Origin<'_>,
        agent: &A2aAgent,
        method: &str,
        params: Value,
        timeout_secs: u64,
    ) -> Result<Value, A2aError> {
        let limit = Duration::from_secs(timeout_secs);
        let mut assembly = Assembly::default();
        let followed = tokio::time::timeout(
            limit,
            self.follow(origin, agent, method, params, limit, &mut assembly),
        )
        .await;
        match followed {
            Ok(Ok(())) => {}
            Ok(Err(error)) => return Err(error),
            Err(_) => {
                return Err(match assembly.task_id() {
                    Some(task_id) => A2aError::StillRunning {
                        task_id: task_id.to_owned(),
                        after: limit,
                    },
                    None => A2aError::Timeout(limit),
                });
            }
        }
        assembly.result(agent.endpoint.protocol).ok_or_else(|| {
            A2aError::Protocol("the stream ended without a task or a message".into())
        })
    }

    /// Reads the stream of `method` into `assembly`, passing each event on to the caller.
    async fn follow(
        &self,
        origin: Origin<'_>,
        agent: &A2aAgent,
        method: &str,
        params: Value,
        limit: Duration,
        assembly: &mut Assembly,
    ) -> Result<(), A2aError> {
        let resp = self
            .post(agent, method, params, limit + TIMEOUT_BUFFER, true)
            .await?;
        let streamed = resp
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let mut seen: Option<String> = None;
        if !streamed {
            // An error (or an agent that answers a stream with one reply).
            let result = self.answer(agent, resp, limit + TIMEOUT_BUFFER).await?;
            if let Some(update) = stream::classify(&result) {
                self.deliver(origin, agent, &update, &mut seen).await;
                assembly.apply(&update);
            }
            return Ok(());
        }
        let mut events = std::pin::pin!(stream::events(resp, self.max_reply_bytes));
        let mut held = 0usize;
        let mut ended = false;
        while let Some(data) = events.next().await {
            let data = data.map_err(|e| match e {
                StreamError::TooLarge => self.too_large("an event of the agent's stream"),
                StreamError::Read(e) => A2aError::Unreachable(e),
            })?;
            let result = stream::result_of(&data, agent.endpoint.binding)?;
            let Some(update) = stream::classify(&result) else {
                tracing::debug!(agent_id = %agent.agent_id, "a streamed event the bridge does not know; skipped");
                continue;
            };
            if matches!(update.kind, Kind::Task | Kind::Artifact) {
                held += data.len();
                if held > self.max_reply_bytes {
                    return Err(self.too_large("the streamed task"));
                }
            }
            self.deliver(origin, agent, &update, &mut seen).await;
            assembly.apply(&update);
            if update.last {
                ended = true;
                break;
            }
        }
        // The agent closed the stream before the task was over (or its last status was lost):
        // the task as the agent has it now.
        if !ended && let Some(task_id) = assembly.task_id().map(str::to_owned) {
            let method = translate("GetTask", agent.endpoint.protocol);
            if let Ok(task) = self
                .rpc(
                    agent,
                    method,
                    json!({"id": task_id}),
                    limit.as_secs().max(1),
                )
                .await
            {
                assembly.apply(&Update {
                    kind: Kind::Task,
                    payload: task,
                    task_id: Some(task_id),
                    context_id: None,
                    append: false,
                    last_chunk: false,
                    last: true,
                });
            }
        }
        Ok(())
    }

    /// Passes one streamed event on to the caller's event channel; the first event naming a
    /// task makes it the caller's (so that it can cancel it while it runs).
    async fn deliver(
        &self,
        origin: Origin<'_>,
        agent: &A2aAgent,
        update: &Update,
        seen: &mut Option<String>,
    ) {
        if let Some(task_id) = &update.task_id
            && seen.as_ref() != Some(task_id)
        {
            let owned = [
                (Owned::Task, Some(task_id)),
                (Owned::Context, update.context_id.as_ref()),
            ];
            for (kind, id) in owned {
                let Some(id) = id else { continue };
                if let Err(error) = self
                    .store
                    .insert_a2a_owned(&agent.agent_id, kind, id, origin.agent_id)
                    .await
                {
                    tracing::error!(agent_id = %agent.agent_id, %error, "could not record who owns an A2A task");
                }
            }
            *seen = Some(task_id.clone());
        }
        let kind = update.kind.as_str();
        let mut params = json!({
            "agent_id": agent.agent_id,
            "task_id": update.task_id,
            "context_id": update.context_id,
            "kind": kind,
            kind: update.payload,
            "final": update.last,
        });
        if update.kind == Kind::Artifact {
            params["append"] = json!(update.append);
            params["last_chunk"] = json!(update.last_chunk);
        }
        let push = ServerPush {
            method: UPDATE_METHOD.to_owned(),
            params,
            req_id: origin.req_id.map(str::to_owned),
            ..Default::default()
        };
        self.hub.publish(origin.agent_id, ServerPush::TYPE, &push);
    }
}
