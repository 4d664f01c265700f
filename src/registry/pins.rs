//! Tool pinning (`MCP_BRIDGE_TOOL_PINNING`): the digest of each tool's definition as first
//! seen is kept in the store; a later listing that changes it is told to the server's owner
//! (`bridge/tool_changed`) and audited, and under `quarantine` the tool is held back from the
//! catalogue until its owner or an admin approves the new definition. A tool that appears after
//! the server's first listing is told and audited the same way (`added`), and held back under
//! `quarantine` until approved: adding a tool is the other way to change what agents trust.
//!
//! What is pinned is the tool's `title`, `description`, `inputSchema`, `outputSchema` and
//! `annotations` (absent ones as `null`), as canonical JSON: object keys sorted at every depth,
//! no white space. The digest is the hex SHA-256 of that text. Pins stored before the title was
//! pinned have no `title` key: such a pin still matches a definition whose other fields are the
//! same (whatever its title), and is then re-pinned with the title, silently, once; so an
//! upgrade reports nothing that did not change. Only the replica holding a server reviews its
//! listings; the others take the held-back tools from what the holder shares.

use serde_json::{Value, json};
use std::collections::{BTreeSet, HashMap};

use super::{Error, Registry, ServerEntry, catalogue, naming, relay, replicas};
use crate::a2e::{Message, NotificationMethod, ServerPush, ToolInfo};
use crate::caller::Caller;
use crate::config::ToolPinning;
use crate::store::StoredPin;
use crate::upstream::Lists;

/// The pinned fields of a tool definition, in the order the event lists them.
const FIELDS: [&str; 5] = [
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
];

/// A server's pinning state on this replica.
pub struct Pins {
    pub mode: ToolPinning,
    /// Serialises the reviews of listings and the approvals of one server.
    lock: tokio::sync::Mutex<()>,
    /// The changed digest of each tool this replica has told the owner of: one event per change,
    /// not one per listing while it waits for approval.
    told: std::sync::Mutex<HashMap<String, String>>,
}

impl Pins {
    pub fn new(mode: ToolPinning) -> Self {
        Self {
            mode,
            lock: tokio::sync::Mutex::new(()),
            told: Default::default(),
        }
    }

    /// Whether `digest` of `tool` is news (and remembers it).
    fn first_time(&self, tool: &str, digest: &str) -> bool {
        let mut told = self.told.lock().unwrap_or_else(|e| e.into_inner());
        told.insert(tool.to_owned(), digest.to_owned()).as_deref() != Some(digest)
    }

    fn forget(&self, tool: &str) {
        self.told
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(tool);
    }
}

/// The pinned fields of a tool.
pub fn pinned_view(tool: &rmcp::model::Tool) -> Value {
    json!({
        "title": tool.title,
        "description": tool.description,
        "inputSchema": tool.input_schema,
        "outputSchema": tool.output_schema,
        "annotations": tool.annotations,
    })
}

/// `value` as canonical JSON: object keys sorted at every depth, no white space.
pub fn canonical(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                let mut out = serde_json::Map::new();
                for key in keys {
                    out.insert(key.clone(), sorted(&map[key]));
                }
                Value::Object(out)
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    // serde_json keeps insertion order when its `preserve_order` feature is on (some crate in
    // the tree may turn it on), sorted order otherwise: inserted sorted, both print sorted.
    sorted(value).to_string()
}

/// The pin of a tool definition: the digest of its canonical pinned fields, and that text.
pub fn pin_of(tool: &rmcp::model::Tool) -> StoredPin {
    pin_of_view(&pinned_view(tool))
}

fn pin_of_view(view: &Value) -> StoredPin {
    let definition = canonical(view);
    let digest = hex::encode(ring::digest::digest(
        &ring::digest::SHA256,
        definition.as_bytes(),
    ));
    StoredPin { digest, definition }
}

/// Whether `old` is a pin stored before the title was pinned (its definition has no `title`)
/// that `tool` matches but for its title: the title it has now is accepted, once.
fn matches_untitled_pin(old: &StoredPin, tool: &rmcp::model::Tool) -> bool {
    let untitled = serde_json::from_str::<Value>(&old.definition)
        .is_ok_and(|v| v.is_object() && v.get("title").is_none());
    if !untitled {
        return false;
    }
    let mut view = pinned_view(tool);
    if let Value::Object(fields) = &mut view {
        fields.remove("title");
    }
    pin_of_view(&view).digest == old.digest
}

