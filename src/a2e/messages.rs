//! The A2E messages: the 21 `mcp/*` messages of the seed, `tool/list` and `tool/call`, and the
//! messages mcp-bridge adds beyond the seed (`mcp/server/get|update|reconnect`).

mod agents;
mod client_features;
mod prompts;
mod resources;
mod servers;
mod tools;

pub use agents::*;
pub use client_features::*;
pub use prompts::*;
pub use resources::*;
pub use servers::*;
pub use tools::*;
