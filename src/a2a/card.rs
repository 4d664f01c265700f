//! Agent cards: fetched from `/.well-known/agent-card.json` (A2A 1.0), else from
//! `/.well-known/agent.json` (older agents), typed as far as the bridge reads them, and where and
//! how a card says to call the agent: JSON-RPC, or A2A 1.0's HTTP+JSON (REST) binding.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::A2aError;
use super::body::{self, BodyError};
use crate::a2e::A2aProtocol;

/// The largest agent card taken: 512 KiB. Real cards are a few KiB (the a2a-sdk echo agent's is
/// under 1 KiB); a card is stored and shown in every agent listing, so it is kept small.
pub const MAX_CARD_BYTES: usize = 512 * 1024;

/// Where and how to talk to an agent, as its card says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub url: String,
    pub protocol: A2aProtocol,
    pub binding: Binding,
    /// The tenant an HTTP+JSON interface names: its paths are prefixed with `/{tenant}`.
    pub tenant: Option<String>,
}

/// The protocol binding the bridge speaks to an agent.
pub use crate::a2e::A2aBinding as Binding;

/// An agent card: the fields the bridge reads, typed as A2A defines them (camelCase on the
/// wire), and every other field kept as it came, so a card stored or shown loses nothing.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Where an older (0.3) card says to send JSON-RPC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// A 1.0 card's endpoints, one per protocol binding and version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supported_interfaces: Option<Vec<AgentInterface>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills: Option<Vec<AgentSkill>>,
    /// The agent's extended card (`GetExtendedAgentCard`), added by the bridge: fetched with the
    /// registrant's headers when the card says the agent has one, stored with the card, and
    /// shown with it to whoever may see the agent (agent_info, `GET /v1/a2a/agents/{id}`), as
    /// the rest of the card is. Not a field of the card the agent serves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extended_card: Option<Value>,
    /// The rest of the card (capabilities, modes, provider, …), as it came.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// One of the endpoints a 1.0 card offers (`supportedInterfaces`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInterface {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `JSONRPC`, `GRPC`, `HTTP+JSON`, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_binding: Option<String>,
    /// `1.0` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// A skill a card advertises.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSkill {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl AgentInterface {
    fn is_jsonrpc(&self) -> bool {
        self.protocol_binding
            .as_deref()
            .is_some_and(|b| b.eq_ignore_ascii_case("JSONRPC"))
    }

    /// An HTTP+JSON interface of a 1.x agent (the 0.3 REST paths differ; they are not spoken).
    fn is_http_json(&self) -> bool {
        self.protocol_binding
            .as_deref()
            .is_some_and(|b| b.eq_ignore_ascii_case("HTTP+JSON"))
            && self.protocol() == A2aProtocol::V1_0
    }

    /// Any 1.x version is spoken as 1.0; anything older as 0.3.
    fn protocol(&self) -> A2aProtocol {
        match self.protocol_version.as_deref().unwrap_or("1.0") {
            v if v.starts_with('1') => A2aProtocol::V1_0,
            _ => A2aProtocol::V0_3,
        }
    }
}

impl AgentCard {
    /// The card in `value`; the error names the first field that is not what A2A says it is.
    pub fn parse(value: Value) -> Result<Self, String> {
        serde_path_to_error::deserialize(value).map_err(|e| e.to_string())
    }

