//! Wire types of who sees what: access policies and toolsets (virtual servers), as the REST API
//! and the config file carry them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// Which callers a policy applies to. Every criterion given must hold; an empty match applies
/// to everyone.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct PolicyMatch {
    /// Globs on the token's `sub` (`team-a-*`); one must match.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub subs: Vec<String>,
    /// Roles of the token's `roles` claim; the caller must hold one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<String>,
    /// Claims the token must carry with these values (a claim that is a list must contain the
    /// value; a string value is a glob on a string claim).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    #[schema(value_type = HashMap<String, Value>)]
    pub claims: BTreeMap<String, Value>,
}

/// Globs per kind: tools and prompts by namespaced name (`github__*`, `*__delete_*`), resources
/// by URI (`file:///srv/*`). `*` matches any run of characters, `?` one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct AccessRules {
    /// Absent: this rule says nothing about tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompts: Option<Vec<String>>,
}

/// An access policy: whom it applies to, what it lets them see and what it hides. Deny wins;
/// a policy with no `allow` only denies.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Policy {
    #[serde(rename = "match")]
    pub matches: PolicyMatch,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow: Option<AccessRules>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deny: Option<AccessRules>,
}

/// Where a policy or toolset was defined.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DefinedIn {
    /// Through the API (`PUT`): stored, changed and removed there.
    #[default]
    Api,
    /// In the config file: changed there, read at start.
    Config,
}

/// A policy with its name, as listed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default)]
pub struct NamedPolicy {
    pub name: String,
    #[serde(flatten)]
    pub policy: Policy,
    pub defined_in: DefinedIn,
}

/// `GET /v1/policies`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
pub struct PolicyList {
    /// By name.
    pub policies: Vec<NamedPolicy>,
    /// `MCP_BRIDGE_ACCESS_DEFAULT`: what a caller no `allow` rule matches sees, `allow` or `deny`.
    pub access_default: String,
}

/// A toolset (virtual server): the catalogue tools its globs name, renamed and described as it
/// says, served at `/mcp/toolsets/{name}` and as `GET /v1/tools?toolset={name}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Toolset {
    /// Globs on catalogue names (`github__*`, `agent_send`); a tool is in when one matches.
    pub tools: Vec<String>,
    /// Catalogue name → the name the toolset shows (and is called by).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub rename: BTreeMap<String, String>,
    /// Catalogue name → the description the toolset shows instead of the server's.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub descriptions: BTreeMap<String, String>,
    /// Show only the meta-tools `search_tools`, `describe_tool` and `call_tool`, so a client
    /// loads only the tools it looks for.
    pub deferred: bool,
}

/// A toolset with its name, as listed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default)]
pub struct NamedToolset {
    pub name: String,
    #[serde(flatten)]
    pub toolset: Toolset,
    pub defined_in: DefinedIn,
}

/// `GET /v1/toolsets`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
pub struct ToolsetList {
    /// By name.
    pub toolsets: Vec<NamedToolset>,
}
