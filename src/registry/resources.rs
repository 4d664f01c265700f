//! Resources across servers: merged pages of resources and templates, reads routed by URI, and
//! per-agent subscriptions kept in the store. `resource_allow_list` applies to each, and a URI it
//! leaves out looks exactly like one no server offers.

use super::relay::Relayed;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ReadResourceResult, Resource, ResourceContents, ResourceTemplate};
use serde_json::Value;

use super::merge::{self, Cursor};
use super::replicas::Op;
use super::{Error, Registry, ServerEntry, naming, template};
use crate::a2e::{ContentKind, McpResource, McpResourceContent, McpResourceTemplate};
use crate::store::StoreError;
use crate::upstream::{CallError, Connection, Lists};

impl Registry {
    /// A page of resources as the servers listed them, each with its server's id.
    pub async fn resources_page(
        &self,
        agent: &str,
        server_id: &str,
        cursor: &str,
    ) -> Result<merge::MergedPage<Resource>, Error> {
        let sources = self
            .sources(agent, server_id, |c| c.resources.is_some(), "resources")
            .await?;
        merge::page(
            &sources,
            Cursor::decode(cursor)?,
            self.page_spec(server_id),
            merge::Readers {
                here: |conn: Arc<Connection>, cursor, timeout| async move {
                    conn.list_resources(cursor, timeout)
                        .await
                        .map(|r| (r.resources, r.next_cursor))
                },
                remote: |holder: String, server_id, cursor, timeout| async move {
                    let listing = merge::Listing::Resources;
                    self.forward_list(&holder, listing, server_id, cursor, timeout)
                        .await
                },
                keep: |entry: &ServerEntry, resource: &Resource| {
                    naming::allowed(&entry.config().resource_allow_list, &resource.uri)
                },
            },
        )
        .await
    }

    /// A page of resource templates as the servers listed them, each with its server's id.
    pub async fn templates_page(
        &self,
        agent: &str,
        server_id: &str,
        cursor: &str,
    ) -> Result<merge::MergedPage<ResourceTemplate>, Error> {
        let sources = self
            .sources(agent, server_id, |c| c.resources.is_some(), "resources")
            .await?;
        merge::page(
            &sources,
            Cursor::decode(cursor)?,
            self.page_spec(server_id),
            merge::Readers {
                here: |conn: Arc<Connection>, cursor, timeout| async move {
                    conn.list_templates(cursor, timeout)
                        .await
                        .map(|r| (r.resource_templates, r.next_cursor))
                },
                remote: |holder: String, server_id, cursor, timeout| async move {
                    let listing = merge::Listing::Templates;
                    self.forward_list(&holder, listing, server_id, cursor, timeout)
                        .await
                },
                keep: |entry: &ServerEntry, t: &ResourceTemplate| {
                    template_allowed(&entry.config().resource_allow_list, &t.uri_template)
                },
            },
        )
        .await
    }

