//! OAuth authorizations of upstream servers: the links given to people, the callback that
//! finishes them, and the per-agent sessions of `per_agent` servers.

use secrecy::ExposeSecret;
use std::sync::Arc;
use std::time::Duration;

use super::links::MAX_STEP_UPS;
use super::{Error, Registry, ServerEntry};
use crate::a2e::{McpServerStatus, McpTransport, Message, NotificationMethod, ServerPush};
use crate::caller::Caller;
use crate::store::StoreError;
use crate::upstream::oauth::{self, GrantKey, OAuthError};
use crate::upstream::{ConnectError, Connection};

impl From<OAuthError> for Error {
    fn from(error: OAuthError) -> Self {
        match error {
            OAuthError::NeedsAuthorization => Error::Invalid(error.to_string()),
            OAuthError::Failed(why) => Error::OAuth(why),
            OAuthError::StoreUnavailable(why) => Error::OAuthStoreUnavailable(why),
        }
    }
}

impl ServerEntry {
    /// Whether a server's calls each go over the calling agent's own grant.
    /// So are those of a server that carries each agent's identity (`identity.rs`).
    pub fn per_agent(&self) -> bool {
        let config = self.config();
        config.auth.as_ref().is_some_and(|a| a.per_agent)
            || super::identity::identity_bound(&config)
    }

    /// The OAuth client of one of this server's grants (`agent` empty: the shared one).
    pub fn oauth_client(&self, agent: &str) -> Option<Arc<oauth::Client>> {
        let config = self.config();
        // A token exchange is no flow of rmcp's OAuth client: `identity.rs` makes it.
        let exchange = config
            .auth
            .as_ref()
            .is_some_and(|a| a.grant_type == crate::a2e::OAuthGrant::TokenExchange);
        if config.transport == McpTransport::Stdio || exchange {
            return None;
        }
        let key = GrantKey {
            server_id: self.id.clone(),
            agent: agent.to_owned(),
        };
        let client = oauth::Client::new(
            &config,
            key,
            self.authorizations.settings.clone(),
            self.guard,
            self.store.clone(),
        );
        // A `per_agent` id_jag server: each agent's own bearer token is its identity assertion;
        // the server's own connection (no agent: it only lists) asks with its owner's.
        let whose = match agent.is_empty() {
            true => self.owner.as_str(),
            false => agent,
        };
        if let Some(auth) = &config.auth
            && auth.per_agent
            && auth.grant_type == crate::a2e::OAuthGrant::IdJag
            && let Some(token) = self.identities.token_of(whose)
        {
            client.assert_as(token.expose_secret());
        }
        Some(Arc::new(client))
    }

    /// A new link for a person to authorize the grant of `agent` with. `challenge` is what the
    /// server answered without (or with too little of) a token.
    pub async fn authorization_link(
        &self,
        agent: &str,
        challenge: Option<&str>,
        more_scope: Option<&str>,
    ) -> Result<String, Error> {
        let client = self
            .oauth_client(agent)
            .ok_or_else(|| Error::Invalid("a stdio server does not use OAuth".into()))?;
        let challenge = challenge
            .map(str::to_owned)
            .or_else(|| self.state().challenge.clone());
        // Step-up (a `403 insufficient_scope`): more scope, never for scope already granted,
        // and at most MAX_STEP_UPS times in a row.
        let mut more_scope = more_scope.map(str::to_owned);
        if let Some(challenge) = &challenge
            && let Some(wanted) = oauth::insufficient_scope(challenge, &self.config().url)
        {
            if client.holds_scope(challenge).await {
                return Err(Error::Forbidden(format!(
                    "server \"{}\" refuses the call for want of scope \"{wanted}\", which it granted \
                     already: asking again cannot help",
                    self.id
                )));
            }
            if !self.authorizations.step_up(client.key()) {
                return Err(Error::Forbidden(format!(
                    "server \"{}\" still wants more scope after {MAX_STEP_UPS} authorizations \
                     with more scope",
                    self.id
                )));
            }
            more_scope.get_or_insert(wanted);
        }
        // One at a time per grant: two at once would each register the bridge with the
        // server. Only this grant's: a server whose authorization server hangs holds up no
        // other server's links.
        let lock = self.authorizations.grant_lock(client.key());
        let _one = lock.lock().await;
        let pending = client
            .begin(challenge.as_deref(), more_scope.as_deref())
            .await
            .map_err(|e| match e {
                OAuthError::Failed(why) => Error::OAuth(self.config().redact_text(&why)),
                other => other.into(),
            })?;
        // Counted against the agent it was made for (the owner for the shared grant). The link
        // is this server's, as registered now: it dies with it.
        let made_for = if agent.is_empty() { &self.owner } else { agent };
        self.authorizations
            .keep(&self.store, made_for, &pending)
            .await
            .map_err(|e| match e {
                StoreError::NotFound => Error::ServerNotFound(self.id.clone()),
                other => other.into(),
            })?;
        Ok(pending.authorization_url)
    }

