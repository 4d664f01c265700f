//! Each calling agent's own identity upstream: a server whose `auth.grant_type` is
//! `token_exchange` gets, on each agent's connection, a token the agent's own token was
//! exchanged for (RFC 8693); a server with `identity.headers` gets headers made from the agent's
//! verified token (and its raw token only with `identity.forward_token`). Either way each agent
//! is served over its own connection (`connection_for`), since one connection carries one set of
//! headers.
//!
//! The agents' tokens come from the front ends, which record each verified bearer token here
//! ([`Identities::saw`]): the latest token of each agent is what its calls are made with,
//! whatever the front end (REST, `/v1/a2e`, `/mcp`) or a task running later, and what the
//! server's own connection lists with (its owner's, who registered it in that very request).
//! One token per agent, in memory only (as the verified-token cache of `http/auth.rs` holds them
//! already), as a secret wiped when dropped; never in a log line, an error, the audit or an
//! answer.
//!
//! An exchanged token is kept per (server, agent) until shortly before it expires: at most one
//! exchange per agent per token lifetime, whichever of the agent's tokens (a new one before the
//! exchanged token expires reuses it: the exchanged token names the agent, not one of its tokens).
//! A refused exchange, or a server that refuses the exchanged token (401), drops it.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

use secrecy::{ExposeSecret, SecretString};

use super::{Error, ServerEntry};
use crate::a2e::{McpServerConfig, OAuthGrant};
use crate::caller::Caller;
use crate::upstream::identity::render;
use crate::upstream::oauth::{ExchangeError, Exchanger};

/// An exchanged token is exchanged again when fewer seconds than this are left of it.
const RENEW_BEFORE: u64 = 30;
/// Most agents whose latest token is kept (a full book is emptied, not grown).
const MAX_AGENTS: usize = 65_536;

/// A (server id, agent) pair.
type Key = (String, String);

/// The agents' latest verified tokens, and what each server's agents' connections were made with.
#[derive(Default)]
pub struct Identities {
    seen: Mutex<HashMap<String, Seen>>,
    held: Mutex<HashMap<Key, Held>>,
    /// One exchange at a time per (server, agent).
    locks: Mutex<HashMap<Key, Arc<tokio::sync::Mutex<()>>>>,
    /// Each server's exchanger (which keeps the token endpoint it found), for its `url` and `auth`.
    exchangers: Mutex<HashMap<String, (String, Arc<Exchanger>)>>,
}

/// An agent's latest verified token.
#[derive(Clone)]
struct Seen {
    caller: Caller,
    token: Arc<SecretString>,
}

/// What one agent's connection to one server was made with.
#[derive(Default)]
struct Held {
    /// The exchanged token, until when it is valid (seconds since the epoch), and the server's
    /// `url` and `auth` it was exchanged for.
    exchanged: Option<(Arc<SecretString>, u64, String)>,
    /// A digest of the headers the agent's session was made with.
    session: Option<u64>,
}

impl Identities {
    /// The front ends' verified `caller`, with the bearer `token` it presented.
    pub fn saw(&self, caller: &Caller, token: Option<&str>) {
        let Some(token) = token else { return };
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(known) = seen.get(&caller.id)
            && known.token.expose_secret() == token
        {
            return;
        }
        if seen.len() >= MAX_AGENTS && !seen.contains_key(&caller.id) {
            seen.clear();
        }
        seen.insert(
            caller.id.clone(),
            Seen {
                caller: caller.clone(),
                token: Arc::new(SecretString::from(token.to_owned())),
            },
        );
    }

    /// `agent`'s latest verified token, if the bridge holds one.
    pub(super) fn token_of(&self, agent: &str) -> Option<Arc<SecretString>> {
        self.seen(agent).map(|seen| seen.token)
    }

    fn seen(&self, agent: &str) -> Option<Seen> {
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.get(agent).cloned()
    }

    /// Forgets what was kept for `server_id`'s agents (its exchanged tokens, sessions' headers,
    /// locks and exchanger): the server is gone.
    pub(super) fn forget_server(&self, server_id: &str) {
        let ours = |key: &Key| key.0 == server_id;
        let held = &mut self.held.lock().unwrap_or_else(|e| e.into_inner());
        held.retain(|key, _| !ours(key));
        let locks = &mut self.locks.lock().unwrap_or_else(|e| e.into_inner());
        locks.retain(|key, _| !ours(key));
        let exchangers = &mut self.exchangers.lock().unwrap_or_else(|e| e.into_inner());
        exchangers.remove(server_id);
    }