    /// The card as JSON, as it is stored and shown.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or_default()
    }

    /// The endpoint to call: a JSON-RPC `supportedInterfaces` entry when there is one (a 1.x one
    /// first), else a 1.x HTTP+JSON one, else the top-level `url` of an older card (JSON-RPC).
    /// JSON-RPC comes first so that agents offering both are called as they always were.
    pub fn endpoint(&self) -> Result<Endpoint, A2aError> {
        let interfaces: Vec<&AgentInterface> = self
            .supported_interfaces
            .iter()
            .flatten()
            .filter(|i| i.url.is_some())
            .collect();
        let jsonrpc: Vec<&&AgentInterface> = interfaces.iter().filter(|i| i.is_jsonrpc()).collect();
        let chosen = jsonrpc
            .iter()
            .find(|i| i.protocol() == A2aProtocol::V1_0)
            .or_else(|| jsonrpc.first());
        if let Some(interface) = chosen
            && let Some(url) = &interface.url
        {
            return Ok(Endpoint {
                url: url.clone(),
                protocol: interface.protocol(),
                binding: Binding::JsonRpc,
                tenant: None,
            });
        }
        if let Some(interface) = interfaces.iter().find(|i| i.is_http_json())
            && let Some(url) = &interface.url
        {
            let tenant = interface
                .other
                .get("tenant")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
                .map(str::to_owned);
            return Ok(Endpoint {
                url: url.clone(),
                protocol: A2aProtocol::V1_0,
                binding: Binding::HttpJson,
                tenant,
            });
        }
        match &self.url {
            Some(url) => Ok(Endpoint {
                url: url.clone(),
                protocol: A2aProtocol::V0_3,
                binding: Binding::JsonRpc,
                tenant: None,
            }),
            None => Err(A2aError::Protocol(
                "the agent card names no JSON-RPC nor A2A 1.0 HTTP+JSON endpoint".into(),
            )),
        }
    }

    /// Whether the card says the agent serves an extended card to authenticated callers
    /// (1.0 `capabilities.extendedAgentCard`, 0.3 `supportsAuthenticatedExtendedCard`).
    pub fn has_extended(&self) -> bool {
        let flag = |v: Option<&Value>| v.and_then(Value::as_bool) == Some(true);
        flag(
            self.other
                .get("capabilities")
                .and_then(|c| c.get("extendedAgentCard")),
        ) || flag(self.other.get("supportsAuthenticatedExtendedCard"))
    }

    /// The skill tags the card advertises.
    pub fn tags(&self) -> Vec<String> {
        self.skills
            .iter()
            .flatten()
            .flat_map(|s| s.tags.iter().flatten().cloned())
            .collect()
    }
}

