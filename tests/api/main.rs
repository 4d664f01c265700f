//! Integration tests: the real service on port 0 against real MCP peers.

mod a2a;
mod a2e;
mod access;
mod auth;
mod database;
mod deploy;
mod events;
mod exhaustion;
mod helpers;
mod import;
mod inputs;
mod limits;
mod loops;
mod mcp;
mod messages;
mod metrics;
mod oauth;
mod openapi;
mod prompts;
mod redaction;
mod replicas;
mod resources;
mod secrets;
mod servers;
mod supervision;
mod tools;
