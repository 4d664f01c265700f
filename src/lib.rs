//! mcp-bridge: the MCP capability of an A2E host. Agents reach many MCP servers through one REST
//! API and one SSE stream each, and any MCP client reaches them through `/mcp`.
//!
//! The design, and the path of a REST and of a `/mcp` tool call from the socket to the upstream
//! and back, file by file: `docs/architecture.md`. In short, a call goes
//! `http/serve.rs` → `http/observe.rs` → `api/tools.rs` (REST) or `mcp_server/front.rs` →
//! `mcp_server/dispatch.rs` → `mcp_server/handler.rs` (`/mcp`) → `tools.rs` → `registry/calls.rs` →
//! `upstream/call.rs` → a transport (`upstream/http.rs`, `stdio.rs`, `sse.rs`, `ws.rs`); what the
//! server asks meanwhile comes back through `upstream/handler.rs` and a `hub::Recipient`.

pub mod a2a;
pub mod a2e;
pub mod access;
pub mod api;
pub mod caller;
pub mod config;
pub mod guard;
pub mod http;
pub mod hub;
pub mod import;
pub mod keyfile;
pub mod mcp_server;
pub mod metrics;
pub mod naming;
pub mod registry;
pub mod schema;
pub mod startup;
pub mod store;
pub mod tasks;
pub mod telemetry;
pub mod tools;
pub mod upstream;
pub mod wake;
