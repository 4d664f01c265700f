//! A raw HTTP/1.1 client, the floor: a request built once, kept-alive connections, the answer
//! read by its framing and checked by a byte search, no JSON parsed.

use std::sync::{Arc, Mutex};

use crate::ECHO_ARGS;
use crate::clients::McpSession;

/// One raw route's request, built once, and the idle connections of its workers. Its client
/// parses no JSON and keeps every connection alive, so it costs the shared cores close to
/// nothing: what is left of a call's time is the server's.
pub(crate) struct Raw {
    addr: std::net::SocketAddr,
    request: Vec<u8>,
    /// Where the JSON-RPC id's digits are in `request`: requests in flight in one MCP session
    /// need ids of their own, so each call writes the next number there.
    id_digits: Option<std::ops::Range<usize>>,
    next_id: std::sync::atomic::AtomicU64,
    /// Kept between phases, so a phase's workers reuse the connections of the one before.
    idle: Mutex<Vec<tokio::net::TcpStream>>,
}

/// What a successful answer holds: the echo tool's text.
const ECHOED: &[u8] = b"Echo: hello from the benchmark";
/// The JSON-RPC id of a raw `tools/call`, rewritten per call.
const RAW_ID: &str = "000000000000";

impl Raw {
    /// `POST url` with `headers` and `body`; `body` may hold the JSON string `RAW_ID` once, as
    /// the request's id.
    fn new(url: &str, headers: &[(&str, &str)], body: &str) -> Raw {
        let url = url::Url::parse(url).expect("a URL");
        let addr = url.socket_addrs(|| None).expect("a socket address")[0];
        let mut request = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n",
            url.path(),
            &url[url::Position::BeforeHost..url::Position::AfterPort],
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        let id_digits = body.find(&format!("\"{RAW_ID}\"")).map(|at| {
            let start = request.len() + at + 1;
            start..start + RAW_ID.len()
        });
        request.push_str(body);
        Raw {
            addr,
            request: request.into_bytes(),
            id_digits,
            next_id: Default::default(),
            idle: Mutex::default(),
        }
    }

    /// `tools/call` of `name` with the echo arguments, in MCP `session`.
    pub(crate) fn mcp(url: &str, token: Option<&str>, session: &McpSession, name: &str) -> Raw {
        let bearer = token.map(|t| format!("Bearer {t}"));
        let mut headers = vec![
            ("Accept", "application/json, text/event-stream"),
            ("Mcp-Session-Id", session.id.as_str()),
            ("MCP-Protocol-Version", session.version.as_str()),
        ];
        headers.extend(bearer.as_deref().map(|b| ("Authorization", b)));
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":"{RAW_ID}","method":"tools/call","params":{{"name":"{name}","arguments":{ECHO_ARGS}}}}}"#
        );
        Raw::new(url, &headers, &body)
    }

    /// The bridge's `POST /v1/tools/call` of `name`.
    pub(crate) fn rest(base: &str, token: &str, name: &str) -> Raw {
        let bearer = format!("Bearer {token}");
        let headers = [
            ("Accept", "application/json"),
            ("Authorization", bearer.as_str()),
        ];
        let body = format!(r#"{{"name":"{name}","arguments":{ECHO_ARGS}}}"#);
        Raw::new(&format!("{base}/v1/tools/call"), &headers, &body)
    }
}

/// A load worker's connection of a raw route, given back to the route's idle ones when dropped.
pub(crate) struct RawConn {
    raw: Arc<Raw>,
    stream: Option<tokio::net::TcpStream>,
    request: Vec<u8>,
    /// The answer being read, reused from call to call.
    buf: Vec<u8>,
}

impl Drop for RawConn {
    fn drop(&mut self) {
        if let Some(stream) = self.stream.take() {
            self.raw.idle.lock().unwrap().push(stream);
        }
    }
}

/// How a raw exchange failed; `Closed` before any byte of the answer on a connection kept from
/// before means the server closed it while idle, and the call is sent again on a new one.
enum RawError {
    Closed,
    Failed(String),
}

impl From<std::io::Error> for RawError {
    fn from(error: std::io::Error) -> Self {
        RawError::Failed(error.to_string())
    }
}

impl RawConn {
    pub(crate) fn new(raw: Arc<Raw>) -> RawConn {
        let stream = raw.idle.lock().unwrap().pop();
        RawConn {
            stream,
            request: raw.request.clone(),
            buf: Vec::with_capacity(16 * 1024),
            raw,
        }
    }

    pub(crate) async fn call(&mut self) -> Result<(), String> {
        if let Some(digits) = self.raw.id_digits.clone() {
            let mut id = self
                .raw
                .next_id
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            for digit in self.request[digits].iter_mut().rev() {
                *digit = b'0' + (id % 10) as u8;
                id /= 10;
            }
        }
        let kept = self.stream.is_some();
        let mut result = self.exchange().await;
        if kept && matches!(result, Err(RawError::Closed)) {
            self.stream = None;
            result = self.exchange().await;
        }
        result.map_err(|error| {
            self.stream = None;
            match error {
                RawError::Closed => "the server closed the connection".to_owned(),
                RawError::Failed(error) => error,
            }
        })
    }