    /// The server and upstream URI a resource is asked for by: as given, or, for a URI qualified
    /// with a registered server (`mcp-bridge://{server_id}/{uri}`, as `/mcp` shows a URI several
    /// servers offer, or `ui://{server_id}/{rest}`, as every `ui://` URI is shown), that server
    /// and the URI inside. A `server_id` beside it must be the same.
    ///
    /// `Tools::resolve_item` calls it before the caller's policies are applied; reads, subscriptions
    /// and completions take the canonical (server, URI) it gives and never unwrap a URI again,
    /// so a policy always judges the resource that is reached.
    pub fn address_uri<'a>(
        &self,
        server_id: &'a str,
        uri: &'a str,
    ) -> (&'a str, std::borrow::Cow<'a, str>) {
        let names = |id: &str| (server_id.is_empty() || server_id == id) && self.get(id).is_ok();
        if let Some((id, inner)) = naming::split_uri(uri)
            && names(id)
        {
            return (id, inner.into());
        }
        match naming::split_ui(uri) {
            Some((id, inner)) if names(id) => (id, inner.into()),
            _ => (server_id, uri.into()),
        }
    }

    /// Whether server `server_id` lists the template `uri_template` (allow list applied): what
    /// a completion of a template's argument is routed by.
    pub fn offers_template(&self, server_id: &str, uri_template: &str) -> bool {
        self.get(server_id).is_ok_and(|entry| {
            template_allowed(&entry.config().resource_allow_list, uri_template)
                && entry
                    .lists()
                    .templates
                    .iter()
                    .any(|t| t.uri_template == uri_template)
        })
    }

    /// Whether server `server_id` offers `uri`: lists it, or has a template that produces it
    /// (allow list applied).
    pub fn offers_uri(&self, server_id: &str, uri: &str) -> bool {
        self.get(server_id).is_ok_and(|entry| {
            let lists = entry.lists();
            allowed(&entry, uri)
                && (lists.resources.iter().any(|r| r.uri == uri)
                    || lists
                        .templates
                        .iter()
                        .any(|t| template::matches(&t.uri_template, uri)))
        })
    }

    /// The resource URIs and the template URIs that more than one ready server offers (allow
    /// lists applied), from the catalogue as last synced.
    pub fn shared_uris(
        &self,
    ) -> (
        std::collections::HashSet<String>,
        std::collections::HashSet<String>,
    ) {
        let mut uris: std::collections::HashMap<String, usize> = Default::default();
        let mut templates: std::collections::HashMap<String, usize> = Default::default();
        for entry in self.entries() {
            if !entry.reachable() {
                continue;
            }
            let lists = entry.lists();
            let list = &entry.config().resource_allow_list;
            let mut seen = std::collections::HashSet::new();
            for r in lists
                .resources
                .iter()
                .filter(|r| naming::allowed(list, &r.uri))
            {
                if seen.insert(r.uri.as_str()) {
                    *uris.entry(r.uri.clone()).or_default() += 1;
                }
            }
            let mut seen = std::collections::HashSet::new();
            for t in lists
                .templates
                .iter()
                .filter(|t| template_allowed(list, &t.uri_template))
            {
                if seen.insert(t.uri_template.as_str()) {
                    *templates.entry(t.uri_template.clone()).or_default() += 1;
                }
            }
        }
        let shared = |counts: std::collections::HashMap<String, usize>| {
            counts
                .into_iter()
                .filter(|(_, n)| *n > 1)
                .map(|(u, _)| u)
                .collect()
        };
        (shared(uris), shared(templates))
    }

    /// The id of the server a read of `uri` goes to (see `route_uri`), for what must know it
    /// before the read (the interceptors).
    pub fn resource_server(&self, server_id: &str, uri: &str) -> Result<String, Error> {
        Ok(self.route_uri(server_id, uri)?.id.clone())
    }

    /// The server a resource request goes to: the named one, else the one that listed the URI,
    /// else the one with a template that produces it.
    fn route_uri(&self, server_id: &str, uri: &str) -> Result<Arc<ServerEntry>, Error> {
        if uri.is_empty() {
            return Err(Error::Invalid("`uri` is required".into()));
        }
        let listed = |entry: &ServerEntry, lists: &Lists| {
            lists.resources.iter().any(|r| r.uri == uri) && allowed(entry, uri)
        };
        let templated = |entry: &ServerEntry, lists: &Lists| {
            lists
                .templates
                .iter()
                .any(|t| template::matches(&t.uri_template, uri))
                && allowed(entry, uri)
        };
        let not_found = || Error::ResourceNotFound(uri.to_owned());
        let entry = match self.route(server_id, listed, not_found()) {
            Err(Error::ResourceNotFound(_)) => self.route(server_id, templated, not_found())?,
            other => other?,
        };
        if !allowed(&entry, uri) {
            return Err(not_found());
        }
        Ok(entry)
    }

    /// A read's result as REST answers it: the contents of server `server_id`, their URIs as
    /// the catalogue shows them.
    pub fn resource_contents(
        server_id: &str,
        result: ReadResourceResult,
    ) -> Vec<McpResourceContent> {
        result
            .contents
            .into_iter()
            .map(content_model)
            .map(|mut c| {
                c.uri = shown_uri(server_id, std::mem::take(&mut c.uri));
                c
            })
            .collect()
    }

    /// Reads a resource for `agent`; answers the server it came from and its result as MCP
    /// has it.
    pub async fn read_resource_raw(
        &self,
        agent: &str,
        server_id: &str,
        uri: &str,
    ) -> Result<(String, ReadResourceResult), Error> {
        let entry = self.route_uri(server_id, uri)?;
        self.settle(&entry).await;
        if let Some(holder) = entry.held_elsewhere() {
            let op = Op::ReadResource {
                agent: agent.to_owned(),
                server_id: entry.id.clone(),
                uri: uri.to_owned(),
            };
            match self.relay_safe(&entry, holder, op).await {
                Relayed::Done(answer) => return answer,
                Relayed::HereNow => {}
            }
        }
        let conn = entry
            .ready_for(agent, |c| c.resources.is_some(), "resources")
            .await?;
        let timeout = Duration::from_secs(entry.config().timeout);
        let result = conn
            .read_resource(uri, timeout)
            .await
            .map_err(|error| match error {
                CallError::Rejected {
                    code: -32002 | -32602,
                    ..
                } => Error::ResourceNotFound(uri.to_owned()),
                error => Error::Upstream {
                    what: format!("reading \"{uri}\""),
                    error,
                },
            })?;
        Ok((entry.id.clone(), result))
    }

    /// Subscribes `agent_id` to a resource; answers the server it was routed to.
    pub async fn subscribe(
        &self,
        agent_id: &str,
        server_id: &str,
        uri: &str,
    ) -> Result<String, Error> {
        let entry = self.route_uri(server_id, uri)?;
        if let Some(holder) = entry.held_elsewhere() {
            let op = Op::Subscribe {
                agent: agent_id.to_owned(),
                server_id: entry.id.clone(),
                uri: uri.to_owned(),
            };
            // Subscribing twice is harmless: sent again to the next holder when this one dies.
            match self.relay_safe(&entry, holder, op).await {
                Relayed::Done(answer) => return answer,
                Relayed::HereNow => {}
            }
        }
        let conn = entry
            .ready_for(
                agent_id,
                |c| c.resources.as_ref().and_then(|r| r.subscribe) == Some(true),
                "resource subscriptions",
            )
            .await?;
        let added = self
            .store
            .insert_subscription(agent_id, &entry.id, uri)
            .await?;
        let timeout = Duration::from_secs(entry.config().timeout);
        if let Err(error) = conn.subscribe(uri, timeout).await {
            if added {
                self.store
                    .delete_subscription(agent_id, &entry.id, uri)
                    .await?;
            }
            return Err(Error::Upstream {
                what: format!("subscribing to \"{uri}\""),
                error,
            });
        }
        Ok(entry.id.clone())
    }

    /// Ends `agent_id`'s subscription; the server stops being asked once no agent follows the URI.
    pub async fn unsubscribe(
        &self,
        agent_id: &str,
        server_id: &str,
        uri: &str,
    ) -> Result<String, Error> {
        let (server_id, uri) = self.address_uri(server_id, uri);
        let uri = uri.as_ref();
        let server_id = match server_id {
            "" => {
                let mut servers = self.store.subscription_servers(agent_id, uri).await?;
                match servers.len() {
                    0 => {
                        return Err(Error::NotFound(format!(
                            "you have no subscription to \"{uri}\""
                        )));
                    }
                    1 => servers.remove(0),
                    _ => {
                        return Err(Error::Conflict(format!(
                            "you follow \"{uri}\" on several servers ({}); say which with `server_id`",
                            servers.join(", ")
                        )));
                    }
                }
            }
            named => named.to_owned(),
        };
        self.store
            .delete_subscription(agent_id, &server_id, uri)
            .await
            .map_err(|e| match e {
                StoreError::NotFound => Error::NotFound(format!(
                    "you have no subscription to \"{uri}\" on server \"{server_id}\""
                )),
                other => other.into(),
            })?;
        // On a `per_agent` server the subscription was the agent's own, on its own session.
        if let Ok(entry) = self.get(&server_id) {
            let unfollowed =
                entry.per_agent() || self.store.subscriber_count(&server_id, uri).await? == 0;
            let holder = entry.held_elsewhere();
            if let (true, Some(holder)) = (unfollowed, holder) {
                let op = Op::Unsubscribe {
                    agent: agent_id.to_owned(),
                    server_id: server_id.clone(),
                    uri: uri.to_owned(),
                };
                let timeout = Duration::from_secs(entry.config().timeout);
                if let Err(error) = self.forward::<Value>(&holder, op, timeout).await {
                    tracing::warn!(%server_id, %uri, %error, "upstream unsubscribe failed");
                }
            } else if unfollowed && let Some(conn) = entry.session_of(agent_id).await {
                let timeout = Duration::from_secs(entry.config().timeout);
                if let Err(error) = conn.unsubscribe(uri, timeout).await {
                    tracing::warn!(%server_id, %uri, %error, "upstream unsubscribe failed");
                }
            }
        }
        Ok(server_id)
    }
}

