//! Any bytes as the body of every A2E request the API takes: parsed as the endpoints parse them
//! (JSON into the message, then its `type` checked), which must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_bridge::a2e::{self, Message};

fn parse<M: Message + serde::de::DeserializeOwned>(data: &[u8]) {
    if let Ok(message) = serde_json::from_slice::<M>(data) {
        let _ = message.check_type();
        let _ = message.id();
    }
}

fuzz_target!(|data: &[u8]| {
    parse::<a2e::ServerListRequest>(data);
    parse::<a2e::ServerRegisterRequest>(data);
    parse::<a2e::ServerUnregisterRequest>(data);
    parse::<a2e::ServerUpdateRequest>(data);
    parse::<a2e::ServerImportRequest>(data);
    parse::<a2e::ToolListRequest>(data);
    parse::<a2e::ToolCallRequest>(data);
    parse::<a2e::ResourceReadRequest>(data);
    parse::<a2e::ResourceSubscribeRequest>(data);
    parse::<a2e::PromptGetRequest>(data);
    parse::<a2e::CompletionRequest>(data);
    parse::<a2e::SamplingResponse>(data);
    parse::<a2e::RootsListResponse>(data);
    parse::<a2e::ElicitResponse>(data);
    parse::<a2e::RootsSetRequest>(data);
    parse::<a2e::A2aRegisterRequest>(data);
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) {
        let _ = mcp_bridge::import::entries(&value);
    }
});