    /// The server waits for a person: its status says so, and its owner is sent the link.
    pub(super) async fn wait_for_authorization(&self, challenge: Option<String>) {
        // A `per_agent` server's own connection lists with the first grant: its owner's until
        // some agent has authorized.
        let agent = match (self.per_agent(), self.listing_agent()) {
            (false, _) => String::new(),
            (true, listing) if listing.is_empty() => self.owner.clone(),
            (true, listing) => listing,
        };
        let link = self
            .authorization_link(&agent, challenge.as_deref(), None)
            .await;
        // One change of status: waiting for a person, or (nothing a person could approve:
        // discovery failed, a resource that is not this server's, a scope that cannot be had)
        // an error.
        self.update_state(|s| {
            match &link {
                Ok(_) => {
                    s.status = McpServerStatus::AuthRequired;
                    s.error = format!(
                        "the server needs an OAuth authorization: open the link of POST /v1/servers/{}/authorize",
                        self.id
                    );
                }
                Err(error) => {
                    s.status = McpServerStatus::Error;
                    s.error = error.to_string();
                }
            }
            s.stderr_tail.clear();
            s.challenge = challenge.clone();
            s.attempts += 1;
        });
        let url = match link {
            Ok(url) => url,
            Err(error) => {
                tracing::warn!(server_id = %self.id, %error, "cannot make an authorization link");
                return;
            }
        };
        let push = ServerPush {
            server_id: self.id.clone(),
            method: NotificationMethod::AuthRequired.as_str().to_owned(),
            params: serde_json::json!({"server_id": self.id, "authorization_url": url}),
            ..Default::default()
        };
        self.hub.publish(&self.owner, ServerPush::TYPE, &push);
    }

