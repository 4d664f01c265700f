//! The service under test in process: `TestApp` on port 0 with a temporary data dir, its
//! config and tokens, and typed HTTP helpers on it.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use mcp_bridge::config::Config;
use mcp_bridge::http::auth::Auth;
use mcp_bridge::startup::Application;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::store::{create_database, drop_database, drop_database_after, is_postgres};
use super::store::{postgres_database, postgres_server};
use super::wait::wait_until;

pub const SECRET: &str = "integration-test-secret";

pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    pub data_dir: Arc<tempfile::TempDir>,
    pub admin: String,
    pub alice: String,
    pub bob: String,
    /// The PostgreSQL database it runs on (`MCP_BRIDGE_TEST_POSTGRES`), dropped with its data dir.
    database: Option<String>,
    shutdown: CancellationToken,
    handle: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

/// The service's config over `data_dir`: its store the SQLite file there, or with
/// `MCP_BRIDGE_TEST_POSTGRES` set a PostgreSQL database of the data dir's own.
pub fn config(data_dir: &Path) -> Config {
    Config {
        bind: "127.0.0.1:0".into(),
        data_dir: data_dir.to_owned(),
        database_url: postgres_server().map(|server| postgres_database(&server, data_dir)),
        jwt_secret: Some(SECRET.to_owned().into()),
        max_body_bytes: 64 * 1024,
        ..Config::default()
    }
}

/// The service on port 0 with a fresh data dir and the default config.
pub async fn spawn_app() -> TestApp {
    TestApp::builder().spawn().await
}

/// The service on port 0 over an existing data dir (a restart).
pub async fn spawn_app_in(data_dir: Arc<tempfile::TempDir>) -> TestApp {
    TestApp::builder().data_dir(&data_dir).spawn().await
}

/// What a test sets about the service it starts, in one place: the data dir it runs over (a
/// restart reuses one) and every change to [`config`]. The methods name the settings many tests
/// share; [`TestAppBuilder::configure`] reaches any other.
#[must_use = "a builder starts nothing until `spawn`"]
pub struct TestAppBuilder {
    data_dir: Option<Arc<tempfile::TempDir>>,
    edits: Vec<ConfigEdit>,
}

type ConfigEdit = Box<dyn FnOnce(&mut Config) + Send>;

impl TestApp {
    pub fn builder() -> TestAppBuilder {
        TestAppBuilder {
            data_dir: None,
            edits: Vec::new(),
        }
    }
}

impl TestAppBuilder {
    /// Runs over `data_dir` (kept by the caller to restart over it or read it) instead of a
    /// fresh one.
    pub fn data_dir(mut self, data_dir: &Arc<tempfile::TempDir>) -> Self {
        self.data_dir = Some(data_dir.clone());
        self
    }

    /// Any change to the config; edits apply in the order given.
    pub fn configure(mut self, edit: impl FnOnce(&mut Config) + Send + 'static) -> Self {
        self.edits.push(Box::new(edit));
        self
    }

    /// Merged listings in pages of `page_size` entries.
    pub fn page_size(self, page_size: usize) -> Self {
        self.configure(move |config| config.page_size = page_size)
    }

    /// Quick health pings and reconnects, for tests that watch a server go and come back.
    pub fn watchful(self) -> Self {
        self.configure(|config| {
            config.ping_interval_secs = 1;
            config.ping_timeout_secs = 1;
            config.reconnect_base_ms = 100;
            config.reconnect_max_secs = 1;
        })
    }

    /// On 127.0.0.1:`port` with `MCP_BRIDGE_PUBLIC_URL` at that address, so that what the
    /// service hands out with its address in it (an OAuth redirect URI) outlives a restart.
    pub fn port(self, port: u16) -> Self {
        self.configure(move |config| {
            config.bind = format!("127.0.0.1:{port}");
            config.public_url = Some(format!("http://127.0.0.1:{port}"));
        })
    }

    /// Secrets sealed at rest with `key` (`MCP_BRIDGE_SECRETS_KEY`).
    pub fn secrets_key(self, key: &str) -> Self {
        let key = key.to_owned();
        self.configure(move |config| config.secrets_key = Some(key.into()))
    }

