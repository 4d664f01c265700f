//! A bridge of several replicas for the tests (replicas.rs, chaos.rs, bus_auth.rs, ...): real
//! `mcp-bridge` processes sharing one PostgreSQL database and one NATS (each bridge its own
//! database and subject prefix), and a NATS server of a test's own, which it may stop, restart
//! or run with an auth config.

use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;

use crate::helpers::*;

/// The key replicas of these tests share (`MCP_BRIDGE_SECRETS_KEY`; the bus key derives from it).
pub const SECRETS_KEY: &str = "5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e";

/// Seconds a lease lasts in these tests (the default is 10).
pub const LEASE_SECS: u64 = 3;

/// Replicas of one bridge: a database and a NATS prefix of their own.
pub struct Replicas {
    pub database: String,
    pub nats: String,
    pub prefix: String,
    pub dirs: Vec<Arc<tempfile::TempDir>>,
}

impl Replicas {
    pub async fn new() -> Option<Self> {
        let (Some(server), Ok(nats)) = (postgres_server(), std::env::var("MCP_BRIDGE_TEST_NATS"))
        else {
            eprintln!("skipped: needs MCP_BRIDGE_TEST_POSTGRES and MCP_BRIDGE_TEST_NATS");
            return None;
        };
        let first = Arc::new(tempfile::tempdir().unwrap());
        let database = postgres_database(&server, first.path());
        create_database(&database).await;
        Some(Self {
            database,
            nats,
            prefix: unique("t.replicas").replace('-', "_"),
            dirs: vec![first],
        })
    }

    /// Starts replica `id` (a data dir of its own) with more variables in its environment.
    pub async fn start_with(&mut self, id: &str, env: &[(&str, &str)]) -> Replica {
        let dir = match self.dirs.len() {
            // The first replica uses the directory that names the database.
            1 if !self.dirs[0].path().join("replica-id").exists() => self.dirs[0].clone(),
            _ => {
                let dir = Arc::new(tempfile::tempdir().unwrap());
                self.dirs.push(dir.clone());
                dir
            }
        };
        let lease = LEASE_SECS.to_string();
        let mut vars = vec![
            ("MCP_BRIDGE_DATABASE_URL", self.database.as_str()),
            ("MCP_BRIDGE_NATS_URL", self.nats.as_str()),
            ("MCP_BRIDGE_NATS_PREFIX", self.prefix.as_str()),
            ("MCP_BRIDGE_REPLICA_ID", id),
            ("MCP_BRIDGE_LEASE_SECS", lease.as_str()),
            ("MCP_BRIDGE_PING_INTERVAL_SECS", "1"),
            ("MCP_BRIDGE_SECRETS_KEY", SECRETS_KEY),
        ];
        vars.extend_from_slice(env);
        std::fs::write(dir.path().join("replica-id"), id).unwrap();
        let bridge = start_bridge_with(dir.path(), &vars).await;
        let app = TestApp::at(&bridge.base, dir.clone());
        let replica = Replica {
            id: id.to_owned(),
            bridge,
            app,
        };
        replica.wait_ready().await;
        replica
    }

    /// Puts a proxy the test can cut between the database and the replicas started from now
    /// on; the proxy, and the database's direct URL.
    pub async fn database_through_proxy(&mut self) -> (Proxy, String) {
        let direct = url::Url::parse(&self.database).unwrap();
        let target = format!(
            "{}:{}",
            direct.host_str().unwrap(),
            direct.port().unwrap_or(5432)
        );
        let proxy = Proxy::start(&target).await;
        let mut through = direct;
        through.set_port(Some(proxy.port)).unwrap();
        let direct = std::mem::replace(&mut self.database, through.to_string());
        (proxy, direct)
    }

    /// A proxy the test can cut between NATS and a replica started with the URL this returns
    /// as its `MCP_BRIDGE_NATS_URL` (the replica cut off from the bus, the others not).
    pub async fn bus_through_proxy(&self) -> (Proxy, String) {
        let direct = url::Url::parse(&self.nats).unwrap();
        let target = format!(
            "{}:{}",
            direct.host_str().unwrap(),
            direct.port().unwrap_or(4222)
        );
        let proxy = Proxy::start(&target).await;
        let mut through = direct;
        through.set_port(Some(proxy.port)).unwrap();
        (proxy, through.to_string())
    }

    /// The replica whose live lease the store names for `server_id`, read from the database.
    pub async fn lease_holder(&self, server_id: &str) -> Option<String> {
        use sqlx::Connection;
        let mut db = sqlx::PgConnection::connect(&self.database).await.unwrap();
        let now = "(extract(epoch from clock_timestamp())::double precision)";
        let live =
            format!("SELECT replica FROM leases WHERE server_id = $1 AND expires_at >= {now}");
        sqlx::query_scalar(sqlx::AssertSqlSafe(live))
            .bind(server_id)
            .fetch_optional(&mut db)
            .await
            .unwrap()
    }

