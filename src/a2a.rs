//! The A2A agent bridge: a registry of A2A agents (their cards fetched, stored, refreshed on
//! demand), a JSON-RPC client for them (A2A 1.0 with `A2A-Version: 1.0`, or 0.3 method names when
//! the card says so), and the four agent-bridge tools on top.

mod body;
mod card;
pub mod tools;

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use serde_json::{Value, json};

use crate::a2e::{A2aAgentInfo, A2aProtocol, ErrorCode};
use crate::caller::Caller;
use crate::guard::{Guard, Refused};
use crate::registry::naming;
use crate::store::{Owned, Store, StoreError, StoredAgent};
use body::BodyError;
pub use card::{AgentCard, Endpoint, MAX_CARD_BYTES};

/// Added to the caller's timeout for the HTTP wait, so the agent's own deadline comes first.
const TIMEOUT_BUFFER: Duration = Duration::from_secs(5);
/// Bound on fetching a card.
const CARD_TIMEOUT: Duration = Duration::from_secs(15);

#[derive(Debug, thiserror::Error)]
pub enum A2aError {
    #[error("{0}")]
    Invalid(String),
    #[error("the A2A agent bridge is turned off (MCP_BRIDGE_A2A_ENABLED)")]
    Disabled,
    #[error("no A2A agent \"{0}\" is registered")]
    NotFound(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("the agent cannot be reached: {0}")]
    Unreachable(String),
    #[error("the agent answered something that is not A2A: {0}")]
    Protocol(String),
    #[error("{0}")]
    Rpc(Value),
    #[error("the agent did not answer within {0:?}")]
    Timeout(Duration),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl A2aError {
    /// The A2E error code this error answers with.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Invalid(_) => ErrorCode::InvalidRequest,
            Self::Disabled => ErrorCode::McpCapabilityMissing,
            Self::NotFound(_) => ErrorCode::NotFound,
            Self::Conflict(_) => ErrorCode::Conflict,
            Self::Forbidden(_) => ErrorCode::Forbidden,
            Self::Unreachable(_) => ErrorCode::McpTransportError,
            Self::Protocol(_) | Self::Rpc(_) => ErrorCode::McpProtocolError,
            Self::Timeout(_) => ErrorCode::Timeout,
            Self::Store(error) => error.code(),
        }
    }
}

/// A registered agent.
#[derive(Debug)]
pub struct A2aAgent {
    pub agent_id: String,
    pub owner: String,
    pub url: String,
    headers: BTreeMap<String, String>,
    pub card: AgentCard,
    pub endpoint: Endpoint,
}

/// A text field of a card as shown: empty when the card has none.
fn text(field: &Option<String>) -> String {
    field.clone().unwrap_or_default()
}

impl A2aAgent {
    /// What `agent_list` shows of it.
    pub fn summary(&self) -> Value {
        let skills: Vec<Value> = self
            .card
            .skills
            .iter()
            .flatten()
            .map(|s| json!({"id": s.id, "name": s.name, "tags": s.tags}))
            .collect();
        json!({"agent_id": self.agent_id, "name": text(&self.card.name), "skills": skills})
    }

    /// What `agent_info` shows: the card, with the agent's id.
    pub fn info_json(&self) -> Value {
        let mut card = self.card.to_value();
        if let Some(map) = card.as_object_mut() {
            map.insert("agent_id".into(), json!(self.agent_id));
        }
        card
    }

    /// The agent as `caller` may see it: header values hidden from everyone, and the password
    /// and query values of its URLs from anyone but its registrant and admins.
    pub fn model_for(&self, caller: &Caller) -> A2aAgentInfo {
        let mut info = self.model();
        if !caller.may_manage(&self.owner) {
            info.url = crate::a2e::redact_url(&info.url);
            info.endpoint = crate::a2e::redact_url(&info.endpoint);
        }
        info
    }

