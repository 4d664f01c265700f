//! Resources and prompts through the caller's policies: which listed ones it sees, and which
//! server a read, subscription, prompt or completion of its goes to (what it may not see is as
//! absent as what does not exist, and the refusal is audited).
//!
//! [`Tools::resolve_item`] is the one place a resource or prompt named by a request becomes the
//! (server, item) it stands for, whatever form it was written in (plain, a URI qualified as
//! `mcp-bridge://{server_id}/{uri}` or `ui://{server_id}/{rest}`, a prompt as `{server_id}__{prompt}`), and that canonical
//! pair is what the policies judge and what the registry is then asked for. REST, `/v1/a2e` and
//! `/mcp` all go through it, so no form of a name reaches past a policy.

use serde_json::Value;

use super::Tools;
use crate::access::{Kind, View};
use crate::caller::Caller;
use crate::registry::{self, naming};

/// A resource or prompt as a request named it, resolved to its canonical form and let through
/// by the caller's policies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The server to ask, or "" to route by the item as the registry does (every server that
    /// offers it is one the caller sees).
    pub server_id: String,
    /// The upstream URI or prompt name, never a qualified form.
    pub item: String,
}

impl Tools {
    /// [`Tools::resolve_item`]'s work (traced.rs).
    pub(super) async fn resolve_visible(
        &self,
        caller: &Caller,
        kind: Kind,
        server_id: &str,
        item: &str,
    ) -> Result<Resolved, registry::Error> {
        let (server_id, item) = match kind {
            Kind::Prompt => {
                let (server_id, item) = self.registry.prompt_address(server_id, item);
                (server_id, item.into())
            }
            _ => self.registry.address_uri(server_id, item),
        };
        let server_id = self.visible_route(caller, kind, server_id, &item).await?;
        Ok(Resolved {
            server_id,
            item: item.into_owned(),
        })
    }

    /// [`Tools::resolve_item`] for what a completion refers to (`ref/prompt` by name, `ref/resource`
    /// by URI template): the server to ask and the reference in its canonical form.
    pub async fn resolve_reference(
        &self,
        caller: &Caller,
        server_id: &str,
        reference: &Value,
    ) -> Result<(String, Value), registry::Error> {
        let field = |name: &str| reference.get(name).and_then(Value::as_str);
        let (kind, key, item) = match (field("type"), field("name"), field("uri")) {
            (Some("ref/prompt"), Some(name), _) => (Kind::Prompt, "name", name),
            (Some("ref/resource"), _, Some(uri)) => (Kind::Resource, "uri", uri),
            // Anything else is refused by the registry as an invalid reference.
            _ => return Ok((server_id.to_owned(), reference.clone())),
        };
        let resolved = self.resolve_item(caller, kind, server_id, item).await?;
        let mut reference = reference.clone();
        reference[key] = Value::String(resolved.item);
        Ok((resolved.server_id, reference))
    }

    /// Whether `view` shows the item (a resource URI, or a prompt's upstream name) of
    /// `server_id`.
    pub fn shows_item(&self, view: &View, kind: Kind, server_id: &str, item: &str) -> bool {
        if view.sees_everything() {
            return true;
        }
        let owner = self.registry.get(server_id).map(|e| e.owner.clone()).ok();
        match kind {
            Kind::Prompt => {
                let full = format!("{server_id}{}{item}", naming::SEPARATOR);
                view.permits(kind, owner.as_deref(), &full)
            }
            _ => view.permits(kind, owner.as_deref(), item),
        }
    }

    /// The server id a request for the canonical `item` (a resource URI or template, or a
    /// prompt's upstream name) goes to once the caller's policies are applied: `server_id` as
    /// given, or "" to route as usual when the caller sees every server that offers it, or the
    /// one it sees among them.
    async fn visible_route(
        &self,
        caller: &Caller,
        kind: Kind,
        server_id: &str,
        item: &str,
    ) -> Result<String, registry::Error> {
        let view = self.access.view(caller);
        if view.sees_everything() {
            return Ok(server_id.to_owned());
        }
        let missing = || match kind {
            Kind::Prompt => registry::Error::PromptNotFound(item.to_owned()),
            _ => registry::Error::ResourceNotFound(item.to_owned()),
        };
        if !server_id.is_empty() {
            if self.registry.get(server_id).is_err() {
                return Ok(server_id.to_owned());
            }
            if self.shows_item(&view, kind, server_id, item) {
                return Ok(server_id.to_owned());
            }
            self.refused_item(caller, kind, server_id, item).await;
            return Err(missing());
        }
        let offering: Vec<String> = self
            .registry
            .entries()
            .into_iter()
            .filter(|entry| match kind {
                Kind::Prompt => entry.lists().prompts.iter().any(|p| p.name == item),
                _ => {
                    self.registry.offers_uri(&entry.id, item)
                        || self.registry.offers_template(&entry.id, item)
                }
            })
            .map(|entry| entry.id.clone())
            .collect();
        let seen: Vec<&String> = offering
            .iter()
            .filter(|id| self.shows_item(&view, kind, id, item))
            .collect();
        match (seen.len(), offering.len()) {
            (n, all) if n == all => Ok(String::new()),
            (0, _) => {
                self.refused_item(caller, kind, "", item).await;
                Err(missing())
            }
            (1, _) => Ok(seen[0].clone()),
            _ => {
                let ids: Vec<&str> = seen.iter().map(|s| s.as_str()).collect();
                let what = match kind {
                    Kind::Prompt => format!("prompt \"{item}\""),
                    _ => format!("resource \"{item}\""),
                };
                Err(registry::Error::Conflict(format!(
                    "{what} is offered by several servers ({}); say which with `server_id`",
                    ids.join(", ")
                )))
            }
        }
    }

    async fn refused_item(&self, caller: &Caller, kind: Kind, server_id: &str, item: &str) {
        let action = match kind {
            Kind::Prompt => "prompt.get.denied",
            Kind::Resource => "resource.read.denied",
            Kind::Tool => "tool.call.denied",
        };
        let target = match server_id.is_empty() {
            true => item.to_owned(),
            false => format!("{server_id}{}{item}", naming::SEPARATOR),
        };
        self.store
            .record(&caller.id, action, &target, "not visible to the caller")
            .await;
    }
}
