//! Policies compiled for matching, and the view one caller gets of the catalogue: which tools,
//! resources and prompts it may see and use.

use std::sync::Arc;

use serde_json::Value;
use wildmatch::WildMatch;

use crate::a2e::{AccessRules, Approvers, Policy};
use crate::caller::Caller;

/// A glob list of one kind, compiled.
#[derive(Debug, Clone, Default)]
pub struct Globs(Vec<WildMatch>);

impl Globs {
    pub fn new(patterns: &[String]) -> Self {
        Self(patterns.iter().map(|p| WildMatch::new(p)).collect())
    }

    pub fn matches(&self, item: &str) -> bool {
        self.0.iter().any(|glob| glob.matches(item))
    }
}

/// One kind's rules of a policy: `None` when the rule says nothing about the kind.
#[derive(Debug, Default)]
struct Kinds {
    tools: Option<Globs>,
    resources: Option<Globs>,
    prompts: Option<Globs>,
}

impl Kinds {
    fn new(rules: Option<&AccessRules>) -> Self {
        let Some(rules) = rules else {
            return Self::default();
        };
        Self {
            tools: rules.tools.as_deref().map(Globs::new),
            resources: rules.resources.as_deref().map(Globs::new),
            prompts: rules.prompts.as_deref().map(Globs::new),
        }
    }

    fn of(&self, kind: Kind) -> Option<&Globs> {
        match kind {
            Kind::Tool => self.tools.as_ref(),
            Kind::Resource => self.resources.as_ref(),
            Kind::Prompt => self.prompts.as_ref(),
        }
    }
}

/// What a policy rule is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Tool,
    Resource,
    Prompt,
}

/// A policy's `approve` rule, compiled.
#[derive(Debug)]
pub struct Approve {
    tools: Globs,
    /// How long a held call waits for a decision.
    pub expires: std::time::Duration,
}

/// A policy ready to match callers and items.
#[derive(Debug)]
pub struct Compiled {
    subs: Globs,
    source: Policy,
    allow: Kinds,
    deny: Kinds,
    approve: Option<Approve>,
}

impl Compiled {
    pub fn new(policy: &Policy) -> Self {
        Self {
            subs: Globs::new(&policy.matches.subs),
            allow: Kinds::new(policy.allow.as_ref()),
            deny: Kinds::new(policy.deny.as_ref()),
            approve: policy.approve.as_ref().map(|rule| Approve {
                tools: Globs::new(&rule.tools),
                expires: super::parse_expires(&rule.expires)
                    .unwrap_or(std::time::Duration::from_secs(600)),
            }),
            source: policy.clone(),
        }
    }

    /// The policy as written.
    pub fn source(&self) -> &Policy {
        &self.source
    }

    /// Its `approve` rule, when it holds calls of the catalogue tool `full`.
    pub fn holds(&self, full: &str) -> Option<&Approve> {
        self.approve.as_ref().filter(|a| a.tools.matches(full))
    }

    /// Whether the policy applies to `caller`: every criterion it gives holds.
    pub fn applies_to(&self, caller: &Caller) -> bool {
        let matches = &self.source.matches;
        (matches.subs.is_empty() || self.subs.matches(&caller.id))
            && (matches.roles.is_empty() || matches.roles.iter().any(|r| caller.roles.contains(r)))
            && matches
                .claims
                .iter()
                .all(|(name, wanted)| claim_holds(caller.claims.get(name), wanted))
    }
}

/// Whether `caller` is one of `approvers`: every criterion given holds, and at least one is
/// given (an empty list of approvers names nobody).
pub fn is_approver(approvers: &Approvers, caller: &Caller) -> bool {
    (!approvers.subs.is_empty() || !approvers.roles.is_empty())
        && (approvers.subs.is_empty() || Globs::new(&approvers.subs).matches(&caller.id))
        && (approvers.roles.is_empty() || approvers.roles.iter().any(|r| caller.roles.contains(r)))
}

/// Whether a token's claim has the wanted value: equal, a glob on a string, or an element of a
/// list that is.
fn claim_holds(actual: Option<&Value>, wanted: &Value) -> bool {
    match (actual, wanted) {
        (None, _) => false,
        (Some(Value::Array(items)), wanted) if !wanted.is_array() => {
            items.iter().any(|item| claim_holds(Some(item), wanted))
        }
        (Some(Value::String(actual)), Value::String(wanted)) => {
            WildMatch::new(wanted).matches(actual)
        }
        (Some(actual), wanted) => actual == wanted,
    }
}

/// What one caller may see: everything (an admin, or no policy restricts anyone), or what the
/// policies that apply to it allow. A server's owner always sees all of that server.
#[derive(Debug, Clone)]
pub struct View {
    caller: Caller,
    /// Admins, and callers under no policy while the default is `allow`.
    all: bool,
    /// The policies that apply to the caller.
    applying: Vec<Arc<Compiled>>,
    default_allow: bool,
}

impl View {
    /// A view that sees everything.
    pub fn everything(caller: &Caller) -> Self {
        Self {
            caller: caller.clone(),
            all: true,
            applying: Vec::new(),
            default_allow: true,
        }
    }

