//! The store's database going away and coming back (PostgreSQL, behind a proxy the test cuts):
//! requests that need it fail fast with 503 `mcp_server_unavailable` (retryable), the rest of the
//! service keeps answering, and everything works again once the database is back.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;

#[tokio::test]
async fn while_the_database_is_down_its_requests_are_503_and_then_work_again() {
    let Some(server) = postgres_server() else {
        eprintln!("skipped: needs MCP_BRIDGE_TEST_POSTGRES (a SQLite file cannot go away)");
        return;
    };
    let target = url::Url::parse(&server).unwrap();
    let target = format!(
        "{}:{}",
        target.host_str().unwrap(),
        target.port().unwrap_or(5432)
    );
    let mut proxy = Proxy::start(&target).await;
    let data_dir = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let mut url =
        url::Url::parse(config(data_dir.path()).database_url.as_deref().unwrap()).unwrap();
    url.set_port(Some(proxy.port)).unwrap();
    let app = TestApp::builder()
        .data_dir(&data_dir)
        .configure(move |c| c.database_url = Some(url.to_string()))
        .spawn()
        .await;
    let roots = json!({"roots": [{"uri": "file:///srv/one", "name": "One"}]});
    let (status, body) = app
        .send(
            reqwest::Method::PUT,
            "/v1/roots",
            Some(&app.alice),
            Some(roots.clone()),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    app.register_server(everything_stdio("ev")).await;

    proxy.cut().await;
    let started = Instant::now();
    let (status, body) = app
        .send(
            reqwest::Method::PUT,
            "/v1/roots",
            Some(&app.alice),
            Some(roots.clone()),
        )
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["code"], "mcp_server_unavailable", "{body}");
    assert_eq!(body["retryable"], true, "{body}");
    assert_eq!(body["type"], "mcp/roots/set/resp", "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("database"),
        "{body}"
    );
    // The pool's acquire timeout (3 s), not a TCP timeout.
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    let (status, body) = app.get("/v1/roots", &app.alice).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    let (status, body) = app.get("/v1/audit", &app.admin).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["code"], "mcp_server_unavailable", "{body}");
    // Still ready for one lease after it first sees the store away (outages.rs goes past it).
    let (status, body) = app.send(reqwest::Method::GET, "/readyz", None, None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_ne!(body["status"], "ok", "{body}");
    // What is held in memory is still served, and connected servers still answer.
    let (status, body) = app.get("/v1/servers", &app.alice).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let body = app
        .call_tool("ev__echo", json!({"message": "still here"}))
        .await;
    assert_eq!(body["content"][0]["text"], "Echo: still here");
    // A registration needs the store: refused, and nothing of it is left running.
    let (status, body) = app
        .post(
            "/v1/servers",
            &app.admin,
            json!({"config": everything_stdio("late")}),
        )
        .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["code"], "mcp_server_unavailable", "{body}");

    proxy.restore().await;
    wait_until("the store answering again", WAIT, async || {
        let (status, body) = app.get("/v1/roots", &app.alice).await;
        match status {
            StatusCode::OK => Ok(body),
            _ => Err(body.to_string()),
        }
    })
    .await;
    let (status, body) = app
        .send(
            reqwest::Method::PUT,
            "/v1/roots",
            Some(&app.alice),
            Some(roots),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _) = app.send(reqwest::Method::GET, "/readyz", None, None).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = app.server("late").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    app.register_server(everything_stdio("late")).await;
    app.stop().await;
}
