//! URL-mode elicitation (MCP 2025-11-25) of the OAuth authorizations `/mcp` calls wait for. A
//! session whose client declared it, calling a server the agent has not authorized, is answered
//! `-32042` (`URLElicitationRequiredError`) with the authorization link as one URL elicitation,
//! and sent `notifications/elicitation/complete` once the person has approved, so that it can call
//! again. A stateless (2026-07-28) client that declared it, whose era has no `-32042`, is given
//! the link as a URL elicitation in an input-required result instead, and calling again with its
//! `requestState` runs the call afresh. A client that declared neither gets the link in the
//! call's ordinary answer.

use std::collections::HashMap;
use std::sync::Mutex;

use rmcp::model::{
    CallToolResponse, ClientCapabilities, CustomNotification, ElicitRequest, ElicitRequestParams,
    ErrorCode, InputRequest, InputRequests, InputRequiredResult, ServerNotification,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, Peer, RoleServer};
use serde_json::json;

use super::{BridgeServer, stateless};
use crate::registry;

/// MCP's `URLElicitationRequiredError` (2025-11-25; retired by 2026-07-28).
const URL_ELICITATION_REQUIRED: ErrorCode = ErrorCode(-32042);
/// The method that tells a session one of its URL elicitations is done.
const COMPLETE: &str = "notifications/elicitation/complete";
/// The elicitations remembered for one agent and server: a client that keeps calling without
/// approving is told of its newest ones only.
const MAX_WAITING: usize = 16;

/// What the `requestState` of an authorization round handed to a stateless client starts with.
/// The state carries no right (the call it brings back is made afresh, as its caller, with its
/// caller's grant), so any replica takes it back by this alone: round robin may send the retry
/// anywhere.
const ROUND_STATE: &str = "mcp-bridge-authorize-";

/// A session that was handed an authorization link, and the id it was given.
type Told = (Peer<RoleServer>, String);

/// The authorization links handed out as URL elicitations and not done yet.
#[derive(Default)]
pub(super) struct Elicitations {
    /// The sessions to tell, by (agent, server id).
    pending: Mutex<HashMap<(String, String), Vec<Told>>>,
}

/// Whether a client takes URL-mode elicitations (`capabilities.elicitation.url`).
pub(super) fn takes_urls(capabilities: Option<&ClientCapabilities>) -> bool {
    capabilities
        .and_then(|c| c.elicitation.as_ref())
        .is_some_and(|e| e.url.is_some())
}

impl Elicitations {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), Vec<Told>>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The `-32042` answer to a request refused for want of `agent`'s OAuth authorization, when
    /// the refusal carries a link; `peer`'s session is remembered, to be told when it is done.
    pub(super) fn required(
        &self,
        peer: &Peer<RoleServer>,
        agent: &str,
        error: &registry::Error,
    ) -> Option<ErrorData> {
        let (server_id, url) = link_of(error)?;
        let id = uuid::Uuid::new_v4().to_string();
        {
            let mut pending = self.lock();
            // Sessions gone meanwhile are never told: forgotten here, at no other cost.
            pending.retain(|_, told| {
                told.retain(|(peer, _)| !peer.is_transport_closed());
                !told.is_empty()
            });
            let told = pending
                .entry((agent.to_owned(), server_id.to_owned()))
                .or_default();
            if told.len() >= MAX_WAITING {
                told.remove(0);
            }
            told.push((peer.clone(), id.clone()));
        }
        let elicitation = json!({
            "mode": "url",
            "elicitationId": id,
            "url": url,
            "message": message(server_id),
        });
        // The bridge's own `code` and `authorization_url` too, as its other answers give them.
        let data = json!({
            "elicitations": [elicitation],
            "code": error.code(),
            "authorization_url": url,
        });
        Some(ErrorData::new(
            URL_ELICITATION_REQUIRED,
            format!("{error}: {url}"),
            Some(data),
        ))
    }

    /// The input-required result that hands a stateless client the link of a request refused
    /// for want of `agent`'s OAuth authorization, when the refusal carries one.
    pub(super) fn round(&self, error: &registry::Error) -> Option<InputRequiredResult> {
        let (server_id, url) = link_of(error)?;
        let state = format!("{ROUND_STATE}{}", uuid::Uuid::new_v4().simple());
        let params = ElicitRequestParams::UrlElicitationParams {
            meta: None,
            message: message(server_id),
            url: url.to_owned(),
            // The 2026-07-28 form has none.
            elicitation_id: String::new(),
        };
        let mut requests = InputRequests::new();
        requests.insert(
            "mcp-bridge-authorize".to_owned(),
            InputRequest::Elicitation(ElicitRequest::new(params)),
        );
        Some(InputRequiredResult::new(Some(requests), Some(state)))
    }

    /// Whether `state` is an authorization round's: the call is then made afresh, with nothing
    /// of the round sent upstream.
    pub(super) fn retried(state: &str) -> bool {
        state.starts_with(ROUND_STATE)
    }

    /// The sessions told to authorize `server_id` for one of `agents`, forgotten now.
    pub(super) fn completed(&self, agents: &[String], server_id: &str) -> Vec<Told> {
        let mut pending = self.lock();
        agents
            .iter()
            .filter_map(|agent| pending.remove(&(agent.clone(), server_id.to_owned())))
            .flatten()
            .collect()
    }
}