    /// The agent whose grant the server's own connection (the one that lists) uses: for a
    /// `per_agent` server, the first agent that authorized.
    pub fn listing_agent(&self) -> String {
        self.listing
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The connection `agent`'s calls go over: the server's own, or for a `per_agent` server
    /// the agent's own session (made on first use with the agent's grant).
    pub async fn connection_for(&self, agent: &str) -> Result<Arc<Connection>, Error> {
        // The common case without the rest: connecting and OAuth make a future of some 34 KB
        // that every future awaiting this one would hold, and copy at each move (boxed here,
        // it is made only when needed).
        if !self.per_agent()
            && let Some(conn) = self.connection()
        {
            return Ok(conn);
        }
        Box::pin(self.connect_for(agent)).await
    }

    /// `connection_for` when the server's connection is not at hand.
    async fn connect_for(&self, agent: &str) -> Result<Arc<Connection>, Error> {
        if !self.per_agent() {
            if let Some(conn) = self.connection() {
                return Ok(conn);
            }
            if self.state().status != McpServerStatus::AuthRequired {
                return Err(Error::Unavailable(self.id.clone()));
            }
            // The owner gets a link to open; the others learn who can give one.
            let authorization_url = match agent == self.owner {
                true => Some(self.authorization_link("", None, None).await?),
                false => None,
            };
            return Err(Error::AuthRequired {
                server_id: self.id.clone(),
                authorization_url,
            });
        }
        // A server that carries each agent's identity: the agent's own config (its headers, its
        // exchanged token), and never the listing agent's connection for another's calls.
        let identity = match self.identity_bound() {
            true => Some(self.config_as(agent).await?),
            false => None,
        };
        if identity.is_none()
            && agent == self.listing_agent()
            && let Some(conn) = self.connection()
        {
            return Ok(conn);
        }
        if let Some(conn) = self.sessions.lock().await.get(agent)
            && !conn.is_lost()
            && identity
                .as_ref()
                .is_none_or(|(_, digest)| self.session_current(agent, *digest))
        {
            return Ok(conn.clone());
        }
        // Connected without holding the lock: one agent's slow connect does not hold up the
        // others' calls.
        // The session is the agent's own: what the server starts on it goes to the agent.
        let mut ctx = self.upstream_context();
        ctx.oauth = self.oauth_client(agent);
        ctx.owner = agent.to_owned();
        ctx.private = true;
        let config = match &identity {
            Some((config, _)) => config.clone(),
            None => self.config(),
        };
        match crate::upstream::connect(&config, ctx).await {
            Ok(established) => {
                if let Some((_, digest)) = identity {
                    self.session_made(agent, digest);
                }
                let replaced = self
                    .sessions
                    .lock()
                    .await
                    .insert(agent.to_owned(), established.conn.clone());
                if let Some(old) = replaced {
                    tokio::spawn(async move { old.shutdown().await });
                }
                Ok(established.conn)
            }
            Err(ConnectError::AuthRequired(_)) if identity.is_some() => {
                Err(self.identity_refused(agent).await)
            }
            Err(ConnectError::AuthRequired(challenge)) => {
                let url = self
                    .authorization_link(agent, challenge.as_deref(), None)
                    .await?;
                Err(Error::AuthRequired {
                    server_id: self.id.clone(),
                    authorization_url: Some(url),
                })
            }
            Err(error) => Err(Error::Connect {
                server_id: self.id.clone(),
                error,
            }),
        }
    }

    /// The connection `agent` reaches what `has` says over: the server's own, or on a
    /// `per_agent` server the agent's own session (never another agent's grant).
    pub async fn ready_for(
        &self,
        agent: &str,
        has: impl Fn(&rmcp::model::ServerCapabilities) -> bool,
        what: &'static str,
    ) -> Result<Arc<Connection>, Error> {
        if !self.per_agent() {
            return super::ready(self, has, what);
        }
        let conn = self.connection_for(agent).await?;
        if !has(&conn.capabilities) {
            return Err(Error::CapabilityMissing {
                server_id: self.id.clone(),
                what,
            });
        }
        Ok(conn)
    }

    /// A call refused for its token or scope: a link to authorize (again, or with more scope).
    pub async fn reauthorize(&self, agent: &str, challenge: &str) -> Error {
        if self.identity_bound() {
            return self.identity_refused(agent).await;
        }
        let grant = if self.per_agent() { agent } else { "" };
        if !self.per_agent() && agent != self.owner {
            return Error::AuthRequired {
                server_id: self.id.clone(),
                authorization_url: None,
            };
        }
        match self.authorization_link(grant, Some(challenge), None).await {
            Ok(url) => Error::AuthRequired {
                server_id: self.id.clone(),
                authorization_url: Some(url),
            },
            Err(error) => error,
        }
    }

    /// A call went through: the step-ups of its grant start again from none.
    pub fn authorized_call(&self, agent: &str) {
        let grant = if self.per_agent() { agent } else { "" };
        self.authorizations.steps_done(&self.id, grant);
    }

    /// The connection `agent`'s requests go over now, without making one: the server's own, or
    /// on a `per_agent` server the agent's session if it has one.
    pub async fn session_of(&self, agent: &str) -> Option<Arc<Connection>> {
        if !self.per_agent() || agent == self.listing_agent() {
            return self.connection();
        }
        self.sessions.lock().await.get(agent).cloned()
    }

    /// Closes every per-agent session.
    pub(super) async fn close_sessions(&self) {
        let sessions: Vec<_> = self.sessions.lock().await.drain().collect();
        for (_, conn) in sessions {
            conn.shutdown().await;
        }
    }
}

impl Registry {
    /// A link for `agent` to authorize a server with: its owner or an admin for a shared
    /// server, any agent (each for itself) for a `per_agent` one.
    pub async fn authorize(&self, agent: &Caller, server_id: &str) -> Result<String, Error> {
        let entry = self.get(server_id)?;
        let grant = if entry.per_agent() {
            agent.id.clone()
        } else {
            self.managed(agent, server_id)?;
            String::new()
        };
        let url = entry.authorization_link(&grant, None, None).await?;
        self.store
            .record(&agent.id, "server.authorize", server_id, "")
            .await;
        Ok(url)
    }

