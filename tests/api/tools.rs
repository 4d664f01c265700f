//! The tool catalogue and tool calls against real peers: content kinds, structured content,
//! `is_error`, allow lists, timeouts, unknown tools.

use reqwest::StatusCode;
use serde_json::json;
use std::time::Duration;

use crate::helpers::*;

#[tokio::test]
async fn the_catalogue_lists_namespaced_tools_with_their_schemas() {
    let app = spawn_app().await;
    app.register_server(everything_stdio("ev")).await;
    app.register_server(py_stdio("py", &unique("cat"))).await;
    let (status, body) = app.get("/v1/tools?id=list-1&source=mcp", &app.alice).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["type"], "tool/list/resp");
    assert_eq!(body["req_id"], "list-1");
    assert_eq!(body["next_cursor"], "");
    let tools = body["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 34);
    let echo = tools
        .iter()
        .find(|t| t["name"] == "ev__echo")
        .expect("ev__echo");
    assert_eq!(echo["server_id"], "ev");
    assert_eq!(echo["source"], "mcp");
    assert_eq!(echo["description"], "Echoes back the input string");
    assert_eq!(
        echo["input_schema"]["properties"]["message"]["type"],
        "string"
    );
    assert_eq!(echo["annotations"]["readOnlyHint"], true);
    let add = tools
        .iter()
        .find(|t| t["name"] == "py__add")
        .expect("py__add");
    assert_eq!(
        add["output_schema"]["properties"]["result"]["type"],
        "integer"
    );
    // Sorted by server, then tool.
    let keys: Vec<(&str, &str)> = tools
        .iter()
        .map(|t| t["name"].as_str().unwrap().split_once("__").unwrap())
        .collect();
    assert!(keys.windows(2).all(|w| w[0] < w[1]), "{keys:?}");
    assert_eq!(app.tool_names("?server_id=py").await.len(), 17);
    assert_eq!(
        app.tool_names("?source=a2a").await.len(),
        4,
        "the agent-bridge tools"
    );
    assert_eq!(app.tool_names("").await.len(), 38, "the whole catalogue");
    assert_eq!(app.tool_names("?source=").await.len(), 38, "empty is all");
    let (status, _) = app.get("/v1/tools?source=carrier", &app.alice).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let (status, body) = app.get("/v1/tools?cursor=not-a-cursor", &app.alice).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    app.stop().await;
}

