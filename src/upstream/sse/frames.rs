//! The framing of an SSE stream, bytes in and events out: each event cut at its blank line,
//! parsed by `sse-stream`'s rules, and one over the limit read through for its `id` only.

use rmcp::model::RequestId;
use sse_stream::Sse;

use super::super::limit::IdScanner;

/// One event of the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A whole event: its name (`message` when absent) and its data.
    Whole(String, String),
    /// An event larger than the limit, read through: its message's top-level `id` and whether
    /// it has a `method`.
    TooLarge {
        id: Option<RequestId>,
        has_method: bool,
    },
}

/// What the cut yields: a whole event's length, or an event read through.
enum Block {
    Whole(usize),
    TooLarge(Event),
}

/// The framing of an SSE stream: bytes in, events out. The stream is cut at the blank lines
/// that end events, each byte looked at once however the stream is chunked, and each whole
/// event is parsed where it lies by `sse-stream`'s rules ([`parse_event`]: fields, comments,
/// UTF-8). That crate has no bound of its own: it holds an event's lines and data however
/// long, and has no way to drop an event it has begun, so the cut stays here. An event larger
/// than the limit is never held: it is read through with [`Skipping`]. (rmcp bounds
/// `sse-stream` by ending the stream at such an event; here the stream is the connection, and
/// only the call it answers may fail.)
#[derive(Debug)]
pub struct Frames {
    limit: usize,
    buffer: Vec<u8>,
    /// How far `buffer` is known to hold no event boundary.
    scanned: usize,
    /// Reading through an event over the limit.
    skipping: Option<Skipping>,
    /// An event over the limit that has ended, not yet taken.
    skipped: Option<Event>,
}

impl Default for Frames {
    fn default() -> Self {
        Self::new(crate::config::DEFAULT_MAX_MESSAGE_BYTES)
    }
}

impl Frames {
    /// Framing that takes events of up to `limit` bytes.
    pub fn new(limit: usize) -> Self {
        Self {
            limit,
            buffer: Vec::new(),
            scanned: 0,
            skipping: None,
            skipped: None,
        }
    }

    /// Adds a chunk.
    pub fn push(&mut self, mut chunk: &[u8]) {
        if let Some(skipping) = &mut self.skipping {
            match skipping.feed(chunk) {
                None => return,
                Some(end) => {
                    self.skipped = Some(skipping.event());
                    self.skipping = None;
                    chunk = &chunk[end..];
                }
            }
        }
        self.buffer.extend_from_slice(chunk);
    }

    /// The next event, whole or read through.
    pub fn next_event(&mut self) -> Option<Event> {
        Some(match self.next_sse()? {
            Ok(sse) => Event::Whole(
                sse.event.unwrap_or_else(|| "message".to_owned()),
                sse.data.unwrap_or_default(),
            ),
            Err(too_large) => too_large,
        })
    }

    /// The next event: whole, with all its fields, or read through ([`Event::TooLarge`]).
    pub fn next_sse(&mut self) -> Option<Result<Sse, Event>> {
        loop {
            match self.next_block()? {
                Block::Whole(end) => {
                    let parsed = parse(&self.buffer[..end]);
                    self.buffer.drain(..end);
                    self.scanned = 0;
                    match parsed {
                        Some(sse) => return Some(Ok(sse)),
                        None => continue,
                    }
                }
                Block::TooLarge(event) => return Some(Err(event)),
            }
        }
    }

    /// The next event: the length of its bytes at the start of the buffer (its blank line
    /// included), or an event read through.
    fn next_block(&mut self) -> Option<Block> {
        if let Some(skipped) = self.skipped.take() {
            return Some(Block::TooLarge(skipped));
        }
        let Some(end) = self.event_end() else {
            if self.buffer.len() > self.limit {
                let mut skipping = Skipping::default();
                let ended = skipping.feed(&self.buffer);
                debug_assert!(ended.is_none(), "no boundary in the buffer");
                self.buffer.clear();
                self.scanned = 0;
                self.skipping = Some(skipping);
            }
            return None;
        };
        if end > self.limit {
            // Came in whole, but larger than the limit all the same.
            let mut skipping = Skipping::default();
            let ended = skipping.feed(&self.buffer[..end]);
            debug_assert_eq!(ended, Some(end));
            self.buffer.drain(..end);
            self.scanned = 0;
            return Some(Block::TooLarge(skipping.event()));
        }
        Some(Block::Whole(end))
    }

