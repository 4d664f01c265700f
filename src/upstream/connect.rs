//! Connecting to a server: the URL checked, its OAuth token found, the transport opened, the
//! session started in the era the config asks for (by the connect deadline), and its catalogue
//! first listed.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientInitializeError, RunningService};
use rmcp::transport::Transport;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use tokio_util::sync::CancellationToken;

use super::calls::Calls;
use super::connection::Connection;
use super::lists::Lists;
use super::refused::needs_authorization;
use super::watched::Watched;
use super::{BridgeClient, ConnectError, Context};
use super::{chain, direct, http, listen, notify, oauth, sse, stdio, ws};
use crate::a2e::{McpProtocol, McpServerConfig, McpTransport, McpVersion};
use crate::guard::Refused;

/// A new connection with the server's catalogue as first listed.
pub struct Established {
    pub conn: Arc<Connection>,
    pub lists: Lists,
    /// What is worth knowing of how the server is connected, shown in its `error` while it is
    /// ready (empty when nothing): see [`SESSIONLESS`].
    pub note: String,
}

/// The note on a stateless Streamable HTTP server reached over the 2025-11-25 handshake: it has
/// no channel back to the bridge outside a call's answer, so the sampling and elicitation it
/// asks for fail (the Python SDK answers "no back-channel"); over 2026-07-28 they come as
/// input-required results and work.
pub const SESSIONLESS: &str = "this server keeps no session (stateless Streamable HTTP), so over \
    the 2025-11-25 handshake it cannot ask for sampling or elicitation: if it speaks 2026-07-28, \
    set its protocol_version to \"2026-07-28\" (or \"auto\") to get them";

/// Connects to the server `config` describes, initialises within `config.connect_bound()` and
/// lists its catalogue. What the server asks of agents and tells them goes through `ctx`.
/// Every error's text has the config's secrets hidden.
pub async fn connect(config: &McpServerConfig, ctx: Context) -> Result<Established, ConnectError> {
    connect_unredacted(config, ctx)
        .await
        .map_err(|error| error.in_words(config).redacted(config))
}

