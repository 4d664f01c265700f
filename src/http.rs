//! What the two front ends (`api`, the REST API and its event streams; `mcp_server`, `/mcp`)
//! share over HTTP: the connection loop, the state every handler gets, the bearer-token check,
//! the per-agent limits, the request id, span and count of every request, and the HTTP error
//! type that maps A2E error codes to statuses.

pub mod auth;
pub mod error;
pub mod jwks;
pub mod limits;
pub mod observe;
pub mod serve;
pub mod state;
