//! Test databases: every store test runs on SQLite (a file in a temporary directory), and on
//! PostgreSQL too when `MCP_BRIDGE_TEST_POSTGRES` names a server (`postgres://user@host:port`),
//! each run in a database of its own, `t_<MCP_BRIDGE_TEST_RUN>_<random>`, dropped at its end.

use sqlx::{ConnectOptions, Connection, PgConnection};

use super::Store;

/// The variable naming a PostgreSQL server to test on as well.
pub const POSTGRES_VAR: &str = "MCP_BRIDGE_TEST_POSTGRES";
/// A prefix for the databases of one test run, so that whatever a run leaves can be found.
pub const RUN_VAR: &str = "MCP_BRIDGE_TEST_RUN";

/// One database for one test.
pub struct TestDb {
    url: String,
    label: &'static str,
    /// SQLite: the directory holding the file.
    dir: Option<tempfile::TempDir>,
    /// PostgreSQL: the server and the database, dropped with this.
    postgres: Option<(String, String)>,
}

impl TestDb {
    /// Its URL: the same database each time (a test may open it again, as a restart would).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Everything the database holds, as text: every byte of the SQLite files, or every row of
    /// every table in PostgreSQL.
    pub async fn at_rest(&self) -> String {
        let Some(dir) = &self.dir else {
            return postgres_rows(&self.url).await;
        };
        let mut all = Vec::new();
        for entry in std::fs::read_dir(dir.path()).unwrap().flatten() {
            all.extend(std::fs::read(entry.path()).unwrap_or_default());
        }
        String::from_utf8_lossy(&all).into_owned()
    }

    /// The store on it (migrated).
    pub async fn open(&self) -> Store {
        // Shown only when the test fails: which backend it failed on.
        eprintln!("-- on {}: {}", self.label, self.url);
        Store::open(&self.url).await.expect("the test store opens")
    }
}

/// Registers servers `ids` (owned by alice, default configs) in `store`.
pub async fn with_servers(store: &Store, ids: &[&str]) {
    for id in ids {
        let server = super::StoredServer {
            owner: "alice".into(),
            config: crate::a2e::McpServerConfig {
                server_id: (*id).into(),
                ..Default::default()
            },
        };
        store.insert_server(&server).await.unwrap();
    }
}

/// Every row of every table of the database at `url`, as text.
pub async fn postgres_rows(url: &str) -> String {
    let mut conn = PgConnection::connect(url).await.unwrap();
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public'",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    let mut all = String::new();
    for table in tables {
        let rows: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "SELECT t::text FROM \"{table}\" t"
        )))
        .fetch_all(&mut conn)
        .await
        .unwrap();
        all.extend(rows.into_iter().map(|row| row + "\n"));
    }
    all
}

/// A database on each backend to test on: SQLite, then PostgreSQL when configured.
pub async fn backends() -> Vec<TestDb> {
    let dir = tempfile::tempdir().unwrap();
    let mut all = vec![TestDb {
        url: format!("sqlite://{}", dir.path().join("bridge.db").display()),
        label: "SQLite",
        dir: Some(dir),
        postgres: None,
    }];
    if let Ok(server) = std::env::var(POSTGRES_VAR)
        && !server.is_empty()
    {
        all.push(postgres(&server).await);
    }
    all
}

/// A fresh database on `server`.
async fn postgres(server: &str) -> TestDb {
    let run = std::env::var(RUN_VAR).unwrap_or_default();
    let random = uuid::Uuid::new_v4().simple().to_string();
    let name = match run.is_empty() {
        true => format!("t_{}", &random[..16]),
        false => format!("t_{run}_{}", &random[..16]),
    };
    let mut admin = PgConnection::connect(server)
        .await
        .unwrap_or_else(|e| panic!("{POSTGRES_VAR}={server}: {e}"));
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE \"{name}\"")))
        .execute(&mut admin)
        .await
        .unwrap();
    let _ = admin.close().await;
    let mut url = url::Url::parse(server).unwrap();
    url.set_path(&name);
    TestDb {
        url: url.to_string(),
        label: "PostgreSQL",
        dir: None,
        postgres: Some((server.to_owned(), name)),
    }
}

/// Drops a test database (closing what still uses it), on a thread of its own: `Drop` cannot
/// wait for a future, and the test's runtime may be the one that is ending.
pub fn drop_postgres(server: &str, name: &str) {
    let (server, name) = (server.to_owned(), name.to_owned());
    let dropped = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let options: sqlx::postgres::PgConnectOptions = server.parse()?;
            let mut admin = options.connect().await?;
            sqlx::query(sqlx::AssertSqlSafe(format!(
                "DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"
            )))
            .execute(&mut admin)
            .await?;
            admin.close().await
        })
    })
    .join();
    if let Ok(Err(error)) = dropped {
        eprintln!("cannot drop the test database: {error}");
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Some((server, name)) = &self.postgres {
            drop_postgres(server, name);
        }
    }
}