async fn connect_unredacted(
    config: &McpServerConfig,
    ctx: Context,
) -> Result<Established, ConnectError> {
    let bound = config.connect_bound();
    let calls = Arc::new(Calls::default());
    let (notes_tx, notes_rx) = tokio::sync::mpsc::unbounded_channel();
    let notifications = notes_tx.downgrade();
    let lost = CancellationToken::new();
    let closed = CancellationToken::new();
    let deadline = tokio::time::Instant::now() + bound;
    let launch = Launch {
        handler: BridgeClient::new(ctx.clone(), calls.clone()),
        taps: Taps {
            lost: lost.clone(),
            closed: closed.clone(),
            notifications: notes_tx,
        },
        protocol: config.protocol_version,
        deadline,
        bound,
    };
    let (guard, max) = (ctx.guard, ctx.max_message_bytes);
    if config.transport != McpTransport::Stdio {
        // The clear error; the clients' resolvers check again on every connection.
        let url = url::Url::parse(&config.url)
            .map_err(|e| ConnectError::Config(format!("`url`: {e}")))?;
        launch
            .within(guard.preflight(&url))
            .await?
            .map_err(|refused| match refused {
                Refused::Guard(_) => ConnectError::Config(refused.to_string()),
                Refused::Unresolved(why) => ConnectError::Initialize(why, String::new()),
            })?;
    }
    let (url, id) = (config.url.as_str(), config.server_id.as_str());
    // A server known to want OAuth: its token (or the reason there is none) first.
    let client = ctx
        .oauth
        .clone()
        .filter(|_| config.transport != McpTransport::Stdio);
    let mut oauth = None;
    if let Some(client) = client {
        match launch.within(client.authorized()).await? {
            Ok(manager) => oauth = manager,
            Err(oauth::OAuthError::NeedsAuthorization) => {
                return Err(ConnectError::AuthRequired(None));
            }
            Err(oauth::OAuthError::Failed(why)) => return Err(ConnectError::OAuth(why)),
            Err(oauth::OAuthError::StoreUnavailable(why)) => {
                return Err(ConnectError::StoreUnavailable(why));
            }
        }
    }
    let mut challenges = None;
    let mut direct = None;
    let mut streamable = None;
    let task_tools;
    let (client, stderr) = match config.transport {
        McpTransport::Stdio => {
            let (transport, stderr) = stdio::spawn(config, max)?;
            task_tools = transport.task_tools();
            match launch.start(transport).await {
                Ok(client) => (client, Some(stderr)),
                // What the process said on its way out explains the failure best.
                Err(error) => return Err(error.with_tail(stderr.settled_tail().await)),
            }
        }
        McpTransport::Http => {
            let bounded = http::client(config, guard)?;
            task_tools = bounded.tools.clone();
            streamable = Some(bounded.clone());
            let noted = bounded.challenges.clone();
            challenges = Some(noted.clone());
            let started = match oauth {
                Some(manager) => {
                    let client = rmcp::transport::AuthClient::new(bounded, manager);
                    launch.start(http::transport(config, client, max)?).await
                }
                None => {
                    if ctx.fast_paths {
                        direct = direct::Direct::new(bounded.clone(), url, max);
                    }
                    launch.start(http::transport(config, bounded, max)?).await
                }
            };
            match started {
                Ok(client) => (client, None),
                Err(error) => {
                    return Err(needs_authorization(noted.take()).unwrap_or(error));
                }
            }
        }
        McpTransport::Sse => {
            let headers = with_token(http::header_map(config)?, oauth, &launch).await?;
            let opened = sse::connect(url, headers, guard, max, id);
            let transport = launch.within(opened).await??;
            task_tools = transport.task_tools();
            (launch.start(transport).await?, None)
        }
        McpTransport::Ws => {
            let headers = with_token(http::header_map(config)?, oauth, &launch).await?;
            let opened = ws::connect(url, headers, guard, max, id);
            let transport = launch.within(opened).await??;
            task_tools = transport.task_tools();
            (launch.start(transport).await?, None)
        }
    };
    // The pump ends when the transport (and with it the sender) is gone.
    tokio::spawn(notify::pump(ctx, calls.clone(), notes_rx));
    // A stale list served from the cache while a server is down would hide the outage.
    client
        .set_response_cache_config(rmcp::ClientCacheConfig::disabled())
        .await;
    let info = client.peer_info();
    let implementation = info.as_ref().and_then(|i| i.server_info.clone());
    let capabilities = info
        .as_ref()
        .map(|i| i.capabilities.clone())
        .unwrap_or_default();
    let mcp_version = info
        .as_ref()
        .map(|i| i.protocol_version.to_string())
        .unwrap_or_default();
    // 2026-07-28 and later have no session, and name each request in its headers; what the
    // server sends outside a call comes only on a listen.
    let modern = McpVersion::V2026_07_28.reached_by(&mcp_version);
    let direct = direct.filter(|_| !modern);
    let listen = modern
        .then(|| listen::Listen::new(client.peer().clone(), config, &capabilities, lost.clone()));
    let conn = Arc::new(Connection {
        mcp_version,
        server_name: implementation
            .as_ref()
            .map(|i| i.name.clone())
            .unwrap_or_default(),
        server_version: implementation.map(|i| i.version).unwrap_or_default(),
        capabilities,
        connected_at: crate::a2e::now(),
        subscribed: Default::default(),
        listen,
        calls,
        secrets: config.secret_values(),
        challenges,
        runs_tasks: Default::default(),
        task_tools,
        direct,
        notifications,
        client,
        lost,
        closed,
        stderr,
    });
    // A bridge (this one through a proxy, or one whose chain is too long) is refused before
    // anything is listed through it.
    if let Some(why) = chain::Chain::of(&conn.capabilities).and_then(|c| c.refusal()) {
        conn.shutdown().await;
        return Err(ConnectError::Config(why));
    }
    // Listening before the first listing: a change made between the two is then in the listing
    // or announced on the stream. A server that will not listen is still served (its calls work);
    // a subscription to one of its resources then says why.
    if let Some(listen) = &conn.listen {
        match tokio::time::timeout_at(deadline, listen.start()).await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => {
                let error = conn.redact(&error.to_string());
                tracing::warn!(server_id = %config.server_id, %error, "cannot open subscriptions/listen");
            }
            Err(_) => {
                tracing::warn!(server_id = %config.server_id, "no acknowledgement of subscriptions/listen")
            }
        }
    }
    match tokio::time::timeout_at(deadline, conn.list_all()).await {
        Ok(Ok(lists)) => {
            // Known once a request after `initialize` went (the listing).
            let sessionless = streamable.is_some_and(|http| http.sessionless());
            let legacy = config.protocol_version == McpProtocol::Legacy;
            let note = match sessionless && legacy {
                true => SESSIONLESS.to_owned(),
                false => String::new(),
            };
            Ok(Established { conn, lists, note })
        }
        Ok(Err(e)) => {
            conn.shutdown().await;
            // A server may take `initialize` without a token and want one for the rest.
            let refused = conn.challenges.as_ref().and_then(|c| c.take());
            Err(needs_authorization(refused).unwrap_or(ConnectError::List(e.to_string())))
        }
        Err(_) => {
            conn.shutdown().await;
            Err(ConnectError::List(format!("no answer within {bound:?}")))
        }
    }
}