    pub(super) fn new(caller: &Caller, policies: &[Arc<Compiled>], default_allow: bool) -> Self {
        let applying: Vec<_> = policies
            .iter()
            .filter(|p| p.applies_to(caller))
            .cloned()
            .collect();
        Self {
            caller: caller.clone(),
            all: caller.admin || (applying.is_empty() && default_allow),
            applying,
            default_allow,
        }
    }

    /// Whether nothing is hidden from this caller.
    pub fn sees_everything(&self) -> bool {
        self.all
    }

    /// The caller's id.
    pub fn caller(&self) -> &str {
        &self.caller.id
    }

    /// Whether the caller may see and use `item` (a namespaced tool or prompt name, or a
    /// resource URI) of a server `owner` registered (`None` for the bridge's own tools).
    pub fn permits(&self, kind: Kind, owner: Option<&str>, item: &str) -> bool {
        if self.all || owner == Some(self.caller.id.as_str()) {
            return true;
        }
        if self
            .applying
            .iter()
            .any(|p| p.deny.of(kind).is_some_and(|g| g.matches(item)))
        {
            return false;
        }
        let mut allows = self
            .applying
            .iter()
            .filter_map(|p| p.allow.of(kind))
            .peekable();
        match allows.peek() {
            None => self.default_allow,
            Some(_) => allows.any(|g| g.matches(item)),
        }
    }

    pub fn tool(&self, owner: Option<&str>, name: &str) -> bool {
        self.permits(Kind::Tool, owner, name)
    }

    pub fn resource(&self, owner: &str, uri: &str) -> bool {
        self.permits(Kind::Resource, Some(owner), uri)
    }

    pub fn prompt(&self, owner: &str, name: &str) -> bool {
        self.permits(Kind::Prompt, Some(owner), name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2e::PolicyMatch;
    use serde_json::json;

    fn policy(value: Value) -> Arc<Compiled> {
        Arc::new(Compiled::new(&serde_json::from_value(value).unwrap()))
    }

    fn caller(id: &str, roles: &[&str], claims: Value) -> Caller {
        let mut caller = Caller::new(id, false);
        let identity = caller.identity_mut();
        identity.roles = roles.iter().map(|r| r.to_string()).collect();
        identity.claims = claims.as_object().cloned().unwrap_or_default();
        caller
    }

    #[test]
    fn deny_wins_and_allow_narrows() {
        let policies = [
            policy(
                json!({"match": {"roles": ["reader"]}, "allow": {"tools": ["*__read_*", "*__list_*"]}}),
            ),
            policy(json!({"match": {}, "deny": {"tools": ["*__delete_*", "fs__read_secret"]}})),
        ];
        let reader = View::new(&caller("r", &["reader"], json!({})), &policies, true);
        assert!(reader.tool(Some("owner"), "fs__read_file"));
        assert!(!reader.tool(Some("owner"), "fs__read_secret"));
        assert!(!reader.tool(Some("owner"), "fs__write_file"));
        // Nothing said of prompts: the default.
        assert!(reader.prompt("owner", "fs__summary"));
        let other = View::new(&caller("o", &[], json!({})), &policies, true);
        assert!(other.tool(Some("owner"), "fs__write_file"));
        assert!(!other.tool(Some("owner"), "gh__delete_repo"));
        // Its owner sees all of its server; an admin sees everything.
        let owner = View::new(&caller("owner", &[], json!({})), &policies, true);
        assert!(owner.tool(Some("owner"), "gh__delete_repo"));
        let admin = View::new(&Caller::new("root", true), &policies, false);
        assert!(admin.sees_everything());
    }

    #[test]
    fn the_default_decides_for_callers_no_allow_names() {
        let policies = [policy(
            json!({"match": {"subs": ["team-a-*"]}, "allow": {"tools": ["a__*"]}}),
        )];
        let outsider = View::new(&caller("b", &[], json!({})), &policies, false);
        assert!(!outsider.tool(Some("x"), "a__t"));
        assert!(!outsider.resource("x", "file:///a"));
        assert!(outsider.tool(Some("b"), "a__t"), "its own server");
        let member = View::new(&caller("team-a-1", &[], json!({})), &policies, false);
        assert!(member.tool(Some("x"), "a__t"));
        assert!(!member.tool(Some("x"), "b__t"));
        assert!(!member.tool(None, "agent_send"));
        assert!(
            !member.resource("x", "file:///a"),
            "no resource rule: the default"
        );
    }

    #[test]
    fn claims_match_values_globs_and_list_members() {
        let p = policy(json!({"match": {"claims": {"team": "pay*", "groups": "ops", "tier": 2}}}));
        assert!(p.applies_to(&caller(
            "a",
            &[],
            json!({"team": "payments", "groups": ["dev", "ops"], "tier": 2})
        )));
        assert!(!p.applies_to(&caller(
            "a",
            &[],
            json!({"team": "search", "groups": ["ops"], "tier": 2})
        )));
        assert!(!p.applies_to(&caller(
            "a",
            &[],
            json!({"team": "payments", "groups": ["dev"], "tier": 2})
        )));
        assert!(!p.applies_to(&caller(
            "a",
            &[],
            json!({"team": "payments", "groups": "ops"})
        )));
        let everyone = Compiled::new(&Policy {
            matches: PolicyMatch::default(),
            ..Default::default()
        });
        assert!(everyone.applies_to(&caller("anyone", &[], json!({}))));
    }
}