    /// The agent with its header values hidden.
    fn model(&self) -> A2aAgentInfo {
        A2aAgentInfo {
            agent_id: self.agent_id.clone(),
            name: text(&self.card.name),
            description: text(&self.card.description),
            version: text(&self.card.version),
            url: self.url.clone(),
            endpoint: self.endpoint.url.clone(),
            protocol_version: self.endpoint.protocol,
            skill_tags: self.card.tags(),
            owner: self.owner.clone(),
            headers: self
                .headers
                .keys()
                .map(|k| (k.clone(), crate::a2e::REDACTED.to_owned()))
                .collect(),
            card: self.card.to_value(),
        }
    }
}

pub struct A2a {
    enabled: bool,
    agents: RwLock<BTreeMap<String, Arc<A2aAgent>>>,
    store: Store,
    client: reqwest::Client,
    guard: Guard,
    /// The largest JSON-RPC reply taken from an agent (`MCP_BRIDGE_MAX_MESSAGE_BYTES`).
    max_reply_bytes: usize,
}

/// Checks an agent's card or endpoint URL as MCP upstream URLs are checked: http(s), and an
/// address the guard allows.
async fn check_url(guard: &Guard, what: &str, url: &str) -> Result<(), A2aError> {
    let parsed = reqwest::Url::parse(url)
        .map_err(|e| A2aError::Invalid(format!("{what} \"{url}\": {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(A2aError::Invalid(format!(
            "{what} \"{url}\" must be http or https"
        )));
    }
    crate::guard::check_host_syntax(&parsed)
        .map_err(|e| A2aError::Invalid(format!("{what}: {e}")))?;
    guard
        .preflight(&parsed)
        .await
        .map_err(|refused| match refused {
            Refused::Guard(_) => A2aError::Invalid(format!("{what}: {refused}")),
            Refused::Unresolved(why) => A2aError::Unreachable(format!("{what}: {why}")),
        })
}

impl A2a {
    /// The registry with every stored agent.
    /// `max_reply_bytes` bounds each JSON-RPC reply (cards are bounded by `MAX_CARD_BYTES`).
    pub async fn open(
        store: Store,
        enabled: bool,
        guard: Guard,
        max_reply_bytes: usize,
    ) -> Result<Arc<Self>, StoreError> {
        let mut agents = BTreeMap::new();
        for stored in store.list_agents().await? {
            let stored_bytes = serde_json::to_string(&stored.card).map_or(0, |s| s.len());
            let usable = AgentCard::parse(stored.card)
                .map_err(|e| A2aError::Protocol(format!("not an agent card: {e}")))
                .and_then(|card| Ok((card.endpoint()?, card)));
            match usable {
                Ok((endpoint, card)) => {
                    // A card stored before cards were bounded would be shown in every listing:
                    // the agent stays usable (and can be refreshed or removed) without it.
                    let card = if stored_bytes > card::MAX_CARD_BYTES {
                        tracing::error!(agent_id = %stored.agent_id, stored_bytes, "stored card larger than the card limit; shown empty until refreshed");
                        AgentCard::default()
                    } else {
                        card
                    };
                    let agent = A2aAgent {
                        agent_id: stored.agent_id.clone(),
                        owner: stored.owner,
                        url: stored.url,
                        headers: stored.headers,
                        card,
                        endpoint,
                    };
                    agents.insert(stored.agent_id, Arc::new(agent));
                }
                Err(error) => {
                    tracing::error!(agent_id = %stored.agent_id, %error, "stored card unusable; skipped")
                }
            }
        }
        let client = guard.http_client(false).build().unwrap_or_default();
        Ok(Arc::new(Self {
            enabled,
            agents: RwLock::new(agents),
            store,
            client,
            guard,
            max_reply_bytes,
        }))
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }

    fn on(&self) -> Result<(), A2aError> {
        if self.enabled {
            Ok(())
        } else {
            Err(A2aError::Disabled)
        }
    }