/// `headers` with the OAuth access token (sse and ws servers take one per connection).
async fn with_token(
    mut headers: reqwest::header::HeaderMap,
    oauth: Option<rmcp::transport::AuthorizationManager>,
    launch: &Launch,
) -> Result<reqwest::header::HeaderMap, ConnectError> {
    let Some(manager) = oauth else {
        return Ok(headers);
    };
    let token = launch
        .within(manager.get_access_token())
        .await?
        .map_err(|e| match oauth::OAuthError::from(e) {
            oauth::OAuthError::NeedsAuthorization => ConnectError::AuthRequired(None),
            oauth::OAuthError::Failed(why) => ConnectError::OAuth(why),
            oauth::OAuthError::StoreUnavailable(why) => ConnectError::StoreUnavailable(why),
        })?;
    let value = reqwest::header::HeaderValue::from_str(&format!("Bearer {token}"))
        .map_err(|_| ConnectError::OAuth("the access token is not a header value".into()))?;
    headers.insert(reqwest::header::AUTHORIZATION, value);
    Ok(headers)
}

/// What every transport of a connection reports to: its end, and its notifications in order.
struct Taps {
    lost: CancellationToken,
    closed: CancellationToken,
    notifications: tokio::sync::mpsc::UnboundedSender<notify::Note>,
}

impl Taps {
    fn wrap<T>(self, transport: T) -> Watched<T> {
        Watched::new(transport, self.lost, self.closed, self.notifications)
    }
}

/// What starting a session over any transport needs, and its deadline.
struct Launch {
    handler: BridgeClient,
    taps: Taps,
    protocol: McpProtocol,
    deadline: tokio::time::Instant,
    bound: Duration,
}

impl Launch {
    /// `step` by the deadline, or the connect timeout.
    async fn within<T>(&self, step: impl Future<Output = T>) -> Result<T, ConnectError> {
        within(self.deadline, self.bound, step).await
    }

    /// Starts the session over `transport`, watched, by the deadline.
    async fn start<T: Transport<RoleClient> + 'static>(
        self,
        transport: T,
    ) -> Result<RunningService<RoleClient, BridgeClient>, ConnectError> {
        let Launch {
            handler,
            taps,
            protocol,
            deadline,
            bound,
        } = self;
        match within(
            deadline,
            bound,
            start(handler, taps.wrap(transport), protocol),
        )
        .await?
        {
            Ok(client) => Ok(client),
            // An mcp-bridge's `/mcp` (this one or another) refused us: not worth retrying as a
            // transport error, the config is wrong.
            Err(e) if e.to_string().contains(crate::guard::LOOP_REFUSED) => {
                Err(ConnectError::Config(format!(
                    "the server is an mcp-bridge's /mcp endpoint (this bridge or another), which \
                     cannot be an upstream of a bridge: requests would loop ({e})"
                )))
            }
            Err(e) => Err(ConnectError::Initialize(e.to_string(), String::new())),
        }
    }
}

/// `step` by `deadline`, or the connect timeout (`bound`).
async fn within<T>(
    deadline: tokio::time::Instant,
    bound: Duration,
    step: impl Future<Output = T>,
) -> Result<T, ConnectError> {
    tokio::time::timeout_at(deadline, step)
        .await
        .map_err(|_| ConnectError::Timeout(bound, String::new()))
}

/// Starts the session in the era the config asks for.
async fn start<T: Transport<RoleClient> + 'static>(
    handler: BridgeClient,
    transport: T,
    protocol: McpProtocol,
) -> Result<RunningService<RoleClient, BridgeClient>, ClientInitializeError> {
    match protocol {
        McpProtocol::Stateless => {
            let preferred_versions = vec![ProtocolVersion::V_2026_07_28];
            handler
                .serve_with_lifecycle(
                    transport,
                    ClientLifecycleMode::Discover { preferred_versions },
                )
                .await
        }
        McpProtocol::Auto => {
            let lifecycle = ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(ProtocolVersion::V_2025_11_25),
            };
            handler.serve_with_lifecycle(transport, lifecycle).await
        }
        McpProtocol::Legacy => handler.serve(transport).await,
    }
}
