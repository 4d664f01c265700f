//! Checks a server config before anything is connected or stored: every refusal says which field
//! is wrong and why.

use axum::http::{HeaderName, HeaderValue};

use super::naming;
use crate::a2e::{McpServerConfig, McpTransport};
use crate::guard::Guard;

/// Longest `timeout` / `connect_timeout` accepted, in seconds (one day).
const MAX_TIMEOUT: u64 = 86_400;

/// Checks `config` (with its `server_id` already set).
pub fn check_config(config: &McpServerConfig, guard: &Guard) -> Result<(), String> {
    naming::check_server_id(&config.server_id)?;
    for (field, value) in [
        ("timeout", config.timeout),
        ("connect_timeout", config.connect_timeout),
    ] {
        if !(1..=MAX_TIMEOUT).contains(&value) {
            return Err(format!(
                "`{field}` must be between 1 and {MAX_TIMEOUT} seconds"
            ));
        }
    }
    for (list, name) in [
        (&config.tool_allow_list, "tool_allow_list"),
        (&config.resource_allow_list, "resource_allow_list"),
    ] {
        if list.iter().any(|entry| entry.is_empty()) {
            return Err(format!("`{name}` must not contain an empty entry"));
        }
    }
    match config.transport {
        McpTransport::Stdio => check_stdio(config),
        McpTransport::Http | McpTransport::Sse | McpTransport::Ws => check_remote(config, guard),
    }
}

fn check_stdio(config: &McpServerConfig) -> Result<(), String> {
    if config
        .cmd
        .first()
        .is_none_or(|program| program.trim().is_empty())
    {
        return Err("a stdio server needs a command: `cmd` must start with a program".into());
    }
    if config.cmd.iter().any(|arg| arg.contains('\0')) {
        return Err("`cmd` must not contain NUL characters".into());
    }
    for (name, value) in &config.env {
        if name.is_empty() || name.contains('=') || name.contains('\0') || value.contains('\0') {
            return Err(format!(
                "`env` entry \"{name}\" is not a valid environment variable"
            ));
        }
    }
    Ok(())
}

fn check_remote(config: &McpServerConfig, guard: &Guard) -> Result<(), String> {
    let schemes: &[&str] = match config.transport {
        McpTransport::Ws => &["ws", "wss"],
        _ => &["http", "https"],
    };
    let url = reqwest::Url::parse(&config.url)
        .map_err(|e| format!("`url` \"{}\" is not a valid URL: {e}", config.url))?;
    if !schemes.contains(&url.scheme()) {
        return Err(format!(
            "`url` of a {} server must use {}",
            config.transport.as_str(),
            schemes.join(" or ")
        ));
    }
    crate::guard::check_host_syntax(&url).map_err(|e| format!("`url`: {e}"))?;
    guard
        .check_url(&url)
        .map_err(|refused| format!("`url`: {refused}"))?;
    for (name, value) in &config.headers {
        let header = HeaderName::try_from(name.as_str())
            .map_err(|_| format!("`headers` entry \"{name}\" is not a valid header name"))?;
        if HeaderValue::try_from(value.as_str()).is_err() {
            return Err(format!(
                "the value of header \"{header}\" is not a valid header value"
            ));
        }
        if matches!(
            header.as_str(),
            "accept" | "mcp-session-id" | "last-event-id" | "host" | "content-length"
        ) {
            return Err(format!(
                "header \"{header}\" is set by the transport and cannot be configured"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(config: &McpServerConfig) -> Result<(), String> {
        check_config(config, &Guard::default())
    }

    fn http(url: &str) -> McpServerConfig {
        McpServerConfig {
            server_id: "s".into(),
            transport: McpTransport::Http,
            url: url.into(),
            ..Default::default()
        }
    }

    #[test]
    fn stdio_needs_a_command() {
        let mut config = McpServerConfig {
            server_id: "s".into(),
            ..Default::default()
        };
        assert!(check(&config).unwrap_err().contains("cmd"));
        config.cmd = vec!["  ".into()];
        assert!(check(&config).is_err());
        config.cmd = vec!["node".into(), "server.js".into()];
        assert!(check(&config).is_ok());
    }

    #[test]
    fn remote_urls() {
        assert!(check(&http("http://127.0.0.1:3000/mcp")).is_ok());
        assert!(check(&http("https://example.com/mcp")).is_ok());
        assert!(
            check(&http("ftp://example.com"))
                .unwrap_err()
                .contains("http")
        );
        assert!(check(&http("not a url")).is_err());
        for refused in [
            "http://169.254.169.254/latest",
            "http://[fe80::1]/mcp",
            "http://[::ffff:169.254.1.1]/",
            "http://metadata.google.internal/",
            "http://100.100.100.200/",
        ] {
            assert!(
                check(&http(refused)).unwrap_err().contains("address guard"),
                "{refused}"
            );
        }
    }

    #[test]
    fn headers_and_limits() {
        let mut config = http("http://127.0.0.1/mcp");
        config.headers.insert("bad header".into(), "x".into());
        assert!(check(&config).is_err());
        let mut config = http("http://127.0.0.1/mcp");
        config.headers.insert("Accept".into(), "x".into());
        assert!(check(&config).unwrap_err().contains("transport"));
        let mut config = http("http://127.0.0.1/mcp");
        config.timeout = 0;
        assert!(check(&config).unwrap_err().contains("timeout"));
    }
}
