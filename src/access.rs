//! Who sees what: access policies (which callers may see and use which tools, resources and
//! prompts) and toolsets (virtual servers: a chosen, renamed and re-described part of the
//! catalogue), from the config file and the store, and the tool search that ranks them.

pub mod policy;
pub mod search;
pub mod toolsets;

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use crate::a2e::{DefinedIn, ErrorCode, NamedPolicy, NamedToolset, Policy, Toolset};
use crate::caller::Caller;
use crate::config::AccessDefault;
use crate::store::{Store, StoreError};
pub use policy::{Kind, View, is_approver};

/// The policy that holds a call for approval, as it was when the call was made.
#[derive(Debug, Clone)]
pub struct Hold {
    pub policy: String,
    /// Hex SHA-256 (first 16 digits) of the policy's JSON.
    pub version: String,
    pub approvers: crate::a2e::Approvers,
    pub expires: Duration,
}

/// Why a change of policies or toolsets was refused.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Forbidden(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    NotFound(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl Error {
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::Invalid(_) => ErrorCode::InvalidRequest,
            Error::Forbidden(_) => ErrorCode::Forbidden,
            Error::Conflict(_) => ErrorCode::Conflict,
            Error::NotFound(_) => ErrorCode::NotFound,
            Error::Store(error) => error.code(),
        }
    }
}

/// The policies and toolsets in force.
#[derive(Default)]
struct Snapshot {
    policies: Vec<(NamedPolicy, Arc<policy::Compiled>)>,
    toolsets: BTreeMap<String, NamedToolset>,
}

/// Policies and toolsets: those of the config file, and those stored through the API.
pub struct Access {
    store: Store,
    default: AccessDefault,
    configured_policies: Vec<NamedPolicy>,
    configured_toolsets: Vec<NamedToolset>,
    now: RwLock<Arc<Snapshot>>,
}

impl Access {
    /// Checks the config file's policies and toolsets and reads the stored ones.
    pub async fn load(
        store: Store,
        default: AccessDefault,
        policies: &[NamedPolicy],
        toolsets: &[NamedToolset],
    ) -> Result<Arc<Self>, String> {
        let mut configured_policies = Vec::new();
        for named in policies {
            check_policy(&named.name, &named.policy)
                .map_err(|e| format!("policies of the config file: {e}"))?;
            configured_policies.push(NamedPolicy {
                defined_in: DefinedIn::Config,
                ..named.clone()
            });
        }
        let mut configured_toolsets = Vec::new();
        for named in toolsets {
            check_toolset(&named.name, &named.toolset)
                .map_err(|e| format!("toolsets of the config file: {e}"))?;
            configured_toolsets.push(NamedToolset {
                defined_in: DefinedIn::Config,
                ..named.clone()
            });
        }
        let access = Arc::new(Self {
            store,
            default,
            configured_policies,
            configured_toolsets,
            now: RwLock::default(),
        });
        access.reload().await.map_err(|e| e.to_string())?;
        Ok(access)
    }

    /// Reads the stored policies and toolsets again.
    pub async fn reload(&self) -> Result<(), StoreError> {
        let stored_policies = self.store.policies().await?;
        let stored_toolsets = self.store.toolsets().await?;
        let mut policies: BTreeMap<String, NamedPolicy> = BTreeMap::new();
        for (name, policy) in stored_policies {
            policies.insert(
                name.clone(),
                NamedPolicy {
                    name,
                    policy,
                    defined_in: DefinedIn::Api,
                },
            );
        }
        // The config file's win over stored ones of the same name (the API refuses to make one).
        for named in &self.configured_policies {
            policies.insert(named.name.clone(), named.clone());
        }
        let mut toolsets: BTreeMap<String, NamedToolset> = stored_toolsets
            .into_iter()
            .map(|(name, toolset)| {
                let named = NamedToolset {
                    name: name.clone(),
                    toolset,
                    defined_in: DefinedIn::Api,
                };
                (name, named)
            })
            .collect();
        for named in &self.configured_toolsets {
            toolsets.insert(named.name.clone(), named.clone());
        }
        let snapshot = Snapshot {
            policies: policies
                .into_values()
                .map(|named| {
                    let compiled = Arc::new(policy::Compiled::new(&named.policy));
                    (named, compiled)
                })
                .collect(),
            toolsets,
        };
        *self.now.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(snapshot);
        Ok(())
    }

