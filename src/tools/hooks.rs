//! Interceptors: the hooks of the config file (`[[hooks]]`), HTTP endpoints asked before and
//! after a tool call, a resource read and a prompt get. Each is POSTed what it judges (the
//! phase, the kind, the caller, the canonical name, the server, and the arguments or the
//! result) and answers allow, deny with a reason the caller is given, or modify with the
//! arguments or result to use instead. Hooks are asked in the order of the file, each seeing
//! what the one before let through.
//!
//! Every front end (REST, `/v1/a2e`, `/mcp` of both eras, tasks, the meta-tools) reaches a tool
//! through [`Tools::call`] or [`Tools::start_task`], a resource through
//! [`Tools::read_resource`] and a prompt through [`Tools::get_prompt`]: the hooks are asked
//! there and nowhere else. A hook that fails (cannot be reached, answers late or nonsense)
//! refuses the request unless its `on_error` is `allow`. Decisions are counted in the metrics
//! and audited (an allow only when the hook says `audit_allow`), never with the values of the
//! arguments or result. Without hooks nothing of this runs: one branch on an empty list.

use std::time::{Duration, Instant};

use reqwest::header::{AUTHORIZATION, HeaderValue};
use rmcp::model::{GetPromptResult, ReadResourceResult};
use secrecy::ExposeSecret;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use wildmatch::WildMatch;

use super::{Resolved, Tools};
use crate::caller::Caller;
use crate::config::{ConfigError, HookConfig, HookKind, HookPhase, OnError};
use crate::hub::InputRounds;
use crate::registry;

/// Longest reason of a hook given to a caller and audited.
const MAX_REASON: usize = 1000;
/// Largest answer read from a hook (a modified result included).
const MAX_ANSWER: usize = crate::config::DEFAULT_MAX_MESSAGE_BYTES;

/// The hooks in force, in the order of the config file.
#[derive(Default)]
pub struct Hooks {
    hooks: Vec<Hook>,
    /// One pooled client for every hook; none without hooks.
    client: Option<reqwest::Client>,
}

struct Hook {
    config: HookConfig,
    url: reqwest::Url,
    servers: Vec<WildMatch>,
    names: Vec<WildMatch>,
    /// `Bearer …`, marked sensitive (never in a log or a debug print).
    authorization: Option<HeaderValue>,
    timeout: Duration,
}

impl Hooks {
    /// The hooks of the config file, checked again (a config built in code skips the file's
    /// checks). Their client goes through the address guard as every fetch of the bridge does;
    /// a hook is the operator's own service, so private addresses are allowed, link-local and
    /// cloud metadata addresses never.
    pub fn new(configs: &[HookConfig]) -> Result<Self, ConfigError> {
        crate::config::validate_hooks(configs)?;
        if configs.is_empty() {
            return Ok(Self::default());
        }
        let mut hooks = Vec::with_capacity(configs.len());
        for config in configs {
            let url = reqwest::Url::parse(&config.url).map_err(|e| ConfigError::Invalid {
                name: "hooks",
                message: format!("hook \"{}\": {e}", config.name),
            })?;
            let authorization = match &config.bearer {
                None => None,
                Some(secret) => {
                    let mut value =
                        HeaderValue::from_str(&format!("Bearer {}", secret.expose_secret()))
                            .map_err(|_| ConfigError::Invalid {
                                name: "hooks",
                                message: format!(
                                    "hook \"{}\": `bearer` is not a valid header value",
                                    config.name
                                ),
                            })?;
                    value.set_sensitive(true);
                    Some(value)
                }
            };
            let globs = |patterns: &[String]| patterns.iter().map(|p| WildMatch::new(p)).collect();
            hooks.push(Hook {
                url,
                servers: globs(&config.servers),
                names: globs(&config.names),
                authorization,
                timeout: Duration::from_millis(config.timeout_ms),
                config: config.clone(),
            });
        }
        let client = crate::guard::Guard::new(true)
            .http_client(false)
            .build()
            // Only a TLS back end that cannot start fails here, and then no client would.
            .expect("the guarded HTTP client builds");
        Ok(Self {
            hooks,
            client: Some(client),
        })
    }

    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    /// Whether any hook judges requests of `kind`.
    fn any(&self, kind: HookKind) -> bool {
        self.hooks.iter().any(|h| h.config.kinds.contains(&kind))
    }