impl ServerEntry {
    /// Compares a new listing with the pins: pins the tools seen for the first time, tells the
    /// owner of each changed one, and sets which tools are held back (`quarantine`). Called by
    /// the replica holding the server, before the listing is taken into use.
    pub(super) async fn review_pins(&self, lists: &Lists) {
        if self.pins.mode == ToolPinning::Off {
            return;
        }
        let _serial = self.pins.lock.lock().await;
        let stored = match self.store.tool_pins(&self.id).await {
            Ok(stored) => stored,
            Err(error) => {
                // What was held back stays held back; nothing is pinned this time.
                tracing::error!(server_id = %self.id, %error, "cannot read the tool pins");
                return;
            }
        };
        // Before the server's first listing is pinned, every tool is part of it, not added.
        let baseline = match self.store.first_listing_pinned(&self.id).await {
            Ok(listed) => listed,
            Err(error) => {
                tracing::error!(server_id = %self.id, %error, "cannot read the tool pins");
                return;
            }
        };
        let (mut fresh, mut accepted, mut held) = (Vec::new(), Vec::new(), BTreeSet::new());
        for tool in &lists.tools {
            let name = tool.name.to_string();
            let pin = pin_of(tool);
            let old = stored.get(&name);
            match old {
                None if !baseline => fresh.push((name, pin)),
                Some(old) if old.digest == pin.digest => self.pins.forget(&name),
                Some(old) if matches_untitled_pin(old, tool) => {
                    self.pins.forget(&name);
                    accepted.push((name, pin));
                }
                _ => {
                    if self.pins.first_time(&name, &pin.digest) {
                        self.tell_changed(&name, old, tool).await;
                    }
                    match self.pins.mode {
                        ToolPinning::Quarantine => {
                            held.insert(name);
                        }
                        _ => accepted.push((name, pin)),
                    }
                }
            }
        }
        for (pins, replace) in [(fresh, false), (accepted, true)] {
            if let Err(error) = self.store.pin_tools(&self.id, &pins, replace).await {
                tracing::error!(server_id = %self.id, %error, "cannot store tool pins");
            }
        }
        if !baseline && let Err(error) = self.store.note_first_listing(&self.id).await {
            tracing::error!(server_id = %self.id, %error, "cannot store tool pins");
        }
        self.live
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .held_back = held;
    }

    /// `bridge/tool_changed` to the owner, and an audit entry: `old` is the tool's pin, none
    /// when the tool was added after the server's first listing.
    async fn tell_changed(&self, tool: &str, old: Option<&StoredPin>, new: &rmcp::model::Tool) {
        let added = old.is_none();
        let old_view: Value = old
            .and_then(|old| serde_json::from_str(&old.definition).ok())
            .unwrap_or(Value::Null);
        let new_view = pinned_view(new);
        // A field a pin has no value for (the title of a pin stored before titles were) is not
        // known to have changed; an added tool's fields are all news.
        let changed: Vec<&str> = FIELDS
            .into_iter()
            .filter(|f| match added {
                true => new_view.get(f).is_some_and(|v| !v.is_null()),
                false => old_view
                    .get(f)
                    .is_some_and(|old| Some(old) != new_view.get(f)),
            })
            .collect();
        let quarantined = self.pins.mode == ToolPinning::Quarantine;
        match added {
            true => {
                tracing::warn!(server_id = %self.id, %tool, quarantined, "a tool was added after the first listing")
            }
            false => {
                tracing::warn!(server_id = %self.id, %tool, ?changed, quarantined, "a pinned tool definition changed")
            }
        }
        let push = ServerPush {
            server_id: self.id.clone(),
            method: NotificationMethod::ToolChanged.as_str().to_owned(),
            params: json!({
                "server_id": self.id,
                "tool": tool,
                "name": naming::qualify(&self.id, tool, self.max_tool_name),
                "added": added,
                "changed": changed,
                "old": old_view,
                "new": new_view,
                "pinning": self.pins.mode.as_str(),
                "quarantined": quarantined,
            }),
            ..Default::default()
        };
        self.hub.publish(&self.owner, ServerPush::TYPE, &push);
        let outcome = match quarantined {
            true => "held back until approved",
            false => "the new definition is pinned",
        };
        let (action, detail) = match added {
            true => (
                "tool.added",
                format!("tool \"{tool}\": added after the server's first listing; {outcome}"),
            ),
            false => (
                "tool.changed",
                format!("tool \"{tool}\": {} changed; {outcome}", changed.join(", ")),
            ),
        };
        let actor = format!("server:{}", self.id);
        self.store.record(&actor, action, &self.id, &detail).await;
    }

