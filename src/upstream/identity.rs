//! The calling agent's identity as headers to a server (`identity.headers` of a server's
//! config): templates checked when a server is registered, and filled in from the agent's
//! verified token when its connection is made. Pure functions.

use serde_json::Value;

use crate::caller::Caller;

/// Headers a template may not set: the bridge sets them itself (`Authorization` only through
/// `forward_token` or OAuth), or they would break the request.
const RESERVED: &[&str] = &[
    "authorization",
    "host",
    "content-length",
    "content-type",
    "transfer-encoding",
    "connection",
    "upgrade",
    "te",
    "cookie",
    "mcp-session-id",
    "mcp-protocol-version",
];

/// What a template is made of.
#[derive(Debug, PartialEq)]
enum Part<'a> {
    Text(std::borrow::Cow<'a, str>),
    /// `sub`, `roles`, or `claims.…` (the dotted path after `claims.`).
    Field(&'a str),
}

/// Splits a template into text and `{field}`s; `{{` and `}}` are literal braces.
fn parse(template: &str) -> Result<Vec<Part<'_>>, String> {
    let mut parts = Vec::new();
    let mut text = String::new();
    let mut rest = template;
    while let Some(at) = rest.find(['{', '}']) {
        text.push_str(&rest[..at]);
        let (brace, after) = (rest.as_bytes()[at], &rest[at + 1..]);
        if after.as_bytes().first() == Some(&brace) {
            text.push(brace as char);
            rest = &after[1..];
            continue;
        }
        if brace == b'}' {
            return Err(format!(
                "`{template}` has a `}}` that closes nothing (write `}}}}` for a brace)"
            ));
        }
        let end = after
            .find('}')
            .ok_or_else(|| format!("`{template}` has a `{{` that is not closed"))?;
        let field = &after[..end];
        check_field(field).map_err(|why| format!("`{template}`: {why}"))?;
        if !text.is_empty() {
            parts.push(Part::Text(std::mem::take(&mut text).into()));
        }
        parts.push(Part::Field(field));
        rest = &after[end + 1..];
    }
    text.push_str(rest);
    if !text.is_empty() {
        parts.push(Part::Text(text.into()));
    }
    Ok(parts)
}

fn check_field(field: &str) -> Result<(), String> {
    if field == "sub" || field == "roles" {
        return Ok(());
    }
    let path = field
        .strip_prefix("claims.")
        .ok_or_else(|| format!("`{{{field}}}` is none of {{sub}}, {{roles}} or {{claims.NAME}}"))?;
    if path.split('.').any(|name| name.is_empty()) {
        return Err(format!("`{{{field}}}` names an empty claim"));
    }
    Ok(())
}

/// Checks one `identity.headers` entry: a header name the bridge may set, and a template that
/// parses, whose text is a valid header value.
pub fn check_header(name: &str, template: &str) -> Result<(), String> {
    if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
        return Err(format!(
            "`identity.headers`: \"{name}\" is not a valid header name"
        ));
    }
    if RESERVED.contains(&name.to_ascii_lowercase().as_str()) {
        return Err(format!(
            "`identity.headers`: \"{name}\" is set by the bridge itself (the agent's token goes \
             upstream only with `identity.forward_token`, or exchanged with `auth.grant_type` \
             token_exchange)"
        ));
    }
    let parts = parse(template).map_err(|why| format!("`identity.headers.{name}`: {why}"))?;
    for part in &parts {
        if let Part::Text(text) = part
            && let Err(why) = check_value(text)
        {
            return Err(format!("`identity.headers.{name}`: {why}"));
        }
    }
    Ok(())
}

/// A header value the bridge sends: visible ASCII and spaces only (no CR, LF, NUL or other
/// control character, nothing beyond ASCII), at most 4 KiB.
pub fn check_value(value: &str) -> Result<(), String> {
    if value.len() > 4096 {
        return Err("the value is longer than 4096 bytes".into());
    }
    match value.bytes().find(|b| !(b' '..=b'~').contains(b)) {
        Some(b) => Err(format!(
            "the value holds a byte (0x{b:02x}) a header may not carry: only visible ASCII and spaces"
        )),
        None => Ok(()),
    }
}