    /// Fetches the card at `url`, and stores the agent only when that worked.
    pub async fn register(
        &self,
        caller: &Caller,
        agent_id: &str,
        url: &str,
        headers: BTreeMap<String, String>,
    ) -> Result<Arc<A2aAgent>, A2aError> {
        self.on()?;
        let agent_id = if agent_id.is_empty() {
            naming::generate_server_id()
        } else {
            agent_id.to_owned()
        };
        naming::check_server_id(&agent_id)
            .map_err(|e| A2aError::Invalid(e.replace("server_id", "agent_id")))?;
        check_url(&self.guard, "`url`", url).await?;
        if self
            .agents
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(&agent_id)
        {
            return Err(A2aError::Conflict(format!(
                "agent \"{agent_id}\" is already registered"
            )));
        }
        let card = tokio::time::timeout(CARD_TIMEOUT, card::fetch(&self.client, url, &headers))
            .await
            .map_err(|_| A2aError::Timeout(CARD_TIMEOUT))??;
        let endpoint = card.endpoint()?;
        check_url(&self.guard, "the card's endpoint", &endpoint.url).await?;
        let stored = StoredAgent {
            agent_id: agent_id.clone(),
            owner: caller.id.clone(),
            url: url.to_owned(),
            headers: headers.clone(),
            card: card.to_value(),
        };
        self.store
            .insert_agent(&stored)
            .await
            .map_err(|e| match e {
                StoreError::Conflict => {
                    A2aError::Conflict(format!("agent \"{agent_id}\" is already registered"))
                }
                other => other.into(),
            })?;
        let agent = Arc::new(A2aAgent {
            agent_id: agent_id.clone(),
            owner: caller.id.clone(),
            url: url.to_owned(),
            headers,
            card,
            endpoint,
        });
        let detail = crate::a2e::redact_url(url);
        self.store
            .record(&caller.id, "agent.register", &agent_id, &detail)
            .await;
        self.agents
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(agent_id, agent.clone());
        Ok(agent)
    }

    /// The agents with any of `tags` among their skills' tags (all when `tags` is empty).
    pub fn list(&self, tags: &[String]) -> Vec<Arc<A2aAgent>> {
        self.agents
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .filter(|a| tags.is_empty() || a.card.tags().iter().any(|t| tags.contains(t)))
            .cloned()
            .collect()
    }

    pub fn get(&self, agent_id: &str) -> Result<Arc<A2aAgent>, A2aError> {
        self.agents
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(agent_id)
            .cloned()
            .ok_or_else(|| A2aError::NotFound(agent_id.to_owned()))
    }

    fn managed(&self, caller: &Caller, agent_id: &str) -> Result<Arc<A2aAgent>, A2aError> {
        self.on()?;
        let agent = self.get(agent_id)?;
        if !caller.may_manage(&agent.owner) {
            return Err(A2aError::Forbidden(format!(
                "agent \"{agent_id}\" was registered by another agent; only it or an admin may change it"
            )));
        }
        Ok(agent)
    }

    pub async fn unregister(&self, caller: &Caller, agent_id: &str) -> Result<(), A2aError> {
        self.managed(caller, agent_id)?;
        self.store
            .delete_agent(agent_id)
            .await
            .or_else(|e| match e {
                StoreError::NotFound => Ok(()),
                other => Err(other),
            })?;
        self.agents
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(agent_id);
        self.store
            .record(&caller.id, "agent.unregister", agent_id, "")
            .await;
        Ok(())
    }

    /// Fetches the card again and keeps it.
    pub async fn refresh(
        &self,
        caller: &Caller,
        agent_id: &str,
    ) -> Result<Arc<A2aAgent>, A2aError> {
        let old = self.managed(caller, agent_id)?;
        let card = tokio::time::timeout(
            CARD_TIMEOUT,
            card::fetch(&self.client, &old.url, &old.headers),
        )
        .await
        .map_err(|_| A2aError::Timeout(CARD_TIMEOUT))??;
        let endpoint = card.endpoint()?;
        check_url(&self.guard, "the card's endpoint", &endpoint.url).await?;
        self.store
            .update_agent_card(agent_id, &card.to_value())
            .await?;
        let agent = Arc::new(A2aAgent {
            agent_id: old.agent_id.clone(),
            owner: old.owner.clone(),
            url: old.url.clone(),
            headers: old.headers.clone(),
            card,
            endpoint,
        });
        self.agents
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(agent_id.to_owned(), agent.clone());
        self.store
            .record(&caller.id, "agent.refresh", agent_id, "")
            .await;
        Ok(agent)
    }