    /// The hooks asked in `phase` about `subject`, in order.
    fn matching<'a>(
        &'a self,
        phase: HookPhase,
        subject: &'a Subject<'_>,
    ) -> impl Iterator<Item = &'a Hook> {
        self.hooks
            .iter()
            .filter(move |h| h.config.phases.contains(&phase) && h.judges(subject))
    }

    /// Whether any hook judges `subject`, in either phase.
    fn judged(&self, subject: &Subject<'_>) -> bool {
        self.hooks.iter().any(|h| h.judges(subject))
    }
}

impl Hook {
    fn judges(&self, subject: &Subject<'_>) -> bool {
        let any = |globs: &[WildMatch], value: &str| {
            globs.is_empty() || globs.iter().any(|g| g.matches(value))
        };
        self.config.kinds.contains(&subject.kind)
            && any(&self.servers, subject.server_id)
            && any(&self.names, subject.name)
    }
}

/// What a hook is asked about.
struct Subject<'a> {
    caller: &'a Caller,
    kind: HookKind,
    /// `{server_id}__{tool}`, a resource URI, or `{server_id}__{prompt}`.
    name: &'a str,
    /// Empty for an agent-bridge tool.
    server_id: &'a str,
}

/// A hook's answer as it is sent.
#[derive(serde::Deserialize)]
struct Answer {
    decision: Decision,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    arguments: Option<Value>,
    #[serde(default)]
    result: Option<Value>,
}

#[derive(serde::Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Decision {
    Allow,
    Deny,
    Modify,
}

/// What one hook decided, once read.
enum Outcome {
    Allow,
    Deny(String),
    /// The arguments or result to use instead.
    Modify(Value),
    /// The hook itself failed: why (no URL in it, it is shown to the caller).
    Failed(String),
}

impl Tools {
    /// Adds the interceptors to ask.
    pub fn with_hooks(mut self, hooks: Hooks) -> Self {
        self.hooks = hooks;
        self
    }

    /// The server and canonical name hooks judge the catalogue tool `full` by (an alias is
    /// resolved; an agent-bridge tool has no server); `None` for a tool that does not exist,
    /// which is answered as unknown without asking anyone.
    pub(super) fn hooked_tool(&self, full: &str) -> Option<(String, String)> {
        match self.registry.resolve_tool(full) {
            Some((server_id, tool)) => {
                let name = format!("{server_id}{}{tool}", crate::naming::SEPARATOR);
                Some((server_id, name))
            }
            None if self.a2a.enabled() && crate::a2a::tools::is_bridge_tool(full) => {
                Some((String::new(), full.to_owned()))
            }
            None => None,
        }
    }

    /// Whether a hook judges the catalogue tool `full` (a task of it is then run by the bridge,
    /// where the hooks see both its arguments and its result).
    pub(super) fn tool_hooked(&self, caller: &Caller, full: &str) -> bool {
        if self.hooks.is_empty() {
            return false;
        }
        self.hooked_tool(full).is_some_and(|(server_id, name)| {
            self.hooks.judged(&Subject {
                caller,
                kind: HookKind::Tool,
                name: &name,
                server_id: &server_id,
            })
        })
    }

    /// A permitted tool call with its hooks asked: before (its arguments) and after (its
    /// result, when it has one).
    pub(super) async fn call_hooked(
        &self,
        caller: &Caller,
        full: &str,
        mut arguments: Map<String, Value>,
        timeout: Option<f64>,
        origin: crate::upstream::CallOrigin,
    ) -> Result<(String, rmcp::model::CallToolResult), registry::Error> {
        // A tool that does not exist is answered as unknown, never called unjudged; and the
        // tool called is the one judged (by its canonical name, not the alias again).
        let Some((server_id, name)) = self.hooked_tool(full) else {
            return Err(registry::Error::ToolNotFound(full.to_owned()));
        };
        let subject = Subject {
            caller,
            kind: HookKind::Tool,
            name: &name,
            server_id: &server_id,
        };
        self.before(&subject, Some(&mut arguments)).await?;
        let (server, mut result) = self
            .call_permitted(&name, arguments, timeout, origin)
            .await?;
        self.after(&subject, &mut result).await?;
        Ok((server, result))
    }