    /// The end of the first event (after its blank line), for `\n` or `\r\n` lines: the first
    /// `\n` from where the last scan ended that closes `\n\n` or `\r\n\r\n`.
    fn event_end(&mut self) -> Option<usize> {
        let buffer = &self.buffer;
        let found = memchr::memchr_iter(b'\n', &buffer[self.scanned..])
            .map(|at| self.scanned + at)
            .find(|&at| {
                (at >= 1 && buffer[at - 1] == b'\n')
                    || (at >= 3 && &buffer[at - 3..at] == b"\r\n\r")
            });
        match found {
            Some(at) => Some(at + 1),
            None => {
                self.scanned = self.buffer.len();
                None
            }
        }
    }
}

/// The field of the line being read through.
#[derive(Debug)]
enum Field {
    /// Its name so far (only the first bytes: `data` is short).
    Name(Vec<u8>),
    /// A `data` value; `started` once past the space that may follow the colon.
    Data {
        started: bool,
    },
    Other,
}

impl Default for Field {
    fn default() -> Self {
        Self::Name(Vec::new())
    }
}

/// Reads through an event line by line, handing only its data to an [`IdScanner`].
#[derive(Debug, Default)]
struct Skipping {
    scanner: IdScanner,
    field: Field,
    /// Bytes in the current line (a CR not counted).
    line: usize,
    /// A data line has ended: the next one's data comes after a newline.
    newline: bool,
    /// The last three bytes, the newest last: the event ends at `\n\n` or `\r\n\r\n`, as in
    /// [`Frames::event_end`].
    last: [u8; 3],
}

impl Skipping {
    fn event(&self) -> Event {
        Event::TooLarge {
            id: self.scanner.id(),
            has_method: self.scanner.has_method(),
        }
    }

    /// Reads bytes of the event; where the event ended (after its blank line), if it did.
    fn feed(&mut self, bytes: &[u8]) -> Option<usize> {
        for (at, &byte) in bytes.iter().enumerate() {
            let last = self.last;
            self.last = [last[1], last[2], byte];
            if byte == b'\n' && (last[2] == b'\n' || last == *b"\r\n\r") {
                return Some(at + 1);
            }
            match byte {
                b'\n' => {
                    if matches!(self.field, Field::Data { .. }) {
                        self.newline = true;
                    }
                    self.field = Field::default();
                    self.line = 0;
                }
                b'\r' => {}
                _ => {
                    self.line += 1;
                    match &mut self.field {
                        Field::Name(name) if byte == b':' => {
                            self.field = if name == b"data" {
                                Field::Data { started: false }
                            } else {
                                Field::Other
                            };
                        }
                        Field::Name(name) if name.len() < 8 => name.push(byte),
                        Field::Name(_) => self.field = Field::Other,
                        Field::Data { started } => {
                            let first = !*started;
                            *started = true;
                            if !(first && byte == b' ') {
                                if self.newline {
                                    self.newline = false;
                                    self.scanner.feed(b"\n");
                                }
                                self.scanner.feed(std::slice::from_ref(&byte));
                            }
                        }
                        Field::Other => {}
                    }
                }
            }
        }
        None
    }
}

/// The event in `block` (one whole event, its blank line included) as `sse-stream` parses it.
/// None for a block of comments only, or one `sse-stream` refuses (a line that is no field),
/// which is dropped with a warning.
fn parse(block: &[u8]) -> Option<Sse> {
    match parse_event(block) {
        Ok(sse) => sse,
        Err(error) => {
            tracing::warn!(%error, "an event on the SSE stream is not valid; it is dropped");
            None
        }
    }
}