/// The header value `template` makes for `caller`, or why it cannot be made (a claim it lacks,
/// a claim that is an object, a value a header cannot carry). The error never quotes the value.
pub fn render(template: &str, caller: &Caller) -> Result<String, String> {
    let mut value = String::new();
    for part in parse(template)? {
        match part {
            Part::Text(text) => value.push_str(&text),
            Part::Field("sub") => value.push_str(&caller.id),
            Part::Field("roles") => value.push_str(&caller.roles.join(" ")),
            Part::Field(field) => {
                let path = field.trim_start_matches("claims.");
                let mut names = path.split('.');
                let first = names.next().unwrap_or_default();
                let found =
                    names.try_fold(caller.claims.get(first), |at, name| Some(at?.get(name)));
                match found.flatten() {
                    Some(Value::String(text)) => value.push_str(text),
                    Some(Value::Number(n)) => value.push_str(&n.to_string()),
                    Some(Value::Bool(b)) => value.push_str(&b.to_string()),
                    Some(Value::Array(items))
                        if items.iter().all(|i| !i.is_object() && !i.is_array()) =>
                    {
                        let words: Vec<String> = items
                            .iter()
                            .map(|i| {
                                i.as_str()
                                    .map(str::to_owned)
                                    .unwrap_or_else(|| i.to_string())
                            })
                            .collect();
                        value.push_str(&words.join(" "));
                    }
                    None | Some(Value::Null) => {
                        return Err(format!("the agent's token has no claim `{path}`"));
                    }
                    Some(_) => {
                        return Err(format!(
                            "the claim `{path}` of the agent's token is an object, not a value"
                        ));
                    }
                }
            }
        }
    }
    check_value(&value)?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::caller::Identity;

    fn alice() -> Caller {
        let claims = serde_json::json!({
            "tenant": "acme", "realm_access": {"roles": ["lead", "dev"]}, "level": 3,
            "evil": "a\r\nX-Injected: 1", "nested": {"x": {"y": 1}}
        });
        Caller::from(Identity {
            id: "alice".into(),
            admin: false,
            roles: vec!["lead".into()],
            claims: claims.as_object().unwrap().clone(),
        })
    }

    #[test]
    fn templates_take_the_subject_roles_and_claims() {
        let alice = alice();
        assert_eq!(render("{sub}", &alice).unwrap(), "alice");
        assert_eq!(
            render("user={sub}; t={claims.tenant}", &alice).unwrap(),
            "user=alice; t=acme"
        );
        assert_eq!(
            render("{claims.realm_access.roles}", &alice).unwrap(),
            "lead dev"
        );
        assert_eq!(render("{roles}/{claims.level}", &alice).unwrap(), "lead/3");
        assert_eq!(
            render("{{literal}} {sub}", &alice).unwrap(),
            "{literal} alice"
        );
        let missing = render("{claims.nope}", &alice).unwrap_err();
        assert!(missing.contains("no claim `nope`"), "{missing}");
        assert!(
            render("{claims.nested}", &alice)
                .unwrap_err()
                .contains("object")
        );
    }

    #[test]
    fn a_value_a_header_cannot_carry_is_refused_without_being_quoted() {
        let why = render("{claims.evil}", &alice()).unwrap_err();
        assert!(why.contains("0x0d"), "{why}");
        assert!(!why.contains("X-Injected"), "{why}");
        assert!(check_value("caf\u{e9}").is_err());
        assert!(check_value("a\0b").is_err());
        assert!(check_value("plain value ~!").is_ok());
    }

    #[test]
    fn names_and_templates_are_checked_at_registration() {
        assert!(check_header("X-User", "{sub}").is_ok());
        assert!(check_header("X-Tenant", "t-{claims.tenant}").is_ok());
        for (name, template) in [
            ("X User", "{sub}"),
            ("Authorization", "Bearer {sub}"),
            ("host", "{sub}"),
            ("X-User", "{user}"),
            ("X-User", "{sub"),
            ("X-User", "sub}"),
            ("X-User", "{claims.}"),
            ("X-User", "a\nb"),
        ] {
            assert!(check_header(name, template).is_err(), "{name}: {template}");
        }
    }
}