    /// Sends the request and reads the answer: status line and headers, then the body by its
    /// length or its chunks (the event stream of a Streamable HTTP answer ends with the call's).
    async fn exchange(&mut self) -> Result<(), RawError> {
        use tokio::io::AsyncWriteExt;
        let stream = match self.stream.take() {
            Some(stream) => stream,
            None => {
                let stream = tokio::net::TcpStream::connect(self.raw.addr).await?;
                stream.set_nodelay(true)?;
                stream
            }
        };
        let stream = self.stream.insert(stream);
        if stream.write_all(&self.request).await.is_err() {
            return Err(RawError::Closed);
        }
        self.buf.clear();
        let head = fill_until(stream, &mut self.buf, 0, b"\r\n\r\n").await?;
        let (status, length, chunked, close) = response_head(&self.buf[..head])?;
        let body = match (length, chunked) {
            (Some(length), _) => {
                fill_to(stream, &mut self.buf, head + length).await?;
                head..head + length
            }
            (None, true) => head..dechunk(stream, &mut self.buf, head).await?,
            (None, false) => return Err(RawError::Failed("an answer without framing".into())),
        };
        if close {
            self.stream = None;
        }
        let text = &self.buf[body];
        match status == 200 && memchr::memmem::find(text, ECHOED).is_some() {
            true => Ok(()),
            false => Err(RawError::Failed(format!(
                "{status}: {}",
                String::from_utf8_lossy(text)
            ))),
        }
    }
}

/// The status and the framing of an answer's head: content length, chunked, connection close.
fn response_head(head: &[u8]) -> Result<(u16, Option<usize>, bool, bool), RawError> {
    let text = std::str::from_utf8(head).map_err(|e| RawError::Failed(e.to_string()))?;
    let mut lines = text.split("\r\n");
    let status = lines
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| RawError::Failed(format!("not an HTTP answer: {text}")))?;
    let (mut length, mut chunked, mut close) = (None, false, false);
    for (name, value) in lines.filter_map(|line| line.split_once(':')) {
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = value.parse().ok();
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            chunked = value.eq_ignore_ascii_case("chunked");
        } else if name.eq_ignore_ascii_case("connection") {
            close = value.eq_ignore_ascii_case("close");
        }
    }
    Ok((status, length, chunked, close))
}

/// Reads until `buf` holds `needle` at or after `from`; the index just past it.
async fn fill_until(
    stream: &mut tokio::net::TcpStream,
    buf: &mut Vec<u8>,
    from: usize,
    needle: &[u8],
) -> Result<usize, RawError> {
    loop {
        if let Some(at) = memchr::memmem::find(&buf[from..], needle) {
            return Ok(from + at + needle.len());
        }
        read_more(stream, buf).await?;
    }
}

/// Reads until `buf` holds at least `len` bytes.
async fn fill_to(
    stream: &mut tokio::net::TcpStream,
    buf: &mut Vec<u8>,
    len: usize,
) -> Result<(), RawError> {
    while buf.len() < len {
        read_more(stream, buf).await?;
    }
    Ok(())
}

async fn read_more(stream: &mut tokio::net::TcpStream, buf: &mut Vec<u8>) -> Result<(), RawError> {
    use tokio::io::AsyncReadExt;
    buf.reserve(4096);
    match stream.read_buf(buf).await {
        Ok(0) | Err(_) if buf.is_empty() => Err(RawError::Closed),
        Ok(0) => Err(RawError::Failed("the answer ended early".into())),
        Ok(_) => Ok(()),
        Err(error) => Err(error.into()),
    }
}

/// Reads a chunked body that starts at `start` up to its last, empty chunk, moving the chunks'
/// data together in place (so a text split over two chunks is found whole); the end of the data.
async fn dechunk(
    stream: &mut tokio::net::TcpStream,
    buf: &mut Vec<u8>,
    start: usize,
) -> Result<usize, RawError> {
    let (mut data_end, mut at) = (start, start);
    loop {
        let line_end = fill_until(stream, buf, at, b"\r\n").await?;
        let line = &buf[at..line_end - 2];
        let size = line.split(|&b| b == b';').next().unwrap_or_default();
        let size = std::str::from_utf8(size)
            .ok()
            .and_then(|s| usize::from_str_radix(s.trim(), 16).ok())
            .ok_or_else(|| RawError::Failed("a bad chunk size".into()))?;
        if size == 0 {
            // No trailers are sent here: the empty chunk's line and one more CRLF.
            fill_to(stream, buf, line_end + 2).await?;
            return Ok(data_end);
        }
        fill_to(stream, buf, line_end + size + 2).await?;
        buf.copy_within(line_end..line_end + size, data_end);
        data_end += size;
        at = line_end + size + 2;
    }
}
