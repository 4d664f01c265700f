//! mcp-bridge: the MCP capability of an A2E host. Agents reach many MCP servers through one REST
//! API and one SSE stream each; see `ARCHITECTURE.md` for the design.

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
