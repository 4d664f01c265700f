//! The bytes a WebSocket server sends, between the socket (or its TLS) and tungstenite, bounded
//! per message: a message in one frame over the limit is read through, never held (its header
//! tells its length before any of it is read), and replaced by a text frame with the error answer
//! for its request (or by nothing, see [`limit`](super::super::limit)). tungstenite sees a valid
//! stream and the connection goes on; left to itself it stops at such a frame with the rest of it
//! unread, and the socket cannot be read any further. A message in several frames over the limit
//! is still caught by tungstenite (see `WsTransport::receive`).
//!
//! Server frames are not masked and, without extensions negotiated (none are offered), their
//! payload is the message's bytes as they are.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::super::limit::{self, IdScanner};

/// Bytes read at once.
const CHUNK: usize = 8 * 1024;
/// Longest handshake answer looked through for its end (tungstenite bounds it too).
const MAX_HANDSHAKE: usize = 64 * 1024;

#[derive(Debug)]
enum State {
    /// The HTTP answer to the upgrade: passed on up to its blank line (`matched` bytes of
    /// `\r\n\r\n` seen last, `seen` in all).
    Handshake { matched: usize, seen: usize },
    /// A frame header, `have` bytes of it so far.
    Header { bytes: [u8; 14], have: usize },
    /// A frame's payload passed on.
    Pass { remaining: u64 },
    /// A frame's payload read through.
    Skip { remaining: u64, scanner: IdScanner },
    /// Something that is no WebSocket stream: passed on as it is, for tungstenite to refuse.
    Raw,
}

pub struct BoundedFrames<S> {
    inner: S,
    limit: usize,
    server_id: Arc<str>,
    state: State,
    /// Bytes for tungstenite, from `pos`.
    out: Vec<u8>,
    pos: usize,
    chunk: Box<[u8]>,
}

impl<S> BoundedFrames<S> {
    pub fn new(inner: S, limit: usize, server_id: &str) -> Self {
        Self {
            inner,
            limit,
            server_id: server_id.into(),
            state: State::Handshake {
                matched: 0,
                seen: 0,
            },
            out: Vec::new(),
            pos: 0,
            chunk: vec![0; CHUNK].into_boxed_slice(),
        }
    }

    /// Takes bytes read from the server.
    fn take(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            match &mut self.state {
                State::Raw => {
                    self.out.extend_from_slice(bytes);
                    return;
                }
                State::Handshake { matched, seen } => {
                    let mut used = 0;
                    for &byte in bytes {
                        used += 1;
                        *seen += 1;
                        *matched = match (byte, *matched) {
                            (b'\r', 0 | 2) => *matched + 1,
                            (b'\n', 1 | 3) => *matched + 1,
                            (b'\r', _) => 1,
                            _ => 0,
                        };
                        if *matched == 4 {
                            break;
                        }
                    }
                    let (done, seen) = (*matched == 4, *seen);
                    self.out.extend_from_slice(&bytes[..used]);
                    bytes = &bytes[used..];
                    if done {
                        self.state = State::Header {
                            bytes: [0; 14],
                            have: 0,
                        };
                    } else if seen > MAX_HANDSHAKE {
                        self.state = State::Raw;
                    }
                }
                State::Header {
                    bytes: header,
                    have,
                } => {
                    let needed = header_len(&header[..*have]);
                    let take = (needed - *have).min(bytes.len());
                    header[*have..*have + take].copy_from_slice(&bytes[..take]);
                    *have += take;
                    bytes = &bytes[take..];
                    // The length is known once the first two bytes are in.
                    if *have < header_len(&header[..*have]) {
                        continue;
                    }
                    let (whole, have) = (*header, *have);
                    let header = &whole[..have];
                    let length = payload_len(header);
                    let (fin, opcode, masked) = (
                        header[0] & 0x80 != 0,
                        header[0] & 0x0f,
                        header[1] & 0x80 != 0,
                    );
                    let whole_message = fin && (opcode == 1 || opcode == 2);
                    if whole_message && !masked && length > self.limit as u64 {
                        self.state = State::Skip {
                            remaining: length,
                            scanner: IdScanner::default(),
                        };
                    } else {
                        self.out.extend_from_slice(header);
                        self.state = State::Pass { remaining: length };
                    }
                }
                State::Pass { remaining } => {
                    let take = bytes
                        .len()
                        .min(usize::try_from(*remaining).unwrap_or(usize::MAX));
                    self.out.extend_from_slice(&bytes[..take]);
                    *remaining -= take as u64;
                    bytes = &bytes[take..];
                }
                State::Skip { remaining, scanner } => {
                    let take = bytes
                        .len()
                        .min(usize::try_from(*remaining).unwrap_or(usize::MAX));
                    scanner.feed(&bytes[..take]);
                    *remaining -= take as u64;
                    bytes = &bytes[take..];
                    if *remaining == 0
                        && let Some(answer) = limit::verdict(scanner, &self.server_id, self.limit)
                        && let Ok(text) = serde_json::to_vec(&answer)
                    {
                        text_frame(&mut self.out, &text);
                    }
                }
            }
            if matches!(
                self.state,
                State::Pass { remaining: 0 } | State::Skip { remaining: 0, .. }
            ) {
                self.state = State::Header {
                    bytes: [0; 14],
                    have: 0,
                };
            }
        }
    }
}