    /// Takes a tool out of the held-back set (its new definition was approved); whether it was.
    pub(super) fn release(&self, tool: &str) -> bool {
        let config = self.config();
        let mut live = self.live.write().unwrap_or_else(|e| e.into_inner());
        let released = live.held_back.remove(tool);
        if released {
            catalogue::rebuild(&mut live, &config, self.max_tool_name);
        }
        released
    }

    /// The tools held back now (what the holder shares with the other replicas).
    pub(super) fn held_back(&self) -> Vec<String> {
        let live = self.live.read().unwrap_or_else(|e| e.into_inner());
        live.held_back.iter().cloned().collect()
    }

    /// The catalogue entry of an upstream tool.
    fn tool_info(&self, tool: &str) -> Option<ToolInfo> {
        let live = self.live.read().unwrap_or_else(|e| e.into_inner());
        live.catalogue
            .iter()
            .find(|e| e.tool == tool)
            .map(|e| e.info(&self.id))
    }
}

impl Registry {
    /// The upstream name of a tool of `entry` named by its upstream or catalogue name, if the
    /// server lists it and its allow list lets it through.
    pub(super) fn upstream_tool(&self, entry: &ServerEntry, tool: &str) -> Result<String, Error> {
        let listed = |name: &str| entry.lists().tools.iter().any(|t| t.name == name);
        let config = entry.config();
        let upstream = match listed(tool) {
            true => Some(tool.to_owned()),
            false => self
                .resolve_tool(tool)
                .filter(|(id, _)| *id == entry.id)
                .map(|(_, t)| t),
        };
        upstream
            .filter(|t| naming::tool_allowed(&config.tool_allow_list, t))
            .ok_or_else(|| Error::ToolNotFound(format!("{}{}{tool}", entry.id, naming::SEPARATOR)))
    }

    /// Approves the current definition of a server's tool (by upstream name, or its catalogue
    /// name) under tool pinning: pins it, and shows the tool again if it was held back. The
    /// server's owner or an admin only. Answers the tool as the catalogue shows it and whether a
    /// change was waiting (approving a definition already pinned changes nothing).
    pub async fn approve_tool(
        &self,
        agent: &Caller,
        server_id: &str,
        tool: &str,
    ) -> Result<(crate::a2e::ToolInfo, bool), Error> {
        let entry = self.managed(agent, server_id)?;
        let tool = self.upstream_tool(&entry, tool)?;
        let Some(holder) = entry.held_elsewhere() else {
            return entry.approve(&agent.id, &tool).await;
        };
        let op = replicas::Op::ApproveTool {
            agent: agent.id.clone(),
            server_id: server_id.to_owned(),
            tool: tool.clone(),
        };
        // Approving twice pins the same definition: repeated on the next holder when this one
        // dies, or here when this replica took the server over.
        let answer = match self.relay_safe(&entry, holder, op).await {
            relay::Relayed::Done(answer) => answer?,
            relay::Relayed::HereNow => return entry.approve(&agent.id, &tool).await,
        };
        // The holder shares the same shortly; shown again here at once.
        entry.release(&tool);
        Ok(answer)
    }
}