    /// Across replicas: reads the store again every `every`, so a change made on another
    /// replica is in force here within that time.
    pub fn spawn_refresh(
        self: &Arc<Self>,
        every: Duration,
        shutdown: tokio_util::sync::CancellationToken,
    ) {
        let access = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = ticks.tick() => {}
                }
                let Some(access) = access.upgrade() else {
                    return;
                };
                if let Err(error) = access.reload().await {
                    tracing::warn!(%error, "cannot read the access policies and toolsets again");
                }
            }
        });
    }

    fn snapshot(&self) -> Arc<Snapshot> {
        self.now.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// What `caller` may see.
    pub fn view(&self, caller: &Caller) -> View {
        let snapshot = self.snapshot();
        let compiled: Vec<_> = snapshot.policies.iter().map(|(_, c)| c.clone()).collect();
        View::new(caller, &compiled, self.default == AccessDefault::Allow)
    }

    /// The first policy (by name) that applies to `caller` and holds its calls of the catalogue
    /// tool `full` for approval; none for most calls, at the cost of a scan of the policies.
    pub fn hold(&self, caller: &Caller, full: &str) -> Option<Hold> {
        let snapshot = self.snapshot();
        snapshot.policies.iter().find_map(|(named, compiled)| {
            let approve = compiled.holds(full)?;
            if !compiled.applies_to(caller) {
                return None;
            }
            let rule = compiled.source().approve.as_ref()?;
            let json = serde_json::to_string(compiled.source()).unwrap_or_default();
            Some(Hold {
                policy: named.name.clone(),
                version: crate::a2e::sha256_hex(json.as_bytes())[..16].to_owned(),
                approvers: rule.approvers.clone(),
                expires: approve.expires,
            })
        })
    }

    /// Whether any policy holds calls for approval (most deployments: none).
    pub fn holds_any(&self) -> bool {
        self.snapshot()
            .policies
            .iter()
            .any(|(named, _)| named.policy.approve.is_some())
    }

    /// `MCP_BRIDGE_ACCESS_DEFAULT`.
    pub fn default(&self) -> AccessDefault {
        self.default
    }

    /// Every policy, by name.
    pub fn policies(&self) -> Vec<NamedPolicy> {
        self.snapshot()
            .policies
            .iter()
            .map(|(named, _)| named.clone())
            .collect()
    }

    /// Creates or replaces a policy (admins only); answers it and whether it is new.
    pub async fn put_policy(
        &self,
        agent: &Caller,
        name: &str,
        policy: Policy,
    ) -> Result<(NamedPolicy, bool), Error> {
        admin_only(agent, "policies")?;
        check_policy(name, &policy).map_err(Error::Invalid)?;
        self.not_configured(name, self.configured_policies.iter().map(|p| &p.name))?;
        let existed = self.store.put_policy(name, &policy).await?;
        self.store
            .record(
                &agent.id,
                "policy.put",
                name,
                &serde_json::to_string(&policy).unwrap_or_default(),
            )
            .await;
        self.reload().await?;
        let named = NamedPolicy {
            name: name.to_owned(),
            policy,
            defined_in: DefinedIn::Api,
        };
        Ok((named, !existed))
    }

    /// Removes a policy (admins only).
    pub async fn delete_policy(&self, agent: &Caller, name: &str) -> Result<(), Error> {
        admin_only(agent, "policies")?;
        self.not_configured(name, self.configured_policies.iter().map(|p| &p.name))?;
        self.store.delete_policy(name).await.map_err(|e| match e {
            StoreError::NotFound => Error::NotFound(format!("no policy \"{name}\" is defined")),
            other => other.into(),
        })?;
        self.store
            .record(&agent.id, "policy.delete", name, "")
            .await;
        self.reload().await?;
        Ok(())
    }

    /// Every toolset, by name.
    pub fn toolsets(&self) -> Vec<NamedToolset> {
        self.snapshot().toolsets.values().cloned().collect()
    }

    /// The toolset called `name`.
    pub fn toolset(&self, name: &str) -> Option<NamedToolset> {
        self.snapshot().toolsets.get(name).cloned()
    }

    /// Creates or replaces a toolset (admins only); answers it and whether it is new.
    pub async fn put_toolset(
        &self,
        agent: &Caller,
        name: &str,
        toolset: Toolset,
    ) -> Result<(NamedToolset, bool), Error> {
        admin_only(agent, "toolsets")?;
        check_toolset(name, &toolset).map_err(Error::Invalid)?;
        self.not_configured(name, self.configured_toolsets.iter().map(|t| &t.name))?;
        let existed = self.store.put_toolset(name, &toolset).await?;
        self.store
            .record(
                &agent.id,
                "toolset.put",
                name,
                &serde_json::to_string(&toolset).unwrap_or_default(),
            )
            .await;
        self.reload().await?;
        let named = NamedToolset {
            name: name.to_owned(),
            toolset,
            defined_in: DefinedIn::Api,
        };
        Ok((named, !existed))
    }

    /// Removes a toolset (admins only).
    pub async fn delete_toolset(&self, agent: &Caller, name: &str) -> Result<(), Error> {
        admin_only(agent, "toolsets")?;
        self.not_configured(name, self.configured_toolsets.iter().map(|t| &t.name))?;
        self.store.delete_toolset(name).await.map_err(|e| match e {
            StoreError::NotFound => Error::NotFound(format!("no toolset \"{name}\" is defined")),
            other => other.into(),
        })?;
        self.store
            .record(&agent.id, "toolset.delete", name, "")
            .await;
        self.reload().await?;
        Ok(())
    }

    fn not_configured<'a>(
        &self,
        name: &str,
        mut configured: impl Iterator<Item = &'a String>,
    ) -> Result<(), Error> {
        match configured.any(|n| n == name) {
            true => Err(Error::Conflict(format!(
                "\"{name}\" is defined in the config file (MCP_BRIDGE_CONFIG); change it there"
            ))),
            false => Ok(()),
        }
    }
}