/// The length of a frame header that begins with `start` (2 until its second byte is known).
fn header_len(start: &[u8]) -> usize {
    let Some(&second) = start.get(1) else {
        return 2;
    };
    let extended = match second & 0x7f {
        126 => 2,
        127 => 8,
        _ => 0,
    };
    let mask = if second & 0x80 != 0 { 4 } else { 0 };
    2 + extended + mask
}

/// The payload length a whole frame header gives.
fn payload_len(header: &[u8]) -> u64 {
    match header[1] & 0x7f {
        126 => u64::from(u16::from_be_bytes([header[2], header[3]])),
        127 => u64::from_be_bytes(header[2..10].try_into().expect("8 bytes")),
        short => u64::from(short),
    }
}

/// Appends an unmasked, final text frame carrying `payload`.
fn text_frame(out: &mut Vec<u8>, payload: &[u8]) {
    out.push(0x81);
    match payload.len() {
        n @ 0..=125 => out.push(n as u8),
        n @ 126..=0xffff => {
            out.push(126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            out.push(127);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    out.extend_from_slice(payload);
}

impl<S: AsyncRead + Unpin> AsyncRead for BoundedFrames<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.pos < this.out.len() {
                let n = buf.remaining().min(this.out.len() - this.pos);
                buf.put_slice(&this.out[this.pos..this.pos + n]);
                this.pos += n;
                if this.pos == this.out.len() {
                    this.out.clear();
                    this.pos = 0;
                }
                return Poll::Ready(Ok(()));
            }
            let mut read = ReadBuf::new(&mut this.chunk);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read))?;
            let n = read.filled().len();
            if n == 0 {
                return Poll::Ready(Ok(()));
            }
            let chunk = std::mem::take(&mut this.chunk);
            this.take(&chunk[..n]);
            this.chunk = chunk;
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for BoundedFrames<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    /// A reader that hands out at most `.1` bytes at a time; writes go nowhere.
    struct Chunked(Vec<u8>, usize);

    impl AsyncRead for Chunked {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            let n = self.1.min(self.0.len()).min(buf.remaining());
            let head: Vec<u8> = self.0.drain(..n).collect();
            buf.put_slice(&head);
            Poll::Ready(Ok(()))
        }
    }

    fn frame(first: u8, payload: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        text_frame(&mut out, payload);
        out[0] = first;
        out
    }

    async fn through(input: &[u8], limit: usize, chunk: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let mut reader = BoundedFrames::new(Chunked(input.to_vec(), chunk), limit, "s");
        reader.read_to_end(&mut out).await.unwrap();
        out
    }

    const HANDSHAKE: &[u8] = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n";

    #[tokio::test]
    async fn frames_within_the_limit_pass_as_they_are() {
        let mut input = HANDSHAKE.to_vec();
        input.extend(frame(0x81, br#"{"id":1,"result":{}}"#));
        input.extend(frame(0x89, b"ping"));
        input.extend(frame(0x01, &[b'a'; 300])); // a fragmented message: tungstenite bounds it
        input.extend(frame(0x80, &[b'b'; 70_000]));
        input.extend(frame(0x82, &[]));
        for chunk in [1, 2, 3, 7, 100, 100_000] {
            assert_eq!(
                through(&input, 200, chunk).await,
                input,
                "chunks of {chunk}"
            );
        }
    }

    #[tokio::test]
    async fn a_longer_frame_becomes_the_error_answer_for_its_id() {
        let big = format!(
            r#"{{"jsonrpc":"2.0","result":{{"t":"{}"}},"id":9}}"#,
            "x".repeat(70_000)
        );
        let note = format!(r#"{{"method":"m","params":"{}"}}"#, "y".repeat(300));
        let mut input = HANDSHAKE.to_vec();
        input.extend(frame(0x81, br#"{"id":1,"result":{}}"#));
        input.extend(frame(0x81, big.as_bytes()));
        input.extend(frame(0x81, note.as_bytes()));
        input.extend(frame(0x81, br#"{"id":2,"result":{}}"#));
        let mut expected = HANDSHAKE.to_vec();
        expected.extend(frame(0x81, br#"{"id":1,"result":{}}"#));
        let answer = serde_json::to_vec(&limit::too_large(
            rmcp::model::NumberOrString::Number(9),
            200,
        ))
        .unwrap();
        expected.extend(frame(0x81, &answer));
        expected.extend(frame(0x81, br#"{"id":2,"result":{}}"#));
        for chunk in [1, 2, 3, 7, 100, 100_000] {
            assert_eq!(
                through(&input, 200, chunk).await,
                expected,
                "chunks of {chunk}"
            );
        }
    }
}
