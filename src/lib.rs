//! mcp-bridge: the MCP capability of an A2E host. Agents reach many MCP servers through one REST
//! API and one SSE stream each; see `ARCHITECTURE.md` for the design.

pub mod a2a;
pub mod a2e;
pub mod api;
pub mod auth;
pub mod config;
pub mod error;
pub mod guard;
pub mod hub;
pub mod import;
pub mod keyfile;
pub mod limits;
pub mod mcp_server;
pub mod metrics;
pub mod registry;
pub mod serve;
pub mod startup;
pub mod state;
pub mod store;
pub mod telemetry;
pub mod upstream;
