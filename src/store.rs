//! The store: sqlx over SQLite by default (WAL, busy timeout, foreign keys), with the migrations
//! of `migrations/` embedded in the binary. Queries live in `store/*.rs`, one file per table group.

mod a2a;
mod access;
mod approvals;
mod audit;
mod leases;
mod mcp_sessions;
mod oauth;
mod oauth_links;
mod pins;
pub mod sealed;
pub use audit::AuditEntry;
mod roots;
mod servers;
mod subscriptions;
mod tasks;
#[cfg(test)]
pub(crate) mod testing;

use std::borrow::Cow;
use std::str::FromStr;
use std::time::Duration;

use sqlx::Executor;
use sqlx::any::AnyPoolOptions;
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{AnyConnection, AnyPool};

pub use a2a::{Owned, StoredAgent};
pub use approvals::{Decided, StoredApproval};
pub use mcp_sessions::{SessionClaim, SessionInterests, SharedSession};
pub use oauth::StoredOAuthGrant;
pub use oauth_links::{LinkLimits, StoredLink};
pub use pins::StoredPin;
pub use servers::StoredServer;
pub use tasks::{StoredTask, TaskInputs};

/// A migration: its version and name, its SQL, and the PostgreSQL variant of that SQL where the
/// same text cannot run there (same version and name, in `migrations/postgres/`).
struct Embedded {
    version: i64,
    name: &'static str,
    sql: &'static str,
    postgres: Option<&'static str>,
}

/// The migrations, in order. `every_migration_file_is_embedded` keeps this list and the folders
/// in step; a migration is never edited once it has shipped.
const MIGRATIONS: &[Embedded] = &[
    Embedded {
        version: 20261130000001,
        name: "servers",
        sql: include_str!("../migrations/20261130000001_servers.sql"),
        postgres: None,
    },
    Embedded {
        version: 20261130000002,
        name: "subscriptions",
        sql: include_str!("../migrations/20261130000002_subscriptions.sql"),
        postgres: None,
    },
    Embedded {
        version: 20261130000003,
        name: "roots",
        sql: include_str!("../migrations/20261130000003_roots.sql"),
        postgres: None,
    },
    Embedded {
        version: 20261130000004,
        name: "a2a_agents",
        sql: include_str!("../migrations/20261130000004_a2a_agents.sql"),
        postgres: None,
    },
    Embedded {
        version: 20261130000005,
        name: "audit",
        sql: include_str!("../migrations/20261130000005_audit.sql"),
        postgres: Some(include_str!(
            "../migrations/postgres/20261130000005_audit.sql"
        )),
    },
    Embedded {
        version: 20261130163700,
        name: "a2a_owned",
        sql: include_str!("../migrations/20261130163700_a2a_owned.sql"),
        postgres: None,
    },
    Embedded {
        version: 20261201000001,
        name: "oauth",
        sql: include_str!("../migrations/20261201000001_oauth.sql"),
        postgres: None,
    },
    Embedded {
        version: 20261210000001,
        name: "leases",
        sql: include_str!("../migrations/20261210000001_leases.sql"),
        postgres: None,
    },
    Embedded {
        version: 20261220000002,
        name: "access",
        sql: include_str!("../migrations/20261220000002_access.sql"),
        postgres: None,
    },
    Embedded {
        version: 20261220000003,
        name: "tool_pins",
        sql: include_str!("../migrations/20261220000003_tool_pins.sql"),
        postgres: None,
    },
    Embedded {
        version: 20261220000004,
        name: "tasks",
        sql: include_str!("../migrations/20261220000004_tasks.sql"),
        postgres: None,
    },
    Embedded {
        version: 20261230000001,
        name: "tool_baselines",
        sql: include_str!("../migrations/20261230000001_tool_baselines.sql"),
        postgres: None,
    },
    Embedded {
        version: 20261231000001,
        name: "replicas",
        sql: include_str!("../migrations/20261231000001_replicas.sql"),
        postgres: None,
    },
    Embedded {
        version: 20261231120001,
        name: "mcp_sessions",
        sql: include_str!("../migrations/20261231120001_mcp_sessions.sql"),
        postgres: None,
    },
    Embedded {
        version: 20261231180001,
        name: "oauth_links",
        sql: include_str!("../migrations/20261231180001_oauth_links.sql"),
        postgres: None,
    },
    Embedded {
        version: 20261231200001,
        name: "replicas_bus",
        sql: include_str!("../migrations/20261231200001_replicas_bus.sql"),
        postgres: None,
    },
    Embedded {
        version: 20270101000001,
        name: "task_inputs",
        sql: include_str!("../migrations/20270101000001_task_inputs.sql"),
        postgres: None,
    },
    Embedded {
        version: 20270102000001,
        name: "approvals",
        sql: include_str!("../migrations/20270102000001_approvals.sql"),
        postgres: None,
    },
    Embedded {
        version: 20270103000001,
        name: "task_trace",
        sql: include_str!("../migrations/20270103000001_task_trace.sql"),
        postgres: None,
    },
];