    fn lock_for(&self, key: &Key) -> Arc<tokio::sync::Mutex<()>> {
        let mut locks = self.locks.lock().unwrap_or_else(|e| e.into_inner());
        locks.entry(key.clone()).or_default().clone()
    }

    fn with_held<T>(&self, key: &Key, f: impl FnOnce(&mut Held) -> T) -> T {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        f(held.entry(key.clone()).or_default())
    }
}

/// Whether `config` has each agent's calls carry the agent's identity.
pub fn identity_bound(config: &McpServerConfig) -> bool {
    exchanges(config) || config.identity.as_ref().is_some_and(|i| i.is_set())
}

/// Whether `config` sends its callers' claims or tokens upstream: [`identity_bound`], or each
/// agent's own token as the identity assertion of a `per_agent` id_jag grant.
pub fn carries_identities(config: &McpServerConfig) -> bool {
    identity_bound(config)
        || config
            .auth
            .as_ref()
            .is_some_and(|a| a.per_agent && a.grant_type == OAuthGrant::IdJag)
}

fn exchanges(config: &McpServerConfig) -> bool {
    config
        .auth
        .as_ref()
        .is_some_and(|a| a.grant_type == OAuthGrant::TokenExchange)
}

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or_default()
}

impl ServerEntry {
    /// Whether each agent's calls carry the agent's identity (token exchange, `identity`): then
    /// each agent has its own connection, never the server's own.
    pub fn identity_bound(&self) -> bool {
        identity_bound(&self.config())
    }

    /// The config `agent`'s own connection is made with: the server's, with the agent's identity
    /// headers and its exchanged (or, with `forward_token`, its own) token; and a digest of
    /// those headers, to tell when the connection must be made again.
    pub(super) async fn config_as(
        &self,
        agent: &str,
    ) -> Result<(Arc<McpServerConfig>, u64), Error> {
        self.config_of(agent, false).await
    }

    /// [`Self::config_as`]; for the server's own connection (`listing`), which only lists, a
    /// header the agent's token cannot make is left out rather than refused.
    async fn config_of(
        &self,
        agent: &str,
        listing: bool,
    ) -> Result<(Arc<McpServerConfig>, u64), Error> {
        let config = self.config();
        let seen = self.identities.seen(agent).ok_or_else(|| {
            Error::IdentityRefused(format!(
                "server \"{}\" is called with each agent's own identity, and the bridge holds no \
                 token of agent \"{agent}\" yet: call again with a valid bearer token",
                self.id
            ))
        })?;
        let mut made = (*config).clone();
        if let Some(identity) = &config.identity {
            for (name, template) in &identity.headers {
                let value = match render(template, &seen.caller) {
                    Ok(value) => value,
                    Err(_) if listing => continue,
                    Err(why) => {
                        return Err(Error::Forbidden(format!(
                            "server \"{}\" takes header \"{name}\" from the caller's token, \
                             which cannot make it: {why}",
                            self.id
                        )));
                    }
                };
                made.headers.insert(name.clone(), value);
            }
            if identity.forward_token {
                let bearer = format!("Bearer {}", seen.token.expose_secret());
                made.headers.insert("Authorization".into(), bearer);
            }
        }
        if exchanges(&config) {
            let token = self.exchanged(agent, &seen).await?;
            let bearer = format!("Bearer {}", token.expose_secret());
            made.headers.insert("Authorization".into(), bearer);
        }
        let mut digest = std::collections::hash_map::DefaultHasher::new();
        made.headers.hash(&mut digest);
        Ok((Arc::new(made), digest.finish()))
    }

