//! Builds the application from its config (store, auth, registry, routes), binds the listener
//! (port 0 in tests) and runs until a shutdown signal, then stops every server cleanly.

mod descriptors;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::http::auth::Auth;
use crate::http::state::{AppState, Shared};
use crate::hub::Hub;
use crate::registry::Registry;
use crate::store::Store;

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot create the data dir {0}: {1}")]
    DataDir(String, std::io::Error),
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error("cannot open the store: {0}")]
    Store(#[from] crate::store::StoreError),
    #[error(transparent)]
    Auth(#[from] crate::http::auth::AuthError),
    #[error("cannot listen on {0}: {1}")]
    Bind(SocketAddr, std::io::Error),
    #[error("cannot join the replicas: {0}")]
    Bus(#[from] crate::hub::BusError),
    #[error("access: {0}")]
    Access(String),
}

pub struct Application {
    listener: TcpListener,
    addr: SocketAddr,
    state: AppState,
    shutdown: CancellationToken,
}

impl Application {
    pub async fn build(config: Config) -> Result<Self, StartError> {
        // rustls needs one process-wide crypto provider for the upstream HTTP clients.
        let _ = rustls::crypto::ring::default_provider().install_default();
        std::fs::create_dir_all(&config.data_dir)
            .map_err(|e| StartError::DataDir(config.data_dir.display().to_string(), e))?;
        crate::store::private_dir(&config.data_dir);
        // What the configuration alone can refuse is refused before the store is touched.
        let hooks = crate::tools::Hooks::new(&config.hooks)?;
        let mut store = Store::open(&config.database_url()).await?;
        // Sealing is on by default: without a configured key, one generated in the data dir
        // (a store shared by replicas needs the same configured key on each).
        let key = match config.secrets_key()? {
            Some(key) => Some(key),
            None if config.database_url().starts_with("sqlite:") => Some(
                crate::store::sealed::load_or_generate_key(&config.data_dir)
                    .map_err(|e| StartError::DataDir(config.data_dir.display().to_string(), e))?,
            ),
            None => None,
        };
        if let Some(key) = key {
            store = store.sealing(&key).await?;
        }
        let auth = Arc::new(Auth::from_config(&config)?);
        // In the background: a provider that is slow or down does not hold the start up.
        tokio::spawn({
            let auth = auth.clone();
            async move { auth.prefetch().await }
        });
        let shutdown = CancellationToken::new();
        let bind = config.bind_addr()?;
        let listener = TcpListener::bind(bind)
            .await
            .map_err(|e| StartError::Bind(bind, e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| StartError::Bind(bind, e))?;
        let hub = Hub::new(
            crate::hub::Limits {
                events: config.replay_buffer,
                agent_bytes: config.replay_agent_bytes,
                bytes: config.replay_bytes,
            },
            shutdown.clone(),
        );
        let mut supervision = crate::registry::Supervision::from_config(&config, addr);
        if config.nats_url.is_some() {
            let replica = config
                .replica()
                .map_err(|e| StartError::DataDir(config.data_dir.display().to_string(), e))?;
            // Checked by `validate`: replicas always have a key to seal the bus with.
            let master = config
                .bus_master_key()?
                .ok_or(crate::config::ConfigError::Invalid {
                    name: "MCP_BRIDGE_BUS_KEY",
                    message: "set it (or MCP_BRIDGE_SECRETS_KEY), the same on every replica".into(),
                })?;
            let access = config.nats_access()?;
            hub.join(crate::hub::BusConfig {
                url: access.url.clone(),
                prefix: config.nats_prefix.clone(),
                replica: replica.clone(),
                key: Arc::new(crate::hub::bus::BusKey::derive(&master)),
                access,
                outbox_bytes: config.bus_outbox_bytes,
            })
            .await?;
            supervision.replica = Some(replica);
        }
        let registry = Registry::new(
            store.clone(),
            hub.clone(),
            config.stdio_allowed_commands.clone(),
            config.stdio_allowed_env.clone(),
            config.page_size,
            supervision,
        );
        let a2a = crate::a2a::A2a::open(
            store.clone(),
            config.a2a_enabled,
            crate::guard::Guard::new(config.allow_private_upstreams),
            config.max_message_bytes,
            hub.clone(),
        )
        .await?;
        let limits = crate::http::limits::Limits::new(
            config.agent_rate,
            config.agent_burst,
            config.agent_concurrency,
            config.agent_event_streams,
        );
        let metrics: Arc<crate::metrics::Metrics> = Arc::default();
        let access = crate::access::Access::load(
            store.clone(),
            config.access_default,
            &config.policies,
            &config.toolsets,
        )
        .await
        .map_err(StartError::Access)?;
        if config.nats_url.is_some() {
            // Another replica's changes are read from the store.
            access.spawn_refresh(std::time::Duration::from_secs(2), shutdown.clone());
        }
        let tools = Arc::new(
            crate::tools::Tools::new(
                registry.clone(),
                a2a.clone(),
                metrics.clone(),
                access,
                store.clone(),
            )
            .with_hooks(hooks),
        );
        let replica = config
            .replica()
            .map_err(|e| StartError::DataDir(config.data_dir.display().to_string(), e))?;
        let task_limits = crate::tasks::TaskLimits {
            slots: Some(limits.clone() as Arc<dyn crate::tasks::Slots>),
            live: config.agent_tasks,
            result_bytes: config.agent_task_result_bytes,
            lease: std::time::Duration::from_secs(config.lease_secs),
        };
        let tasks = crate::tasks::Tasks::new(
            tools.clone(),
            store.clone(),
            hub.clone(),
            replica,
            task_limits,
        );
        // Before the first request: a call this bridge was running when it stopped has failed.
        if let Err(error) = tasks.restore().await {
            tracing::error!(%error, "cannot end the tasks interrupted by the last stop");
        }
        tasks.spawn_sweeper(shutdown.clone());
        spawn_audit_retention(&store, &config, shutdown.clone()).await;
        let state = AppState::new(Shared {
            config: Arc::new(config),
            auth,
            store,
            registry,
            hub,
            a2a,
            metrics,
            limits,
            tools,
            tasks,
            restored: Arc::new(AtomicBool::new(false)),
        });
        Ok(Self {
            listener,
            addr,
            state,
            shutdown,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Cancelling this token stops the application as a signal would.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Serves until SIGINT/SIGTERM or the shutdown token, then stops every server.
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        let Self {
            listener,
            addr,
            state,
            shutdown,
        } = self;
        tracing::info!(%addr, "mcp-bridge listening");
        descriptors::report(descriptors::raise(), state.config.max_connections, 0);
        restore_in_background(&state);
        let app = crate::api::router(state.clone());
        let stop = shutdown.clone();
        tokio::spawn(async move {
            wait_for_signal().await;
            stop.cancel();
        });
        let grace = Duration::from_secs(state.config.shutdown_grace_secs);
        let bounds = crate::http::serve::Bounds {
            max_connections: state.config.max_connections,
            header_timeout: Duration::from_secs(state.config.header_timeout_secs),
            body_timeout: Duration::from_secs(state.config.body_timeout_secs),
        };
        let server = crate::http::serve::serve(listener, app, bounds, shutdown.clone());
        // Open requests (a long tool call, say) get the grace period to finish, then are dropped.
        let served = tokio::select! {
            served = server => served,
            _ = async { shutdown.cancelled().await; tokio::time::sleep(grace).await } => {
                tracing::warn!("open requests did not finish within {grace:?}; dropping them");
                Ok(())
            }
        };
        tracing::info!("stopping every server");
        state.registry.shutdown(grace).await;
        served
    }
}

/// Hands every stored server to its supervisor without holding up the listener, then applies the
/// config file's `servers` as an import would.
fn restore_in_background(state: &AppState) {
    let registry = state.registry.clone();
    let tasks = state.tasks.clone();
    let restored = state.restored.clone();
    let max_connections = state.config.max_connections;
    let declared: Vec<_> = state
        .config
        .servers
        .iter()
        .map(|c| (c.server_id.clone(), Ok(c.clone().into())))
        .collect();
    tokio::spawn(async move {
        match registry.restore().await {
            Ok(count) => {
                tracing::info!(count, "stored servers restored");
                // Said again only when the servers leave too little room for the cap.
                let fit = descriptors::raise();
                if !fit.holds(max_connections, count) {
                    descriptors::report(fit, max_connections, count);
                }
            }
            Err(error) => tracing::error!(%error, "cannot restore the stored servers"),
        }
        match tasks.resume().await {
            Ok(0) => {}
            Ok(count) => tracing::info!(count, "polling the tasks servers run again"),
            Err(error) => tracing::error!(%error, "cannot resume the tasks servers run"),
        }
        // Across replicas: from here on, leases decide which replica connects which server.
        registry.start_replicas();
        restored.store(true, Ordering::Release);
        if declared.is_empty() {
            return;
        }
        let config_agent = crate::caller::Caller::new("config", true);
        // The file is the truth for its servers: it replaces what the store has under their ids.
        for result in crate::import::apply(&registry, &config_agent, declared, true).await {
            match result.ok {
                true => {
                    tracing::info!(server_id = %result.server_id, action = result.action.as_str(), "config file server")
                }
                false => {
                    tracing::error!(server_id = %result.server_id, error = %result.error, "config file server failed")
                }
            }
        }
    });
}

async fn wait_for_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(_) => return std::future::pending().await,
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}

/// How often the audit log's retention is applied (and once at start, before serving).
const AUDIT_RETENTION_EVERY: std::time::Duration = std::time::Duration::from_secs(3600);

/// Applies `MCP_BRIDGE_AUDIT_RETENTION_DAYS` and `MCP_BRIDGE_AUDIT_MAX_ROWS` now, then every
/// hour until `shutdown`: every authorize and call denial writes an entry, so without a bound
/// the table grows for as long as the bridge runs.
async fn spawn_audit_retention(store: &Store, config: &Config, shutdown: CancellationToken) {
    let days = config.audit_retention_days;
    let rows = (config.audit_max_rows > 0).then_some(config.audit_max_rows);
    let prune = move |store: Store| async move {
        let before = (days > 0).then(|| crate::a2e::now() - days as f64 * 86_400.0);
        match store.prune_audit(before, rows).await {
            Ok(0) => {}
            Ok(deleted) => tracing::info!(deleted, "audit log retention applied"),
            Err(error) => tracing::warn!(%error, "cannot apply the audit log's retention"),
        }
    };
    prune(store.clone()).await;
    let store = store.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(AUDIT_RETENTION_EVERY);
        tick.tick().await;
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tick.tick() => prune(store.clone()).await,
            }
        }
    });
}
