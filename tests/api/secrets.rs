//! Secrets at rest: with `MCP_BRIDGE_SECRETS_KEY`, `env` and `headers` values are sealed in the
//! store, and still reach the server they belong to after a restart.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::helpers::*;

const KEY: &str = "5f2b8c0e4a6d1f3b9e7c5a2d8f0b4e6c1a3d5f7b9e2c4a6d8f0b2e4c6a8d0f2b";

async fn sealed_app(data_dir: Arc<tempfile::TempDir>) -> TestApp {
    TestApp::builder()
        .data_dir(&data_dir)
        .secrets_key(KEY)
        .spawn()
        .await
}

#[tokio::test]
async fn env_values_are_sealed_in_the_store_and_reach_the_server() {
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let app = sealed_app(data_dir.clone()).await;
    let mut config = everything_stdio("sealed");
    config["env"] = json!({ "SEALED_SECRET": "plain-text-never-on-disk" });
    app.register_server(config).await;
    app.stop().await;
    let stored = stored_text(data_dir.path()).await;
    assert!(stored.contains("SEALED_SECRET"), "the name is not secret");
    assert!(
        !stored.contains("plain-text-never-on-disk"),
        "the value is sealed at rest"
    );
    assert!(stored.contains("enc:v1:"));

    // Restarted with the same key, the server comes back and its child gets the value.
    let app = sealed_app(data_dir.clone()).await;
    let server = app
        .wait_status("sealed", "ready", std::time::Duration::from_secs(20))
        .await;
    assert_eq!(server["status"], "ready");
    let (_, answer) = app.call("sealed__get-env", json!({})).await;
    let text = answer["content"][0]["text"].as_str().unwrap_or_default();
    let env: Value = serde_json::from_str(text).unwrap();
    assert_eq!(env["SEALED_SECRET"], "plain-text-never-on-disk");
    let (_, shown) = app.get("/v1/servers/sealed", &app.admin).await;
    assert_eq!(shown["config"]["env"]["SEALED_SECRET"], "***", "{shown}");
}

/// The data dir is 0700 and the database with its WAL and SHM files 0600, whatever the umask:
/// they hold every server's config.
#[tokio::test]
async fn the_data_dir_and_database_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    std::fs::set_permissions(data_dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let app = spawn_app_in(data_dir.clone()).await;
    app.register_server(everything_stdio("perm")).await;
    let mode =
        |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(data_dir.path()), 0o700, "the data dir");
    if on_postgres() {
        eprintln!("skipped on PostgreSQL: the database files are SQLite's");
        app.stop().await;
        return;
    }
    let mut seen = Vec::new();
    for entry in std::fs::read_dir(data_dir.path()).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("mcp-bridge.db") {
            assert_eq!(mode(&entry.path()), 0o600, "{name}");
            seen.push(name);
        }
    }
    seen.sort();
    assert_eq!(
        seen,
        ["mcp-bridge.db", "mcp-bridge.db-shm", "mcp-bridge.db-wal"],
        "the WAL and SHM files were checked too"
    );
    app.stop().await;
}

/// Without `MCP_BRIDGE_SECRETS_KEY`, a key is generated in the data dir (0600) on first start,
/// so secret values are sealed at rest by default; a restart uses the same key. (SQLite only: a
/// store shared by replicas needs the same configured key on each.)
#[tokio::test]
async fn secrets_are_sealed_by_default_with_a_generated_key() {
    use std::os::unix::fs::PermissionsExt;
    if on_postgres() {
        eprintln!("skipped on PostgreSQL: a key is generated for a SQLite store only");
        return;
    }
    let data_dir = Arc::new(tempfile::tempdir().unwrap());
    let app = spawn_app_in(data_dir.clone()).await;
    let mut config = everything_stdio("sealed-default");
    config["env"] = json!({ "DEFAULT_SECRET": "plain-by-default-before" });
    app.register_server(config).await;
    app.stop().await;
    let key_file = data_dir.path().join("secrets.key");
    let meta = std::fs::metadata(&key_file).expect("a key was generated");
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(std::fs::read_to_string(&key_file).unwrap().trim().len(), 64);
    let stored = stored_text(data_dir.path()).await;
    assert!(
        !stored.contains("plain-by-default-before"),
        "sealed at rest"
    );
    assert!(stored.contains("enc:v1:"));

    let app = spawn_app_in(data_dir.clone()).await;
    app.wait_status(
        "sealed-default",
        "ready",
        std::time::Duration::from_secs(20),
    )
    .await;
    let (_, answer) = app.call("sealed-default__get-env", json!({})).await;
    let text = answer["content"][0]["text"].as_str().unwrap_or_default();
    let env: Value = serde_json::from_str(text).unwrap();
    assert_eq!(env["DEFAULT_SECRET"], "plain-by-default-before");
    app.stop().await;
}