    /// [`Tools::read_resource`]'s work.
    pub(super) async fn read_resource_hooked(
        &self,
        caller: &Caller,
        target: &Resolved,
    ) -> Result<(String, ReadResourceResult), registry::Error> {
        if !self.hooks.any(HookKind::Resource) {
            return self
                .registry
                .read_resource_raw(&caller.id, &target.server_id, &target.item)
                .await;
        }
        // The hooks judge the server the read goes to, so it is found first.
        let server_id = self
            .registry
            .resource_server(&target.server_id, &target.item)?;
        let subject = Subject {
            caller,
            kind: HookKind::Resource,
            name: &target.item,
            server_id: &server_id,
        };
        self.before(&subject, None).await?;
        let (server, mut result) = self
            .registry
            .read_resource_raw(&caller.id, &server_id, &target.item)
            .await?;
        self.after(&subject, &mut result).await?;
        Ok((server, result))
    }

    /// [`Tools::get_prompt`]'s work.
    pub(super) async fn get_prompt_hooked(
        &self,
        caller: &Caller,
        target: &Resolved,
        mut arguments: Map<String, Value>,
        rounds: Option<&InputRounds>,
    ) -> Result<(String, GetPromptResult), registry::Error> {
        if !self.hooks.any(HookKind::Prompt) {
            return self
                .registry
                .get_prompt_for(
                    &caller.id,
                    &target.server_id,
                    &target.item,
                    arguments,
                    rounds,
                )
                .await;
        }
        let server_id = self
            .registry
            .prompt_server(&target.server_id, &target.item)?;
        let name = format!("{server_id}{}{}", crate::naming::SEPARATOR, target.item);
        let subject = Subject {
            caller,
            kind: HookKind::Prompt,
            name: &name,
            server_id: &server_id,
        };
        self.before(&subject, Some(&mut arguments)).await?;
        let (server, mut result) = self
            .registry
            .get_prompt_for(&caller.id, &server_id, &target.item, arguments, rounds)
            .await?;
        // (A round handed to a stateless client is an error here: no result to judge yet.)
        self.after(&subject, &mut result).await?;
        Ok((server, result))
    }

    /// Asks the hooks of the before phase; `arguments` (none for a resource read) are replaced
    /// by a hook that modifies them.
    async fn before(
        &self,
        subject: &Subject<'_>,
        mut arguments: Option<&mut Map<String, Value>>,
    ) -> Result<(), registry::Error> {
        for hook in self.hooks.matching(HookPhase::Before, subject) {
            let shown = arguments.as_deref().map(|a| Value::Object(a.clone()));
            let outcome = self
                .ask(hook, subject, HookPhase::Before, "arguments", shown)
                .await;
            let outcome = match (outcome, arguments.as_deref_mut()) {
                (Outcome::Modify(Value::Object(map)), Some(arguments)) => {
                    *arguments = map;
                    Outcome::Modify(Value::Null)
                }
                (Outcome::Modify(_), Some(_)) => {
                    Outcome::Failed("its modified `arguments` are not an object".into())
                }
                (Outcome::Modify(_), None) => {
                    Outcome::Failed("a resource read has no arguments to modify".into())
                }
                (other, _) => other,
            };
            self.decided(hook, subject, HookPhase::Before, outcome)
                .await?;
        }
        Ok(())
    }

    /// Asks the hooks of the after phase; `result` is replaced by a hook that modifies it.
    async fn after<T: Serialize + DeserializeOwned>(
        &self,
        subject: &Subject<'_>,
        result: &mut T,
    ) -> Result<(), registry::Error> {
        for hook in self.hooks.matching(HookPhase::After, subject) {
            let shown = serde_json::to_value(&*result).ok();
            let outcome = self
                .ask(hook, subject, HookPhase::After, "result", shown)
                .await;
            let outcome = match outcome {
                Outcome::Modify(value) => match serde_json::from_value::<T>(value) {
                    Ok(modified) => {
                        *result = modified;
                        Outcome::Modify(Value::Null)
                    }
                    Err(e) => Outcome::Failed(format!(
                        "its modified `result` is not a valid {} result: {e}",
                        subject.kind.as_str()
                    )),
                },
                other => other,
            };
            self.decided(hook, subject, HookPhase::After, outcome)
                .await?;
        }
        Ok(())
    }

