//! Resources through `/mcp`: every resource a client is shown can be read, and the unprefixed
//! server keeps its URIs.

use serde_json::{Value, json};

use crate::helpers::*;

use super::run_peer;

/// Runs mcp_resources.py against `/mcp`; its JSON report.
async fn read_everything(app: &TestApp, mode: &str, flags: &[&str]) -> Value {
    let url = format!("{}/mcp", app.base);
    let mut args = vec![url.as_str(), &app.admin, mode];
    args.extend_from_slice(flags);
    run_peer("mcp_resources.py", &args).await
}

fn unreadable(report: &Value) -> Vec<(String, String)> {
    report["reads"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(_, text)| text.as_str().unwrap_or_default().starts_with("ERROR"))
        .map(|(uri, text)| (uri.clone(), text.to_string()))
        .collect()
}

/// A URI or template several servers offer is shown on `/mcp` qualified with its server
/// (`mcp-bridge://{server_id}/{uri}`), so a client can read (and subscribe to) each; what only
/// one server offers keeps its URI.
#[tokio::test]
async fn every_resource_an_mcp_client_is_shown_can_be_read() {
    let app = spawn_app().await;
    app.register_server(py_stdio("one", &unique("r1"))).await;
    app.register_server(py_stdio("two", &unique("r2"))).await;
    app.register_server(everything_stdio("ev")).await;
    for mode in ["legacy", "auto"] {
        let flags: &[&str] = match mode {
            "legacy" => &[
                "--subscribe",
                "mcp-bridge://two/fixture://doc/1",
                "--touch",
                "two__touch",
            ],
            _ => &[],
        };
        let report = read_everything(&app, mode, flags).await;
        let resources = report["resources"].as_array().unwrap();
        for expected in [
            "mcp-bridge://one/fixture://doc/1",
            "mcp-bridge://two/fixture://doc/1",
            "demo://resource/static/document/architecture.md",
        ] {
            assert!(resources.contains(&json!(expected)), "{expected}: {report}");
        }
        assert!(!resources.contains(&json!("fixture://doc/1")), "{report}");
        let templates = report["templates"].as_array().unwrap();
        assert!(
            templates.contains(&json!("mcp-bridge://two/fixture://note/{name}")),
            "{report}"
        );
        assert_eq!(unreadable(&report), vec![], "{mode}: {report}");
        if mode == "legacy" {
            // The update comes in the form the session subscribed with.
            assert_eq!(report["subscribed"], "ok", "{report}");
            assert_eq!(
                report["updated"], "mcp-bridge://two/fixture://doc/1",
                "{report}"
            );
        }
        assert_eq!(
            report["reads"]["mcp-bridge://one/fixture://doc/1"],
            "hello resource @ mcp-bridge://one/fixture://doc/1",
            "{report}"
        );
    }
    // The subscription went to the server named in the URI, and only there.
    let (_, two) = app.call("two__subscriptions", json!({})).await;
    assert_eq!(two["content"][0]["text"], "fixture://doc/1", "{two}");
    let (_, one) = app.call("one__subscriptions", json!({})).await;
    assert_eq!(one["content"][0]["text"], "", "{one}");
    app.stop().await;
}

/// With an unprefixed server, its URIs stay plain (and reading them goes to it) even when
/// another server offers the same; the other's are qualified.
#[tokio::test]
async fn the_unprefixed_server_keeps_its_uris() {
    let app = TestApp::builder()
        .configure(|c| c.mcp_unprefixed_server = Some("one".into()))
        .spawn()
        .await;
    app.register_server(py_stdio("one", &unique("u1"))).await;
    app.register_server(py_stdio("two", &unique("u2"))).await;
    let report = read_everything(&app, "legacy", &[]).await;
    let resources = report["resources"].as_array().unwrap();
    assert!(resources.contains(&json!("fixture://doc/1")), "{report}");
    assert!(
        resources.contains(&json!("mcp-bridge://two/fixture://doc/1")),
        "{report}"
    );
    assert_eq!(unreadable(&report), vec![], "{report}");
    app.stop().await;
}
