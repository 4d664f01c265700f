//! A caller's messages to an agent: a user message sent (streamed when the agent streams and the
//! caller waits), and any JSON-RPC method forwarded under the agent's protocol version's name.

use serde_json::{Value, json};

use super::client::translate;
use super::ownership::task_not_found;
use super::{A2a, A2aAgent, A2aError, Origin};
use crate::a2e::A2aProtocol;
use crate::store::Owned;

impl A2a {
    /// Sends a user message for `origin`; the agent's reply (a message, or the task when not
    /// blocking). A blocking message to an agent that streams is streamed: its updates go to
    /// the caller's event channel as they come, and the reply is the final task or message.
    pub async fn send(
        &self,
        origin: Origin<'_>,
        agent: &A2aAgent,
        text: &str,
        blocking: bool,
        context_id: Option<&str>,
        timeout_secs: u64,
    ) -> Result<Value, A2aError> {
        let message_id = uuid::Uuid::new_v4().to_string();
        let v1 = agent.endpoint.protocol == A2aProtocol::V1_0;
        let mut message = if v1 {
            json!({"role": "ROLE_USER", "parts": [{"text": text}], "messageId": message_id})
        } else {
            json!({"role": "user", "kind": "message", "parts": [{"kind": "text", "text": text}], "messageId": message_id})
        };
        if let Some(context_id) = context_id {
            message["contextId"] = json!(context_id);
        }
        self.check_message(origin.agent_id, agent, Some(&message))
            .await?;
        if blocking && agent.streams() {
            let method = translate("SendStreamingMessage", agent.endpoint.protocol);
            let params = json!({"message": message});
            return self
                .stream(origin, agent, method, params, timeout_secs)
                .await;
        }
        let (method, configuration) = match v1 {
            true => ("SendMessage", json!({"returnImmediately": !blocking})),
            false => ("message/send", json!({"blocking": blocking})),
        };
        let params = json!({"message": message, "configuration": configuration});
        let result = self.rpc(agent, method, params, timeout_secs).await?;
        self.remember(origin.agent_id, agent, &result).await;
        Ok(result)
    }

    /// Forwards a JSON-RPC method for `origin`; A2A 0.3 and 1.0 names are translated to the
    /// agent's. Tasks and contexts are the caller's own: a message naming another caller's,
    /// and a method addressing another caller's task (get, cancel, resubscribe, push
    /// notification configs), are answered as a task that does not exist; `ListTasks` lists
    /// the caller's tasks only. The streaming methods (`SendStreamingMessage`,
    /// `SubscribeToTask`) are streamed as `send` streams. Other methods are passed on as they
    /// are.
    pub async fn query(
        &self,
        origin: Origin<'_>,
        agent: &A2aAgent,
        method: &str,
        params: Value,
        timeout_secs: u64,
    ) -> Result<Value, A2aError> {
        let caller = origin.agent_id;
        let method = translate(method, agent.endpoint.protocol);
        let text = |name| params.get(name).and_then(Value::as_str);
        match translate(method, A2aProtocol::V1_0) {
            "SendMessage" | "SendStreamingMessage" => {
                self.check_message(caller, agent, params.get("message"))
                    .await?;
                if translate(method, A2aProtocol::V1_0) == "SendStreamingMessage" {
                    return self
                        .stream(origin, agent, method, params, timeout_secs)
                        .await;
                }
                let result = self.rpc(agent, method, params, timeout_secs).await?;
                self.remember(caller, agent, &result).await;
                return Ok(result);
            }
            "ListTasks" | "tasks/list" => {
                let mut result = self.rpc(agent, method, params, timeout_secs).await?;
                if let Some(tasks) = result.get_mut("tasks").and_then(Value::as_array_mut) {
                    let mut own = Vec::with_capacity(tasks.len());
                    for task in tasks.drain(..) {
                        let id = task.get("id").and_then(Value::as_str).unwrap_or_default();
                        if self.owner(agent, Owned::Task, id).await?.as_deref() == Some(caller) {
                            own.push(task);
                        }
                    }
                    *tasks = own;
                }
                // The agent's total counts every caller's tasks.
                if let Some(map) = result.as_object_mut() {
                    map.remove("totalSize");
                }
                return Ok(result);
            }
            m if matches!(m, "GetTask" | "CancelTask" | "SubscribeToTask")
                || m.to_ascii_lowercase().contains("pushnotificationconfig") =>
            {
                let task = text("taskId").or_else(|| text("id")).unwrap_or_default();
                if self.owner(agent, Owned::Task, task).await?.as_deref() != Some(caller) {
                    return Err(task_not_found());
                }
                if m == "SubscribeToTask" {
                    return self
                        .stream(origin, agent, method, params, timeout_secs)
                        .await;
                }
            }
            _ => {}
        }
        self.rpc(agent, method, params, timeout_secs).await
    }
}
