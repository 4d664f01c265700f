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
    /// Calls of these tools wait for a person's approval (see [`ApproveRule`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approve: Option<ApproveRule>,
}

/// Who may decide on a held call: every criterion given must hold (at least one is given).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Approvers {
    /// Globs on the approver's `sub`; one must match.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub subs: Vec<String>,
    /// Roles of the approver's token; it must hold one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<String>,
}

/// A call of a matching caller to one of `tools` becomes a task in `input_required` held for
/// a person: an approver decides on it (`POST /v1/approvals/{task_id}`) before `expires`, and
/// only an approval runs it, once, with exactly the arguments held.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ApproveRule {
    /// Globs on catalogue names (`ev__get-sum`, `github__delete_*`).
    pub tools: Vec<String>,
    /// Who may approve or deny (never the caller itself approving its own call).
    pub approvers: Approvers,
    /// How long a held call waits for a decision: `30s`, `10m`, `2h` (1 s to 24 h).
    #[schema(example = "10m")]
    pub expires: String,
}

/// A call held for approval, as an approver sees it (`GET /v1/approvals`, and the
/// `bridge/approval_required` push).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(default)]
pub struct Approval {
    /// The caller's task holding the call.
    pub task_id: String,
    /// The calling agent (`sub`).
    pub caller: String,
    /// The tool as the caller named it.
    pub tool: String,
    /// The toolset it was called through (empty: the catalogue).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub toolset: String,
    /// The arguments held, exactly as they will be sent.
    #[schema(value_type = HashMap<String, Value>)]
    pub arguments: serde_json::Map<String, Value>,
    /// Hex SHA-256 of the arguments' canonical JSON (keys sorted, no spaces): a decision names
    /// it, so that it decides on exactly these arguments.
    pub args_sha256: String,
    /// The policy that holds the call.
    pub policy: String,
    /// Hex SHA-256 (first 16 digits) of that policy's JSON when the call was held.
    pub policy_version: String,
    /// Seconds since the Unix epoch.
    pub created_at: f64,
    /// After this, the call ends `failed` (`forbidden`) and no decision is taken.
    pub expires_at: f64,
}

/// `GET /v1/approvals`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
pub struct ApprovalList {
    /// The held calls the caller may decide on, oldest first.
    pub approvals: Vec<Approval>,
}

/// What an approver decides.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    #[default]
    Approve,
    Deny,
}

/// `POST /v1/approvals/{task_id}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ApprovalDecision {
    pub decision: Decision,
    /// The `args_sha256` of the held call decided on; another is 409 and nothing runs.
    pub args_sha256: String,
    /// Why (a denial's reason is the failed task's message).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
}

/// The answer to a decision: the caller's task, `working` once approved (its result follows on
/// the caller's `/v1/tasks/{task_id}`), `failed` once denied.
#[derive(Debug, Clone, Default, Serialize, Deserialize, ToSchema)]
pub struct ApprovalDecided {
    pub task_id: String,
    pub decision: Decision,
    pub task: crate::a2e::TaskInfo,
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

/// Hex SHA-256 of `data`.
pub fn sha256_hex(data: &[u8]) -> String {
    hex::encode(ring::digest::digest(&ring::digest::SHA256, data))
}

/// The hex SHA-256 of arguments as an approval binds them: of their canonical JSON (object
/// keys sorted at every level, no whitespace), so that the same arguments always hash alike
/// whatever order a client sent them in.
pub fn args_sha256(arguments: &serde_json::Map<String, Value>) -> String {
    let mut text = String::new();
    canonical(&Value::Object(arguments.clone()), &mut text);
    sha256_hex(text.as_bytes())
}

fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod approval_tests {
    use super::*;

    #[test]
    fn arguments_hash_alike_in_any_key_order() {
        let a: serde_json::Map<String, Value> =
            serde_json::from_str(r#"{"b": 2, "a": {"y": [1, {"d": 1, "c": 2}], "x": null}}"#)
                .unwrap();
        let b: serde_json::Map<String, Value> =
            serde_json::from_str(r#"{"a": {"x": null, "y": [1, {"c": 2, "d": 1}]}, "b": 2}"#)
                .unwrap();
        assert_eq!(args_sha256(&a), args_sha256(&b));
        let mut text = String::new();
        canonical(&Value::Object(a), &mut text);
        assert_eq!(text, r#"{"a":{"x":null,"y":[1,{"c":2,"d":1}]},"b":2}"#);
        assert_eq!(
            args_sha256(&serde_json::Map::new()),
            sha256_hex(b"{}"),
            "no arguments are the empty object"
        );
    }
}