#[tokio::test]
async fn calls_return_every_kind_of_content_faithfully() {
    let app = spawn_app().await;
    app.register_server(py_stdio("py", &unique("content")))
        .await;

    let body = app.call_tool("py__add", json!({"a": 20, "b": 22})).await;
    assert_eq!(body["type"], "tool/call/resp");
    assert_eq!(body["name"], "py__add");
    assert_eq!(body["server_id"], "py");
    assert_eq!(body["content"][0], json!({"type": "text", "text": "42"}));
    assert_eq!(body["structured_content"], json!({"result": 42}));
    assert_eq!(body["is_error"], false);

    let (_, body) = app.call("py__image", json!({})).await;
    assert_eq!(body["content"][0]["type"], "image");
    assert_eq!(body["content"][0]["mimeType"], "image/png");
    assert!(
        body["content"][0]["data"]
            .as_str()
            .unwrap()
            .starts_with("iVBOR")
    );
    let (_, body) = app.call("py__audio", json!({})).await;
    assert_eq!(body["content"][0]["type"], "audio");
    assert_eq!(body["content"][0]["mimeType"], "audio/wav");
    let (_, body) = app.call("py__link", json!({})).await;
    assert_eq!(body["content"][0]["type"], "resource_link");
    assert_eq!(body["content"][0]["uri"], "fixture://doc/1");
    let (_, body) = app.call("py__embedded", json!({})).await;
    assert_eq!(body["content"][0]["type"], "resource");
    assert_eq!(body["content"][0]["resource"]["text"], "hello embedded");

    let (status, body) = app.call("py__fail", json!({})).await;
    assert_eq!(
        status,
        StatusCode::OK,
        "an upstream isError is a 200: {body}"
    );
    assert_eq!(body["is_error"], true);
    assert!(
        body["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("always fails")
    );
    app.stop().await;
}

#[tokio::test]
async fn server_everything_tools_answer_through_the_bridge() {
    let app = spawn_app().await;
    app.register_server(everything_stdio("ev")).await;
    let body = app.call_tool("ev__echo", json!({"message": "hi"})).await;
    assert_eq!(
        body["content"],
        json!([{"type": "text", "text": "Echo: hi"}])
    );
    let body = app.call_tool("ev__get-sum", json!({"a": 2, "b": 40})).await;
    assert!(
        body["content"][0]["text"].as_str().unwrap().contains("42"),
        "{body}"
    );
    let body = app.call_tool("ev__get-tiny-image", json!({})).await;
    assert!(
        body["content"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["type"] == "image"),
        "{body}"
    );
    app.stop().await;
}

#[tokio::test]
async fn the_allow_list_applies_to_listing_and_calling() {
    let app = spawn_app().await;
    let mut config = everything_stdio("ev");
    config["tool_allow_list"] = json!(["echo", "get-sum"]);
    let server = app.register_server(config).await;
    assert_eq!(server["tools_count"], 2);
    assert_eq!(
        app.tool_names("?source=mcp").await,
        ["ev__echo", "ev__get-sum"]
    );
    app.call_tool("ev__echo", json!({"message": "ok"})).await;
    let (status, body) = app.call("ev__get-tiny-image", json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(body["code"], "mcp_tool_not_found");
    assert_eq!(body["retryable"], false);
    app.stop().await;
}

#[tokio::test]
async fn unknown_tools_timeouts_and_bad_arguments() {
    let app = spawn_app().await;
    app.register_server(py_stdio("py", &unique("errors"))).await;
    for name in ["py__nosuch", "nosuch__echo", "plainname", ""] {
        let (status, body) = app.call(name, json!({})).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{name}: {body}");
        assert_eq!(body["code"], "mcp_tool_not_found");
        assert_eq!(body["type"], "tool/call/resp");
    }
    let (status, body) = app
        .post("/v1/tools/call", &app.alice, json!({"id": "slow-1", "name": "py__slow", "arguments": {"seconds": 5}, "timeout": 0.5}))
        .await;
    assert_eq!(status, StatusCode::GATEWAY_TIMEOUT, "{body}");
    assert_eq!(body["code"], "timeout");
    assert_eq!(body["retryable"], true);
    assert_eq!(body["req_id"], "slow-1");
    // The connection survives a timed-out call.
    app.call_tool("py__echo", json!({"text": "still here"}))
        .await;
    app.stop().await;
}

#[tokio::test]
async fn a_tools_list_changed_notification_re_syncs_the_catalogue() {
    let app = spawn_app().await;
    app.register_server(py_stdio("py", &unique("grow"))).await;
    assert!(
        !app.tool_names("?server_id=py")
            .await
            .contains(&"py__sprout".to_owned())
    );
    app.call_tool("py__grow", json!({"name": "sprout"})).await;
    let what = "py__sprout appearing after tools/list_changed";
    wait_until(what, std::time::Duration::from_secs(10), async || {
        let names = app.tool_names("?server_id=py").await;
        match names.contains(&"py__sprout".to_owned()) {
            true => Ok(()),
            false => Err(format!("{names:?}")),
        }
    })
    .await;
    let body = app.call_tool("py__sprout", json!({})).await;
    assert_eq!(body["content"][0]["text"], "grown");
    let (_, server) = app.get("/v1/servers/py", &app.alice).await;
    assert_eq!(server["server"]["tools_count"], 18);
    app.stop().await;
}

/// Calls to a Streamable HTTP server go over kept-alive connections: twenty calls one after
/// another open at most two (each once cost the bridge and the server a new connection). A
/// counting proxy in front of server-everything sees every connection opened.
#[tokio::test]
async fn calls_to_a_streamable_http_server_reuse_their_connections() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let app = spawn_app().await;
    let peer = everything_http().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy = listener.local_addr().unwrap().port();
    let opened = Arc::new(AtomicUsize::new(0));
    let target = format!("127.0.0.1:{}", peer.port());
    let counting = opened.clone();
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            counting.fetch_add(1, Ordering::SeqCst);
            let target = target.clone();
            tokio::spawn(async move {
                if let Ok(mut outbound) = tokio::net::TcpStream::connect(&target).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    let url = format!("http://127.0.0.1:{proxy}/mcp");
    app.register_server(json!({ "server_id": "kept", "transport": "http", "url": url }))
        .await;
    let before = opened.load(Ordering::SeqCst);
    for n in 0..20 {
        let message = format!("call {n}");
        let body = app
            .call_tool("kept__echo", json!({ "message": message }))
            .await;
        assert_eq!(body["is_error"], false, "{body}");
        assert!(
            body["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains(&message),
            "{body}"
        );
    }
    let during = opened.load(Ordering::SeqCst) - before;
    assert!(during <= 2, "20 calls opened {during} connections");
    peer.stop().await;
}

/// A plain call to a Streamable HTTP server is posted by the bridge itself, in the session
/// rmcp's client made, with ids of its own (from 2^32, clear of rmcp's from 0): a relay in front
/// of the server records what the bridge sends. What the server sends on the call's stream
/// before the answer (a log message here) still reaches the owner. Once the server forgets the
/// session, the next call still succeeds (through rmcp's client, which makes a new session) and
/// the calls after it are the bridge's again.
#[tokio::test]
async fn plain_calls_to_a_streamable_http_server_are_posted_by_the_bridge_itself() {
    use std::sync::{Arc, Mutex};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let app = spawn_app().await;
    let peer = py_http().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let relay = listener.local_addr().unwrap().port();
    let sent = Arc::new(Mutex::new(Vec::<u8>::new()));
    let target = format!("127.0.0.1:{}", peer.port());
    let recorder = sent.clone();
    tokio::spawn(async move {
        while let Ok((inbound, _)) = listener.accept().await {
            let (target, recorder) = (target.clone(), recorder.clone());
            tokio::spawn(async move {
                let Ok(outbound) = tokio::net::TcpStream::connect(&target).await else {
                    return;
                };
                let (mut from_bridge, mut to_bridge) = inbound.into_split();
                let (mut from_server, mut to_server) = outbound.into_split();
                let up = async move {
                    let mut buffer = vec![0; 16 * 1024];
                    while let Ok(n @ 1..) = from_bridge.read(&mut buffer).await {
                        recorder.lock().unwrap().extend_from_slice(&buffer[..n]);
                        if to_server.write_all(&buffer[..n]).await.is_err() {
                            break;
                        }
                    }
                    let _ = to_server.shutdown().await;
                };
                let down = tokio::io::copy(&mut from_server, &mut to_bridge);
                // Either side closing closes both, as a server that stops closes its connections.
                tokio::select! {
                    _ = up => {}
                    _ = down => {}
                }
            });
        }
    });
    // The ids of the `tools/call` requests the bridge has sent, in order.
    let call_ids = || {
        let sent = String::from_utf8_lossy(&sent.lock().unwrap()).into_owned();
        let marker = ",\"method\":\"tools/call\"";
        let mut ids = Vec::new();
        for (at, _) in sent.match_indices(marker) {
            let before = &sent[..at];
            let digits = before.len() - before.trim_end_matches(|c: char| c.is_ascii_digit()).len();
            ids.push(before[before.len() - digits..].parse::<u64>().unwrap());
        }
        ids
    };
    let url = format!("http://127.0.0.1:{relay}/mcp");
    app.register_server(json!({ "server_id": "own", "transport": "http", "url": url }))
        .await;
    for text in ["one", "two"] {
        let body = app.call_tool("own__echo", json!({ "text": text })).await;
        assert_eq!(body["content"][0]["text"], text, "{body}");
    }
    assert_eq!(call_ids(), [1 << 32, (1 << 32) + 1]);

    let mut owner = EventStream::open(&app, &app.admin, None).await;
    let body = app.call_tool("own__shout", json!({ "size": 16 })).await;
    assert_eq!(body["content"][0]["text"], "said", "{body}");
    let logged = owner
        .wait_for("the log message", Duration::from_secs(10), |m| {
            m.event == "mcp/server/push" && m.data["method"] == "notifications/message"
        })
        .await;
    assert_eq!(logged.data["params"]["data"], "x".repeat(16), "{logged:?}");

    // The same server restarted on the same port: it knows the session no more.
    let port = peer.port();
    peer.stop().await;
    let peer = py_http_on(port, &[]).await;
    for text in ["after", "again"] {
        let call = app.call("own__echo", json!({ "text": text }));
        let (status, body) = tokio::time::timeout(Duration::from_secs(10), call)
            .await
            .expect("the call is answered, not left waiting");
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["content"][0]["text"], text, "{body}");
    }
    let ids = call_ids();
    let last = ids.last().copied().unwrap_or_default();
    assert!(
        last >= 1 << 32,
        "in the new session, the last call went through rmcp: {ids:?}"
    );
    peer.stop().await;
}
