//! Interceptors of the config file (`[[hooks]]`): HTTP endpoints asked before and after a tool
//! call, a resource read or a prompt get, each with what it applies to, its timeout and what a
//! failure of the hook itself does. Checked at start: a bad hook refuses the start by its name.

use secrecy::SecretString;
use serde::Deserialize;

use super::{ConfigError, invalid};

/// The default `timeout_ms` of a hook.
pub const DEFAULT_HOOK_TIMEOUT_MS: u64 = 2000;
/// The longest `timeout_ms`: a hook holds the call it judges.
pub const MAX_HOOK_TIMEOUT_MS: u64 = 60_000;

/// When a hook is asked: before the request goes to its server, or after, with its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HookPhase {
    Before,
    After,
}

impl HookPhase {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Before => "before",
            Self::After => "after",
        }
    }
}

/// What a hook judges: a tool call, a resource read or a prompt get.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HookKind {
    Tool,
    Resource,
    Prompt,
}

impl HookKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Tool => "tool",
            Self::Resource => "resource",
            Self::Prompt => "prompt",
        }
    }
}

/// What a hook that fails (cannot be reached, times out, answers nonsense) decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    /// Fail closed: the request is refused.
    #[default]
    Deny,
    /// Fail open: the request goes on as if the hook had allowed it.
    Allow,
}

/// One hook of the config file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HookConfig {
    /// Named in the audit log, the metrics and the reason a caller is given.
    pub name: String,
    /// Where the hook is POSTed to (http or https).
    pub url: String,
    #[serde(default = "all_phases")]
    pub phases: Vec<HookPhase>,
    #[serde(default = "all_kinds")]
    pub kinds: Vec<HookKind>,
    /// Globs (`*`, `?`) on the server id; none: every server.
    #[serde(default)]
    pub servers: Vec<String>,
    /// Globs on the name the hook is given (`{server_id}__{tool}`, a resource URI, a prompt
    /// name); none: every name.
    #[serde(default)]
    pub names: Vec<String>,
    #[serde(default = "default_timeout")]
    pub timeout_ms: u64,
    #[serde(default)]
    pub on_error: OnError,
    /// Sent as `Authorization: Bearer …`; never logged nor shown.
    #[serde(default)]
    pub bearer: Option<SecretString>,
    /// Whether allow decisions are audited too (deny, modify and failures always are).
    #[serde(default)]
    pub audit_allow: bool,
}

fn all_phases() -> Vec<HookPhase> {
    vec![HookPhase::Before, HookPhase::After]
}

fn all_kinds() -> Vec<HookKind> {
    vec![HookKind::Tool, HookKind::Resource, HookKind::Prompt]
}

fn default_timeout() -> u64 {
    DEFAULT_HOOK_TIMEOUT_MS
}

/// Checks every hook: a name of its own (letters, digits, `.`, `-`, `_`), an http(s) URL with
/// a host, some phases and kinds, no empty glob, a timeout from 1 ms to a minute.
pub fn validate_hooks(hooks: &[HookConfig]) -> Result<(), ConfigError> {
    let mut seen = std::collections::HashSet::new();
    for hook in hooks {
        let bad = |why: String| invalid("hooks", format!("hook \"{}\": {why}", hook.name));
        let name_ok = !hook.name.is_empty()
            && hook.name.len() <= 64
            && hook
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
        if !name_ok {
            return Err(bad(
                "a hook's `name` is 1 to 64 letters, digits, `.`, `-` or `_`".into(),
            ));
        }
        if !seen.insert(hook.name.as_str()) {
            return Err(bad("two hooks have this name".into()));
        }
        match url::Url::parse(&hook.url) {
            Ok(url) if matches!(url.scheme(), "http" | "https") => {
                crate::guard::check_host_syntax(&url).map_err(bad)?;
                if !url.username().is_empty() || url.password().is_some() {
                    return Err(bad(
                        "the URL must not hold credentials: give them as `bearer`".into(),
                    ));
                }
            }
            _ => return Err(bad(format!("`url` {:?} is not an http(s) URL", hook.url))),
        }
        if hook.phases.is_empty() || hook.kinds.is_empty() {
            return Err(bad(
                "`phases` and `kinds` need at least one entry each (leave them out for all)".into(),
            ));
        }
        if hook.servers.iter().chain(&hook.names).any(String::is_empty) {
            return Err(bad("an empty glob in `servers` or `names`".into()));
        }
        if !(1..=MAX_HOOK_TIMEOUT_MS).contains(&hook.timeout_ms) {
            return Err(bad(format!(
                "`timeout_ms` must be between 1 and {MAX_HOOK_TIMEOUT_MS}"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Vec<HookConfig> {
        #[derive(Deserialize)]
        struct File {
            hooks: Vec<HookConfig>,
        }
        toml::from_str::<File>(text).unwrap().hooks
    }

    #[test]
    fn defaults_and_refusals() {
        let hooks = parse(
            "[[hooks]]\nname = \"guard\"\nurl = \"http://127.0.0.1:9/h\"\nbearer = \"s3cret\"\n",
        );
        assert_eq!(hooks[0].phases, all_phases());
        assert_eq!(hooks[0].kinds, all_kinds());
        assert_eq!(hooks[0].timeout_ms, 2000);
        assert_eq!(hooks[0].on_error, OnError::Deny);
        assert!(
            !format!("{hooks:?}").contains("s3cret"),
            "the bearer is redacted"
        );
        validate_hooks(&hooks).unwrap();
        for (edit, why) in [
            ("name = \"a b\"", "`name`"),
            ("url = \"ftp://x/\"", "not an http(s) URL"),
            ("url = \"http://u:p@x/\"", "credentials"),
            ("phases = []", "`phases`"),
            ("names = [\"\"]", "empty glob"),
            ("timeout_ms = 0", "`timeout_ms`"),
        ] {
            // The edit replaces the line of its key, or is added.
            let key = edit.split(' ').next().unwrap();
            let mut lines: Vec<&str> = ["name = \"guard\"", "url = \"http://127.0.0.1:9/h\""]
                .into_iter()
                .filter(|line| !line.starts_with(key))
                .collect();
            lines.push(edit);
            let edited = parse(&format!("[[hooks]]\n{}\n", lines.join("\n")));
            let refused = validate_hooks(&edited).unwrap_err().to_string();
            assert!(refused.contains(why), "{edit}: {refused}");
            assert!(refused.contains("hooks"), "{refused}");
        }
        let twice = [hooks[0].clone(), hooks[0].clone()];
        assert!(validate_hooks(&twice).is_err());
    }
}