    pub async fn spawn(self) -> TestApp {
        let data_dir = self
            .data_dir
            .unwrap_or_else(|| Arc::new(tempfile::tempdir().unwrap()));
        let mut settings = config(data_dir.path());
        for edit in self.edits {
            edit(&mut settings);
        }
        spawn_with(data_dir, settings).await
    }
}

async fn spawn_with(data_dir: Arc<tempfile::TempDir>, config: Config) -> TestApp {
    if std::env::var_os("TEST_LOG").is_some() {
        std::mem::forget(mcp_bridge::telemetry::init(
            "info,mcp_bridge=debug",
            mcp_bridge::config::LogFormat::Text,
        ));
    }
    let auth = Auth::from_config(&config).unwrap();
    let database = config.database_url.clone().filter(|url| is_postgres(url));
    if let Some(url) = &database {
        create_database(url).await;
    }
    let app = Application::build(config)
        .await
        .expect("the service starts");
    let base = format!("http://{}", app.addr());
    let shutdown = app.shutdown_token();
    let handle = tokio::spawn(app.run_until_stopped());
    let hour = Duration::from_secs(3600);
    let test_app = TestApp {
        base,
        client: reqwest::Client::new(),
        admin: auth.mint("root", true, hour).unwrap(),
        alice: auth.mint("alice", false, hour).unwrap(),
        bob: auth.mint("bob", false, hour).unwrap(),
        data_dir,
        database,
        shutdown,
        handle: Some(handle),
    };
    test_app.wait_ready().await;
    test_app
}

impl TestApp {
    /// A handle on the service running elsewhere (a process of its own) at `base`, with tokens
    /// for its [`SECRET`].
    pub fn at(base: &str, data_dir: Arc<tempfile::TempDir>) -> Self {
        let auth = Auth::from_config(&Config {
            jwt_secret: Some(SECRET.to_owned().into()),
            ..Config::default()
        })
        .unwrap();
        let hour = Duration::from_secs(3600);
        Self {
            base: base.to_owned(),
            client: reqwest::Client::new(),
            admin: auth.mint("root", true, hour).unwrap(),
            alice: auth.mint("alice", false, hour).unwrap(),
            bob: auth.mint("bob", false, hour).unwrap(),
            data_dir,
            database: None,
            shutdown: CancellationToken::new(),
            handle: None,
        }
    }
}

impl TestApp {
    /// A stateless (2026-07-28) `tools/call` on `/mcp` as `token`, as raw HTTP: `meta` gets the
    /// era's fields added.
    pub async fn stateless_mcp_call(
        &self,
        token: &str,
        name: &str,
        arguments: Value,
        mut meta: Value,
    ) -> reqwest::Response {
        meta["io.modelcontextprotocol/protocolVersion"] = json!("2026-07-28");
        meta["io.modelcontextprotocol/clientCapabilities"] = json!({});
        meta["io.modelcontextprotocol/clientInfo"] = json!({"name": "raw", "version": "1"});
        let body = json!({
            "jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": meta},
        });
        self.client
            .post(format!("{}/mcp", self.base))
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", name)
            .json(&body)
            .send()
            .await
            .unwrap()
    }
}

impl TestApp {
    async fn wait_ready(&self) {
        let url = format!("{}/readyz", self.base);
        wait_until(
            "the service becoming ready",
            Duration::from_secs(5),
            async || match self.client.get(&url).send().await {
                Ok(resp) if resp.status() == StatusCode::OK => Ok(()),
                other => Err(format!("{other:?}")),
            },
        )
        .await
    }

    /// Stops the service as SIGTERM would, waiting for every server to stop.
    pub async fn stop(mut self) {
        self.shutdown.cancel();
        if let Some(handle) = self.handle.take() {
            handle.await.unwrap().unwrap();
        }
    }

