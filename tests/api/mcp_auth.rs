//! `/mcp` calls to a `per_agent` OAuth server the calling agent has not authorized (issue 40,
//! item 3), against the Python `mcp` client and `tests/peers/oauth_server.py`: a client that takes
//! URL elicitations is handed the agent's own authorization link as one (`-32042` in a 2025-11-25
//! session, told when it is done; an input-required round when stateless) and its call (or read)
//! again succeeds once the link is approved; a client that does not still gets the link in its
//! answer.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout};

use crate::helpers::*;
use crate::mcp::mcp_client;

/// A `per_agent` OAuth server `mine` that alice has authorized (so its tools are listed) and
/// nobody else has.
async fn authorized_by_alice(app: &TestApp, peer: &Peer) {
    let config = json!({
        "server_id": "mine", "transport": "http", "url": peer.url, "connect_timeout": 5,
        "auth": { "type": "oauth2", "per_agent": true },
    });
    app.register_server_as(&app.alice, config).await;
    app.wait_status("mine", "auth_required", WAIT).await;
    let url = app.authorization_url("mine", &app.alice).await;
    let consent = approve(&url).await;
    assert!(consent.status.is_success(), "{}", consent.body);
    wait_until("mine's tools listed", WAIT, async || {
        match app.tool_names("?server_id=mine").await {
            names if names.contains(&"mine__whoami".to_owned()) => Ok(()),
            names => Err(format!("{names:?}")),
        }
    })
    .await;
}

/// `tests/peers/mcp_url_elicitation.py` calling `mine__whoami` as `token`, under way.
struct Elicited {
    child: Child,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Elicited {
    fn start(app: &TestApp, token: &str, mode: &str) -> Self {
        Self::asking(app, token, mode, &["mine__whoami", "{}"])
    }

    /// The client reading `uri` instead.
    fn reading(app: &TestApp, token: &str, mode: &str, uri: &str) -> Self {
        Self::asking(app, token, mode, &[uri, "{}", "--read"])
    }

    fn asking(app: &TestApp, token: &str, mode: &str, what: &[&str]) -> Self {
        let mut child = tokio::process::Command::new(python())
            .arg(peers_dir().join("mcp_url_elicitation.py"))
            .args([&format!("{}/mcp", app.base), token, mode])
            .args(what)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Self { child, lines }
    }

    /// The next JSON line the client prints.
    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(30), self.lines.next_line())
            .await
            .expect("the client prints within 30 s")
            .unwrap()
            .expect("the client prints a line before it ends");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    /// Tells the client the link was approved: its report once it has called again.
    async fn approved(mut self) -> Value {
        let mut stdin = self.child.stdin.take().unwrap();
        stdin.write_all(b"approved\n").await.unwrap();
        let report = self.next().await;
        let status = tokio::time::timeout(Duration::from_secs(30), self.child.wait())
            .await
            .expect("the client ends")
            .unwrap();
        assert!(status.success(), "{report}");
        report
    }
}

/// Asserts that `url` is a link to authorize at the peer, made for `agent`'s own grant (not
/// alice's, which exists already).
fn assert_link(url: &str, peer: &Peer) {
    assert!(
        url.starts_with(&format!("{}/authorize?", peer.origin())),
        "the peer's authorization endpoint: {url}"
    );
}

/// The grant the whoami tool's (text) result names.
fn grant_of(result: &Value) -> Value {
    assert_eq!(result["isError"], false, "{result}");
    let text = result["content"][0]["text"].as_str().expect("a text block");
    serde_json::from_str::<Value>(text).unwrap()["grant"].clone()
}