/// The database behind the store; queries are written once, in SQL both run, and the few
/// differences (the database's clock) are fragments chosen here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    /// The backend a database URL names: `sqlite:`, `postgres://` or `postgresql://`.
    pub fn of(url: &str) -> Option<Self> {
        if url.starts_with("sqlite:") {
            Some(Self::Sqlite)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Some(Self::Postgres)
        } else {
            None
        }
    }

    /// The database's clock, in seconds since the epoch (a double), as an SQL expression: times
    /// that replicas compare (leases) come from the one clock they share. Both are fixed for the
    /// length of one statement.
    fn now(self) -> &'static str {
        match self {
            Self::Sqlite => "((julianday('now') - 2440587.5) * 86400.0)",
            Self::Postgres => "(extract(epoch from statement_timestamp())::double precision)",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("not found")]
    NotFound,
    #[error("already exists")]
    Conflict,
    #[error("stored data is not valid: {0}")]
    Corrupt(String),
    /// The database cannot be reached (down, restarting, every connection busy): worth trying
    /// again shortly.
    #[error("the database does not answer; try again shortly ({0})")]
    Unavailable(#[source] sqlx::Error),
    #[error(transparent)]
    Database(sqlx::Error),
    #[error(transparent)]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

impl From<sqlx::Error> for StoreError {
    fn from(error: sqlx::Error) -> Self {
        match is_unavailable(&error) {
            true => Self::Unavailable(error),
            false => Self::Database(error),
        }
    }
}

/// Whether `error` says the database could not be reached, rather than what it answered: no
/// connection within the acquire timeout, a closed pool, a broken socket, or PostgreSQL's
/// connection exceptions (class 08) and shutdowns (57P01 to 57P03).
fn is_unavailable(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed
        | sqlx::Error::Io(_)
        | sqlx::Error::Tls(_) => true,
        sqlx::Error::Database(db) => db
            .code()
            .is_some_and(|code| code.starts_with("08") || code.starts_with("57P")),
        _ => false,
    }
}

impl StoreError {
    /// A write's error: a unique-constraint failure is `Conflict`, a row it refers to that does
    /// not exist (a foreign key) `NotFound`, anything else as any other error.
    fn from_write(error: sqlx::Error) -> Self {
        match &error {
            sqlx::Error::Database(db) if db.is_unique_violation() => Self::Conflict,
            sqlx::Error::Database(db) if db.is_foreign_key_violation() => Self::NotFound,
            _ => error.into(),
        }
    }

    /// The A2E error code of a store error that reaches a caller as it is: 503
    /// `mcp_server_unavailable` (retryable) while the database does not answer, else `internal`.
    /// `NotFound` and `Conflict` mean something only to the caller of the store, which turns
    /// them into its own errors.
    pub fn code(&self) -> crate::a2e::ErrorCode {
        match self {
            Self::Unavailable(_) => crate::a2e::ErrorCode::McpServerUnavailable,
            _ => crate::a2e::ErrorCode::Internal,
        }
    }
}

