//! The committed `openapi/openapi.json` is what the code generates; `UPDATE_OPENAPI=1` rewrites it.

use reqwest::{Method, StatusCode};

use crate::helpers::*;

#[test]
fn the_committed_spec_matches_the_code() {
    let generated = mcp_bridge::api::openapi().to_pretty_json().unwrap() + "\n";
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("openapi/openapi.json");
    if std::env::var_os("UPDATE_OPENAPI").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "openapi/openapi.json is out of date: run `UPDATE_OPENAPI=1 cargo test --test api openapi` and commit it"
    );
}

#[tokio::test]
async fn the_service_serves_the_same_spec_and_swagger_ui() {
    let app = spawn_app().await;
    let (status, served) = app.send(Method::GET, "/openapi.json", None, None).await;
    assert_eq!(status, StatusCode::OK);
    let generated = serde_json::to_value(mcp_bridge::api::openapi()).unwrap();
    assert_eq!(served, generated);
    for path in [
        "/v1/servers",
        "/v1/servers/{server_id}",
        "/v1/servers/{server_id}/reconnect",
        "/v1/tools",
        "/v1/tools/call",
        "/v1/a2e",
        "/healthz",
        "/readyz",
    ] {
        assert!(served["paths"][path].is_object(), "{path} is documented");
    }
    let (status, page) = app.send(Method::GET, "/docs/", None, None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        page.as_str().unwrap().contains("swagger"),
        "Swagger UI is served"
    );
    app.stop().await;
}