    /// The authorization server sent the person back: exchanges the code and (re)connects the
    /// server. Returns the server's id.
    pub async fn complete_authorization(
        &self,
        state: &str,
        code: Option<&str>,
        issuer: Option<&str>,
        refused: Option<&str>,
    ) -> Result<String, Error> {
        let link = self
            .authorizations
            .take(&self.store, state)
            .await?
            .ok_or_else(|| {
                Error::Invalid(
                    "this authorization link is unknown, already used or expired: ask for a new \
                     one (POST /v1/servers/{server_id}/authorize)"
                        .into(),
                )
            })?;
        let key = GrantKey {
            server_id: link.server_id.clone(),
            agent: link.grant_agent.clone(),
        };
        let stale = || {
            Error::Invalid(format!(
                "{} (ask for a new one: POST /v1/servers/{{server_id}}/authorize)",
                oauth::LINK_STALE
            ))
        };
        // The server as registered now, on this replica (any replica: the link is in the
        // store); it must be the one the link was made for.
        let entry = match (link.same_server, self.get(&key.server_id)) {
            (true, Ok(entry)) => entry,
            _ => return Err(stale()),
        };
        let client = entry
            .oauth_client(&key.agent)
            .ok_or_else(|| Error::Invalid("a stdio server does not use OAuth".into()))?;
        let flow = client.made_this(&link.flow)?.ok_or_else(stale)?;
        if let Some(refused) = refused {
            return Err(Error::Invalid(format!(
                "the authorization server refused the authorization of server \"{}\": {refused}",
                key.server_id
            )));
        }
        let code = code
            .ok_or_else(|| Error::Invalid("the authorization server sent no `code` back".into()))?;
        // Tokens are stored only while the server is still the one the link was made for.
        client.bind(entry.identity());
        client
            .finish(flow, code, issuer)
            .await
            .map_err(|e| match e {
                OAuthError::Failed(why) => Error::OAuth(entry.config().redact_text(&why)),
                other => other.into(),
            })?;
        self.store
            .record(&key.agent, "server.authorized", &key.server_id, "")
            .await;
        tracing::info!(server_id = %key.server_id, "OAuth authorization completed");
        if entry.per_agent() {
            // That agent's session is made again with the new grant on its next call.
            if let Some(old) = entry.sessions.lock().await.remove(&key.agent) {
                old.shutdown().await;
            }
            // Held by another replica: that agent's session there (which has the old tokens)
            // goes too. Ready there, its connection lists already.
            let holder = entry.held_elsewhere();
            if let Some(holder) = holder.clone() {
                let op = super::replicas::Op::DropSession {
                    server_id: key.server_id.clone(),
                    agent: key.agent.clone(),
                };
                let bound = entry.config().connect_bound();
                if let Err(error) = self.forward::<serde_json::Value>(&holder, op, bound).await {
                    tracing::warn!(server_id = %key.server_id, %holder, %error,
                        "cannot ask the holder to drop a session with the old grant");
                }
            }
            // So its `/mcp` clients may call again now: no session with the old grant is left
            // for their next call to meet.
            entry.hub.authorized(&key.server_id, &key.agent);
            if holder.is_some() && entry.state().status == McpServerStatus::Ready {
                return Ok(key.server_id);
            }
            let mut listing = entry.listing.write().unwrap_or_else(|e| e.into_inner());
            if listing.is_empty() || entry.connection().is_none() {
                *listing = key.agent.clone();
            } else {
                return Ok(key.server_id);
            }
        }
        // Answered once the server has connected with the new grant (bounded), so that what the
        // person (or a program) does next finds it ready.
        // (Here, or on the replica holding it: the callback may come back to any replica.)
        let since = entry.state().attempts;
        let bound = entry.config().connect_bound();
        match entry.held_elsewhere() {
            Some(holder) => {
                let op = super::replicas::Op::Reconnect {
                    server_id: key.server_id.clone(),
                };
                if let Err(error) = self.forward::<serde_json::Value>(&holder, op, bound).await {
                    // The grant is stored: the holder connects with it on its next attempt.
                    tracing::warn!(server_id = %key.server_id, %holder, %error,
                        "cannot ask the holder to connect with the new grant");
                }
            }
            None => {
                let _ = entry.control.send(super::entry::Control::Reconnect);
            }
        }
        entry
            .settled_after(since, bound + Duration::from_secs(1))
            .await;
        if !entry.per_agent() {
            entry.hub.authorized(&key.server_id, &entry.owner);
        }
        Ok(key.server_id)
    }
}

impl Registry {
    /// Where the bridge is reached for OAuth (its redirect URI, its client metadata document).
    pub fn oauth_settings(&self) -> Arc<oauth::Settings> {
        self.authorizations.settings.clone()
    }
}
