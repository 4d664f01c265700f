//! The peers the calls go to: the harness's own echo server (in process, or over stdio as
//! `bridge --stdio-server`), the bare proxy (`bridge --proxy`), server-everything and mcpo.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

use crate::measure::{Cpu, cpu_of};
use crate::service::free_port;

/// The minimal MCP server: `echo` and `tools` more, over Streamable HTTP in this process or
/// over stdio as a child of the bridge.
#[derive(Clone)]
pub(crate) struct EchoServer {
    tools: Arc<Vec<Tool>>,
    peers: Arc<Mutex<Vec<Peer<RoleServer>>>>,
}

impl EchoServer {
    fn new(tools: usize) -> Self {
        let schema = |props: Value| {
            let schema = json!({ "type": "object", "properties": props });
            Arc::new(schema.as_object().cloned().unwrap_or_default())
        };
        let mut list = vec![Tool::new(
            "echo",
            "Echoes back the message",
            schema(json!({ "message": { "type": "string" } })),
        )];
        list.extend((0..tools).map(|i| {
            Tool::new(
                format!("tool_{i:04}"),
                format!("Synthetic tool number {i} of a large catalogue"),
                schema(json!({ "value": { "type": "integer" } })),
            )
        }));
        EchoServer {
            tools: Arc::new(list),
            peers: Arc::default(),
        }
    }

    /// Tells every connected client that the tool list changed.
    pub(crate) async fn notify_tools_changed(&self) {
        let peers = self.peers.lock().unwrap().clone();
        for peer in peers {
            let _ = peer.notify_tool_list_changed().await;
        }
    }
}

impl ServerHandler for EchoServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities: ServerCapabilities =
            serde_json::from_value(json!({ "tools": { "listChanged": true } })).unwrap_or_default();
        ServerConfig::new(capabilities).with_server_info(Implementation::new("bench-echo", "1.0"))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.peers.lock().unwrap().push(context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let message = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("message"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let text = format!("Echo: {message}");
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }
}

pub(crate) async fn stdio_server(tools: usize) {
    let transport = (tokio::io::stdin(), tokio::io::stdout());
    if let Ok(running) = EchoServer::new(tools).serve(transport).await {
        let _ = running.waiting().await;
    }
}

/// The echo server over Streamable HTTP on a port of its own, in this process.
pub(crate) async fn http_echo_server() -> (EchoServer, String) {
    http_echo_server_with(true).await
}

/// The in-process server, with Nagle's algorithm off (`nodelay`) or left on, as many servers
/// written with hyper or axum leave it.
pub(crate) async fn http_echo_server_with(nodelay: bool) -> (EchoServer, String) {
    serve_http(EchoServer::new(0), nodelay).await
}

/// The in-process server listing `echo` and `tools` more.
pub(crate) async fn http_echo_server_tools(tools: usize) -> (EchoServer, String) {
    serve_http(EchoServer::new(tools), true).await
}

async fn serve_http(server: EchoServer, nodelay: bool) -> (EchoServer, String) {
    let handler = server.clone();
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let app = axum::Router::new().route_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let listener = axum::serve::ListenerExt::tap_io(listener, move |tcp| {
        let _ = tcp.set_nodelay(nodelay);
    });
    tokio::spawn(async move { axum::serve(listener, app).await });
    (server, format!("http://{addr}/mcp"))
}