    /// Whether `caller` created task or context `id` at `agent` through the bridge.
    async fn owner(
        &self,
        agent: &A2aAgent,
        kind: Owned,
        id: &str,
    ) -> Result<Option<String>, A2aError> {
        Ok(self.store.a2a_owner(&agent.agent_id, kind, id).await?)
    }

    /// Refuses a message that names a task or a context of another caller, as the agent refuses
    /// a task it does not have. A task must be the caller's; a context the bridge has not seen
    /// is a new one (a client may choose its context id) and becomes the caller's.
    async fn check_message(
        &self,
        caller: &str,
        agent: &A2aAgent,
        message: Option<&Value>,
    ) -> Result<(), A2aError> {
        let field = |name| message.and_then(|m| m.get(name)).and_then(Value::as_str);
        if let Some(task) = field("taskId")
            && self.owner(agent, Owned::Task, task).await?.as_deref() != Some(caller)
        {
            return Err(task_not_found());
        }
        if let Some(context) = field("contextId")
            && self
                .owner(agent, Owned::Context, context)
                .await?
                .is_some_and(|owner| owner != caller)
        {
            return Err(task_not_found());
        }
        Ok(())
    }

    /// Records the tasks and contexts a reply to `caller`'s message names as the caller's.
    async fn remember(&self, caller: &str, agent: &A2aAgent, result: &Value) {
        let mut owned = Vec::new();
        for object in [Some(result), result.get("task"), result.get("message")]
            .into_iter()
            .flatten()
        {
            let text = |name| object.get(name).and_then(Value::as_str);
            let is_task = object.get("status").is_some() || text("kind") == Some("task");
            if is_task && let Some(id) = text("id") {
                owned.push((Owned::Task, id));
            }
            if let Some(id) = text("taskId") {
                owned.push((Owned::Task, id));
            }
            if let Some(id) = text("contextId") {
                owned.push((Owned::Context, id));
            }
        }
        for (kind, id) in owned {
            if let Err(error) = self
                .store
                .insert_a2a_owned(&agent.agent_id, kind, id, caller)
                .await
            {
                tracing::error!(agent_id = %agent.agent_id, %error, "could not record who owns an A2A task");
            }
        }
    }

    /// Sends a user message for `caller`; the agent's reply (a message, or the task when not
    /// blocking).
    pub async fn send(
        &self,
        caller: &str,
        agent: &A2aAgent,
        text: &str,
        blocking: bool,
        context_id: Option<&str>,
        timeout_secs: u64,
    ) -> Result<Value, A2aError> {
        let message_id = uuid::Uuid::new_v4().to_string();
        let (method, mut message, configuration) = if agent.endpoint.protocol == A2aProtocol::V1_0 {
            let message =
                json!({"role": "ROLE_USER", "parts": [{"text": text}], "messageId": message_id});
            (
                "SendMessage",
                message,
                json!({"returnImmediately": !blocking}),
            )
        } else {
            let message = json!({"role": "user", "kind": "message", "parts": [{"kind": "text", "text": text}], "messageId": message_id});
            ("message/send", message, json!({"blocking": blocking}))
        };
        if let Some(context_id) = context_id {
            message["contextId"] = json!(context_id);
        }
        self.check_message(caller, agent, Some(&message)).await?;
        let params = json!({"message": message, "configuration": configuration});
        let result = self.rpc(agent, method, params, timeout_secs).await?;
        self.remember(caller, agent, &result).await;
        Ok(result)
    }

