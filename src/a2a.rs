//! The A2A agent bridge: a registry of A2A agents (their cards fetched, stored, refreshed on
//! demand), a client for them (JSON-RPC: A2A 1.0 with `A2A-Version: 1.0`, or 0.3 method names
//! when the card says so; A2A 1.0 HTTP+JSON when that is the only binding the card offers), and
//! the four agent-bridge tools on top. An agent's extended card is fetched with its card when it
//! has one. A streaming agent's updates reach
//! the caller as `bridge/a2a_update` pushes on its event channel.

mod body;
mod card;
mod rest;
mod stream;
pub mod tools;

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};

use crate::a2e::{A2aAgentInfo, A2aProtocol, ErrorCode, Message, ServerPush};
use crate::caller::Caller;
use crate::guard::{Guard, Refused};
use crate::hub::Hub;
use crate::naming;
use crate::store::{Owned, Store, StoreError, StoredAgent};
use body::BodyError;
pub use card::{AgentCard, Binding, Endpoint, MAX_CARD_BYTES};
use stream::{Assembly, Kind, StreamError, Update};

/// The `method` of the `mcp/server/push` events that carry a streamed A2A task's updates
/// (`params`: `{agent_id, task_id, context_id, kind, task|message|status|artifact, final}`,
/// and `append`, `last_chunk` for an artifact).
pub const UPDATE_METHOD: &str = "bridge/a2a_update";

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
    /// An HTTP+JSON agent's error: its `google.rpc.Status` (`code`, `status`, `message`,
    /// `details`).
    #[error("{}", rest::describe(.0))]
    Status(Value),
    #[error("the agent did not answer within {0:?}")]
    Timeout(Duration),
    /// A task unknown to the agent, or started by another caller: the same to the caller.
    #[error("agent \"{agent_id}\" has no task \"{task_id}\" started by you")]
    TaskNotFound { agent_id: String, task_id: String },
    /// A streamed task still running when the caller's timeout passed.
    #[error(
        "task \"{task_id}\" did not finish within {after:?}; it goes on at the agent: follow it with agent_query action \"subscribe\", or cancel it"
    )]
    StillRunning { task_id: String, after: Duration },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl A2aError {
    /// The A2E error code this error answers with.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Invalid(_) => ErrorCode::InvalidRequest,
            Self::Disabled => ErrorCode::McpCapabilityMissing,
            Self::NotFound(_) | Self::TaskNotFound { .. } => ErrorCode::NotFound,
            Self::Conflict(_) => ErrorCode::Conflict,
            Self::Forbidden(_) => ErrorCode::Forbidden,
            Self::Unreachable(_) => ErrorCode::McpTransportError,
            Self::Protocol(_) | Self::Rpc(_) => ErrorCode::McpProtocolError,
            Self::Timeout(_) | Self::StillRunning { .. } => ErrorCode::Timeout,
            Self::Status(status) => {
                match status.get("status").and_then(Value::as_str).unwrap_or("") {
                    "NOT_FOUND" => ErrorCode::NotFound,
                    "INVALID_ARGUMENT" | "OUT_OF_RANGE" => ErrorCode::InvalidRequest,
                    "FAILED_PRECONDITION" | "ALREADY_EXISTS" | "ABORTED" => ErrorCode::Conflict,
                    "PERMISSION_DENIED" | "UNAUTHENTICATED" => ErrorCode::Forbidden,
                    "RESOURCE_EXHAUSTED" => ErrorCode::RateLimited,
                    "DEADLINE_EXCEEDED" => ErrorCode::Timeout,
                    "UNAVAILABLE" => ErrorCode::McpTransportError,
                    "UNIMPLEMENTED" => ErrorCode::McpCapabilityMissing,
                    _ => ErrorCode::McpProtocolError,
                }
            }
            Self::Store(error) => error.code(),
        }
    }

    /// The A2A reason of an agent's error, in either binding: `TASK_NOT_FOUND` for JSON-RPC
    /// code -32001 or an HTTP+JSON `ErrorInfo` with that reason, and so on.
    fn reason(&self) -> Option<&str> {
        match self {
            Self::Rpc(error) => match error.get("code").and_then(Value::as_i64)? {
                -32001 => Some("TASK_NOT_FOUND"),
                -32002 => Some("TASK_NOT_CANCELABLE"),
                _ => None,
            },
            Self::Status(status) => rest::reason(status),
            _ => None,
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
    /// Whether its card says it streams (`capabilities.streaming`).
    pub fn streams(&self) -> bool {
        self.card
            .other
            .get("capabilities")
            .and_then(|c| c.get("streaming"))
            .and_then(Value::as_bool)
            == Some(true)
    }

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
            binding: self.endpoint.binding,
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
    /// The largest JSON-RPC reply taken from an agent (`MCP_BRIDGE_MAX_MESSAGE_BYTES`); also
    /// the largest streamed event, and the most a streamed task's artifacts add up to.
    max_reply_bytes: usize,
    /// Where streamed updates go: the caller's event channel.
    hub: Arc<Hub>,
}

/// Who a call is for: the agent (JWT `sub`) whose tasks and contexts these are, and the A2E id
/// of its call (carried by the updates it gets, as progress carries it).
#[derive(Debug, Clone, Copy)]
pub struct Origin<'a> {
    pub agent_id: &'a str,
    pub req_id: Option<&'a str>,
}