/// Fetches the card of the agent at `base`.
pub async fn fetch(
    client: &reqwest::Client,
    base: &str,
    headers: &BTreeMap<String, String>,
) -> Result<AgentCard, A2aError> {
    let base = reqwest::Url::parse(base).map_err(|e| A2aError::Invalid(format!("`url`: {e}")))?;
    let mut last = String::new();
    for path in ["/.well-known/agent-card.json", "/.well-known/agent.json"] {
        let url = base
            .join(path)
            .map_err(|e| A2aError::Invalid(e.to_string()))?;
        let mut request = client.get(url.clone());
        for (name, value) in headers {
            request = request.header(name, value);
        }
        match request.send().await {
            Ok(resp) if resp.status().is_success() => {
                let bytes = body::read(resp, MAX_CARD_BYTES)
                    .await
                    .map_err(|e| match e {
                        BodyError::TooLarge => A2aError::Protocol(format!(
                            "the card at {url} is larger than the {} limit for agent cards",
                            body::size(MAX_CARD_BYTES)
                        )),
                        BodyError::Read(e) => A2aError::Unreachable(format!("{url}: {e}")),
                    })?;
                let card: Value = serde_json::from_slice(&bytes).map_err(|e| {
                    A2aError::Protocol(format!("the card at {url} is not JSON: {e}"))
                })?;
                let card = AgentCard::parse(card).map_err(|e| {
                    A2aError::Protocol(format!("the card at {url} is not an agent card: {e}"))
                })?;
                card.endpoint()?;
                return Ok(card);
            }
            Ok(resp) => last = format!("{url} answered {}", resp.status()),
            Err(error) => return Err(A2aError::Unreachable(format!("{url}: {error}"))),
        }
    }
    Err(A2aError::Unreachable(format!("no agent card: {last}")))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn card(value: Value) -> AgentCard {
        AgentCard::parse(value).unwrap()
    }

    #[test]
    fn a_1_0_card_names_its_jsonrpc_interface() {
        let card1 = card(json!({"supportedInterfaces": [
            {"url": "http://a/grpc", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
            {"url": "http://a/v03", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            {"url": "http://a/", "protocolBinding": "jsonrpc", "protocolVersion": "1.0"}
        ]}));
        assert_eq!(
            card1.endpoint().unwrap(),
            Endpoint {
                url: "http://a/".into(),
                protocol: A2aProtocol::V1_0,
                binding: Binding::JsonRpc,
                tenant: None,
            }
        );
        let only_v03 = card(json!({"supportedInterfaces": [
            {"url": "http://a/v03", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}
        ], "url": "http://b/"}));
        assert_eq!(only_v03.endpoint().unwrap().url, "http://a/v03");
        assert_eq!(only_v03.endpoint().unwrap().protocol, A2aProtocol::V0_3);
        let old = card(json!({"url": "http://b/rpc", "protocolVersion": "0.3.0"}));
        assert_eq!(old.endpoint().unwrap().protocol, A2aProtocol::V0_3);
        assert!(card(json!({"name": "x"})).endpoint().is_err());
    }

    #[test]
    fn http_json_is_called_only_when_no_jsonrpc_is_offered() {
        let both = card(json!({"supportedInterfaces": [
            {"url": "http://a/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
            {"url": "http://a/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ]}));
        assert_eq!(both.endpoint().unwrap().binding, Binding::JsonRpc);
        let rest = card(json!({"supportedInterfaces": [
            {"url": "http://a/v03", "protocolBinding": "HTTP+JSON", "protocolVersion": "0.3"},
            {"url": "http://a/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0", "tenant": "t1"}
        ]}));
        assert_eq!(
            rest.endpoint().unwrap(),
            Endpoint {
                url: "http://a/rest".into(),
                protocol: A2aProtocol::V1_0,
                binding: Binding::HttpJson,
                tenant: Some("t1".into()),
            }
        );
        let grpc = card(json!({"supportedInterfaces": [
            {"url": "http://a/", "protocolBinding": "GRPC", "protocolVersion": "1.0"}
        ]}));
        assert!(grpc.endpoint().is_err());
        assert!(card(json!({"capabilities": {"extendedAgentCard": true}})).has_extended());
        assert!(!card(json!({"capabilities": {"streaming": true}})).has_extended());
    }

    #[test]
    fn skill_tags() {
        let card = card(json!({"skills": [{"tags": ["echo", "test"]}, {"tags": ["js"]}, {}]}));
        assert_eq!(card.tags(), ["echo", "test", "js"]);
    }

    #[test]
    fn what_the_bridge_does_not_read_is_kept() {
        let sent = json!({
            "name": "Echo", "version": "1.0.0", "capabilities": {"streaming": true},
            "defaultInputModes": ["text/plain"], "skills": [],
            "supportedInterfaces": [{"url": "http://a/", "protocolBinding": "JSONRPC", "tenant": "t"}],
            "signatures": [{"protected": "x", "signature": "y"}]
        });
        assert_eq!(card(sent.clone()).to_value(), sent);
        let skill = json!({"skills": [{"id": "e", "name": "E", "tags": [], "examples": ["hi"]}]});
        assert_eq!(card(skill.clone()).to_value(), skill);
    }

    #[test]
    fn a_field_the_bridge_reads_must_have_its_type() {
        let error = AgentCard::parse(json!({"skills": [{"tags": ["a", 3]}]})).unwrap_err();
        assert!(error.contains("skills[0].tags[1]"), "{error}");
        assert!(AgentCard::parse(json!({"name": 5})).is_err());
        assert!(AgentCard::parse(json!([])).is_err());
    }
}