fn admin_only(agent: &Caller, what: &str) -> Result<(), Error> {
    match agent.admin {
        true => Ok(()),
        false => Err(Error::Forbidden(format!(
            "changing {what} needs the admin role"
        ))),
    }
}

/// A policy or toolset name: 1 to 64 of `[A-Za-z0-9._-]`.
pub fn check_name(name: &str) -> Result<(), String> {
    let valid = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    match valid {
        true => Ok(()),
        false => Err(format!(
            "the name \"{name}\" must be 1 to 64 letters, digits, `.`, `_` or `-`"
        )),
    }
}

fn check_globs(field: &str, globs: &[String]) -> Result<(), String> {
    if globs.iter().any(|g| g.trim().is_empty()) {
        return Err(format!("`{field}` holds an empty glob"));
    }
    Ok(())
}

fn check_policy(name: &str, policy: &Policy) -> Result<(), String> {
    check_name(name)?;
    check_globs("match.subs", &policy.matches.subs)?;
    if policy.matches.roles.iter().any(|r| r.is_empty()) {
        return Err("`match.roles` holds an empty role".into());
    }
    for (side, rules) in [("allow", &policy.allow), ("deny", &policy.deny)] {
        let Some(rules) = rules else { continue };
        for (kind, globs) in [
            ("tools", &rules.tools),
            ("resources", &rules.resources),
            ("prompts", &rules.prompts),
        ] {
            check_globs(
                &format!("{side}.{kind}"),
                globs.as_deref().unwrap_or_default(),
            )?;
        }
    }
    if let Some(rule) = &policy.approve {
        check_approve(rule)?;
    }
    Ok(())
}

