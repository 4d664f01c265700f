//! What a caller is shown when it lists: the tools of a scope (in full for `/mcp`, in pages of
//! the catalogue for REST, or ranked by a search) and the merged pages of resources, templates
//! and prompts, each after its allow lists and the caller's policies. REST and `/mcp` both list
//! through here, so what one shows a caller the other does too; where they differ on purpose
//! (REST's `server_id`, `source` and `include=app`, `/mcp`'s names) the caller says so.

use rmcp::model::{Prompt, Resource, ResourceTemplate};

use super::{NoToolset, Scope, Tools, app_only, meta};
use crate::a2e::{ToolInfo, ToolSource};
use crate::access::toolsets::Item;
use crate::access::{Kind, View};
use crate::caller::Caller;
use crate::naming;
use crate::registry::{self, MergedPage};

/// Most tools one page of the catalogue holds.
pub const PAGE_SIZE: usize = 500;

/// Which of the tools a caller sees a listing keeps. REST narrows by server and source, and
/// keeps app-only tools (MCP Apps tools whose `_meta.ui.visibility` leaves out `"model"`) only
/// with `include=app`; `/mcp` keeps them all, as the extension makes its host keep them from
/// its model; the meta-tools serve a model.
#[derive(Debug, Clone, Copy)]
pub struct ToolFilter<'a> {
    /// Only this server's tools; "" for every server's and the bridge's own.
    pub server_id: &'a str,
    pub source: Option<ToolSource>,
    /// App-only tools too.
    pub apps: bool,
}

impl ToolFilter<'_> {
    /// Every tool the caller sees, as an MCP host is shown them.
    pub const HOST: ToolFilter<'static> = ToolFilter {
        server_id: "",
        source: None,
        apps: true,
    };
    /// What a model may be shown: every tool but the app-only ones.
    pub const MODEL: ToolFilter<'static> = ToolFilter {
        server_id: "",
        source: None,
        apps: false,
    };

    /// Whether the listing keeps `tool`.
    pub fn keeps(&self, tool: &ToolInfo) -> bool {
        (self.server_id.is_empty() || tool.server_id == self.server_id)
            && self.source.is_none_or(|source| tool.source == source)
            && (self.apps || !app_only(tool))
    }

    /// Whether it keeps every tool, so that nothing need be asked of each.
    fn keeps_all(&self) -> bool {
        self.server_id.is_empty() && self.source.is_none() && self.apps
    }
}

/// A page of the catalogue.
#[derive(Debug, Default)]
pub struct Page {
    pub tools: Vec<ToolInfo>,
    /// Opaque; empty on the last page.
    pub next_cursor: String,
}

impl Tools {
    /// What `caller` sees of `scope` that `filter` keeps, as listed: its tools, or the
    /// meta-tools of a deferred one.
    pub fn visible(
        &self,
        caller: &Caller,
        scope: Scope<'_>,
        filter: ToolFilter<'_>,
    ) -> Result<Vec<Item>, NoToolset> {
        let members = self.members(scope)?;
        if self.deferred(scope) {
            let mut items = meta::items();
            items.retain(|item| filter.keeps(&item.info));
            return Ok(items);
        }
        let view = self.access.view(caller);
        Ok(members
            .visible(&view)
            .filter(|item| filter.keeps(&item.info))
            .cloned()
            .map(|mut item| {
                self.fit_item(&view, &mut item);
                item
            })
            .collect())
    }

    /// Up to `limit` tools of `scope` that `caller` sees and `filter` keeps, best match of
    /// `query` first.
    pub async fn search(
        &self,
        caller: &Caller,
        scope: Scope<'_>,
        query: &str,
        limit: usize,
        filter: ToolFilter<'_>,
    ) -> Result<Vec<ToolInfo>, NoToolset> {
        let members = self.members(scope)?;
        if !members.indexed() {
            // A large catalogue's index takes a while: off the async workers.
            let building = members.clone();
            let _ = tokio::task::spawn_blocking(move || {
                building.index();
            })
            .await;
        }
        let view = self.access.view(caller);
        let kept = |item: &Item| filter.keeps(&item.info);
        let keep: Option<&dyn Fn(&Item) -> bool> = match filter.keeps_all() {
            true => None,
            false => Some(&kept),
        };
        Ok(members
            .search(&view, query, limit, keep)
            .into_iter()
            .map(|item| {
                let mut info = item.info.clone();
                self.fit_info(&view, &mut info);
                info
            })
            .collect())
    }

