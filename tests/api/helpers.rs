//! The test harness: the real service on port 0 with a temporary data dir, typed HTTP helpers,
//! tokens, and the real MCP peers installed by `scripts/test.sh`. Every test file takes it all
//! with `use crate::helpers::*;`; its parts:
//!
//! | module   | owns                                                                   |
//! |----------|------------------------------------------------------------------------|
//! | `app`    | `TestApp` and its builder: the service in process, config, tokens      |
//! | `calls`  | typed calls on `TestApp` that expect success (`call_tool`, ...)        |
//! | `wait`   | `wait_until` / `poll_until` and the bound `WAIT`                       |
//! | `store`  | the store on PostgreSQL (`MCP_BRIDGE_TEST_POSTGRES`), the stored text  |
//! | `peers`  | real peers: server-everything, the Python fixtures, the A2A agents     |
//! | `events` | `EventStream`, the SSE reader, and predicates on its messages          |
//! | `bridge` | the real `mcp-bridge` binary as a process of its own                   |
//! | `oauth`  | OAuth to upstreams: the OAuth peer, consent in a browser, authorize    |
//! | `proxy`  | a TCP proxy that can be cut: a database going down and coming back     |

mod app;
mod bridge;
mod calls;
mod events;
mod oauth;
mod peers;
mod proxy;
mod store;
mod wait;

pub use app::*;
pub use bridge::*;
pub use events::*;
pub use oauth::*;
pub use peers::*;
pub use proxy::*;
pub use store::*;
pub use wait::*;