/// Makes the database file readable by this user only (0600) before SQLite opens it: created
/// with that mode when missing, narrowed when it exists (it holds every server's config). SQLite
/// gives its `-wal`, `-shm` and `-journal` files the mode of the database file; existing ones are
/// narrowed too.
pub fn private_database(path: &std::path::Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let name = path.to_string_lossy();
        if name.is_empty() || name.starts_with(':') || name.starts_with("file:") {
            return Ok(());
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
        {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let file = std::path::PathBuf::from(format!("{name}{suffix}"));
            if let Ok(meta) = std::fs::metadata(&file)
                && meta.permissions().mode() & 0o077 != 0
            {
                std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))?;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// Makes the data dir (the database, the generated JWT secret and secrets key) this user's
/// only (0700); a failure (a directory someone else owns) is logged, not fatal.
pub fn private_dir(dir: &std::path::Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(dir)
            && meta.permissions().mode() & 0o077 != 0
            && let Err(error) =
                std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        {
            tracing::warn!(dir = %dir.display(), %error, "cannot make the data dir private (0700)");
        }
    }
    #[cfg(not(unix))]
    let _ = dir;
}

/// The connection pool, cheap to clone.
#[derive(Clone, Debug)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
    /// Seals secret values at rest, when a key is configured.
    sealer: Option<std::sync::Arc<sealed::Sealer>>,
}

/// How long a request waits for a PostgreSQL connection before it fails (503): while the
/// database is down, callers hear so at once instead of hanging.
const POSTGRES_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(3);

impl Store {
    /// Opens the database at `url` and applies the migrations: a `sqlite:` URL (the file created
    /// when needed, this user's only, in WAL mode with a 5 s busy timeout and foreign keys on),
    /// or a `postgres://` one (an existing database).
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        sqlx::any::install_default_drivers();
        let backend = Backend::of(url).ok_or_else(|| {
            StoreError::Database(sqlx::Error::Configuration(
                format!("\"{url}\" is neither a sqlite: nor a postgres:// URL").into(),
            ))
        })?;
        let pool = match backend {
            Backend::Sqlite => open_sqlite(url).await?,
            Backend::Postgres => {
                AnyPoolOptions::new()
                    .max_connections(10)
                    .acquire_timeout(POSTGRES_ACQUIRE_TIMEOUT)
                    .connect(url)
                    .await?
            }
        };
        migrator(backend).run(&pool).await?;
        Ok(Self {
            pool,
            backend,
            sealer: None,
        })
    }

    /// This store with secret values (and OAuth grants) sealed by `key` from now on; the plain
    /// values stored before are sealed now.
    pub async fn sealing(mut self, key: &[u8; 32]) -> Result<Self, StoreError> {
        self.sealer = Some(std::sync::Arc::new(sealed::Sealer::new(key)));
        // Only rows that still hold a plain value are written again, all in one transaction: a
        // failure part way leaves every row as it was.
        let mut tx = self.write_tx().await?;
        let servers = self.seal_plain_servers(&mut tx).await?;
        let agents = self.seal_plain_agents(&mut tx).await?;
        let grants = self.seal_plain_oauth_grants(&mut tx).await?;
        let links = self.seal_plain_oauth_links(&mut tx).await?;
        tx.commit().await?;
        if servers + agents + grants + links > 0 {
            tracing::info!(
                servers,
                agents,
                oauth_grants = grants,
                oauth_links = links,
                "plain secret values in the store are sealed now"
            );
        }
        Ok(self)
    }

    fn sealer(&self) -> Option<&sealed::Sealer> {
        self.sealer.as_deref()
    }
}

impl Store {
    /// Whether the database answers.
    pub async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    /// A transaction that writes. On SQLite it takes the write lock at `BEGIN` (`IMMEDIATE`),
    /// waiting out another writer within the busy timeout: a deferred transaction starts as a
    /// reader, and a reader whose snapshot another writer has since changed cannot become the
    /// writer, so SQLite refuses it at once ("database is locked") whatever the timeout.
    /// A connection whose commits are on disk when they return, even on SQLite (whose pool
    /// commits without an fsync each, see [`sqlite_pragmas`]): for a decision that must not be
    /// undone by a power loss after what it allowed has happened. [`Durable::done`] gives the
    /// connection back as it was.
    async fn durable(&self) -> Result<Durable, StoreError> {
        let mut conn = self.pool.acquire().await?;
        let sqlite = self.backend == Backend::Sqlite;
        if sqlite {
            conn.execute("PRAGMA synchronous = FULL").await?;
        }
        Ok(Durable { conn, sqlite })
    }

