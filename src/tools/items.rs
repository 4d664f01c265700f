//! Resources and prompts through the caller's policies: which listed ones it sees, and which
//! server a read, subscription, prompt or completion of its goes to (what it may not see is as
//! absent as what does not exist, and the refusal is audited).

use super::Tools;
use crate::access::{Kind, View};
use crate::caller::Caller;
use crate::registry::{self, naming};

impl Tools {
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

    /// The server id a request for `item` (a resource URI, or a prompt's upstream name) goes
    /// to once the caller's policies are applied: `server_id` as given, or "" to route as usual
    /// when the caller sees every server that offers it, or the one it sees among them.
    pub async fn visible_route(
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
                _ => self.registry.offers_uri(&entry.id, item),
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

    /// The server a completion goes to once the caller's policies are applied to what it
    /// refers to: a prompt by name, a resource template by its URI template.
    pub async fn completion_route(
        &self,
        caller: &Caller,
        server_id: &str,
        reference: &serde_json::Value,
    ) -> Result<String, registry::Error> {
        let field = |name: &str| reference.get(name).and_then(serde_json::Value::as_str);
        match (field("type"), field("name"), field("uri")) {
            (Some("ref/prompt"), Some(name), _) => {
                self.visible_route(caller, Kind::Prompt, server_id, name)
                    .await
            }
            (Some("ref/resource"), _, Some(uri)) => {
                self.visible_route(caller, Kind::Resource, server_id, uri)
                    .await
            }
            _ => Ok(server_id.to_owned()),
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