/// A wait such as `30s`, `10m`, `2h` or `1d`: a whole number and a unit; 1 s to 24 h.
pub fn parse_expires(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let unit_secs = match unit.trim() {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => 0,
    };
    let secs = number.parse::<u64>().unwrap_or(0).saturating_mul(unit_secs);
    match (1..=86_400).contains(&secs) {
        true => Ok(Duration::from_secs(secs)),
        false => Err(format!(
            "`approve.expires` is \"{text}\"; give a whole number and a unit (`30s`, `10m`, `2h`, `1d`), 1 s to 24 h"
        )),
    }
}

fn check_approve(rule: &crate::a2e::ApproveRule) -> Result<(), String> {
    if rule.tools.is_empty() {
        return Err(
            "`approve.tools` must name at least one tool (globs such as `github__delete_*`)".into(),
        );
    }
    check_globs("approve.tools", &rule.tools)?;
    check_globs("approve.approvers.subs", &rule.approvers.subs)?;
    if rule.approvers.roles.iter().any(|r| r.is_empty()) {
        return Err("`approve.approvers.roles` holds an empty role".into());
    }
    if rule.approvers.subs.is_empty() && rule.approvers.roles.is_empty() {
        return Err("`approve.approvers` must name `roles` or `subs`: nobody could decide".into());
    }
    parse_expires(&rule.expires)?;
    Ok(())
}