/// The server and authorization link of a refusal for want of an OAuth authorization.
fn link_of(error: &registry::Error) -> Option<(&str, &str)> {
    match error {
        registry::Error::AuthRequired {
            server_id,
            authorization_url: Some(url),
        } => Some((server_id, url)),
        _ => None,
    }
}

/// What a person is told the link is for.
fn message(server_id: &str) -> String {
    format!(
        "Server \"{server_id}\" needs your OAuth authorization before mcp-bridge can call it for \
         you: open the link and approve."
    )
}

impl BridgeServer {
    /// The answer to a `tools/call` refused for want of `agent`'s OAuth authorization, to a
    /// client that takes URL elicitations: `-32042` in a session, an input-required result
    /// when stateless. `None` for any other call.
    pub(super) fn authorization_wanted(
        &self,
        context: &RequestContext<RoleServer>,
        agent: &str,
        error: &registry::Error,
    ) -> Option<Result<CallToolResponse, ErrorData>> {
        if let Some(round) = self.authorization_round(context, error) {
            return Some(Ok(CallToolResponse::InputRequired(round)));
        }
        self.elicitation(context, agent, error).map(Err)
    }

    /// The input-required result handing a stateless client that takes URL elicitations the
    /// link of a request refused for want of its agent's OAuth authorization; `None` for any
    /// other.
    pub(super) fn authorization_round(
        &self,
        context: &RequestContext<RoleServer>,
        error: &registry::Error,
    ) -> Option<InputRequiredResult> {
        if !stateless(context) || !takes_urls(context.client_capabilities().as_ref()) {
            return None;
        }
        self.sessions.elicitations.round(error)
    }

    /// Whether a stateless request brings back an authorization round's `requestState`: it is
    /// then made afresh, the state (and the client's answer to the round) the bridge's own.
    pub(super) fn back_from_authorizing(
        &self,
        context: &RequestContext<RoleServer>,
        state: &mut Option<String>,
    ) -> bool {
        let back = stateless(context) && state.as_deref().is_some_and(Elicitations::retried);
        if back {
            *state = None;
        }
        back
    }

    /// The `-32042` answer to a request of a 2025-11-25 session whose client takes URL
    /// elicitations, refused for want of `agent`'s OAuth authorization; `None` for any other.
    pub(super) fn elicitation(
        &self,
        context: &RequestContext<RoleServer>,
        agent: &str,
        error: &registry::Error,
    ) -> Option<ErrorData> {
        // A stateless (2026-07-28) client has no session to tell, and its era has no `-32042`.
        if stateless(context) || !takes_urls(context.client_capabilities().as_ref()) {
            return None;
        }
        self.sessions
            .elicitations
            .required(&context.peer, agent, error)
    }
}

/// Tells a session that the elicitation it was given as `id` is done.
pub(super) async fn complete(peer: &Peer<RoleServer>, id: &str) -> Result<(), rmcp::ServiceError> {
    let notification = CustomNotification::new(COMPLETE, Some(json!({ "elicitationId": id })));
    peer.send_notification(ServerNotification::CustomNotification(notification))
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_authorization_round_is_known_by_its_state_alone() {
        let elicitations = Elicitations::default();
        let wanted = registry::Error::AuthRequired {
            server_id: "mine".into(),
            authorization_url: Some("https://as.example/authorize?state=x".into()),
        };
        let round = elicitations.round(&wanted).expect("a round");
        let asked = serde_json::to_value(&round).unwrap();
        let request = &asked["inputRequests"]["mcp-bridge-authorize"];
        assert_eq!(request["method"], "elicitation/create", "{asked}");
        assert_eq!(request["params"]["mode"], "url", "{asked}");
        assert_eq!(
            request["params"]["url"],
            "https://as.example/authorize?state=x"
        );
        let state = round.request_state.clone().unwrap();
        // On any replica, which never saw it handed out.
        assert!(Elicitations::retried(&state));
        assert!(!Elicitations::retried("a-servers-own-state"));

        // Nothing to hand out without a link (a shared server waiting for its owner).
        let waiting = registry::Error::AuthRequired {
            server_id: "shared".into(),
            authorization_url: None,
        };
        assert!(elicitations.round(&waiting).is_none());
    }

    #[test]
    fn only_a_client_that_declares_url_mode_takes_urls() {
        let declared = |value| serde_json::from_value::<ClientCapabilities>(value).unwrap();
        assert!(!takes_urls(None));
        assert!(!takes_urls(Some(&declared(json!({})))));
        assert!(!takes_urls(Some(&declared(
            json!({"elicitation": {"form": {}}})
        ))));
        assert!(takes_urls(Some(&declared(
            json!({"elicitation": {"form": {}, "url": {}}})
        ))));
    }
}