    pub async fn start(&mut self, id: &str) -> Replica {
        self.start_with(id, &[]).await
    }
}

impl Drop for Replicas {
    fn drop(&mut self) {
        drop_database(&self.database);
        let (nats, prefix) = (self.nats.clone(), self.prefix.clone());
        let _ = std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(mcp_bridge::hub::bus::Bus::delete_log(&nats, &prefix))
        })
        .join();
    }
}

/// One replica: the process, and the test's handle on its API.
pub struct Replica {
    pub id: String,
    pub bridge: Bridge,
    pub app: TestApp,
}

impl Replica {
    pub async fn wait_ready(&self) {
        wait_until("the replica becoming ready", WAIT, async || {
            match self
                .app
                .send(reqwest::Method::GET, "/readyz", None, None)
                .await
            {
                (StatusCode::OK, _) => Ok(()),
                other => Err(format!("{other:?}")),
            }
        })
        .await
    }

    /// Waits until this replica shows the server `ready`, held by `holder`.
    pub async fn wait_held(&self, server_id: &str, holder: &str, within: Duration) -> Value {
        let what = format!("{} showing {server_id} ready on {holder}", self.id);
        wait_until(&what, within, async || {
            let (_, body) = self.app.server(server_id).await;
            let server = &body["server"];
            match server["status"] == "ready" && server["replica"] == holder {
                true => Ok(server.clone()),
                false => Err(body.to_string()),
            }
        })
        .await
    }

    pub async fn metric(&self, name: &str) -> f64 {
        let resp = self
            .app
            .client
            .get(format!("{}/metrics", self.app.base))
            .send()
            .await
            .unwrap();
        let text = resp.text().await.unwrap();
        text.lines()
            .filter(|l| l.starts_with(name))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    }
}

/// A NATS server of the test's own (restarted by it), its store in a directory that outlives it.
pub struct PrivateNats {
    pub port: u16,
    pub store: tempfile::TempDir,
    pub child: Option<tokio::process::Child>,
    /// An auth config it runs with (see [`PrivateNats::with_auth`]).
    pub config: Option<std::path::PathBuf>,
}

/// The users of [`PrivateNats::with_auth`]: the bridge's, and an intruder of the same account
/// with every right on its subjects but without the bus key.
pub const BRIDGE_USER: (&str, &str) = ("bridge", "bridge-password");
pub const INTRUDER: (&str, &str) = ("intruder", "intruder-password");

impl PrivateNats {
    pub async fn start() -> Self {
        let mut nats = Self {
            port: free_port(),
            store: tempfile::tempdir().unwrap(),
            child: None,
            config: None,
        };
        nats.run().await;
        nats
    }

    /// One with authentication, as `deploy/nats.conf` sets it up: an account of the bridge's
    /// with JetStream, where [`BRIDGE_USER`] may use only `{prefix}.>`, the JetStream API and
    /// `_INBOX.>`, and [`INTRUDER`] may publish and subscribe to anything.
    pub async fn with_auth(prefix: &str) -> Self {
        let store = tempfile::tempdir().unwrap();
        let port = free_port();
        let path = store.path().join("nats.conf");
        let (user, password) = BRIDGE_USER;
        let (intruder, intruder_password) = INTRUDER;
        let config = format!(
            r#"listen: "127.0.0.1:{port}"
jetstream {{ store_dir: "{dir}" }}
accounts {{
  BRIDGE {{
    jetstream: enabled
    users: [
      {{ user: "{user}", password: "{password}", permissions: {{
          publish: ["{prefix}.>", "$JS.API.>", "_INBOX.>"]
          subscribe: ["{prefix}.>", "_INBOX.>"] }} }}
      {{ user: "{intruder}", password: "{intruder_password}" }}
    ]
  }}
}}
"#,
            dir = store.path().join("js").display(),
        );
        std::fs::write(&path, config).unwrap();
        let mut nats = Self {
            port,
            store,
            child: None,
            config: Some(path),
        };
        nats.run().await;
        nats
    }

    /// Its URL with a user's credentials in it.
    pub fn url_as(&self, (user, password): (&str, &str)) -> String {
        format!("nats://{user}:{password}@127.0.0.1:{}", self.port)
    }

    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    pub async fn run(&mut self) {
        let mut command = tokio::process::Command::new("nats-server");
        match &self.config {
            Some(config) => command.arg("-c").arg(config),
            None => command
                .args([
                    "-a",
                    "127.0.0.1",
                    "-p",
                    &self.port.to_string(),
                    "-js",
                    "-sd",
                ])
                .arg(self.store.path()),
        };
        let child = command
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("nats-server runs");
        self.child = Some(child);
        let port = self.port;
        wait_until("NATS listening", WAIT, async || {
            tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .map(drop)
                .map_err(|e| e.to_string())
        })
        .await;
    }

    pub async fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill().await;
        }
    }
}