#[tokio::test]
async fn a_session_that_takes_url_elicitations_is_told_to_authorize_and_calls_again() {
    let peer = oauth_peer(&[]).await;
    let app = TestApp::builder().port(free_port()).spawn().await;
    authorized_by_alice(&app, &peer).await;

    let mut client = Elicited::start(&app, &app.bob, "legacy");
    let told = client.next().await;
    let elicitation = &told["elicitation"];
    assert_eq!(elicitation["mode"], "url", "{told}");
    let id = elicitation["elicitationId"].as_str().expect("an id");
    assert!(!id.is_empty(), "{told}");
    assert!(
        elicitation["message"]
            .as_str()
            .unwrap()
            .contains("\"mine\""),
        "the message names the server: {told}"
    );
    let url = elicitation["url"].as_str().unwrap().to_owned();
    assert_link(&url, &peer);
    assert_eq!(told["data"]["code"], "mcp_auth_required", "{told}");
    assert_eq!(told["data"]["authorization_url"], url.as_str(), "{told}");

    // Bob approves his own link; his session is told so, and his call goes through.
    let consent = approve(&url).await;
    assert!(consent.status.is_success(), "{}", consent.body);
    let report = client.approved().await;
    assert_eq!(report["protocol_version"], "2025-11-25", "{report}");
    assert_eq!(report["completed"], json!([id]), "{report}");
    let bob = grant_of(&report["result"]);
    let alice = grant_of(
        &mcp_client(&app, &app.alice, "legacy", "mine__whoami", json!({}), &[]).await["result"],
    );
    assert_ne!(bob, alice, "bob's own grant, not alice's");
    assert_eq!(peer.oauth_stats().await["code_exchanges"], 2);
    app.stop().await;
}

#[tokio::test]
async fn a_stateless_client_that_takes_url_elicitations_gets_an_authorization_round() {
    let peer = oauth_peer(&[]).await;
    let app = TestApp::builder().port(free_port()).spawn().await;
    authorized_by_alice(&app, &peer).await;

    let mut client = Elicited::start(&app, &app.bob, "auto");
    let told = client.next().await;
    let elicitation = &told["elicitation"];
    assert_eq!(elicitation["mode"], "url", "{told}");
    let url = elicitation["url"].as_str().unwrap().to_owned();
    assert_link(&url, &peer);
    assert!(
        elicitation["message"]
            .as_str()
            .unwrap()
            .contains("\"mine\""),
        "{told}"
    );

    let consent = approve(&url).await;
    assert!(consent.status.is_success(), "{}", consent.body);
    let report = client.approved().await;
    assert_eq!(report["protocol_version"], "2026-07-28", "{report}");
    assert_eq!(
        report["elicitations"].as_array().unwrap().len(),
        1,
        "one round: {report}"
    );
    grant_of(&report["result"]);
    assert_eq!(peer.oauth_stats().await["code_exchanges"], 2);
    app.stop().await;
}

#[tokio::test]
async fn a_client_without_url_elicitation_gets_the_link_in_its_tool_error() {
    let peer = oauth_peer(&[]).await;
    let app = TestApp::builder().port(free_port()).spawn().await;
    authorized_by_alice(&app, &peer).await;

    for mode in ["legacy", "auto"] {
        let report = mcp_client(&app, &app.bob, mode, "mine__whoami", json!({}), &[]).await;
        let result = &report["result"];
        assert_eq!(result["isError"], true, "{mode}: {report}");
        let meta = &result["_meta"]["mcp-bridge/error"];
        assert_eq!(meta["code"], "mcp_auth_required", "{mode}: {report}");
        let url = meta["authorization_url"].as_str().expect("the link");
        assert_link(url, &peer);
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(text.contains(url), "the model reads the link too: {report}");
    }
    app.stop().await;
}

#[tokio::test]
async fn reads_wait_for_the_readers_authorization_in_both_eras() {
    let peer = oauth_peer(&[]).await;
    let app = TestApp::builder().port(free_port()).spawn().await;
    authorized_by_alice(&app, &peer).await;

    // Bob in a session, the admin stateless: each with a link of his own.
    for (token, mode) in [(&app.bob, "legacy"), (&app.admin, "auto")] {
        let mut client = Elicited::reading(&app, token, mode, "mcp-bridge://mine/grant://me");
        let told = client.next().await;
        let url = told["elicitation"]["url"].as_str().unwrap().to_owned();
        assert_link(&url, &peer);
        let consent = approve(&url).await;
        assert!(consent.status.is_success(), "{}", consent.body);
        let report = client.approved().await;
        let text = report["result"]["contents"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{mode}: {report}"));
        let read: Value = serde_json::from_str(text).unwrap();
        assert!(read["grant"].is_u64(), "{mode}: {report}");
    }
    assert_eq!(peer.oauth_stats().await["code_exchanges"], 3);
    app.stop().await;
}
