//! The store: sqlx over SQLite by default (WAL, busy timeout, foreign keys), with the migrations
//! of `migrations/` embedded in the binary. Queries live in `store/*.rs`, one file per table group.

mod a2a;
mod audit;
mod oauth;
pub mod sealed;
pub use audit::AuditEntry;
mod roots;
mod servers;
mod subscriptions;

use std::borrow::Cow;
use std::str::FromStr;
use std::time::Duration;

use sqlx::SqlitePool;
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions};

pub use a2a::{Owned, StoredAgent};
pub use oauth::StoredOAuthGrant;
pub use servers::StoredServer;

/// The migrations, in order. `every_migration_file_is_embedded` keeps this list and the folder
/// in step; a migration is never edited once it has shipped.
const MIGRATIONS: &[(i64, &str, &str)] = &[
    (
        20261130000001,
        "servers",
        include_str!("../migrations/20261130000001_servers.sql"),
    ),
    (
        20261130000002,
        "subscriptions",
        include_str!("../migrations/20261130000002_subscriptions.sql"),
    ),
    (
        20261130000003,
        "roots",
        include_str!("../migrations/20261130000003_roots.sql"),
    ),
    (
        20261130000004,
        "a2a_agents",
        include_str!("../migrations/20261130000004_a2a_agents.sql"),
    ),
    (
        20261130000005,
        "audit",
        include_str!("../migrations/20261130000005_audit.sql"),
    ),
    (
        20261130163700,
        "a2a_owned",
        include_str!("../migrations/20261130163700_a2a_owned.sql"),
    ),
    (
        20261201000001,
        "oauth",
        include_str!("../migrations/20261201000001_oauth.sql"),
    ),
];

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("not found")]
    NotFound,
    #[error("already exists")]
    Conflict,
    #[error("stored data is not valid: {0}")]
    Corrupt(String),
    #[error(transparent)]
    Database(#[from] sqlx::Error),
    #[error(transparent)]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

impl StoreError {
    /// A write's error: a unique-constraint failure is `Conflict`, a row it refers to that does
    /// not exist (a foreign key) `NotFound`, anything else `Database`.
    fn from_write(error: sqlx::Error) -> Self {
        match &error {
            sqlx::Error::Database(db) if db.is_unique_violation() => Self::Conflict,
            sqlx::Error::Database(db) if db.is_foreign_key_violation() => Self::NotFound,
            _ => Self::Database(error),
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
    pool: SqlitePool,
    /// Seals secret values at rest, when a key is configured.
    sealer: Option<std::sync::Arc<sealed::Sealer>>,
}

impl Store {
    /// Opens (creating when needed) the database at `url` and applies the migrations.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        let options = SqliteConnectOptions::from_str(url)?;
        if !url.contains("memory") {
            private_database(options.get_filename())
                .map_err(|e| StoreError::Database(sqlx::Error::Io(e)))?;
        }
        let options = options
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .busy_timeout(Duration::from_secs(5))
            .foreign_keys(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(8)
            .connect_with(options)
            .await?;
        migrator().run(&pool).await?;
        Ok(Self { pool, sealer: None })
    }

    /// This store with secret values (and OAuth grants) sealed by `key` from now on; the plain
    /// values stored before are sealed now.
    pub async fn sealing(mut self, key: &[u8; 32]) -> Result<Self, StoreError> {
        self.sealer = Some(std::sync::Arc::new(sealed::Sealer::new(key)));
        // Only rows that still hold a plain value are written again.
        let rows: Vec<(String, String)> = sqlx::query_as("SELECT server_id, config FROM servers")
            .fetch_all(&self.pool)
            .await?;
        let servers: std::collections::HashSet<String> = rows
            .into_iter()
            .filter(|(_, config)| {
                serde_json::from_str::<crate::a2e::McpServerConfig>(config).is_ok_and(|c| {
                    let auth = c
                        .auth
                        .iter()
                        .flat_map(|a| a.client_secret.iter().chain(a.private_key.iter()));
                    sealed::any_plain(c.env.values().chain(c.headers.values()).chain(auth))
                })
            })
            .map(|(id, _)| id)
            .collect();
        let rows: Vec<(String, String)> =
            sqlx::query_as("SELECT agent_id, headers FROM a2a_agents")
                .fetch_all(&self.pool)
                .await?;
        let agents: std::collections::HashSet<String> = rows
            .into_iter()
            .filter(|(_, headers)| {
                serde_json::from_str::<std::collections::BTreeMap<String, String>>(headers)
                    .is_ok_and(|h| sealed::any_plain(h.values()))
            })
            .map(|(id, _)| id)
            .collect();
        for server in self.list_servers().await? {
            if servers.contains(&server.config.server_id) {
                self.update_server_config(&server.config).await?;
            }
        }
        for agent in self.list_agents().await? {
            if agents.contains(&agent.agent_id) {
                self.update_agent_headers(&agent.agent_id, &agent.headers)
                    .await?;
            }
        }
        let grants = self.seal_plain_oauth_grants().await?;
        if !servers.is_empty() || !agents.is_empty() || grants > 0 {
            tracing::info!(
                servers = servers.len(),
                agents = agents.len(),
                oauth_grants = grants,
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
}

fn migrator() -> Migrator {
    let migrations = MIGRATIONS
        .iter()
        .map(|&(version, description, sql)| {
            Migration::new(
                version,
                Cow::Borrowed(description),
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

    #[test]
    fn every_migration_file_is_embedded() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/migrations");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        files.sort();
        let embedded: Vec<String> = MIGRATIONS
            .iter()
            .map(|(v, d, _)| format!("{v}_{d}.sql"))
            .collect();
        assert_eq!(files, embedded);
    }
}