/// `sse-stream`'s parse of one event, without its stream: lines end at `\n`, `\r\n` or `\r`;
/// a line is `field: value` (one space after the colon dropped) or a comment (`:` first); the
/// fields are `data` (lines joined by `\n`), `event`, `id` (ignored when it holds a NUL) and
/// `retry` (a number), each but `data` at most once; anything else refuses the event. The first
/// line may start with a byte order mark. The event ends at the first blank line.
fn parse_event(block: &[u8]) -> Result<Option<Sse>, &'static str> {
    const BOM: &[u8] = b"\xEF\xBB\xBF";
    fn text(bytes: &[u8]) -> Result<&str, &'static str> {
        std::str::from_utf8(bytes).map_err(|_| "a field is not UTF-8")
    }
    let mut sse: Option<Sse> = None;
    let mut rest = block;
    let mut first = true;
    while !rest.is_empty() {
        let end = memchr::memchr2(b'\n', b'\r', rest).unwrap_or(rest.len());
        let mut line = &rest[..end];
        rest = match rest.get(end..=end + 1) {
            Some(b"\r\n") => &rest[end + 2..],
            _ => &rest[(end + 1).min(rest.len())..],
        };
        if std::mem::take(&mut first) {
            line = line.strip_prefix(BOM).unwrap_or(line);
        }
        if line.is_empty() {
            if sse.is_some() {
                return Ok(sse);
            }
            continue;
        }
        let colon = memchr::memchr(b':', line).ok_or("a line has no `:`")?;
        let (name, value) = (&line[..colon], &line[colon + 1..]);
        let value = value.strip_prefix(b" ").unwrap_or(value);
        match name {
            b"data" => {
                let value = text(value)?;
                let event = sse.get_or_insert_default();
                match &mut event.data {
                    Some(data) => {
                        data.push('\n');
                        data.push_str(value);
                    }
                    None => event.data = Some(value.to_owned()),
                }
            }
            b"event" => {
                let value = text(value)?;
                let event = sse.get_or_insert_default();
                if event.event.is_some() {
                    return Err("a second `event` line");
                }
                event.event = Some(value.to_owned());
            }
            b"id" if value.contains(&0) => {}
            b"id" => {
                let value = text(value)?;
                let event = sse.get_or_insert_default();
                if event.id.is_some() {
                    return Err("a second `id` line");
                }
                event.id = Some(value.to_owned());
            }
            b"retry" => {
                let value = text(value)?.trim_ascii();
                let value = value.parse().map_err(|_| "`retry` is not a number")?;
                let event = sse.get_or_insert_default();
                if event.retry.is_some() {
                    return Err("a second `retry` line");
                }
                event.retry = Some(value);
            }
            b"" => {}
            _ => return Err("a line of an unknown field"),
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repeatable run of pseudo-random numbers from `seed` (an LCG: enough to pick pieces).
    fn numbers(mut seed: u64) -> impl FnMut() -> usize {
        move || {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) as usize
        }
    }

    fn events_with(stream: &[u8], chunk: usize, limit: usize) -> Vec<Event> {
        let mut frames = Frames::new(limit);
        let mut events = Vec::new();
        for part in stream.chunks(chunk) {
            frames.push(part);
            while let Some(event) = frames.next_event() {
                events.push(event);
            }
        }
        events
    }

    fn events_of(stream: &[u8], chunk: usize) -> Vec<(String, String)> {
        events_with(stream, chunk, 1 << 20)
            .into_iter()
            .map(|event| match event {
                Event::Whole(name, data) => (name, data),
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn any_stream_is_framed_the_same_however_chunked_with_a_limit() {
        // Lines of a field (some that sse-stream refuses) and a random value, ended in
        // every way a line or an event may end.
        const FIELDS: &[&str] = &[
            "data: ",
            "data:",
            "data: ",
            ": c",
            "id: 3",
            "event: endpoint",
            "oops",
        ];
        const VALUES: &[&str] = &[
            "{",
            "}",
            "\"id\":",
            "7",
            ",",
            "\"method\":",
            "\"x\\\"",
            "xxxxxxxxxxxxxxxx",
            "é",
        ];
        const ENDS: &[&str] = &["\n", "\r\n", "\n\n", "\r\n\r\n", "\n", "\r"];
        let mut next = numbers(0x2545_f491_u64);
        let (mut whole_events, mut too_large) = (0, 0);
        for _ in 0..300 {
            let mut stream = Vec::new();
            for _ in 0..20 {
                stream.extend_from_slice(FIELDS[next() % FIELDS.len()].as_bytes());
                for _ in 0..next() % 4 {
                    stream.extend_from_slice(VALUES[next() % VALUES.len()].as_bytes());
                }
                stream.extend_from_slice(ENDS[next() % ENDS.len()].as_bytes());
            }
            let whole = events_with(&stream, stream.len(), 40);
            for event in &whole {
                match event {
                    Event::Whole(..) => whole_events += 1,
                    Event::TooLarge { .. } => too_large += 1,
                }
            }
            for chunk in 1..8 {
                assert_eq!(
                    events_with(&stream, chunk, 40),
                    whole,
                    "{:?} in chunks of {chunk}",
                    String::from_utf8_lossy(&stream)
                );
            }
        }
        assert!(
            whole_events > 20 && too_large > 20,
            "{whole_events} {too_large}"
        );
    }

    #[test]
    fn an_event_over_the_limit_is_read_through_for_its_id() {
        let big = "x".repeat(500);
        let stream = format!(
            "event: endpoint\ndata: /m\n\n\
             data: {{\"jsonrpc\":\"2.0\",\"result\":{{\"t\":\"{big}\"}},\r\ndata: \"id\":7}}\r\n\r\n\
             data: {{\"method\":\"m\",\"params\":\"{big}\"}}\n\n\
             data: {{\"id\":8,\"result\":{{}}}}\n\n"
        );
        let expected = vec![
            Event::Whole("endpoint".into(), "/m".into()),
            Event::TooLarge {
                id: Some(rmcp::model::NumberOrString::Number(7)),
                has_method: false,
            },
            Event::TooLarge {
                id: None,
                has_method: true,
            },
            Event::Whole("message".into(), "{\"id\":8,\"result\":{}}".into()),
        ];
        for chunk in [1, 2, 3, 5, 64, 100, 1000, stream.len()] {
            assert_eq!(
                events_with(stream.as_bytes(), chunk, 100),
                expected,
                "chunks of {chunk}"
            );
        }
    }

    #[test]
    fn events_are_framed_the_same_however_the_stream_is_chunked() {
        let stream = "event: endpoint\r\ndata: /m?s=1\r\n\r\ndata: {\"é\":1}\n\n: ping\n\ndata: a\ndata: b\n\ntail";
        let whole = events_of(stream.as_bytes(), stream.len());
        assert_eq!(
            whole,
            [
                ("endpoint".into(), "/m?s=1".into()),
                ("message".into(), "{\"é\":1}".into()),
                ("message".into(), "a\nb".into()),
            ]
        );
        for chunk in 1..stream.len() {
            assert_eq!(
                events_of(stream.as_bytes(), chunk),
                whole,
                "chunks of {chunk}"
            );
        }
    }

    /// One event as `sse-stream` parses it, as `parse` did before it parsed events itself.
    fn parsed_by_sse_stream(block: &[u8]) -> Option<Sse> {
        use futures::{FutureExt, StreamExt};
        let bytes = bytes::Bytes::copy_from_slice(block);
        let chunks = futures::stream::iter([Ok::<_, std::convert::Infallible>(bytes)]);
        sse_stream::SseStream::from_bytes_stream(chunks)
            .next()
            .now_or_never()??
            .ok()
    }

    #[test]
    fn events_are_parsed_as_sse_stream_parses_them() {
        const LINES: &[&str] = &[
            "data: {\"id\":1}",
            "data:x",
            "data",
            "data: ",
            "event: message",
            "event: endpoint",
            "id: 7",
            "id:",
            "id: a\0b",
            "retry: 100",
            "retry:  5 ",
            "retry: soon",
            ": a comment",
            ":",
            "\u{feff}data: bom",
            "oops: x",
            "oops",
            "data: é",
        ];
        const ENDS: &[&str] = &["\n", "\r\n", "\r"];
        let mut next = numbers(0x9e37_79b9_u64);
        let (mut events, mut refused) = (0, 0);
        for _ in 0..3000 {
            let mut block = Vec::new();
            for _ in 0..1 + next() % 5 {
                block.extend_from_slice(LINES[next() % LINES.len()].as_bytes());
                block.extend_from_slice(ENDS[next() % ENDS.len()].as_bytes());
            }
            block.extend_from_slice([b"\n\n".as_slice(), b"\r\n\r\n"][next() % 2]);
            let expected = parsed_by_sse_stream(&block);
            match &expected {
                Some(_) => events += 1,
                None => refused += 1,
            }
            assert_eq!(
                parse(&block),
                expected,
                "{:?}",
                String::from_utf8_lossy(&block)
            );
        }
        assert!(events > 300 && refused > 300, "{events} {refused}");
    }

    #[test]
    fn events_and_their_data() {
        let parse = |text: &str| {
            parse(text.as_bytes()).map(|sse| {
                let event = sse.event.unwrap_or_else(|| "message".into());
                Event::Whole(event, sse.data.unwrap_or_default())
            })
        };
        // The other fields are kept, for a stream to be resumed from its last event.
        let with_id = super::parse(b"id: 7\nretry: 100\ndata: x\n\n").unwrap();
        assert_eq!(
            (with_id.id.as_deref(), with_id.retry),
            (Some("7"), Some(100))
        );
        assert_eq!(
            parse("event: endpoint\ndata: /message?sessionId=1\n\n"),
            Some(Event::Whole(
                "endpoint".into(),
                "/message?sessionId=1".into()
            ))
        );
        assert_eq!(
            parse("data: {\"a\":1}\r\n\r\n"),
            Some(Event::Whole("message".into(), "{\"a\":1}".into()))
        );
        assert_eq!(parse(": keep-alive\n\n"), None, "a comment is no event");
        assert_eq!(parse("data: a\nnot a field\n\n"), None, "refused");
    }
}