/// `bridge --proxy URL`: the least a proxy of these calls can do on this stack (tokio, hyper
/// on both sides). Each connection accepted gets one kept-alive connection to the upstream of
/// its own; each request goes there as it came (its `Host` made the upstream's), and its answer
/// comes back as it came, streamed, neither read nor parsed. No pool, no lock between
/// connections, no JSON, no authentication: what it costs a call is the kernel's work on two
/// connections and hyper's on both ends. It prints its port on stdout, then serves until killed.
pub(crate) async fn bare_proxy(upstream: &str) {
    use hyper::body::Incoming;
    use hyper_util::rt::TokioIo;
    let url = url::Url::parse(upstream).expect("a URL");
    let addr = url.socket_addrs(|| None).expect("a socket address")[0];
    let path: hyper::Uri = url.path().parse().expect("a path");
    let host = hyper::header::HeaderValue::from_str(
        &url[url::Position::BeforeHost..url::Position::AfterPort],
    )
    .expect("a host");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    println!("{}", listener.local_addr().unwrap().port());
    loop {
        let Ok((downstream, _)) = listener.accept().await else {
            continue;
        };
        let (path, host) = (path.clone(), host.clone());
        tokio::spawn(async move {
            let Ok(upstream) = tokio::net::TcpStream::connect(addr).await else {
                return;
            };
            let _ = (downstream.set_nodelay(true), upstream.set_nodelay(true));
            let handshake =
                hyper::client::conn::http1::handshake::<_, Incoming>(TokioIo::new(upstream));
            let Ok((sender, connection)) = handshake.await else {
                return;
            };
            tokio::spawn(connection);
            let sender = Arc::new(tokio::sync::Mutex::new(sender));
            let service =
                hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
                    let sender = sender.clone();
                    *request.uri_mut() = path.clone();
                    request
                        .headers_mut()
                        .insert(hyper::header::HOST, host.clone());
                    async move {
                        let answer = {
                            let mut sender = sender.lock().await;
                            sender.ready().await?;
                            sender.send_request(request)
                        };
                        answer.await
                    }
                });
            let served = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(downstream), service);
            let _ = served.await;
        });
    }
}

/// `bridge --fanout-floor`: the least a fan-out of one event to many SSE streams costs on this
/// stack (tokio, hyper): every `GET` gets `200` and a `text/event-stream` body fed by one
/// broadcast channel, a task a connection; `POST /publish` sends one event, its frame built once
/// and shared by every stream. No authentication, no per-agent channel or replay, no JSON: what
/// is left is waking each stream's task, hyper's chunk and the kernel's write to each socket. It
/// prints its port on stdout, then serves until killed.
pub(crate) async fn fanout_floor() {
    use http_body_util::{BodyExt, StreamBody};
    use hyper::body::{Frame, Incoming};
    use hyper_util::rt::TokioIo;
    type Out = http_body_util::combinators::BoxBody<Bytes, std::convert::Infallible>;
    let (events, _) = tokio::sync::broadcast::channel::<Bytes>(64);
    let sent = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    println!("{}", listener.local_addr().unwrap().port());
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            continue;
        };
        let _ = tcp.set_nodelay(true);
        let (events, sent) = (events.clone(), sent.clone());
        let service = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let answer = if request.method() == hyper::Method::POST {
                let id = sent.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let frame = format!(
                    "id: {id}\nevent: mcp/server/push\ndata: {{\"type\":\"mcp/server/push\",\
                     \"method\":\"notifications/tools/list_changed\",\"params\":{{}}}}\n\n"
                );
                let _ = events.send(Bytes::from(frame));
                let body = http_body_util::Empty::new().boxed();
                hyper::Response::builder().status(204).body(body)
            } else {
                let frames = futures::stream::unfold(events.subscribe(), |mut live| async {
                    loop {
                        match live.recv().await {
                            Ok(frame) => return Some((Ok(Frame::data(frame)), live)),
                            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                            Err(_) => return None,
                        }
                    }
                });
                hyper::Response::builder()
                    .header("content-type", "text/event-stream")
                    .body(StreamBody::new(frames).boxed())
            };
            async move { answer.map(|answer: hyper::Response<Out>| answer) }
        });
        tokio::spawn(async move {
            let served = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(tcp), service);
            let _ = served.await;
        });
    }
}

/// The fan-out floor (`bridge --fanout-floor`) in a process of its own, killed when dropped.
pub(crate) struct FanoutFloor {
    child: tokio::process::Child,
    pub(crate) addr: std::net::SocketAddr,
}

