//! Many `GET /v1/events` streams held open by a client that costs the bridge's cores nothing
//! while an event fans out: the streams are opened, then left unread while the bridge writes to
//! all of them; afterwards each is read once, and the kernel's receive timestamp
//! (`SO_TIMESTAMPNS`) of the bytes that completed the event says when it arrived. No task of the
//! harness wakes during the fan-out, so the bridge has both cores and the latencies are its own.

use std::io::IoSliceMut;
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant, SystemTime};

use futures::StreamExt;
use nix::sys::socket::{
    ControlMessageOwned, MsgFlags, RecvMsg, recvmsg, setsockopt, sockopt::ReceiveTimestampns,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Streams opened at once while they are set up.
const OPENING: usize = 64;

pub(crate) struct Streams {
    open: Vec<TcpStream>,
}

/// One stream's read: the bytes, and when the kernel received the last of them.
struct Read {
    len: usize,
    received: Option<SystemTime>,
}

impl Streams {
    /// Opens one stream per token on the bridge at `addr`, each on a connection of its own,
    /// and waits for every `200`.
    pub(crate) async fn open(addr: SocketAddr, tokens: Vec<String>) -> Streams {
        let open = futures::stream::iter(tokens)
            .map(|token| open_one(addr, token))
            .buffer_unordered(OPENING)
            .collect::<Vec<TcpStream>>()
            .await;
        Streams { open }
    }

    pub(crate) fn len(&self) -> usize {
        self.open.len()
    }

    /// Reads and drops whatever is waiting on every stream (a keep-alive comment, say).
    pub(crate) fn drain(&self) {
        let mut buf = vec![0u8; 64 * 1024];
        for stream in &self.open {
            while read(stream, &mut buf).is_some_and(|r| r.len > 0) {}
        }
    }

    /// For each stream, when the kernel received the bytes that completed `marker` (which each
    /// stream is to get once), read after the fact; a stream without it by `deadline` is left
    /// out. The bytes read are checked only for the marker.
    pub(crate) async fn arrivals(&self, marker: &[u8], deadline: Instant) -> Vec<SystemTime> {
        let mut buf = vec![0u8; 64 * 1024];
        let mut waiting: Vec<(usize, Vec<u8>)> =
            (0..self.open.len()).map(|i| (i, Vec::new())).collect();
        let mut arrived = Vec::with_capacity(self.open.len());
        while !waiting.is_empty() && Instant::now() < deadline {
            waiting.retain_mut(|(i, seen)| {
                while let Some(got) = read(&self.open[*i], &mut buf) {
                    if got.len == 0 {
                        return true;
                    }
                    // Only the tail that could hold a marker split across reads is kept.
                    seen.extend_from_slice(&buf[..got.len]);
                    if seen.windows(marker.len()).any(|w| w == marker) {
                        arrived.extend(got.received);
                        return false;
                    }
                    let keep = seen.len().min(marker.len());
                    seen.drain(..seen.len() - keep);
                }
                true
            });
            if !waiting.is_empty() {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        arrived
    }
}

async fn open_one(addr: SocketAddr, token: String) -> TcpStream {
    let mut tcp = tokio::net::TcpStream::connect(addr)
        .await
        .expect("a connection to the bridge");
    setsockopt(&tcp, ReceiveTimestampns, &true).expect("SO_TIMESTAMPNS");
    let request = format!(
        "GET /v1/events HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\n\
         Accept: text/event-stream\r\n\r\n"
    );
    tcp.write_all(request.as_bytes()).await.expect("a request");
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tcp.read(&mut buf).await.expect("an answer");
        assert!(n > 0, "the bridge closed an event stream as it opened");
        head.extend_from_slice(&buf[..n]);
    }
    assert!(
        head.starts_with(b"HTTP/1.1 200"),
        "GET /v1/events: {}",
        String::from_utf8_lossy(&head)
    );
    let tcp = tcp.into_std().expect("a std socket");
    tcp.set_nonblocking(true).expect("non-blocking");
    tcp
}

/// One non-blocking read: `None` when nothing is waiting (or the stream failed), a length of 0
/// when it was closed.
fn read(stream: &TcpStream, buf: &mut [u8]) -> Option<Read> {
    let mut cmsgs = nix::cmsg_space!(nix::sys::time::TimeSpec);
    let mut iov = [IoSliceMut::new(buf)];
    let msg: RecvMsg<'_, '_, ()> = recvmsg(
        stream.as_raw_fd(),
        &mut iov,
        Some(&mut cmsgs),
        MsgFlags::MSG_DONTWAIT,
    )
    .ok()?;
    let received = msg.cmsgs().ok()?.find_map(|cmsg| match cmsg {
        ControlMessageOwned::ScmTimestampns(ts) => {
            Some(SystemTime::UNIX_EPOCH + Duration::new(ts.tv_sec() as u64, ts.tv_nsec() as u32))
        }
        _ => None,
    });
    Some(Read {
        len: msg.bytes,
        received,
    })
}
