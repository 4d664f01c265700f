//! The A2A agent bridge: a registry of A2A agents (their cards fetched, stored, refreshed on
//! demand), a client for them (JSON-RPC: A2A 1.0 with `A2A-Version: 1.0`, or 0.3 method names
//! when the card says so; A2A 1.0 HTTP+JSON when that is the only binding the card offers), and
//! the four agent-bridge tools on top. An agent's extended card is fetched with its card when it
//! has one. A streaming agent's updates reach
//! the caller as `bridge/a2a_update` pushes on its event channel.

mod body;
mod calls;
mod card;
mod client;
mod error;
mod follow;
mod ownership;
mod registry;
mod rest;
mod stream;
mod tasks;
pub mod tools;

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use serde_json::{Value, json};

use crate::a2e::A2aAgentInfo;
use crate::caller::Caller;
use crate::guard::Guard;
use crate::hub::Hub;
use crate::store::{Store, StoreError};
pub use card::{AgentCard, Binding, Endpoint, MAX_CARD_BYTES};
pub use error::A2aError;

/// The `method` of the `mcp/server/push` events that carry a streamed A2A task's updates
/// (`params`: `{agent_id, task_id, context_id, kind, task|message|status|artifact, final}`,
/// and `append`, `last_chunk` for an artifact).
pub const UPDATE_METHOD: &str = "bridge/a2a_update";

/// Added to the caller's timeout for the HTTP wait, so the agent's own deadline comes first.
const TIMEOUT_BUFFER: Duration = Duration::from_secs(5);

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

    /// Whether its card says it streams (`capabilities.streaming`).
    pub fn streams(&self) -> bool {
        self.card
            .other
            .get("capabilities")
            .and_then(|c| c.get("streaming"))
            .and_then(Value::as_bool)
            == Some(true)
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
}
