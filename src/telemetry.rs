//! Builds the tracing subscriber: a filter from `MCP_BRIDGE_LOG` (or `RUST_LOG`-style directives),
//! human-readable lines on stderr.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// Installs the global subscriber. A second call (as in tests) is a no-op.
pub fn init(filter: &str) {
    let filter = EnvFilter::try_new(directives(filter)).unwrap_or_else(|_| EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

/// The filter's directives, with the MCP SDK's own at `warn` unless the filter names it: rmcp logs
/// several `info` lines for each `/mcp` request (a whole service starts and stops for each
/// stateless call), which would drown the gateway's log and cost a few percent of the call.
fn directives(filter: &str) -> String {
    if filter.contains("rmcp") {
        filter.to_owned()
    } else if filter.trim().is_empty() {
        "rmcp=warn".to_owned()
    } else {
        format!("{filter},rmcp=warn")
    }
}

#[cfg(test)]
mod tests {
    use super::directives;

    #[test]
    fn the_sdk_logs_warnings_unless_the_filter_names_it() {
        assert_eq!(directives("info"), "info,rmcp=warn");
        assert_eq!(
            directives("debug,mcp_bridge=trace"),
            "debug,mcp_bridge=trace,rmcp=warn"
        );
        assert_eq!(directives(""), "rmcp=warn");
        assert_eq!(directives("info,rmcp=debug"), "info,rmcp=debug");
        assert_eq!(directives("rmcp::service=info"), "rmcp::service=info");
    }
}