    /// `agent`'s exchanged token for this server: the one kept, while it is valid for a while
    /// yet, else a new exchange of the agent's latest token (one at a time per agent).
    async fn exchanged(&self, agent: &str, seen: &Seen) -> Result<Arc<SecretString>, Error> {
        let config = self.config();
        let auth = config.auth.clone().unwrap_or_default();
        let made_for = made_for(&config);
        let key = (self.id.clone(), agent.to_owned());
        let lock = self.identities.lock_for(&key);
        let _one = lock.lock().await;
        let kept = self
            .identities
            .with_held(&key, |held| held.exchanged.clone());
        if let Some((token, until, server)) = kept
            && server == made_for
            && until > now_secs() + RENEW_BEFORE
        {
            return Ok(token);
        }
        let exchanger = {
            let mut exchangers = self
                .identities
                .exchangers
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            let fresh = || Arc::new(Exchanger::new(&auth, &config.url, self.guard));
            let (server, exchanger) = exchangers
                .entry(self.id.clone())
                .or_insert_with(|| (made_for.clone(), fresh()));
            if *server != made_for {
                *server = made_for.clone();
                *exchanger = fresh();
            }
            exchanger.clone()
        };
        match exchanger.exchange(seen.token.expose_secret()).await {
            Ok(exchanged) => {
                let token = Arc::new(exchanged.access_token);
                self.identities.with_held(&key, |held| {
                    held.exchanged = Some((token.clone(), exchanged.expires_at, made_for));
                });
                tracing::info!(server_id = %self.id, agent, "agent's token exchanged");
                Ok(token)
            }
            Err(ExchangeError::Refused(code)) => {
                self.identities
                    .with_held(&key, |held| held.exchanged = None);
                tracing::info!(server_id = %self.id, agent, %code, "token exchange refused");
                Err(Error::IdentityRefused(format!(
                    "the authorization server of server \"{}\" refused to exchange the token of \
                     agent \"{agent}\" ({code}): its grant may have been revoked, or its token \
                     expired; call again with a new token once it is granted",
                    self.id
                )))
            }
            Err(ExchangeError::Failed(why)) => Err(Error::OAuth(config.redact_text(&why))),
        }
    }

    /// Whether `agent`'s session was made with the headers of `digest`.
    pub(super) fn session_current(&self, agent: &str, digest: u64) -> bool {
        let key = (self.id.clone(), agent.to_owned());
        self.identities
            .with_held(&key, |held| held.session == Some(digest))
    }

    /// `agent`'s session is made with the headers of `digest`.
    pub(super) fn session_made(&self, agent: &str, digest: u64) {
        let key = (self.id.clone(), agent.to_owned());
        self.identities
            .with_held(&key, |held| held.session = Some(digest));
    }

    /// The server refused `agent`'s identity (a 401 on its session): its session and exchanged
    /// token are dropped, and the agent's token exchanged again to tell why.
    pub(super) async fn identity_refused(&self, agent: &str) -> Error {
        let key = (self.id.clone(), agent.to_owned());
        self.identities
            .with_held(&key, |held| *held = Held::default());
        if let Some(old) = self.sessions.lock().await.remove(agent) {
            old.shutdown().await;
        }
        if let Err(error) = self.config_as(agent).await {
            return error;
        }
        Error::IdentityRefused(format!(
            "server \"{}\" refused the identity of agent \"{agent}\" it was sent; its session is \
             dropped and the next call makes a new one",
            self.id
        ))
    }

    /// The config the server's own connection (the one that lists) is made with: for a server
    /// that carries identities, that of its listing agent (its owner until another one lists),
    /// without the headers its token cannot make.
    pub(super) async fn listing_config(&self) -> Result<Arc<McpServerConfig>, Error> {
        if !self.identity_bound() {
            return Ok(self.config());
        }
        let listing = self.listing_agent();
        let agent = if listing.is_empty() {
            &self.owner
        } else {
            &listing
        };
        self.config_of(agent, true).await.map(|(config, _)| config)
    }
}

/// What an exchanged token was made for: the server's `url` and `auth`.
fn made_for(config: &McpServerConfig) -> String {
    let both = serde_json::to_vec(&(&config.url, &config.auth)).unwrap_or_default();
    hex::encode(ring::digest::digest(&ring::digest::SHA256, &both))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caller::Identity;

    #[test]
    fn the_book_keeps_each_agents_latest_token() {
        let book = Identities::default();
        let alice = Caller::from(Identity {
            id: "alice".into(),
            admin: false,
            roles: vec![],
            claims: Default::default(),
        });
        assert!(book.seen("alice").is_none());
        book.saw(&alice, Some("first"));
        book.saw(&alice, None);
        book.saw(&alice, Some("second"));
        assert_eq!(book.seen("alice").unwrap().token.expose_secret(), "second");
    }

    #[test]
    fn a_gone_servers_agents_are_forgotten_and_no_others() {
        let book = Identities::default();
        let key = |server: &str| (server.to_owned(), "alice".to_owned());
        for server in ["gone", "kept"] {
            book.with_held(&key(server), |held| held.session = Some(7));
            drop(book.lock_for(&key(server)));
        }
        book.forget_server("gone");
        let held = book.held.lock().unwrap();
        assert!(!held.contains_key(&key("gone")) && held.contains_key(&key("kept")));
        let locks = book.locks.lock().unwrap();
        assert!(!locks.contains_key(&key("gone")) && locks.contains_key(&key("kept")));
    }
}