    /// The page after `cursor` of the catalogue's tools that `filter` keeps, in (server id,
    /// tool) order, the agent-bridge tools closing the last page. A cursor names the last
    /// server tool of the previous page, so a server that joins or leaves between pages moves
    /// nothing else. What `caller`'s policies hide is left out after the page is cut (a page
    /// may then hold fewer tools).
    pub fn page(
        &self,
        caller: &Caller,
        filter: ToolFilter<'_>,
        cursor: &str,
    ) -> Result<Page, registry::Error> {
        let members = self.catalogue();
        let (servers, bridge): (Vec<&Item>, Vec<&Item>) =
            members.items.iter().partition(|item| item.owner.is_some());
        let mut page = Page::default();
        let mut tools: Vec<&Item> = Vec::new();
        if filter.source != Some(ToolSource::A2a) {
            let after = decode_cursor(cursor).map_err(registry::Error::Invalid)?;
            (tools, page.next_cursor) = cut(&servers, filter.server_id, after.as_ref(), PAGE_SIZE);
        }
        if filter.source != Some(ToolSource::Mcp)
            && filter.server_id.is_empty()
            && page.next_cursor.is_empty()
        {
            tools.extend(bridge);
        }
        let view = self.access.view(caller);
        page.tools = tools
            .into_iter()
            .filter(|item| filter.keeps(&item.info) && shows(&view, item))
            .map(|item| {
                let mut info = item.info.clone();
                self.fit_info(&view, &mut info);
                info
            })
            .collect();
        Ok(page)
    }

    /// A page of the resources of every ready server (or of `server_id`) that `caller` sees,
    /// as the servers listed them.
    pub async fn resources(
        &self,
        caller: &Caller,
        server_id: &str,
        cursor: &str,
    ) -> Result<MergedPage<Resource>, registry::Error> {
        let page = self.registry.resources_page(&caller.id, server_id, cursor);
        Ok(self.only_visible(caller, Kind::Resource, page.await?, |r| &r.uri))
    }

    /// [`Tools::resources`] for resource templates.
    pub async fn templates(
        &self,
        caller: &Caller,
        server_id: &str,
        cursor: &str,
    ) -> Result<MergedPage<ResourceTemplate>, registry::Error> {
        let page = self.registry.templates_page(&caller.id, server_id, cursor);
        Ok(self.only_visible(caller, Kind::Resource, page.await?, |t| &t.uri_template))
    }

    /// [`Tools::resources`] for prompts.
    pub async fn prompts(
        &self,
        caller: &Caller,
        server_id: &str,
        cursor: &str,
    ) -> Result<MergedPage<Prompt>, registry::Error> {
        let page = self.registry.prompts_page(&caller.id, server_id, cursor);
        Ok(self.only_visible(caller, Kind::Prompt, page.await?, |p| p.name.as_ref()))
    }

    /// `page` without what `caller`'s policies hide, judged by each entry's canonical form
    /// (`item`: its upstream URI or name), as a read or a get of it is.
    fn only_visible<T>(
        &self,
        caller: &Caller,
        kind: Kind,
        mut page: MergedPage<T>,
        item: impl Fn(&T) -> &str,
    ) -> MergedPage<T> {
        let view = self.access.view(caller);
        if !view.sees_everything() {
            page.items
                .retain(|(server_id, it)| self.shows_item(&view, kind, server_id, item(it)));
        }
        page
    }
}

/// Up to `size` of `servers` (server tools in catalogue order) after the one `after` names (a
/// server and tool, which may have gone since), only `server_id`'s when it is not empty; and the
/// cursor of the next page, empty on the last.
fn cut<'a>(
    servers: &[&'a Item],
    server_id: &str,
    after: Option<&(String, String)>,
    size: usize,
) -> (Vec<&'a Item>, String) {
    let mut tools = Vec::new();
    let mut last = "";
    for &item in servers {
        let Some(at) = naming::split(&item.full) else {
            continue;
        };
        if (!server_id.is_empty() && item.info.server_id != server_id)
            || after.is_some_and(|(id, tool)| at <= (id.as_str(), tool.as_str()))
        {
            continue;
        }
        if tools.len() == size {
            return (tools, encode_cursor(last));
        }
        tools.push(item);
        // The full name, not a short alias: the cursor must split into (server, tool).
        last = &item.full;
    }
    (tools, String::new())
}