    async fn write_tx(&self) -> Result<sqlx::Transaction<'static, sqlx::Any>, StoreError> {
        let tx = match self.backend {
            Backend::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await?,
            Backend::Postgres => self.pool.begin().await?,
        };
        Ok(tx)
    }
}

/// A connection of [`Store::durable`].
struct Durable {
    conn: sqlx::pool::PoolConnection<sqlx::Any>,
    sqlite: bool,
}

impl Durable {
    /// A write transaction on it (as [`Store::write_tx`]).
    async fn write_tx(&mut self) -> Result<sqlx::Transaction<'_, sqlx::Any>, StoreError> {
        use sqlx::Connection;
        let tx = match self.sqlite {
            true => self.conn.begin_with("BEGIN IMMEDIATE").await?,
            false => self.conn.begin().await?,
        };
        Ok(tx)
    }

    /// Back to the pool's way of committing.
    async fn done(mut self) {
        if self.sqlite
            && let Err(error) = self.conn.execute("PRAGMA synchronous = NORMAL").await
        {
            // Left FULL: slower commits on that connection, nothing lost.
            tracing::debug!(%error, "a connection kept synchronous = FULL");
        }
    }
}

/// The SQLite pool. The Any driver reads only `mode` (and `cache`) from a URL, so what
/// `SqliteConnectOptions` would set is set here: the file is created (0600) before it is opened,
/// and every new connection gets the pragmas.
async fn open_sqlite(url: &str) -> Result<AnyPool, StoreError> {
    let memory = url.contains(":memory:") || url.contains("mode=memory");
    let mut url = url.to_owned();
    if !memory {
        let options = SqliteConnectOptions::from_str(&url)?;
        private_database(options.get_filename())
            .map_err(|e| StoreError::Database(sqlx::Error::Io(e)))?;
        // `create_if_missing`, for a file that goes away between the two.
        let params = url.split_once('?').map_or("", |(_, params)| params);
        if !params.split('&').any(|p| p.starts_with("mode=")) {
            url.push(if params.is_empty() { '?' } else { '&' });
            url.push_str("mode=rwc");
        }
    }
    let options = AnyPoolOptions::new().after_connect(|conn, _| Box::pin(sqlite_pragmas(conn)));
    // Each connection the Any driver opens to `:memory:` is a database of its own: one
    // connection, kept for the life of the pool.
    let options = match memory {
        true => options
            .max_connections(1)
            .idle_timeout(None)
            .max_lifetime(None),
        false => options.max_connections(8),
    };
    Ok(options.connect(&url).await?)
}

/// WAL (readers do not block the writer), a 5 s wait on a locked database, and foreign keys
/// enforced (they remove a server's subscriptions, grants and lease with it). `synchronous =
/// NORMAL`: a commit is not flushed to disk on its own, only at checkpoints. With the default
/// (`FULL`) each commit waited for an fsync while holding the write lock, and on a busy disk
/// (builds beside the conformance runs) writes queued behind one another past the 5 s and
/// failed "database is locked". A crash of the bridge still loses nothing; a power loss may lose
/// the last commits, never the database's consistency.
async fn sqlite_pragmas(conn: &mut AnyConnection) -> Result<(), sqlx::Error> {
    conn.execute(
        "PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON; PRAGMA journal_mode = WAL; \
         PRAGMA synchronous = NORMAL",
    )
    .await?;
    Ok(())
}