impl<'a> Origin<'a> {
    pub fn new(agent_id: &'a str, req_id: Option<&'a str>) -> Self {
        Self { agent_id, req_id }
    }
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
        hub: Arc<Hub>,
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
            hub,
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
        let mut agent = A2aAgent {
            agent_id: agent_id.clone(),
            owner: caller.id.clone(),
            url: url.to_owned(),
            headers,
            card,
            endpoint,
        };
        self.add_extended(&mut agent).await;
        let stored = StoredAgent {
            agent_id: agent_id.clone(),
            owner: caller.id.clone(),
            url: url.to_owned(),
            headers: agent.headers.clone(),
            card: agent.card.to_value(),
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
        let agent = Arc::new(agent);
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
        let mut agent = A2aAgent {
            agent_id: old.agent_id.clone(),
            owner: old.owner.clone(),
            url: old.url.clone(),
            headers: old.headers.clone(),
            card,
            endpoint,
        };
        self.add_extended(&mut agent).await;
        self.store
            .update_agent_card(agent_id, &agent.card.to_value())
            .await?;
        let agent = Arc::new(agent);
        self.agents
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(agent_id.to_owned(), agent.clone());
        self.store
            .record(&caller.id, "agent.refresh", agent_id, "")
            .await;
        Ok(agent)
    }

