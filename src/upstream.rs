//! Connections to MCP servers: one rmcp client per server over its transport (stdio, Streamable
//! HTTP), a watch on the transport so a dead connection is noticed at once, and the supervisor
//! that keeps each server connected.
//!
//! | module | what it owns |
//! |---|---|
//! | `connect` | connecting: URL check, OAuth token, transport, session start, first listing |
//! | `connection` | the live [`Connection`] and how each request on it is run |
//! | `call` | a tool call, its input-required rounds, its cancellation when dropped |
//! | `lists` | what a server lists, and the requests that read lists, resources and prompts |
//! | `subscribe` | subscriptions to a server's resources |
//! | `error` | [`ConnectError`] and [`CallError`] |
//! | `calls` | who made each call in flight, by request id and progress token |
//! | `handler` | the rmcp client handler: what the server asks of the bridge |
//! | `notify` | the pump that hands the server's notifications on |
//! | `direct` | plain tool calls posted without rmcp's client (Streamable HTTP) |
//! | `tasks` | MCP tasks on an upstream, in both eras |
//! | `listen` | the 2026-07-28 `subscriptions/listen` stream |
//! | `chain` | how a bridge recognises itself, and bounds chains of bridges |
//! | `stdio`, `http`, `sse`, `ws` | one transport each |
//! | `watched` | the watch on a transport that notices its end |
//! | `limit`, `lines` | the bound on one message (`max_message_bytes`), a stdio server's lines |
//! | `decode` | reading a server's messages knowing what was asked |
//! | `explain` | failed connections said in words |
//! | `refused` | a server's refusal that asks for authorization, on every transport |
//! | `oauth` | the OAuth client of servers that want a token |
//! | `identity` | the calling agent's identity as headers (`identity.headers` templates) |

mod call;
mod calls;
pub mod chain;
mod connect;
mod connection;
mod decode;
mod direct;
mod error;
mod explain;
mod handler;
mod http;
pub mod identity;
pub mod limit;
mod lines;
mod listen;
mod lists;
mod notify;
pub mod oauth;
mod refused;
mod sse;
mod stdio;
mod subscribe;
pub mod tasks;
mod traced;
mod watched;
mod ws;

pub use call::CANCEL_REASON;
pub use calls::CallOrigin;
pub use connect::{Established, SESSIONLESS, connect};
pub use connection::Connection;
pub use error::{CallError, ConnectError, INPUT_HANDED_OVER};
pub use handler::{BridgeClient, Context, Route, sampling_result};
pub use lists::Lists;
pub use sse::{Event as SseEvent, Frames};
pub use stdio::StderrTail;
pub use stdio::{BASE_ENV, LOADER_ENV, is_loader_variable};