fn migrator(backend: Backend) -> Migrator {
    let migrations = MIGRATIONS
        .iter()
        .map(|m| {
            let sql = match (backend, m.postgres) {
                (Backend::Postgres, Some(postgres)) => postgres,
                _ => m.sql,
            };
            Migration::new(
                m.version,
                Cow::Borrowed(m.name),
                MigrationType::Simple,
                sqlx::SqlStr::from_static(sql),
                false,
            )
        })
        .collect();
    Migrator::with_migrations(migrations)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `.sql` files of `migrations/` (or a folder under it).
    fn files(folder: &str) -> Vec<String> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(folder);
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|name| name.ends_with(".sql"))
            .collect();
        files.sort();
        files
    }

    #[test]
    fn every_migration_file_is_embedded() {
        let name = |m: &Embedded| format!("{}_{}.sql", m.version, m.name);
        let embedded: Vec<String> = MIGRATIONS.iter().map(name).collect();
        assert_eq!(files("migrations"), embedded);
        let variants: Vec<String> = MIGRATIONS
            .iter()
            .filter(|m| m.postgres.is_some())
            .map(name)
            .collect();
        assert_eq!(files("migrations/postgres"), variants);
        for m in MIGRATIONS {
            let path = format!("migrations/postgres/{}", name(m));
            if let Some(sql) = m.postgres {
                let on_disk = std::fs::read_to_string(
                    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(&path),
                )
                .unwrap();
                assert_eq!(sql, on_disk, "{path}");
            }
        }
    }

    #[test]
    fn database_urls_name_their_backend() {
        assert_eq!(Backend::of("sqlite::memory:"), Some(Backend::Sqlite));
        assert_eq!(Backend::of("sqlite:///data/b.db"), Some(Backend::Sqlite));
        assert_eq!(Backend::of("postgres://u@h/db"), Some(Backend::Postgres));
        assert_eq!(Backend::of("postgresql://u@h/db"), Some(Backend::Postgres));
        assert_eq!(Backend::of("mysql://u@h/db"), None);
    }

    #[test]
    fn connection_failures_are_unavailable_and_retryable() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        for error in [
            sqlx::Error::PoolTimedOut,
            sqlx::Error::PoolClosed,
            sqlx::Error::Io(refused),
        ] {
            let error = StoreError::from(error);
            assert!(matches!(error, StoreError::Unavailable(_)), "{error}");
            assert_eq!(error.code(), crate::a2e::ErrorCode::McpServerUnavailable);
            assert!(error.code().retryable());
            assert!(error.to_string().contains("database"), "{error}");
        }
        let error = StoreError::from(sqlx::Error::RowNotFound);
        assert!(matches!(error, StoreError::Database(_)), "{error}");
        assert_eq!(error.code(), crate::a2e::ErrorCode::Internal);
    }

    #[tokio::test]
    async fn sqlite_gets_wal_a_busy_timeout_foreign_keys_and_normal_sync() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new").join("bridge.db");
        // Without `mode=rwc`: the file is created all the same.
        let store = Store::open(&format!("sqlite://{}", path.display()))
            .await
            .unwrap();
        let mut conn = store.pool.acquire().await.unwrap();
        let pragma = async |conn: &mut AnyConnection, name: &str| -> String {
            let row = sqlx::query(sqlx::AssertSqlSafe(format!("PRAGMA {name}")))
                .fetch_one(&mut *conn)
                .await
                .unwrap();
            use sqlx::Row;
            row.try_get::<String, _>(0)
                .or_else(|_| row.try_get::<i64, _>(0).map(|n| n.to_string()))
                .unwrap()
        };
        assert_eq!(pragma(&mut conn, "journal_mode").await, "wal");
        assert_eq!(pragma(&mut conn, "busy_timeout").await, "5000");
        assert_eq!(pragma(&mut conn, "foreign_keys").await, "1");
        // NORMAL (1), not FULL (2): see sqlite_pragmas.
        assert_eq!(pragma(&mut conn, "synchronous").await, "1");
        drop(conn);
        // FULL for a decision that must outlive a power loss.
        let mut durable = store.durable().await.unwrap();
        assert_eq!(pragma(&mut durable.conn, "synchronous").await, "2");
        durable.write_tx().await.unwrap().commit().await.unwrap();
        durable.done().await;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[tokio::test]
    async fn an_in_memory_store_is_one_database() {
        let store = Store::open("sqlite::memory:").await.unwrap();
        store.record("root", "server.register", "s1", "").await;
        assert_eq!(store.audit(None, 10).await.unwrap().len(), 1);
    }
}