    /// Fetches the agent's extended card (`GetExtendedAgentCard`, with the registrant's
    /// headers) into its card when the card says it has one. An agent that refuses it, or one
    /// too large to keep with the card, is kept without it: the public card is enough to call
    /// the agent.
    async fn add_extended(&self, agent: &mut A2aAgent) {
        agent.card.extended_card = None;
        if !agent.card.has_extended() {
            return;
        }
        let method = translate("GetExtendedAgentCard", agent.endpoint.protocol);
        match self
            .rpc(agent, method, json!({}), CARD_TIMEOUT.as_secs())
            .await
        {
            Ok(extended) if extended.is_object() => {
                agent.card.extended_card = Some(extended);
                let bytes = serde_json::to_string(&agent.card).map_or(0, |s| s.len());
                if bytes > MAX_CARD_BYTES {
                    tracing::warn!(agent_id = %agent.agent_id, bytes, "card with its extended card larger than the card limit; kept without it");
                    agent.card.extended_card = None;
                }
            }
            Ok(_) => {
                tracing::warn!(agent_id = %agent.agent_id, "the extended card is not an object; kept without it")
            }
            Err(error) => {
                tracing::warn!(agent_id = %agent.agent_id, %error, "no extended card; kept without it")
            }
        }
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

    /// Refuses a task that `caller` did not start (or that the bridge never saw).
    async fn own_task(
        &self,
        caller: &str,
        agent: &A2aAgent,
        task_id: &str,
    ) -> Result<(), A2aError> {
        match self.owner(agent, Owned::Task, task_id).await? {
            Some(owner) if owner == caller => Ok(()),
            _ => Err(A2aError::TaskNotFound {
                agent_id: agent.agent_id.clone(),
                task_id: task_id.to_owned(),
            }),
        }
    }

    /// `caller`'s task `task_id` as the agent has it now (`GetTask`).
    pub async fn get_task(
        &self,
        caller: &str,
        agent: &A2aAgent,
        task_id: &str,
        timeout_secs: u64,
    ) -> Result<Value, A2aError> {
        self.own_task(caller, agent, task_id).await?;
        let method = translate("GetTask", agent.endpoint.protocol);
        self.rpc(agent, method, json!({"id": task_id}), timeout_secs)
            .await
            .map_err(|e| task_error(e, agent, task_id))
    }

    /// Cancels `caller`'s task `task_id` (`CancelTask`): the task as the agent has it then. A
    /// finished task is a conflict, whichever SDK the agent runs (some answer a second cancel
    /// with the task, some with an error).
    pub async fn cancel_task(
        &self,
        caller: &str,
        agent: &A2aAgent,
        task_id: &str,
        timeout_secs: u64,
    ) -> Result<Value, A2aError> {
        let task = self.get_task(caller, agent, task_id, timeout_secs).await?;
        if let Some(state) = task.get("status").and_then(stream::state_of)
            && stream::is_terminal(&state)
        {
            return Err(already_over(task_id, &state));
        }
        let method = translate("CancelTask", agent.endpoint.protocol);
        self.store
            .record(caller, "agent.task.cancel", &agent.agent_id, task_id)
            .await;
        match self
            .rpc(agent, method, json!({"id": task_id}), timeout_secs)
            .await
        {
            // TaskNotCancelableError: it ended meanwhile.
            Err(error) if error.reason() == Some("TASK_NOT_CANCELABLE") => {
                Err(already_over(task_id, "finished"))
            }
            other => other.map_err(|e| task_error(e, agent, task_id)),
        }
    }

    /// Follows `caller`'s task again after its stream was dropped (`SubscribeToTask`): its
    /// updates go to the caller's event channel until it is over; the answer is the final
    /// task. A task that is over already is answered at once.
    pub async fn subscribe(
        &self,
        origin: Origin<'_>,
        agent: &A2aAgent,
        task_id: &str,
        timeout_secs: u64,
    ) -> Result<Value, A2aError> {
        let task = self
            .get_task(origin.agent_id, agent, task_id, timeout_secs)
            .await?;
        let over = task
            .get("status")
            .and_then(stream::state_of)
            .is_some_and(|s| stream::is_terminal(&s));
        if over || !agent.streams() {
            let mut assembly = Assembly::default();
            assembly.apply(&Update {
                kind: Kind::Task,
                payload: task,
                task_id: Some(task_id.to_owned()),
                context_id: None,
                append: false,
                last_chunk: false,
                last: true,
            });
            return Ok(assembly.result(agent.endpoint.protocol).unwrap_or_default());
        }
        let method = translate("SubscribeToTask", agent.endpoint.protocol);
        self.stream(origin, agent, method, json!({"id": task_id}), timeout_secs)
            .await
            .map_err(|e| task_error(e, agent, task_id))
    }

    /// Calls a streaming method and follows its events for at most `timeout_secs`: each goes to
    /// the caller's event channel as a `bridge/a2a_update` push; the answer is the final task
    /// or message put together from them.
    async fn stream(
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

    fn too_large(&self, what: &str) -> A2aError {
        A2aError::Protocol(format!(
            "{what} is larger than the {} limit (MCP_BRIDGE_MAX_MESSAGE_BYTES)",
            body::size(self.max_reply_bytes)
        ))
    }

    async fn rpc(
        &self,
        agent: &A2aAgent,
        method: &str,
        params: Value,
        timeout_secs: u64,
    ) -> Result<Value, A2aError> {
        let wait = Duration::from_secs(timeout_secs) + TIMEOUT_BUFFER;
        let resp = self.post(agent, method, params, wait, false).await?;
        self.answer(agent, resp, wait).await
    }

    /// Sends one request to the agent (asking for a stream when `stream`): a JSON-RPC request,
    /// or the HTTP+JSON request of `method` for an agent that offers only that binding.
    async fn post(
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
    async fn answer(
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

/// A task that is over cannot be cancelled.
fn already_over(task_id: &str, state: &str) -> A2aError {
    A2aError::Conflict(format!(
        "task \"{task_id}\" is already {state}: a task that is over cannot be cancelled"
    ))
}

/// The agent's `TaskNotFoundError` for a task the bridge saw as the caller's (the agent forgot
/// it) as the bridge's own not-found; other errors as they are.
fn task_error(error: A2aError, agent: &A2aAgent, task_id: &str) -> A2aError {
    match error {
        e if e.reason() == Some("TASK_NOT_FOUND") => A2aError::TaskNotFound {
            agent_id: agent.agent_id.clone(),
            task_id: task_id.to_owned(),
        },
        other => other,
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

    #[test]
    fn http_json_errors_answer_with_their_status() {
        let status = |s: &str, reason: &str| {
            A2aError::Status(
                json!({"code": 400, "status": s, "message": "m", "details": [
                {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason}]}),
            )
        };
        let not_found = status("NOT_FOUND", "TASK_NOT_FOUND");
        assert_eq!(not_found.code(), ErrorCode::NotFound);
        assert_eq!(not_found.reason(), Some("TASK_NOT_FOUND"));
        assert_eq!(
            status("INVALID_ARGUMENT", "INVALID_PARAMS").code(),
            ErrorCode::InvalidRequest
        );
        let not_cancelable = status("FAILED_PRECONDITION", "TASK_NOT_CANCELABLE");
        assert_eq!(not_cancelable.code(), ErrorCode::Conflict);
        assert_eq!(not_cancelable.reason(), Some("TASK_NOT_CANCELABLE"));
        assert_eq!(status("UNAUTHENTICATED", "").code(), ErrorCode::Forbidden);
        assert_eq!(status("INTERNAL", "").code(), ErrorCode::McpProtocolError);
        assert_eq!(
            A2aError::Rpc(json!({"code": -32001})).reason(),
            Some("TASK_NOT_FOUND")
        );
        assert!(status("NOT_FOUND", "").to_string().ends_with(": m"));
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
