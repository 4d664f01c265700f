//! Any bytes as a legacy SSE stream, cut into chunks where the first byte says: framing never
//! panics, and gives the same events however the stream is cut.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_bridge::upstream::{Frames, SseEvent};

/// Events of at most 1 KiB, so that events over the limit (read through) are exercised too.
fn events(stream: &[u8], chunk: usize) -> Vec<SseEvent> {
    let mut frames = Frames::new(1024);
    let mut events = Vec::new();
    for part in stream.chunks(chunk.max(1)) {
        frames.push(part);
        while let Some(event) = frames.next_event() {
            events.push(event);
        }
    }
    events
}

fuzz_target!(|data: &[u8]| {
    let Some((&cut, stream)) = data.split_first() else {
        return;
    };
    assert_eq!(
        events(stream, usize::from(cut)),
        events(stream, stream.len())
    );
});
