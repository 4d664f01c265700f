//! The Streamable HTTP transport: rmcp's client with the configured `headers` on every request;
//! and those headers, checked, for the other HTTP-based transports.

use std::collections::HashMap;

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use super::ConnectError;
use crate::a2e::McpServerConfig;
use crate::guard::Guard;

/// The configured `headers`, as HTTP headers.
pub fn header_map(config: &McpServerConfig) -> Result<HeaderMap, ConnectError> {
    let mut headers = HeaderMap::new();
    for (name, value) in &config.headers {
        let name = HeaderName::try_from(name.as_str())
            .map_err(|_| ConnectError::Config(format!("`{name}` is not a valid header name")))?;
        let value = HeaderValue::try_from(value.as_str()).map_err(|_| {
            ConnectError::Config(format!("the value of header `{name}` is not valid"))
        })?;
        headers.insert(name, value);
    }
    Ok(headers)
}

/// rmcp's client transport over an HTTP client of the address guard.
pub fn transport(
    config: &McpServerConfig,
    guard: Guard,
) -> Result<StreamableHttpClientTransport<reqwest::Client>, ConnectError> {
    let headers: HashMap<HeaderName, HeaderValue> = header_map(config)?
        .into_iter()
        .filter_map(|(k, v)| Some((k?, v)))
        .collect();
    let transport_config =
        StreamableHttpClientTransportConfig::with_uri(config.url.as_str()).custom_headers(headers);
    // No idle connections kept, as rmcp's own default client: reusing one whose last answer
    // (an SSE stream) was not read to its end stalls on delayed ACKs (~40 ms a call).
    let client = guard
        .http_client(true)
        .pool_max_idle_per_host(0)
        .build()
        .map_err(|e| ConnectError::Config(format!("cannot make an HTTP client: {e}")))?;
    Ok(StreamableHttpClientTransport::with_client(
        client,
        transport_config,
    ))
}
