//! The stdout of a stdio server, bounded per line (one line is one JSON-RPC message): lines up
//! to the limit pass whole; a longer one is read through, never held, and replaced by the error
//! answer for its request (or by nothing, see [`limit`](super::limit)). rmcp's own line reader
//! only drops such a line, and the call it answered then waits for its timeout.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, ReadBuf};

use super::limit::{self, IdScanner};

/// Bytes read from the server at once (as rmcp's own buffered reader behind this one).
const CHUNK: usize = 8 * 1024;
/// Room kept for lines once a longer one has been handed on.
const KEEP: usize = 64 * 1024;

pub struct BoundedLines<R> {
    inner: R,
    limit: usize,
    server_id: Arc<str>,
    /// `[pos..ready)`: whole lines to hand on; `[ready..)`: the line being read.
    buf: Vec<u8>,
    pos: usize,
    ready: usize,
    /// Reading through a line over the limit.
    skipping: Option<IdScanner>,
    chunk: Box<[u8]>,
}

impl<R> BoundedLines<R> {
    pub fn new(inner: R, limit: usize, server_id: &str) -> Self {
        Self {
            inner,
            limit,
            server_id: server_id.into(),
            buf: Vec::new(),
            pos: 0,
            ready: 0,
            skipping: None,
            chunk: vec![0; CHUNK].into_boxed_slice(),
        }
    }

    /// Takes bytes read from the server.
    fn take(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let newline = bytes.iter().position(|b| *b == b'\n');
            let line = &bytes[..newline.unwrap_or(bytes.len())];
            if let Some(scanner) = &mut self.skipping {
                scanner.feed(line);
            } else if self.buf.len() - self.ready + line.len() > self.limit {
                let mut scanner = IdScanner::default();
                scanner.feed(&self.buf[self.ready..]);
                scanner.feed(line);
                self.buf.truncate(self.ready);
                self.skipping = Some(scanner);
            } else {
                self.buf.extend_from_slice(line);
            }
            let Some(at) = newline else { return };
            match self.skipping.take() {
                Some(scanner) => {
                    if let Some(answer) = limit::verdict(&scanner, &self.server_id, self.limit)
                        && serde_json::to_writer(&mut self.buf, &answer).is_ok()
                    {
                        self.buf.push(b'\n');
                    }
                }
                None => self.buf.push(b'\n'),
            }
            self.ready = self.buf.len();
            bytes = &bytes[at + 1..];
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for BoundedLines<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.pos < this.ready {
                let n = out.remaining().min(this.ready - this.pos);
                out.put_slice(&this.buf[this.pos..this.pos + n]);
                this.pos += n;
                if this.pos == this.ready {
                    this.buf.drain(..this.ready);
                    this.pos = 0;
                    this.ready = 0;
                    // One long answer does not keep its room for the connection's life.
                    if this.buf.capacity() > KEEP && this.buf.len() <= KEEP {
                        this.buf.shrink_to(KEEP);
                    }
                }
                return Poll::Ready(Ok(()));
            }
            let mut read = ReadBuf::new(&mut this.chunk);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read))?;
            let n = read.filled().len();
            if n == 0 {
                // End of file: a line without its newline is dropped, as rmcp drops it.
                return Poll::Ready(Ok(()));
            }
            let chunk = std::mem::take(&mut this.chunk);
            this.take(&chunk[..n]);
            this.chunk = chunk;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    async fn through(input: &[u8], limit: usize, chunk: usize) -> String {
        let mut out = String::new();
        let mut reader = BoundedLines::new(Chunked(input.to_vec(), chunk), limit, "s");
        reader.read_to_string(&mut out).await.unwrap();
        out
    }

    /// A reader that hands out at most `.1` bytes at a time.
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

    #[tokio::test]
    async fn lines_under_the_limit_pass_whole() {
        let input = "{\"id\":1,\"result\":{}}\n\n{\"method\":\"x\"}\npartial";
        for chunk in [1, 3, 7, 1000] {
            assert_eq!(
                through(input.as_bytes(), 64, chunk).await,
                "{\"id\":1,\"result\":{}}\n\n{\"method\":\"x\"}\n",
                "chunks of {chunk}"
            );
        }
    }

    #[tokio::test]
    async fn a_longer_answer_becomes_an_error_for_its_id() {
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"result\":{{\"text\":\"{}\"}},\"id\":\"r-7\"}}",
            "y".repeat(300)
        );
        let input = format!("{{\"id\":1,\"result\":{{}}}}\n{big}\n{{\"id\":2,\"result\":{{}}}}\n");
        for chunk in [1, 5, 64, 100_000] {
            let out = through(input.as_bytes(), 100, chunk).await;
            let lines: Vec<&str> = out.lines().collect();
            assert_eq!(lines.len(), 3, "{out}");
            assert_eq!(lines[0], "{\"id\":1,\"result\":{}}");
            let error: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
            assert_eq!(error["id"], "r-7");
            assert_eq!(error["error"]["code"], limit::MESSAGE_TOO_LARGE);
            assert!(
                error["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("100 bytes limit (MCP_BRIDGE_MAX_MESSAGE_BYTES)")
            );
            assert_eq!(lines[2], "{\"id\":2,\"result\":{}}");
        }
    }

    #[tokio::test]
    async fn a_longer_notification_is_dropped() {
        let big = format!(
            "{{\"method\":\"m\",\"params\":{{\"t\":\"{}\"}}}}",
            "z".repeat(300)
        );
        let input = format!("{big}\n{{\"id\":2,\"result\":{{}}}}\n");
        assert_eq!(
            through(input.as_bytes(), 100, 7).await,
            "{\"id\":2,\"result\":{}}\n"
        );
    }
}