    /// POSTs the question to `hook` and reads its answer; counts the decision and its latency.
    async fn ask(
        &self,
        hook: &Hook,
        subject: &Subject<'_>,
        phase: HookPhase,
        field: &str,
        value: Option<Value>,
    ) -> Outcome {
        let Some(client) = &self.hooks.client else {
            return Outcome::Allow;
        };
        let mut payload = json!({
            "phase": phase.as_str(),
            "kind": subject.kind.as_str(),
            "caller": {"id": subject.caller.id, "roles": subject.caller.roles},
            "name": subject.name,
            "server_id": subject.server_id,
        });
        if let Some(value) = value {
            payload[field] = value;
        }
        let started = Instant::now();
        let mut request = client
            .post(hook.url.clone())
            .timeout(hook.timeout)
            .json(&payload);
        if let Some(authorization) = &hook.authorization {
            request = request.header(AUTHORIZATION, authorization.clone());
        }
        let outcome = match request.send().await {
            Err(error) => Outcome::Failed(failure(hook, error)),
            Ok(response) if !response.status().is_success() => {
                Outcome::Failed(format!("it answered HTTP {}", response.status().as_u16()))
            }
            Ok(response) => match body(hook, response).await {
                Err(why) => Outcome::Failed(why),
                Ok(body) => match serde_json::from_slice::<Answer>(&body) {
                    Err(error) => Outcome::Failed(format!("its answer is not a decision: {error}")),
                    Ok(answer) => read(answer, field),
                },
            },
        };
        let label = match &outcome {
            Outcome::Allow => "allow",
            Outcome::Deny(_) => "deny",
            Outcome::Modify(_) => "modify",
            Outcome::Failed(_) => match hook.config.on_error {
                OnError::Deny => "failed_deny",
                OnError::Allow => "failed_allow",
            },
        };
        self.metrics
            .hook_decision(&hook.config.name, label, started.elapsed());
        if let Outcome::Failed(why) = &outcome {
            tracing::warn!(hook = %hook.config.name, phase = phase.as_str(), kind = subject.kind.as_str(),
                name = %subject.name, %why, "a hook failed");
        }
        outcome
    }