impl FanoutFloor {
    pub(crate) async fn start() -> FanoutFloor {
        let (child, port) = own_process(&["--fanout-floor"], "the fan-out floor").await;
        let addr = ([127, 0, 0, 1], port).into();
        FanoutFloor { child, addr }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id().expect("the fan-out floor is running")
    }

    /// Sends one event to every open stream.
    pub(crate) async fn publish(&self, client: &reqwest::Client) {
        let url = format!("http://{}/publish", self.addr);
        let sent = client.post(url).send().await.expect("the floor answers");
        assert_eq!(sent.status().as_u16(), 204);
    }
}

/// This binary run with `args` in a process of its own (killed when dropped), and the port it
/// prints first.
async fn own_process(args: &[&str], what: &str) -> (tokio::process::Child, u16) {
    use tokio::io::AsyncBufReadExt;
    let mut child = tokio::process::Command::new(std::env::current_exe().expect("this binary"))
        .args(args)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("{what} starts: {e}"));
    let stdout = child.stdout.take().expect("its stdout");
    let mut port = String::new();
    let mut stdout = tokio::io::BufReader::new(stdout);
    let read = stdout.read_line(&mut port);
    tokio::time::timeout(Duration::from_secs(30), read)
        .await
        .unwrap_or_else(|_| panic!("{what} prints its port within 30 s"))
        .expect("its port");
    (child, port.trim().parse().expect("a port"))
}

/// The bare proxy (`bridge --proxy URL`) in a process of its own, killed when dropped.
pub(crate) struct Proxy {
    child: tokio::process::Child,
    pub(crate) url: String,
}

impl Proxy {
    /// The proxy in front of `upstream`, an MCP endpoint; its `url` takes the same requests.
    pub(crate) async fn start(upstream: &str) -> Proxy {
        let (child, port) = own_process(&["--proxy", upstream], "the bare proxy").await;
        let url = format!("http://127.0.0.1:{port}/mcp");
        Proxy { child, url }
    }

    pub(crate) fn cpu_time(&self) -> Cpu {
        cpu_of(self.pid())
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id().expect("the bare proxy is running")
    }
}

/// A peer's process, killed when dropped.
pub(crate) struct Process {
    _child: tokio::process::Child,
}

fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers")
}

/// server-everything over Streamable HTTP, when `scripts/test.sh` has installed it.
pub(crate) async fn everything_http() -> Option<(Process, String)> {
    let bin = peers_dir().join("node_modules/.bin/mcp-server-everything");
    if !bin.exists() {
        println!("(server-everything is not installed: run scripts/test.sh; skipped)");
        return None;
    }
    let port = free_port();
    let mut command = tokio::process::Command::new(bin);
    command.arg("streamableHttp").env("PORT", port.to_string());
    // Its /mcp answers a GET without a session with 400, so wait on a port that is open.
    let peer = spawn_until_open(command, port).await?;
    Some((peer, format!("http://127.0.0.1:{port}/mcp")))
}

async fn spawn_until_open(mut command: tokio::process::Command, port: u16) -> Option<Process> {
    let child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .ok()?;
    let deadline = Instant::now() + Duration::from_secs(60);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            Instant::now() < deadline,
            "port {port} did not open in 60 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Some(Process { _child: child })
}

/// mcpo in front of `upstream`, when `scripts/bench.sh` (or `scripts/test.sh`) has installed it.
pub(crate) async fn mcpo(upstream: &str) -> Option<(Process, String)> {
    let bin = peers_dir().join(".venv-mcpo/bin/mcpo");
    if !bin.exists() {
        println!("(mcpo is not installed: run scripts/bench.sh; skipped)");
        return None;
    }
    let port = free_port();
    let mut command = tokio::process::Command::new(bin);
    command.args([
        "--host",
        "127.0.0.1",
        "--port",
        &port.to_string(),
        "--server-type",
        "streamable-http",
        "--",
        upstream,
    ]);
    // uvicorn opens its port once mcpo's start-up, which connects to the upstream, is done.
    let peer = spawn_until_open(command, port).await?;
    Some((peer, format!("http://127.0.0.1:{port}")))
}