    /// Forwards a JSON-RPC method for `caller`; A2A 0.3 and 1.0 names are translated to the
    /// agent's. Tasks and contexts are the caller's own: a message naming another caller's,
    /// and a method addressing another caller's task (get, cancel, resubscribe, push
    /// notification configs), are answered as a task that does not exist; `ListTasks` lists
    /// the caller's tasks only. Other methods are passed on as they are.
    pub async fn query(
        &self,
        caller: &str,
        agent: &A2aAgent,
        method: &str,
        params: Value,
        timeout_secs: u64,
    ) -> Result<Value, A2aError> {
        let method = translate(method, agent.endpoint.protocol);
        let text = |name| params.get(name).and_then(Value::as_str);
        match translate(method, A2aProtocol::V1_0) {
            "SendMessage" | "SendStreamingMessage" => {
                self.check_message(caller, agent, params.get("message"))
                    .await?;
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
            }
            _ => {}
        }
        self.rpc(agent, method, params, timeout_secs).await
    }

    async fn rpc(
        &self,
        agent: &A2aAgent,
        method: &str,
        params: Value,
        timeout_secs: u64,
    ) -> Result<Value, A2aError> {
        let body = json!({"jsonrpc": "2.0", "id": uuid::Uuid::new_v4().to_string(), "method": method, "params": params});
        let wait = Duration::from_secs(timeout_secs) + TIMEOUT_BUFFER;
        // A literal address is not seen by the client's resolver: checked here, on every call.
        if let Ok(url) = reqwest::Url::parse(&agent.endpoint.url) {
            self.guard
                .check_url(&url)
                .map_err(|refused| A2aError::Unreachable(refused.to_string()))?;
        }
        let mut request = self
            .client
            .post(&agent.endpoint.url)
            .timeout(wait)
            .json(&body);
        if agent.endpoint.protocol == A2aProtocol::V1_0 {
            request = request.header("A2A-Version", A2aProtocol::V1_0.as_str());
        }
        for (name, value) in &agent.headers {
            request = request.header(name, value);
        }
        let resp = request.send().await.map_err(|e| {
            if e.is_timeout() {
                A2aError::Timeout(wait)
            } else {
                A2aError::Unreachable(e.to_string())
            }
        })?;
        let status = resp.status();
        let bytes = body::read(resp, self.max_reply_bytes)
            .await
            .map_err(|e| match e {
                BodyError::TooLarge => A2aError::Protocol(format!(
                    "the agent's answer is larger than the {} limit (MCP_BRIDGE_MAX_MESSAGE_BYTES)",
                    body::size(self.max_reply_bytes)
                )),
                BodyError::Read(e) if e.is_timeout() => A2aError::Timeout(wait),
                BodyError::Read(e) => A2aError::Unreachable(e.to_string()),
            })?;
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

/// What an A2A agent answers for a task it does not have (`TaskNotFoundError`); a task or a
/// context of another caller is answered the same.
fn task_not_found() -> A2aError {
    A2aError::Rpc(json!({"code": -32001, "message": "Task not found"}))
}

/// A method name in the agent's protocol version: A2A 1.0 names are PascalCase, 0.3 names are
/// slash-separated; any other name is passed on as it is.
fn translate(method: &str, protocol: A2aProtocol) -> &str {
    const PAIRS: [(&str, &str); 5] = [
        ("message/send", "SendMessage"),
        ("message/stream", "SendStreamingMessage"),
        ("tasks/get", "GetTask"),
        ("tasks/cancel", "CancelTask"),
        ("tasks/resubscribe", "SubscribeToTask"),
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

    #[tokio::test]
    async fn urls_are_checked() {
        let guard = Guard::default();
        assert!(check_url(&guard, "u", "http://127.0.0.1:9/").await.is_ok());
        assert!(check_url(&guard, "u", "ftp://x/").await.is_err());
        let refused = check_url(&guard, "u", "http://169.254.169.254/").await;
        assert!(refused.unwrap_err().to_string().contains("address guard"));
    }
}