/// Whether `view` shows a catalogue member.
fn shows(view: &View, item: &Item) -> bool {
    view.tool(item.owner.as_deref(), &item.full)
}

fn encode_cursor(last_name: &str) -> String {
    hex::encode(last_name)
}

fn decode_cursor(cursor: &str) -> Result<Option<(String, String)>, String> {
    if cursor.is_empty() {
        return Ok(None);
    }
    let invalid = || format!("`cursor` \"{cursor}\" is not a cursor this service gave out");
    let bytes = hex::decode(cursor).map_err(|_| invalid())?;
    let name = String::from_utf8(bytes).map_err(|_| invalid())?;
    let (id, tool) = naming::split(&name).ok_or_else(invalid)?;
    Ok(Some((id.to_owned(), tool.to_owned())))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::Map;

    use super::*;

    #[test]
    fn cursors_round_trip_and_refuse_garbage() {
        let cursor = encode_cursor("fs__read_file");
        assert_eq!(
            decode_cursor(&cursor).unwrap(),
            Some(("fs".into(), "read_file".into()))
        );
        assert_eq!(decode_cursor("").unwrap(), None);
        assert!(decode_cursor("zz").is_err());
        assert!(decode_cursor(&hex::encode("nosplit")).is_err());
    }

    fn member(full: &str) -> Item {
        let (server_id, _) = naming::split(full).unwrap();
        Item {
            owner: Some(String::new()),
            full: full.to_owned(),
            info: ToolInfo {
                name: full.to_owned(),
                server_id: server_id.to_owned(),
                ..Default::default()
            },
            definition: rmcp::model::Tool::new(full.to_owned(), "", Arc::new(Map::new())),
        }
    }

    fn names(tools: &[&Item]) -> Vec<String> {
        tools.iter().map(|item| item.full.clone()).collect()
    }

    #[test]
    fn pages_walk_the_servers_tools_in_order_and_resume_after_the_last() {
        let items: Vec<Item> = ["a__x", "a__y", "b__x", "b__z"].map(member).into();
        let servers: Vec<&Item> = items.iter().collect();
        let (first, next) = cut(&servers, "", None, 2);
        assert_eq!(names(&first), ["a__x", "a__y"]);
        let after = decode_cursor(&next).unwrap();
        let (rest, next) = cut(&servers, "", after.as_ref(), 2);
        assert_eq!(
            (names(&rest), next),
            (vec!["b__x".into(), "b__z".into()], String::new())
        );
        // One server's tools only; and a cursor whose tool (or server) has gone resumes after it.
        let (only_b, next) = cut(&servers, "b", None, 1);
        assert_eq!(
            (names(&only_b), next.is_empty()),
            (vec!["b__x".into()], false)
        );
        let gone = Some(("a".to_owned(), "xx".to_owned()));
        assert_eq!(
            names(&cut(&servers, "", gone.as_ref(), 9).0),
            ["a__y", "b__x", "b__z"]
        );
        let gone = Some(("aa".to_owned(), "q".to_owned()));
        assert_eq!(
            names(&cut(&servers, "", gone.as_ref(), 9).0),
            ["b__x", "b__z"]
        );
    }

    #[test]
    fn filters_keep_what_their_listing_shows() {
        let mut model = ToolInfo {
            name: "fs__read".into(),
            server_id: "fs".into(),
            ..Default::default()
        };
        let mut app = model.clone();
        app.meta = Some(serde_json::json!({"ui": {"visibility": ["app"]}}));
        assert!(ToolFilter::HOST.keeps(&app) && ToolFilter::MODEL.keeps(&model));
        assert!(!ToolFilter::MODEL.keeps(&app));
        let other_server = ToolFilter {
            server_id: "git",
            ..ToolFilter::HOST
        };
        assert!(!other_server.keeps(&model));
        model.source = ToolSource::A2a;
        let mcp_only = ToolFilter {
            source: Some(ToolSource::Mcp),
            ..ToolFilter::HOST
        };
        assert!(!mcp_only.keeps(&model));
    }
}
