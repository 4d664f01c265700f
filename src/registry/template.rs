//! Matching a URI against an RFC 6570 URI template, to route a read to the server whose template
//! can produce it. Literal parts match exactly; `{var}` matches one path segment, `{+var}` and
//! `{#var}` anything, `{/var}` `{.var}` `{;var}` their prefixed forms, `{?q}` `{&q}` a query part.

/// Longest URI matched against templates; longer ones match none (the search is quadratic).
const MAX_URI: usize = 2048;
/// Most expressions in a template that can match (each one multiplies the search).
const MAX_EXPRESSIONS: usize = 4;

/// Whether `uri` is one of the URIs `template` can produce.
pub fn matches(template: &str, uri: &str) -> bool {
    if uri.len() > MAX_URI {
        return false;
    }
    match parse(template) {
        Some(parts)
            if parts.iter().filter(|p| matches!(p, Part::Expr(_))).count() <= MAX_EXPRESSIONS =>
        {
            match_parts(&parts, uri)
        }
        _ => false,
    }
}

/// The literal text before the first expression: every URI of the template starts with it.
pub fn literal_prefix(template: &str) -> &str {
    template.split('{').next().unwrap_or_default()
}

#[derive(Debug, PartialEq)]
enum Part<'a> {
    Literal(&'a str),
    /// An expression: what it may match.
    Expr(Operator),
}

#[derive(Debug, PartialEq, Clone, Copy)]
enum Operator {
    /// One segment: no `/`, `?` or `#`.
    Simple,
    /// Anything, `/` included.
    Reserved,
    /// The given prefix, then as `Simple` repeated with the prefix between.
    Prefixed(char),
    /// `?…` or `&…` up to the end or `#`.
    Query(char),
}

fn parse(template: &str) -> Option<Vec<Part<'_>>> {
    let mut parts = Vec::new();
    let mut rest = template;
    while !rest.is_empty() {
        match rest.find('{') {
            Some(0) => {
                let end = rest.find('}')?;
                let body = &rest[1..end];
                let op = match body.chars().next()? {
                    '+' | '#' => Operator::Reserved,
                    c @ ('/' | '.' | ';') => Operator::Prefixed(c),
                    c @ ('?' | '&') => Operator::Query(c),
                    _ => Operator::Simple,
                };
                parts.push(Part::Expr(op));
                rest = &rest[end + 1..];
            }
            Some(i) => {
                parts.push(Part::Literal(&rest[..i]));
                rest = &rest[i..];
            }
            None => {
                parts.push(Part::Literal(rest));
                rest = "";
            }
        }
    }
    Some(parts)
}

fn match_parts(parts: &[Part<'_>], uri: &str) -> bool {
    let Some((first, rest)) = parts.split_first() else {
        return uri.is_empty();
    };
    match first {
        Part::Literal(text) => uri
            .strip_prefix(text)
            .is_some_and(|after| match_parts(rest, after)),
        Part::Expr(op) => {
            // Try every length the expression could take, shortest first.
            let mut ends: Vec<usize> = uri.char_indices().map(|(i, _)| i).skip(1).collect();
            ends.push(uri.len());
            if matches!(op, Operator::Query(_) | Operator::Prefixed(_)) {
                ends.insert(0, 0);
            }
            ends.into_iter()
                .take_while(|&end| fits(*op, &uri[..end]))
                .any(|end| match_parts(rest, &uri[end..]))
        }
    }
}

/// Whether `value` is something the expression could have expanded to (checked on each prefix,
/// so a value that stops fitting ends the search).
fn fits(op: Operator, value: &str) -> bool {
    let segment = |s: &str| !s.contains(['/', '?', '#']);
    match op {
        Operator::Simple => !value.is_empty() && segment(value),
        Operator::Reserved => !value.is_empty(),
        Operator::Prefixed(c) => {
            value.is_empty() || (value.starts_with(c) && !value[1..].contains(['?', '#']))
        }
        Operator::Query(c) => value.is_empty() || (value.starts_with(c) && !value.contains('#')),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_expressions_match_one_segment() {
        assert!(matches(
            "demo://resource/dynamic/text/{id}",
            "demo://resource/dynamic/text/42"
        ));
        assert!(!matches(
            "demo://resource/dynamic/text/{id}",
            "demo://resource/dynamic/text/"
        ));
        assert!(!matches(
            "demo://resource/dynamic/text/{id}",
            "demo://resource/dynamic/text/4/2"
        ));
        assert!(!matches(
            "demo://resource/dynamic/text/{id}",
            "demo://other/42"
        ));
        assert!(matches("fixture://note/{name}", "fixture://note/xyz"));
        assert!(matches("db://{schema}/{table}", "db://public/users"));
        assert!(!matches("db://{schema}/{table}", "db://public"));
    }

    #[test]
    fn reserved_prefixed_and_query_expressions() {
        assert!(matches("file:///{+path}", "file:///etc/hosts"));
        assert!(matches("repo://x{/owner,name}", "repo://x/a/b"));
        assert!(matches(
            "search://items{?q,limit}",
            "search://items?q=a&limit=3"
        ));
        assert!(matches("search://items{?q,limit}", "search://items"));
        assert!(!matches("search://items{?q}", "search://itemz"));
        assert!(matches("plain://exact", "plain://exact"));
        assert!(!matches("plain://exact", "plain://exactly"));
        assert!(!matches("broken://{unclosed", "broken://x"));
    }

    #[test]
    fn literal_prefixes() {
        assert_eq!(literal_prefix("file:///{+path}"), "file:///");
        assert_eq!(literal_prefix("plain://x"), "plain://x");
    }
}
