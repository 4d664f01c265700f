//! The tools a scope shows, the whole catalogue or one toolset (its members renamed and
//! re-described as it says), and the search index over them; filtered per caller by its view.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::View;
use super::policy::Globs;
use super::search::Index;
use crate::a2e::{ToolInfo, Toolset};

/// One tool of a scope.
#[derive(Debug, Clone)]
pub struct Item {
    /// The owner of its server; `None` for the bridge's own tools.
    pub owner: Option<String>,
    /// The name policies and toolsets match: `{server_id}__{tool}`, or a bridge tool's name.
    pub full: String,
    /// As the scope lists it.
    pub info: ToolInfo,
    /// As `/mcp` shows it (same name and description as `info`).
    pub definition: rmcp::model::Tool,
}

/// The tools of a scope, in catalogue order, with their index built on first search.
#[derive(Default)]
pub struct Members {
    pub items: Vec<Item>,
    by_name: HashMap<String, usize>,
    index: OnceLock<Index>,
}

impl Members {
    /// `items`; a name shown twice keeps its first.
    pub fn new(items: Vec<Item>) -> Self {
        let mut by_name = HashMap::with_capacity(items.len());
        let mut kept = Vec::with_capacity(items.len());
        for item in items {
            if by_name.contains_key(&item.info.name) {
                tracing::warn!(tool = %item.full, name = %item.info.name, "left out: the name is taken");
                continue;
            }
            by_name.insert(item.info.name.clone(), kept.len());
            kept.push(item);
        }
        Self {
            items: kept,
            by_name,
            index: OnceLock::new(),
        }
    }

    /// The members of `toolset` among these: those a glob of it takes in, renamed and
    /// re-described as it says.
    pub fn of_toolset(&self, toolset: &Toolset) -> Members {
        let globs = Globs::new(&toolset.tools);
        let items = self
            .items
            .iter()
            .filter(|item| globs.matches(&item.full))
            .map(|item| {
                let mut item = item.clone();
                if let Some(alias) = toolset.rename.get(&item.full) {
                    item.info.name = alias.clone();
                    item.definition.name = alias.clone().into();
                }
                if let Some(text) = toolset.descriptions.get(&item.full) {
                    item.info.description = text.clone();
                    item.definition.description = Some(text.clone().into());
                }
                item
            })
            .collect();
        Members::new(items)
    }

    /// The members `view` may see.
    pub fn visible<'a>(&'a self, view: &'a View) -> impl Iterator<Item = &'a Item> + 'a {
        self.items
            .iter()
            .filter(move |item| view.tool(item.owner.as_deref(), &item.full))
    }

    /// The member shown as `name`, whoever asks.
    pub fn get(&self, name: &str) -> Option<&Item> {
        self.by_name.get(name).map(|&i| &self.items[i])
    }

    /// The member shown as `name`, if `view` may see it.
    pub fn find(&self, view: &View, name: &str) -> Option<&Item> {
        let item = &self.items[*self.by_name.get(name)?];
        view.tool(item.owner.as_deref(), &item.full).then_some(item)
    }

    /// Whether the search index is built (building it takes about 30 ms per 1,000 tools).
    pub fn indexed(&self) -> bool {
        self.index.get().is_some()
    }

    /// The search index, built on first use.
    pub fn index(&self) -> &Index {
        self.index.get_or_init(|| {
            let infos: Vec<ToolInfo> = self.items.iter().map(|i| i.info.clone()).collect();
            Index::build(&infos)
        })
    }

    /// Up to `limit` members `view` may see and `keep` keeps, best match of `query` first.
    pub fn search(
        &self,
        view: &View,
        query: &str,
        limit: usize,
        keep: Option<&dyn Fn(&Item) -> bool>,
    ) -> Vec<&Item> {
        let index = self.index();
        // Ranked over every member, then narrowed to what the caller sees.
        let wanted = match view.sees_everything() && keep.is_none() {
            true => limit,
            false => self.items.len(),
        };
        index
            .search(query, wanted)
            .into_iter()
            .map(|(position, _)| &self.items[position])
            .filter(|item| view.tool(item.owner.as_deref(), &item.full))
            .filter(|item| keep.is_none_or(|keep| keep(item)))
            .take(limit)
            .collect()
    }
}