fn allowed(entry: &ServerEntry, uri: &str) -> bool {
    naming::allowed(&entry.config().resource_allow_list, uri)
}

/// Whether a template can produce a URI the allow list lets through.
pub fn template_allowed(list: &[String], uri_template: &str) -> bool {
    let literal = template::literal_prefix(uri_template);
    list.is_empty()
        || list.iter().any(|entry| match entry.strip_suffix('*') {
            Some(prefix) => literal.starts_with(prefix) || prefix.starts_with(literal),
            None => entry == uri_template || template::matches(uri_template, entry),
        })
}

fn annotations(value: Option<impl serde::Serialize>) -> std::collections::BTreeMap<String, Value> {
    value
        .and_then(|a| serde_json::to_value(a).ok())
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default()
}

/// A `ui://` URI of `server_id` in the form the bridge shows it; any other URI as it is.
pub fn shown_uri(server_id: &str, uri: String) -> String {
    naming::qualify_ui(server_id, &uri).unwrap_or(uri)
}

/// A listed resource as an A2E MCPResource (its `ui://` URI qualified with its server).
pub fn resource_model(server_id: String, r: Resource) -> McpResource {
    McpResource {
        uri: shown_uri(&server_id, r.uri),
        meta: r.meta.map(|m| Value::Object(m.0)),
        name: r.name,
        description: r.description.unwrap_or_default(),
        mime_type: r.mime_type.unwrap_or_default(),
        server_id,
        annotations: annotations(r.annotations),
    }
}

