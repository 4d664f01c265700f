//! The store on PostgreSQL (`MCP_BRIDGE_TEST_POSTGRES`): a database per data dir, created and
//! dropped with it, and everything a store holds as text.

use std::path::Path;
use std::time::Duration;

/// The variable naming a PostgreSQL server (`postgres://user@host:port`) to run the suite on;
/// `MCP_BRIDGE_TEST_RUN` prefixes the databases of one run, so that what a run leaves behind can
/// be found and dropped (scripts/test.sh does).
const POSTGRES_VAR: &str = "MCP_BRIDGE_TEST_POSTGRES";
const RUN_VAR: &str = "MCP_BRIDGE_TEST_RUN";
/// The file in a data dir naming its PostgreSQL database: a restart over the same data dir gets
/// the same database back.
const DATABASE_FILE: &str = "test-postgres-database";

/// The PostgreSQL server the suite runs on, when it does.
pub fn postgres_server() -> Option<String> {
    std::env::var(POSTGRES_VAR).ok().filter(|s| !s.is_empty())
}

/// Whether the suite runs on PostgreSQL: tests of what only SQLite has (its files) skip then.
pub fn on_postgres() -> bool {
    postgres_server().is_some()
}

pub(super) fn is_postgres(url: &str) -> bool {
    url.starts_with("postgres://") || url.starts_with("postgresql://")
}

/// The URL of `data_dir`'s database on `server` (named in the data dir; not created yet).
pub fn postgres_database(server: &str, data_dir: &Path) -> String {
    let file = data_dir.join(DATABASE_FILE);
    let name = match std::fs::read_to_string(&file) {
        Ok(name) => name.trim().to_owned(),
        Err(_) => {
            let run = std::env::var(RUN_VAR).unwrap_or_default();
            let random = uuid::Uuid::new_v4().simple().to_string();
            let name = match run.is_empty() {
                true => format!("t_{}", &random[..16]),
                false => format!("t_{run}_{}", &random[..16]),
            };
            // A data dir the service is to make itself may not exist yet.
            std::fs::create_dir_all(data_dir).unwrap();
            std::fs::write(&file, &name).unwrap();
            name
        }
    };
    let mut url = url::Url::parse(server).unwrap();
    url.set_path(&name);
    url.to_string()
}

/// The server to administer the database at `url` through (`MCP_BRIDGE_TEST_POSTGRES`, never a
/// proxy the URL may go through), and the database's name.
fn server_and_name(url: &str) -> (String, String) {
    let name = url::Url::parse(url)
        .unwrap()
        .path()
        .trim_start_matches('/')
        .to_owned();
    let server = postgres_server().expect("a PostgreSQL database needs MCP_BRIDGE_TEST_POSTGRES");
    (server, name)
}

/// Creates the database at `url` unless it exists (a restart).
pub async fn create_database(url: &str) {
    use sqlx::Connection;
    let (server, name) = server_and_name(url);
    let mut admin = sqlx::PgConnection::connect(&server)
        .await
        .unwrap_or_else(|e| panic!("{POSTGRES_VAR}={server}: {e}"));
    let exists: Option<i32> = sqlx::query_scalar("SELECT 1 FROM pg_database WHERE datname = $1")
        .bind(&name)
        .fetch_optional(&mut admin)
        .await
        .unwrap();
    if exists.is_none() {
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE \"{name}\"")))
            .execute(&mut admin)
            .await
            .unwrap();
    }
    let _ = admin.close().await;
}

/// Drops the database at `url` (closing what still uses it), best effort, on a thread of its
/// own: `Drop` cannot wait for a future.
pub fn drop_database(url: &str) {
    let (server, name) = server_and_name(url);
    let dropped = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            use sqlx::Connection;
            let mut admin = sqlx::PgConnection::connect(&server).await?;
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
        eprintln!("cannot drop the test database {url}: {error}");
    }
}

/// Drops the database at `url` once `data_dir` is gone (the test may restart over it until
/// then). A process that ends first leaves it to scripts/test.sh.
pub(super) fn drop_database_after(data_dir: &Path, url: &str) {
    let (data_dir, url) = (data_dir.to_owned(), url.to_owned());
    std::thread::spawn(move || {
        while data_dir.exists() {
            std::thread::sleep(Duration::from_millis(200));
        }
        drop_database(&url);
    });
}

/// Everything the store holds, as text: every byte of the SQLite files in `data_dir`, or
/// every row of every table of its PostgreSQL database.
pub async fn stored_text(data_dir: &Path) -> String {
    let Some(server) = postgres_server() else {
        let mut all = Vec::new();
        for entry in std::fs::read_dir(data_dir).unwrap().flatten() {
            if entry
                .file_name()
                .to_string_lossy()
                .starts_with("mcp-bridge.db")
            {
                // A `-wal` or `-shm` file may go between the listing and the read (the store is
                // closing): what is gone holds nothing.
                if let Ok(bytes) = std::fs::read(entry.path()) {
                    all.extend(bytes);
                }
            }
        }
        return String::from_utf8_lossy(&all).into_owned();
    };
    use sqlx::Connection;
    let url = postgres_database(&server, data_dir);
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
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
    let _ = conn.close().await;
    all
}