    /// Acts on a hook's decision: audits it, and answers the refusal of a deny (or of a failure
    /// of a hook that fails closed).
    async fn decided(
        &self,
        hook: &Hook,
        subject: &Subject<'_>,
        phase: HookPhase,
        outcome: Outcome,
    ) -> Result<(), registry::Error> {
        let name = &hook.config.name;
        let (action, said, refusal) = match outcome {
            Outcome::Allow if !hook.config.audit_allow => return Ok(()),
            Outcome::Allow => ("hook.allow", "allow".to_owned(), None),
            Outcome::Modify(_) => {
                let what = match phase {
                    HookPhase::Before => "arguments",
                    HookPhase::After => "result",
                };
                ("hook.modify", format!("modify ({what})"), None)
            }
            Outcome::Deny(reason) => (
                "hook.deny",
                format!("deny: {reason}"),
                Some(registry::Error::DeniedByHook {
                    hook: name.clone(),
                    reason,
                }),
            ),
            Outcome::Failed(why) => match hook.config.on_error {
                OnError::Deny => (
                    "hook.failed",
                    format!("failed, so deny: {why}"),
                    Some(registry::Error::DeniedByHook {
                        hook: name.clone(),
                        reason: format!("the hook failed and fails closed: {why}"),
                    }),
                ),
                OnError::Allow => ("hook.failed", format!("failed, so allow: {why}"), None),
            },
        };
        let server = match subject.server_id {
            "" => String::new(),
            id => format!(" of server {id}"),
        };
        let detail = format!(
            "hook {name}, {} {}{server}: {said}",
            phase.as_str(),
            subject.kind.as_str(),
        );
        self.store
            .record(&subject.caller.id, action, subject.name, &detail)
            .await;
        match refusal {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

/// A hook's answer, read up to [`MAX_ANSWER`] bytes.
async fn body(hook: &Hook, mut response: reqwest::Response) -> Result<Vec<u8>, String> {
    let too_large = || format!("its answer is larger than {MAX_ANSWER} bytes");
    if response
        .content_length()
        .is_some_and(|n| n > MAX_ANSWER as u64)
    {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| failure(hook, e))? {
        if body.len() + chunk.len() > MAX_ANSWER {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Why a request to a hook failed, without its URL.
fn failure(hook: &Hook, error: reqwest::Error) -> String {
    if error.is_timeout() {
        format!("it did not answer within {} ms", hook.config.timeout_ms)
    } else if error.is_connect() {
        "it cannot be reached".to_owned()
    } else {
        format!("the request to it failed: {}", error.without_url())
    }
}

/// A hook's answer as an outcome: a modify must carry the `field` of its phase.
fn read(answer: Answer, field: &str) -> Outcome {
    match answer.decision {
        Decision::Allow => Outcome::Allow,
        Decision::Deny => {
            let mut reason = answer
                .reason
                .filter(|r| !r.trim().is_empty())
                .unwrap_or_else(|| "no reason given".to_owned());
            if reason.len() > MAX_REASON {
                let mut end = MAX_REASON;
                while !reason.is_char_boundary(end) {
                    end -= 1;
                }
                reason.truncate(end);
                reason.push('…');
            }
            Outcome::Deny(reason)
        }
        Decision::Modify => {
            let given = match field {
                "arguments" => answer.arguments,
                _ => answer.result,
            };
            match given {
                Some(value) => Outcome::Modify(value),
                None => Outcome::Failed(format!("it answered modify without `{field}`")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(text: &str) -> Answer {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn answers_become_outcomes() {
        assert!(matches!(
            read(answer(r#"{"decision":"allow","x":1}"#), "arguments"),
            Outcome::Allow
        ));
        match read(answer(r#"{"decision":"deny"}"#), "arguments") {
            Outcome::Deny(reason) => assert_eq!(reason, "no reason given"),
            _ => panic!("a deny"),
        }
        let long = format!(
            r#"{{"decision":"deny","reason":"{}"}}"#,
            "é".repeat(MAX_REASON)
        );
        match read(answer(&long), "arguments") {
            Outcome::Deny(reason) => {
                assert!(
                    reason.len() <= MAX_REASON + '…'.len_utf8(),
                    "{}",
                    reason.len()
                );
                assert!(reason.ends_with('…'));
            }
            _ => panic!("a deny"),
        }
        let modify = r#"{"decision":"modify","arguments":{"a":1}}"#;
        assert!(matches!(
            read(answer(modify), "arguments"),
            Outcome::Modify(_)
        ));
        match read(answer(modify), "result") {
            Outcome::Failed(why) => assert!(why.contains("without `result`"), "{why}"),
            _ => panic!("a modify without its field fails"),
        }
        assert!(serde_json::from_str::<Answer>(r#"{"decision":"maybe"}"#).is_err());
    }

    #[test]
    fn a_hook_judges_what_its_kinds_servers_and_names_say() {
        let config: HookConfig = toml::from_str(
            "name = \"h\"\nurl = \"http://127.0.0.1:9/\"\nkinds = [\"tool\"]\n\
             servers = [\"db-*\"]\nnames = [\"*__query\"]\n",
        )
        .unwrap();
        let _ = rustls::crypto::ring::default_provider().install_default();
        let hooks = Hooks::new(&[config]).unwrap();
        let caller = Caller::new("alice", false);
        let subject = |kind, server_id, name| Subject {
            caller: &caller,
            kind,
            name,
            server_id,
        };
        assert!(hooks.judged(&subject(HookKind::Tool, "db-1", "db-1__query")));
        assert!(!hooks.judged(&subject(HookKind::Tool, "web", "web__query")));
        assert!(!hooks.judged(&subject(HookKind::Tool, "db-1", "db-1__drop")));
        assert!(!hooks.judged(&subject(HookKind::Prompt, "db-1", "db-1__query")));
        assert!(hooks.any(HookKind::Tool) && !hooks.any(HookKind::Resource));
        assert!(Hooks::new(&[]).unwrap().is_empty());
    }
}
