//! Descriptor exhaustion (issue 15, item 6): slow or idle connections are closed after the
//! header or body timeout and do not starve a well-behaved agent; event streams per agent are
//! bounded.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::helpers::*;

async fn app_with(edit: impl FnOnce(&mut mcp_bridge::config::Config) + Send + 'static) -> TestApp {
    TestApp::builder().configure(edit).spawn().await
}

/// Waits for the server to close `tcp` (EOF or reset), at most `within`; whether it did.
async fn closed_within(tcp: &mut TcpStream, within: Duration) -> bool {
    let mut buf = [0u8; 1024];
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, tcp.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => continue, // an error answer before the close
        }
    }
}

#[tokio::test]
async fn a_thousand_slow_connections_do_not_starve_an_agent_and_are_closed() {
    let app = app_with(|c| {
        c.header_timeout_secs = 2;
        c.body_timeout_secs = 2;
    })
    .await;
    let addr = app.base.trim_start_matches("http://").to_owned();
    // 1,000 connections without a token: half send a request's first header lines and stop,
    // half send whole headers announcing a body and only part of it.
    let mut slow = Vec::new();
    for i in 0..1000 {
        let mut tcp = TcpStream::connect(&addr).await.unwrap();
        let partial: &[u8] = match i % 2 {
            0 => b"GET /v1/tools HTTP/1.1\r\nHost: x\r\nX-Slow: ",
            _ => b"POST /v1/tools/call HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"name\":",
        };
        tcp.write_all(partial).await.unwrap();
        slow.push(tcp);
    }
    let opened = Instant::now();
    // A well-behaved agent is answered at once.
    let (status, body) =
        tokio::time::timeout(Duration::from_secs(2), app.get("/v1/tools", &app.alice))
            .await
            .expect(
                "a normal request is answered within 2 s while 1,000 slow connections are open",
            );
    assert_eq!(status, StatusCode::OK, "{body}");
    // Every slow one is closed after the timeout (2 s here), not left open.
    let mut still_open = 0;
    for tcp in &mut slow {
        let left = Duration::from_secs(8).saturating_sub(opened.elapsed());
        if !closed_within(tcp, left).await {
            still_open += 1;
        }
    }
    assert_eq!(
        still_open, 0,
        "slow connections left open 8 s after they stopped sending"
    );
    // On a new connection: the one the first request left in the client's pool has been idle
    // about as long as the header timeout, and the server may be closing it just as it is
    // reused (an IncompleteMessage, seen on a loaded CI run).
    let fresh = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let resp = fresh
        .get(format!("{}/v1/tools", app.base))
        .bearer_auth(&app.alice)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
}

#[tokio::test]
async fn a_body_sent_too_slowly_fails_with_the_a2e_error_shape() {
    let app = app_with(|c| c.body_timeout_secs = 1).await;
    let addr = app.base.trim_start_matches("http://").to_owned();
    let mut tcp = TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /v1/tools/call HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"name\":",
        app.alice
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), tcp.read_to_end(&mut answer))
        .await
        .expect("the request is answered and the connection closed within 5 s")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 4"), "{answer}");
    assert!(answer.contains("\"code\":\"invalid_request\""), "{answer}");
    assert!(answer.contains("MCP_BRIDGE_BODY_TIMEOUT_SECS"), "{answer}");
}

#[tokio::test]
async fn connections_past_the_global_limit_wait_for_a_free_one() {
    let app = app_with(|c| {
        c.max_connections = 20;
        c.header_timeout_secs = 2;
    })
    .await;
    let addr = app.base.trim_start_matches("http://").to_owned();
    // The harness's own client keeps one kept-alive connection: 19 more fill the limit.
    let mut idle = Vec::new();
    for _ in 0..19 {
        idle.push(TcpStream::connect(&addr).await.unwrap());
    }
    // No wait for the service to take them: the kernel's accept queue is first in, first out,
    // so these 19 are taken before the 21st.
    // The 21st waits (in the backlog) until the idle ones time out, then is served.
    let started = Instant::now();
    let resp = tokio::time::timeout(
        Duration::from_secs(6),
        reqwest::Client::new()
            .get(format!("{}/v1/tools", app.base))
            .bearer_auth(&app.alice)
            .send(),
    )
    .await
    .expect("served once the idle connections are closed")
    .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "served at once: the limit of 20 connections was not applied"
    );
}

