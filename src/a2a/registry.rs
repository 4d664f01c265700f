//! The registry of A2A agents: an agent registered by fetching its card (and extended card),
//! listed, refreshed and removed by its registrant or an admin; its URLs checked by the guard.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::client::translate;
use super::{A2a, A2aAgent, A2aError, MAX_CARD_BYTES, card};
use crate::caller::Caller;
use crate::guard::{Guard, Refused};
use crate::naming;
use crate::store::{StoreError, StoredAgent};

/// Bound on fetching a card.
const CARD_TIMEOUT: Duration = Duration::from_secs(15);

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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn urls_are_checked() {
        let guard = Guard::default();
        assert!(check_url(&guard, "u", "http://127.0.0.1:9/").await.is_ok());
        assert!(check_url(&guard, "u", "ftp://x/").await.is_err());
        let refused = check_url(&guard, "u", "http://169.254.169.254/").await;
        assert!(refused.unwrap_err().to_string().contains("address guard"));
    }
}
