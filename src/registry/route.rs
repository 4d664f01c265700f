//! Which server a request goes to: the servers a merged listing asks (and how it reaches each,
//! here or at its holder), and the one server a request by name or URI is routed to.

use std::sync::Arc;

use rmcp::model::ServerCapabilities;

use super::{Error, Registry, ServerEntry, merge};
use crate::upstream::{Connection, Lists};

impl Registry {
    /// The ready servers with a capability, or the one named (404, 503 or 501 when it cannot).
    pub(super) async fn sources(
        &self,
        agent: &str,
        server_id: &str,
        has: fn(&ServerCapabilities) -> bool,
        what: &'static str,
    ) -> Result<Vec<merge::Source>, Error> {
        if !server_id.is_empty() {
            let entry = self.get(server_id)?;
            return match self.reach_for(&entry, agent, has, what, true).await? {
                Some(reach) => Ok(vec![(entry, reach)]),
                // Held by another replica: only the listing agent's session is there.
                None => Ok(Vec::new()),
            };
        }
        // Side by side and bounded like the listing itself: an agent's first session with a
        // `per_agent` server is made here, and one slow server must not hold up the rest.
        let bound = self.supervision.list_timeout;
        let reaches = self.entries().into_iter().map(|entry| async move {
            let reach = self.reach_for(&entry, agent, has, what, false);
            match tokio::time::timeout(bound, reach).await {
                Ok(Ok(Some(reach))) => Some((entry, reach)),
                _ => None,
            }
        });
        Ok(futures::future::join_all(reaches)
            .await
            .into_iter()
            .flatten()
            .collect())
    }

    /// How `agent` lists a server: over the server's own connection; for a `per_agent` server,
    /// over the agent's own session, since what one agent's grant lists (its private resource
    /// names, say) is that agent's alone. `None`: the agent has nothing to list it over (no
    /// grant yet, in a merged listing; or the server is held by another replica). Asked for
    /// by name (`named`), a `per_agent` server the agent has not authorized answers
    /// `mcp_auth_required` with the agent's own link.
    pub(super) async fn reach_for(
        &self,
        entry: &Arc<ServerEntry>,
        agent: &str,
        has: fn(&ServerCapabilities) -> bool,
        what: &'static str,
        named: bool,
    ) -> Result<Option<merge::Reach>, Error> {
        if !entry.per_agent() || agent == entry.listing_agent() {
            // Asked by name, a server whose holder is not ready (it may have died) is asked of
            // it anyway: the relay waits for the next holder, within the listing's bound.
            if named
                && let Some(holder) = entry.held_elsewhere()
                && entry.capabilities().is_some_and(|c| has(&c))
            {
                return Ok(Some(merge::Reach::Holder(holder)));
            }
            return reach(entry, has, what).map(Some);
        }
        if entry.held_elsewhere().is_some() {
            return Ok(None);
        }
        let granted = match entry.session_of(agent).await {
            Some(conn) if !conn.is_lost() => true,
            _ => self
                .store
                .oauth_agents(&entry.id)
                .await?
                .iter()
                .any(|a| a == agent),
        };
        if !granted && !named {
            return Ok(None);
        }
        let conn = entry.ready_for(agent, has, what).await?;
        Ok(Some(merge::Reach::Here(conn)))
    }

    /// The server a request by name or URI goes to: the named one, else the only ready server
    /// that `offers` it. Several → conflict naming them; only servers that are down → 503.
    pub(super) fn route(
        &self,
        server_id: &str,
        offers: impl Fn(&ServerEntry, &Lists) -> bool,
        missing: Error,
    ) -> Result<Arc<ServerEntry>, Error> {
        if !server_id.is_empty() {
            return self.get(server_id);
        }
        let (mut up, mut down) = (Vec::new(), Vec::new());
        for entry in self.entries() {
            if offers(&entry, &entry.lists()) {
                match entry.reachable() {
                    true => up.push(entry),
                    false => down.push(entry),
                }
            }
        }
        match (up.len(), down.first()) {
            (1, _) => Ok(up.remove(0)),
            (0, Some(entry)) => Err(Error::Unavailable(entry.id.clone())),
            (0, None) => Err(missing),
            _ => {
                let ids: Vec<&str> = up.iter().map(|e| e.id.as_str()).collect();
                Err(Error::Conflict(format!(
                    "{} is offered by several servers ({}); say which with `server_id`",
                    missing.subject(),
                    ids.join(", ")
                )))
            }
        }
    }
}

/// How a listing reaches a server that has `has`: its connection here, or its holder.
pub(super) fn reach(
    entry: &ServerEntry,
    has: impl Fn(&ServerCapabilities) -> bool,
    what: &'static str,
) -> Result<merge::Reach, Error> {
    if let Some(holder) = entry.held_elsewhere() {
        if !entry.reachable() {
            return Err(Error::Unavailable(entry.id.clone()));
        }
        if !entry.capabilities().is_some_and(|c| has(&c)) {
            return Err(Error::CapabilityMissing {
                server_id: entry.id.clone(),
                what,
            });
        }
        return Ok(merge::Reach::Holder(holder));
    }
    ready(entry, has, what).map(merge::Reach::Here)
}

/// The live connection of a server that has the capability.
pub(super) fn ready(
    entry: &ServerEntry,
    has: impl Fn(&ServerCapabilities) -> bool,
    what: &'static str,
) -> Result<Arc<Connection>, Error> {
    let conn = entry
        .connection()
        .ok_or_else(|| Error::Unavailable(entry.id.clone()))?;
    if !has(&conn.capabilities) {
        return Err(Error::CapabilityMissing {
            server_id: entry.id.clone(),
            what,
        });
    }
    Ok(conn)
}