#[tokio::test]
async fn an_agent_has_a_bounded_number_of_event_streams() {
    let app = app_with(|c| {
        c.agent_event_streams = 2;
        c.keepalive_secs = 1;
    })
    .await;
    let first = EventStream::open(&app, &app.alice, None).await;
    let _second = EventStream::open(&app, &app.alice, None).await;
    let resp = app
        .client
        .get(format!("{}/v1/events", app.base))
        .bearer_auth(&app.alice)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(resp.headers().contains_key("retry-after"));
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["code"], "rate_limited", "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("event streams"),
        "{body}"
    );
    // Per agent; and REST calls are not counted against it.
    let _bobs = EventStream::open(&app, &app.bob, None).await;
    let (status, _) = app.get("/v1/tools", &app.alice).await;
    assert_eq!(status, StatusCode::OK);
    // A closed stream frees its slot (noticed at its next keep-alive).
    drop(first);
    let url = format!("{}/v1/events", app.base);
    let what = "a closed stream's slot freed";
    wait_until(what, Duration::from_secs(5), async || {
        let resp = app.client.get(&url).bearer_auth(&app.alice).send().await;
        match resp.unwrap().status() {
            StatusCode::OK => Ok(()),
            other => Err(other.to_string()),
        }
    })
    .await;
}

/// Opens a 2025-11-25 `/mcp` session; the answer.
async fn initialize(app: &TestApp, token: &str) -> reqwest::Response {
    app.client
        .post(format!("{}/mcp", app.base))
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .json(&serde_json::json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": { "name": "exhaustion-test", "version": "1" }
            }
        }))
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn an_agent_has_a_bounded_number_of_mcp_sessions() {
    let app = app_with(|c| c.agent_mcp_sessions = 2).await;
    let mut ids = Vec::new();
    for _ in 0..2 {
        let resp = initialize(&app, &app.alice).await;
        assert_eq!(resp.status(), StatusCode::OK);
        ids.push(
            resp.headers()["mcp-session-id"]
                .to_str()
                .unwrap()
                .to_owned(),
        );
    }
    let resp = initialize(&app, &app.alice).await;
    assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(resp.headers()["retry-after"], "5");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["code"], "rate_limited", "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("MCP_BRIDGE_AGENT_MCP_SESSIONS"),
        "{body}"
    );
    // Per agent; and a session's own requests are not refused.
    assert_eq!(initialize(&app, &app.bob).await.status(), StatusCode::OK);
    let ping = app
        .client
        .post(format!("{}/mcp", app.base))
        .bearer_auth(&app.alice)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &ids[0])
        .header("mcp-protocol-version", "2025-11-25")
        .json(&serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .send()
        .await
        .unwrap();
    assert!(ping.status().is_success(), "{}", ping.status());
    // Ending one frees its slot.
    let deleted = app
        .client
        .delete(format!("{}/mcp", app.base))
        .bearer_auth(&app.alice)
        .header("mcp-session-id", &ids[0])
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert!(deleted.status().is_success(), "{}", deleted.status());
    assert_eq!(initialize(&app, &app.alice).await.status(), StatusCode::OK);
}

/// Reads one HTTP/1.1 answer off `tcp` (headers, then a `Content-Length` body): its head, or
/// `None` when the connection closed first.
async fn read_answer(tcp: &mut TcpStream) -> Option<String> {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        match tokio::time::timeout(Duration::from_secs(5), tcp.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return None,
            Ok(Ok(n)) => data.extend_from_slice(&buf[..n]),
            Err(_) => panic!("no answer within 5 s"),
        }
    };
    let head = String::from_utf8_lossy(&data[..head_end]).to_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .map_or(0, |v| v.trim().parse().unwrap());
    while data.len() < head_end + length {
        let n = tcp.read(&mut buf).await.unwrap();
        assert!(n > 0, "closed in the middle of a body");
        data.extend_from_slice(&buf[..n]);
    }
    Some(head)
}

/// A request refused for want of a token, whose body came in a second write (as httpx sends
/// it), leaves its connection usable: the next request on it is answered, not met by a close
/// the 401 did not announce.
#[tokio::test]
async fn a_refused_request_leaves_its_connection_usable() {
    let app = app_with(|_| {}).await;
    let addr = app.base.trim_start_matches("http://").to_owned();
    let mut tcp = TcpStream::connect(&addr).await.unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    // Two writes apart in time, so that the body comes in a read of its own.
    tokio::time::sleep(Duration::from_millis(100)).await;
    tcp.write_all(body.as_bytes()).await.unwrap();
    let refused = read_answer(&mut tcp).await.expect("the 401 is sent");
    assert!(refused.starts_with("http/1.1 401"), "{refused}");
    assert!(!refused.contains("connection: close"), "{refused}");
    tcp.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let next = read_answer(&mut tcp)
        .await
        .expect("the connection was closed after the 401");
    assert!(next.starts_with("http/1.1 200"), "{next}");
}