fn check_toolset(name: &str, toolset: &Toolset) -> Result<(), String> {
    check_name(name)?;
    if toolset.tools.is_empty() {
        return Err("`tools` must name at least one tool (globs such as `github__*`)".into());
    }
    check_globs("tools", &toolset.tools)?;
    let members = policy::Globs::new(&toolset.tools);
    for (field, names) in [
        ("rename", toolset.rename.keys().collect::<Vec<_>>()),
        ("descriptions", toolset.descriptions.keys().collect()),
    ] {
        if let Some(outside) = names.into_iter().find(|n| !members.matches(n)) {
            return Err(format!(
                "`{field}` names \"{outside}\", which none of `tools` takes in"
            ));
        }
    }
    let mut shown = std::collections::HashSet::new();
    for (tool, alias) in &toolset.rename {
        let valid = !alias.is_empty()
            && alias.len() <= 128
            && alias
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
        if !valid {
            return Err(format!(
                "`rename` gives \"{tool}\" the name \"{alias}\": use 1 to 128 letters, digits, `_`, `.` or `-`"
            ));
        }
        if !shown.insert(alias) {
            return Err(format!("`rename` gives two tools the name \"{alias}\""));
        }
        // A member renamed away leaves its name free; one that keeps it clashes.
        if alias != tool && members.matches(alias) && !toolset.rename.contains_key(alias) {
            return Err(format!(
                "`rename` gives \"{tool}\" the name \"{alias}\", which is the name of another tool of the toolset"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approve_rules_are_checked_and_their_waits_read() {
        assert_eq!(parse_expires("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_expires("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_expires("1d"), Ok(Duration::from_secs(86_400)));
        for bad in ["", "10", "m", "0s", "2d", "1.5h", "-1m", "10 minutes"] {
            assert!(parse_expires(bad).is_err(), "{bad}");
        }
        let policy = |v: serde_json::Value| -> Policy { serde_json::from_value(v).unwrap() };
        let good = policy(
            serde_json::json!({"match": {"roles": ["intern"]}, "approve":
            {"tools": ["ev__get-sum"], "approvers": {"roles": ["lead"]}, "expires": "10m"}}),
        );
        assert!(check_policy("p", &good).is_ok());
        let nobody = policy(serde_json::json!({"approve":
            {"tools": ["ev__*"], "approvers": {}, "expires": "10m"}}));
        assert!(check_policy("p", &nobody).unwrap_err().contains("nobody"));
        let no_tools = policy(serde_json::json!({"approve":
            {"tools": [], "approvers": {"subs": ["lee"]}, "expires": "10m"}}));
        assert!(check_policy("p", &no_tools).is_err());
        let forever = policy(serde_json::json!({"approve":
            {"tools": ["*"], "approvers": {"subs": ["lee"]}, "expires": "2d"}}));
        assert!(check_policy("p", &forever).unwrap_err().contains("expires"));
    }

    #[tokio::test]
    async fn the_first_policy_that_holds_a_call_names_its_approvers() {
        let db = crate::store::testing::backends().await.remove(0);
        let store = db.open().await;
        let policy = |v: serde_json::Value| -> Policy { serde_json::from_value(v).unwrap() };
        let named = |name: &str, v| NamedPolicy {
            name: name.into(),
            policy: policy(v),
            defined_in: DefinedIn::Config,
        };
        let policies = [
            named(
                "b-sums",
                serde_json::json!({"match": {"roles": ["intern"]}, "approve":
                {"tools": ["ev__get-*"], "approvers": {"roles": ["lead"]}, "expires": "1m"}}),
            ),
            named("a-hide", serde_json::json!({"deny": {"tools": ["x__*"]}})),
        ];
        let access = Access::load(store, AccessDefault::Allow, &policies, &[])
            .await
            .unwrap();
        assert!(access.holds_any());
        let mut intern = Caller::new("ivy", false);
        intern.identity_mut().roles = vec!["intern".into()];
        let hold = access.hold(&intern, "ev__get-sum").unwrap();
        assert_eq!(hold.policy, "b-sums");
        assert_eq!(hold.version.len(), 16);
        assert_eq!(hold.expires, Duration::from_secs(60));
        assert_eq!(hold.approvers.roles, ["lead"]);
        assert!(access.hold(&intern, "ev__echo").is_none());
        assert!(
            access
                .hold(&Caller::new("lee", false), "ev__get-sum")
                .is_none()
        );
        let mut lead = Caller::new("lee", false);
        lead.identity_mut().roles = vec!["lead".into()];
        assert!(is_approver(&hold.approvers, &lead));
        assert!(!is_approver(&hold.approvers, &intern));
        assert!(!is_approver(&crate::a2e::Approvers::default(), &lead));
    }

    #[test]
    fn toolsets_are_checked() {
        let toolset = |v: serde_json::Value| -> Toolset { serde_json::from_value(v).unwrap() };
        assert!(check_toolset("t", &toolset(serde_json::json!({"tools": ["ev__*"]}))).is_ok());
        assert!(check_toolset("t", &toolset(serde_json::json!({"tools": []}))).is_err());
        assert!(check_toolset("bad name", &toolset(serde_json::json!({"tools": ["a"]}))).is_err());
        let outside = toolset(serde_json::json!({"tools": ["ev__*"], "rename": {"gh__x": "x"}}));
        assert!(check_toolset("t", &outside).unwrap_err().contains("gh__x"));
        let clash = toolset(serde_json::json!({"tools": ["ev__*"], "rename": {"ev__a": "ev__b"}}));
        assert!(
            check_toolset("t", &clash)
                .unwrap_err()
                .contains("another tool")
        );
        let twice = toolset(
            serde_json::json!({"tools": ["ev__*"], "rename": {"ev__a": "x", "ev__b": "x"}}),
        );
        assert!(
            check_toolset("t", &twice)
                .unwrap_err()
                .contains("two tools")
        );
        let swap = toolset(
            serde_json::json!({"tools": ["ev__*"], "rename": {"ev__a": "ev__b", "ev__b": "ev__a"}}),
        );
        assert!(check_toolset("t", &swap).is_ok());
        let bad =
            toolset(serde_json::json!({"tools": ["ev__*"], "rename": {"ev__a": "has space"}}));
        assert!(check_toolset("t", &bad).is_err());
    }

    #[test]
    fn config_file_entries_parse_flat() {
        let named: NamedPolicy = serde_json::from_value(serde_json::json!({
            "name": "readers", "match": {"roles": ["reader"]}, "allow": {"tools": ["*__read_*"]}
        }))
        .unwrap();
        assert_eq!(named.name, "readers");
        assert_eq!(named.policy.matches.roles, ["reader"]);
        assert!(serde_json::from_value::<Policy>(serde_json::json!({"alow": {}})).is_err());
    }
}