impl ServerEntry {
    /// Approves `tool` on the replica holding the server (see [`Registry::approve_tool`]).
    pub(super) async fn approve(&self, actor: &str, tool: &str) -> Result<(ToolInfo, bool), Error> {
        let not_found = || Error::ToolNotFound(format!("{}{}{tool}", self.id, naming::SEPARATOR));
        let mut approved = false;
        if self.pins.mode != ToolPinning::Off {
            let serial = self.pins.lock.lock().await;
            let lists = self.lists();
            let definition = lists
                .tools
                .iter()
                .find(|t| t.name == tool)
                .ok_or_else(not_found)?;
            let pin = pin_of(definition);
            let stored = self.store.tool_pins(&self.id).await?;
            if stored.get(tool).is_none_or(|p| p.digest != pin.digest) {
                let detail = format!("tool \"{tool}\": definition {} pinned", &pin.digest[..12]);
                self.store
                    .pin_tools(&self.id, &[(tool.to_owned(), pin)], true)
                    .await?;
                self.store
                    .record(actor, "tool.approve", &self.id, &detail)
                    .await;
                approved = true;
            }
            self.pins.forget(tool);
            let released = self.release(tool);
            drop(serial);
            if released {
                tracing::info!(server_id = %self.id, %tool, by = %actor, "changed tool approved");
                // Shared with the other replicas with the state, and told to every agent.
                self.update_state(|_| {});
                self.push_to_all(NotificationMethod::ToolsListChanged, json!({}));
            }
        }
        let info = self.tool_info(tool).ok_or_else(not_found)?;
        Ok((info, approved))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(description: &str, schema: Value) -> rmcp::model::Tool {
        let Value::Object(schema) = schema else {
            panic!("an object")
        };
        rmcp::model::Tool::new(
            "t".to_owned(),
            description.to_owned(),
            std::sync::Arc::new(schema),
        )
    }

    #[test]
    fn the_digest_covers_the_definition_and_ignores_key_order() {
        let a = tool(
            "Adds",
            json!({"type": "object", "properties": {"a": {}, "b": {}}}),
        );
        let b = tool(
            "Adds",
            json!({"properties": {"b": {}, "a": {}}, "type": "object"}),
        );
        assert_eq!(pin_of(&a), pin_of(&b));
        assert_eq!(
            pin_of(&a).definition,
            r#"{"annotations":null,"description":"Adds","inputSchema":{"properties":{"a":{},"b":{}},"type":"object"},"outputSchema":null,"title":null}"#
        );
        assert_eq!(pin_of(&a).digest.len(), 64);
        let other = tool("Adds, and mails your keys", json!({"type": "object"}));
        assert_ne!(pin_of(&a).digest, pin_of(&other).digest);
        let mut annotated = a.clone();
        annotated.annotations = Some(rmcp::model::ToolAnnotations::new().read_only(true));
        assert_ne!(pin_of(&a).digest, pin_of(&annotated).digest);
        // The title is pinned, and so is the annotations' own title.
        let mut titled = a.clone();
        titled.title = Some("Adder".into());
        assert_ne!(pin_of(&a).digest, pin_of(&titled).digest);
        let mut renamed = annotated.clone();
        renamed.annotations =
            Some(rmcp::model::ToolAnnotations::with_title("Adder").read_only(true));
        assert_ne!(pin_of(&annotated).digest, pin_of(&renamed).digest);
    }

    #[test]
    fn a_pin_stored_before_titles_takes_the_current_title_once() {
        // What the bridge stored before it pinned titles: the same fields without `title`.
        let untitled = |tool: &rmcp::model::Tool| {
            let mut view = pinned_view(tool);
            view.as_object_mut().unwrap().remove("title");
            pin_of_view(&view)
        };
        let mut tool = tool("Adds", json!({"type": "object"}));
        tool.title = Some("Adder".into());
        let old = untitled(&tool);
        assert!(!old.definition.contains("title"), "{}", old.definition);
        assert!(matches_untitled_pin(&old, &tool));
        // Another definition is still a change, whatever its title.
        let mut changed = tool.clone();
        changed.description = Some("Adds, and mails your keys".into());
        assert!(!matches_untitled_pin(&old, &changed));
        // A pin with a title (stored since) is compared as it is.
        assert!(!matches_untitled_pin(&pin_of(&tool), &tool));
        let mut retitled = tool.clone();
        retitled.title = Some("Mailer".into());
        assert!(!matches_untitled_pin(&pin_of(&tool), &retitled));
    }

    #[test]
    fn each_change_is_news_once() {
        let pins = Pins::new(ToolPinning::Quarantine);
        assert!(pins.first_time("t", "d1"));
        assert!(!pins.first_time("t", "d1"));
        assert!(pins.first_time("t", "d2"));
        pins.forget("t");
        assert!(pins.first_time("t", "d2"));
    }
}
