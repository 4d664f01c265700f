//! Failed connections said in words ("connection refused by 127.0.0.1:8931"), not as the chain
//! of errors the SDK and the HTTP stack report them with (`Transport [mcp_bridge::…<rmcp::…>]
//! error: Io error: error sending request for url (…): …`), which is what a server's `error`
//! showed.

use crate::a2e::{McpServerConfig, McpTransport};

/// `why`, the text of a failed connect or initialize over `config`'s transport, as a sentence
/// saying what happened for the common failures (refused, timed out, name not resolved, TLS,
/// an HTTP status, a process that exited); any other text without the SDK's type names.
pub fn in_words(why: &str, config: &McpServerConfig) -> String {
    let lower = why.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|word| lower.contains(word));
    if config.transport == McpTransport::Stdio {
        let ended = [
            "broken pipe",
            "os error 32",
            "connection closed",
            "transport closed",
        ];
        if has(&ended) {
            return "the process exited (or closed its stdin or stdout) before it answered".into();
        }
        return without_type_names(why);
    }
    let peer = peer(&config.url);
    // A status first: the connection worked, whatever the answer's body says.
    if let Some(status) = http_status(why) {
        let hint = match status.get(..3) {
            Some("401" | "403") => ": check the credentials in its `headers` or `url`",
            Some("404" | "405") => ": check the path in its `url` and its `transport`",
            _ => "",
        };
        return format!("{peer} answered HTTP {status}{hint}");
    }
    if has(&["connection refused", "os error 111"]) {
        format!("connection refused by {peer}")
    } else if has(&[
        "dns error",
        "failed to lookup address",
        "cannot resolve",
        "name or service not known",
        "no address associated",
    ]) {
        format!("cannot resolve the host name of {peer}")
    } else if has(&["certificate", "tls", "ssl", "handshake"]) {
        let detail = [
            "invalid peer certificate",
            "certificate",
            "tls",
            "handshake",
        ]
        .iter()
        .find_map(|word| lower.find(word))
        .map(|at| why[at..].trim_end_matches([')', '"']))
        .unwrap_or_default();
        format!("the TLS handshake with {peer} failed: {detail}")
    } else if has(&["timed out", "deadline has elapsed", "os error 110"]) {
        format!("{peer} did not answer in time")
    } else if has(&[
        "connection reset",
        "os error 104",
        "connection closed before message completed",
        "unexpected eof",
    ]) {
        format!("{peer} closed the connection before it answered")
    } else if has(&[
        "network is unreachable",
        "no route to host",
        "os error 101",
        "os error 113",
    ]) {
        format!("{peer} cannot be reached (no route to it)")
    } else {
        without_type_names(why)
    }
}

/// `error` and every cause in its chain, `: `-separated (reqwest's own text names only what
/// failed, "error sending request for url (…)", not why).
pub fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The `host:port` a URL names (the scheme's port when it names none), or the URL when it is
/// none.
fn peer(url: &str) -> String {
    let Ok(parsed) = url::Url::parse(url) else {
        return url.to_owned();
    };
    match (parsed.host_str(), parsed.port_or_known_default()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_owned(),
        _ => url.to_owned(),
    }
}

/// The status an answer's text names (`404 Not Found`), as rmcp (`HTTP 404 Not Found: …`), the
/// legacy SSE client (`… answered 404 Not Found`) and tungstenite (`HTTP error: 404 Not Found`)
/// write it.
fn http_status(why: &str) -> Option<String> {
    ["HTTP error: ", "HTTP ", "answered "]
        .iter()
        .find_map(|marker| {
            why.match_indices(marker).find_map(|(at, _)| {
                let rest = &why[at + marker.len()..];
                let digits = rest.get(..3)?;
                let follows = rest[3..].chars().next();
                if !digits.bytes().all(|b| b.is_ascii_digit()) || follows.is_some_and(|c| c != ' ')
                {
                    return None;
                }
                // The reason phrase, up to the body that may follow it.
                let end = rest.find([':', ',', ';', '(']).unwrap_or(rest.len());
                Some(rest[..end.min(40)].trim().to_owned())
            })
        })
}

/// `why` with rmcp's `Transport [<type name>]` shown as `transport`, and without its `Send
/// message error` wording.
pub fn without_type_names(why: &str) -> String {
    const NAMED: &str = "Transport [";
    let mut out = String::with_capacity(why.len());
    let mut rest = why;
    while let Some(at) = rest.find(NAMED) {
        out.push_str(&rest[..at]);
        let after = &rest[at + NAMED.len()..];
        let mut depth = 1;
        let end = after.char_indices().find_map(|(i, c)| {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(i)
        });
        match end {
            Some(i) => {
                out.push_str("transport");
                rest = &after[i + 1..];
            }
            None => {
                out.push_str(&rest[at..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out.replace("Send message error transport", "transport")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn over(transport: McpTransport, url: &str) -> McpServerConfig {
        McpServerConfig {
            transport,
            url: url.to_owned(),
            ..Default::default()
        }
    }

    #[test]
    fn common_failures_are_said_in_words() {
        let http = over(McpTransport::Http, "http://127.0.0.1:8931/mcp?api_key=k");
        let refused = "Send message error Transport [mcp_bridge::upstream::watched::Watched<rmcp::\
            transport::worker::WorkerTransport<rmcp::X<mcp_bridge::upstream::http::Bounded>>>] \
            error: Io error: error sending request for url (http://127.0.0.1:8931/mcp?api_key=***): \
            Connection refused (os error 111), when send initialize request";
        assert_eq!(
            in_words(refused, &http),
            "connection refused by 127.0.0.1:8931"
        );
        let status = "Send message error Transport [a<b>] error: unexpected server response: HTTP \
            404 Not Found: {\"error\":\"no such route\"}, when send initialize request";
        assert_eq!(
            in_words(status, &http),
            "127.0.0.1:8931 answered HTTP 404 Not Found: check the path in its `url` and its \
             `transport`"
        );
        let dns = "cannot resolve no-such-host.invalid: failed to lookup address information";
        let named = over(McpTransport::Sse, "https://no-such-host.invalid/sse");
        assert_eq!(
            in_words(dns, &named),
            "cannot resolve the host name of no-such-host.invalid:443"
        );
        let sse = "GET http://127.0.0.1:9/sse answered 401 Unauthorized";
        let sse_config = over(McpTransport::Sse, "http://127.0.0.1:9/sse");
        assert!(
            in_words(sse, &sse_config).starts_with("127.0.0.1:9 answered HTTP 401 Unauthorized")
        );
        let ws = "TLS to wss://h/ws: invalid peer certificate: UnknownIssuer";
        assert_eq!(
            in_words(ws, &over(McpTransport::Ws, "wss://h/ws")),
            "the TLS handshake with h:443 failed: invalid peer certificate: UnknownIssuer"
        );
        let stdio = over(McpTransport::Stdio, "");
        let exited = "Send message error Transport [mcp_bridge::upstream::watched::Watched<mcp_bridge::\
            upstream::stdio::StdioTransport>] error: Broken pipe (os error 32), when send initialize request";
        assert_eq!(
            in_words(exited, &stdio),
            "the process exited (or closed its stdin or stdout) before it answered"
        );
    }

    #[test]
    fn other_failures_lose_only_the_type_names() {
        let http = over(McpTransport::Http, "http://h/mcp");
        let odd = "Send message error Transport [a::B<c::D<[u8; 4]>>] error: something odd, when x";
        assert_eq!(
            in_words(odd, &http),
            "transport error: something odd, when x"
        );
        assert_eq!(in_words("plain", &http), "plain");
    }
}