    pub async fn send(
        &self,
        method: Method,
        path: &str,
        token: Option<&str>,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut req = self.client.request(method, format!("{}{path}", self.base));
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        if let Some(body) = body {
            req = req.json(&body);
        }
        let resp = req.send().await.expect("the service answers");
        let status = resp.status();
        let text = resp.text().await.unwrap();
        let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, value)
    }

    pub async fn get(&self, path: &str, token: &str) -> (StatusCode, Value) {
        self.send(Method::GET, path, Some(token), None).await
    }

    pub async fn post(&self, path: &str, token: &str, body: Value) -> (StatusCode, Value) {
        self.send(Method::POST, path, Some(token), Some(body)).await
    }

    pub async fn patch(&self, path: &str, token: &str, body: Value) -> (StatusCode, Value) {
        self.send(Method::PATCH, path, Some(token), Some(body))
            .await
    }

    pub async fn put(&self, path: &str, token: &str, body: Value) -> (StatusCode, Value) {
        self.send(Method::PUT, path, Some(token), Some(body)).await
    }

    pub async fn delete(&self, path: &str, token: &str) -> (StatusCode, Value) {
        self.send(Method::DELETE, path, Some(token), None).await
    }

    pub async fn call(&self, name: &str, arguments: Value) -> (StatusCode, Value) {
        self.post(
            "/v1/tools/call",
            &self.alice,
            json!({ "name": name, "arguments": arguments }),
        )
        .await
    }

    /// `POST /v1/tools/call` of `name` as `token`.
    pub async fn call_as(&self, token: &str, name: &str, arguments: Value) -> (StatusCode, Value) {
        self.post(
            "/v1/tools/call",
            token,
            json!({ "name": name, "arguments": arguments }),
        )
        .await
    }

    /// The names of the tools alice is shown (see [`TestApp::list_tools`]).
    pub async fn tool_names(&self, query: &str) -> Vec<String> {
        let tools = self.list_tools(query).await;
        tools
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    }

    /// Waits until the server is ready on a connection made after `after` (a `connected_at`).
    pub async fn wait_reconnected(&self, server_id: &str, after: f64, within: Duration) -> Value {
        let what = format!("server {server_id} reconnecting");
        wait_until(&what, within, async || {
            let (_, body) = self.server(server_id).await;
            let server = &body["server"];
            match server["status"] == "ready"
                && server["connected_at"].as_f64().unwrap_or_default() > after
            {
                true => Ok(server.clone()),
                false => Err(body.to_string()),
            }
        })
        .await
    }

    /// Waits until the server's status is `status`.
    pub async fn wait_status(&self, server_id: &str, status: &str, within: Duration) -> Value {
        let what = format!("server {server_id} becoming {status}");
        wait_until(&what, within, async || {
            let (_, body) = self.server(server_id).await;
            match body["server"]["status"] == status {
                true => Ok(body["server"].clone()),
                false => Err(body.to_string()),
            }
        })
        .await
    }

    /// `GET /v1/servers/{server_id}` as the admin.
    pub async fn server(&self, server_id: &str) -> (StatusCode, Value) {
        self.get(&format!("/v1/servers/{server_id}"), &self.admin)
            .await
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.shutdown.cancel();
        if let Some(url) = &self.database {
            match Arc::strong_count(&self.data_dir) {
                // The last user of the data dir: nothing restarts over it any more.
                1 => drop_database(url),
                _ => drop_database_after(self.data_dir.path(), url),
            }
        }
    }
}

/// Calls a tool as `token` in the background.
pub fn call_in_background(
    app: &TestApp,
    token: &str,
    name: &str,
    arguments: Value,
) -> tokio::task::JoinHandle<(StatusCode, Value)> {
    post_in_background(app, token, json!({"name": name, "arguments": arguments}))
}

/// `POST /v1/tools/call` with `body` as `token`, in a task of its own: its status and body.
pub fn post_in_background(
    app: &TestApp,
    token: &str,
    body: Value,
) -> tokio::task::JoinHandle<(StatusCode, Value)> {
    let client = app.client.clone();
    let url = format!("{}/v1/tools/call", app.base);
    let token = token.to_owned();
    tokio::spawn(async move {
        let resp = client
            .post(url)
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .unwrap();
        let status = resp.status();
        (status, resp.json().await.unwrap())
    })
}
