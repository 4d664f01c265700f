//! Any bytes as a server config: parsing, the checks a registration makes (URLs, headers, names,
//! the address guard on literal hosts) and the redaction of secrets never panic, and a redacted
//! config shows no `env` or `headers` value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_bridge::a2e::McpServerConfig;
use mcp_bridge::guard::Guard;

fuzz_target!(|data: &[u8]| {
    let Ok(config) = serde_json::from_slice::<McpServerConfig>(data) else {
        return;
    };
    let _ = mcp_bridge::registry::check_config(&config, &Guard::new(false));
    let redacted = config.redacted();
    assert!(redacted.env.values().all(|v| v == "***"));
    assert!(redacted.headers.values().all(|v| v == "***"));
    let _ = mcp_bridge::a2e::redact_url(&config.url);
});
