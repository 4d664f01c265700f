//! Agent cards: fetched from `/.well-known/agent-card.json` (A2A 1.0), else from
//! `/.well-known/agent.json` (older agents), and where a card says to send JSON-RPC.

use std::collections::BTreeMap;

use serde_json::Value;

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
}

/// Fetches the card of the agent at `base`.
pub async fn fetch(
    client: &reqwest::Client,
    base: &str,
    headers: &BTreeMap<String, String>,
) -> Result<Value, A2aError> {
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
                endpoint(&card)?;
                return Ok(card);
            }
            Ok(resp) => last = format!("{url} answered {}", resp.status()),
            Err(error) => return Err(A2aError::Unreachable(format!("{url}: {error}"))),
        }
    }
    Err(A2aError::Unreachable(format!("no agent card: {last}")))
}

/// The JSON-RPC endpoint: a 1.0 `supportedInterfaces` entry when there is one, else the
/// top-level `url` of an older card.
pub fn endpoint(card: &Value) -> Result<Endpoint, A2aError> {
    let interfaces = card
        .get("supportedInterfaces")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let jsonrpc = |i: &&Value| {
        i.get("protocolBinding")
            .and_then(Value::as_str)
            .is_some_and(|b| b.eq_ignore_ascii_case("JSONRPC"))
    };
    let version = |i: &Value| {
        i.get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or("1.0")
            .to_owned()
    };
    let chosen = interfaces
        .iter()
        .filter(jsonrpc)
        .find(|i| version(i).starts_with('1'))
        .or_else(|| interfaces.iter().find(jsonrpc));
    if let Some(interface) = chosen
        && let Some(url) = interface.get("url").and_then(Value::as_str)
    {
        let protocol = if version(interface).starts_with('1') {
            A2aProtocol::V1_0
        } else {
            A2aProtocol::V0_3
        };
        return Ok(Endpoint {
            url: url.to_owned(),
            protocol,
        });
    }
    match card.get("url").and_then(Value::as_str) {
        Some(url) => Ok(Endpoint {
            url: url.to_owned(),
            protocol: A2aProtocol::V0_3,
        }),
        None => Err(A2aError::Protocol(
            "the agent card names no JSON-RPC endpoint".into(),
        )),
    }
}

/// The skill tags a card advertises.
pub fn tags(card: &Value) -> Vec<String> {
    card.get("skills")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|s| {
            s.get("tags")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|t| t.as_str().map(str::to_owned))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_1_0_card_names_its_jsonrpc_interface() {
        let card = json!({"supportedInterfaces": [
            {"url": "http://a/grpc", "protocolBinding": "GRPC", "protocolVersion": "1.0"},
            {"url": "http://a/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ]});
        assert_eq!(
            endpoint(&card).unwrap(),
            Endpoint {
                url: "http://a/".into(),
                protocol: A2aProtocol::V1_0
            }
        );
        let old = json!({"url": "http://b/rpc", "protocolVersion": "0.3.0"});
        assert_eq!(endpoint(&old).unwrap().protocol, A2aProtocol::V0_3);
        assert!(endpoint(&json!({"name": "x"})).is_err());
    }

    #[test]
    fn skill_tags() {
        let card = json!({"skills": [{"tags": ["echo", "test"]}, {"tags": ["js"]}]});
        assert_eq!(tags(&card), ["echo", "test", "js"]);
    }
}