/// A listed resource template as an A2E MCPResourceTemplate.
pub fn template_model(server_id: String, t: ResourceTemplate) -> McpResourceTemplate {
    McpResourceTemplate {
        uri_template: shown_uri(&server_id, t.uri_template),
        meta: t.meta.map(|m| Value::Object(m.0)),
        name: t.name,
        description: t.description.unwrap_or_default(),
        mime_type: t.mime_type.unwrap_or_default(),
        server_id,
        annotations: annotations(t.annotations),
    }
}

/// One block of contents as MCPResourceContent: text, or base64 `blob`.
fn content_model(contents: ResourceContents) -> McpResourceContent {
    // Read through the wire form, which every variant (present and future) has.
    let value = serde_json::to_value(&contents).unwrap_or_default();
    let field = |name: &str| value.get(name).and_then(Value::as_str).map(str::to_owned);
    let blob = field("blob");
    let kind = if blob.is_some() {
        ContentKind::Blob
    } else {
        ContentKind::Text
    };
    McpResourceContent {
        uri: field("uri").unwrap_or_default(),
        mime_type: field("mimeType").unwrap_or_else(|| {
            if blob.is_some() {
                "application/octet-stream"
            } else {
                "text/plain"
            }
            .into()
        }),
        text: field("text").unwrap_or_default(),
        blob: blob.unwrap_or_default(),
        kind,
        meta: value.get("_meta").cloned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_pass_the_allow_list_when_they_can_produce_an_allowed_uri() {
        let list = vec![
            "demo://resource/dynamic/*".to_owned(),
            "note://fixed/1".to_owned(),
        ];
        assert!(template_allowed(&[], "anything://{x}"));
        assert!(template_allowed(&list, "demo://resource/dynamic/text/{id}"));
        assert!(template_allowed(&list, "demo://{kind}"));
        assert!(!template_allowed(&list, "other://{x}"));
        assert!(template_allowed(&list, "note://fixed/{id}"));
        assert!(!template_allowed(&list, "note://loose/{id}"));
    }
}
