//! The `mcp-bridge` binary: `serve` (the default), `token` (mint a JWT), `openapi` (print the spec).

use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use mcp_bridge::config::Config;
use mcp_bridge::http::auth::Auth;
use mcp_bridge::startup::Application;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "mcp-bridge",
    version,
    about = "A gateway from agents (REST + SSE) to many MCP servers"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the service (the default).
    Serve,
    /// Mint a JWT for an agent with the service's HS256 secret (configured, or the one it wrote
    /// into its data dir); says on stderr which it used, and never makes one.
    Token {
        /// The agent id (`sub`).
        #[arg(long)]
        sub: String,
        /// Grant the admin role (needed to register stdio servers).
        #[arg(long)]
        admin: bool,
        /// A role for access policies to match (repeatable).
        #[arg(long = "role", value_name = "ROLE")]
        roles: Vec<String>,
        /// A claim for access policies to match, `NAME=VALUE` (repeatable; a VALUE that is JSON,
        /// such as `["a","b"]` or `2`, is taken as such, anything else as a string).
        #[arg(long = "claim", value_name = "NAME=VALUE", value_parser = parse_claim)]
        claims: Vec<(String, serde_json::Value)>,
        /// How long the token is valid: e.g. 30m, 1h, 7d, or seconds.
        #[arg(long, default_value = "1h", value_parser = parse_ttl)]
        ttl: Duration,
    },
    /// Print the OpenAPI document.
    Openapi,
    /// Exit 0 when the running bridge answers `/healthz` within 4 s, 1 otherwise (the image's
    /// health check; it needs no curl, and follows MCP_BRIDGE_BIND).
    Health {
        /// The bridge's base URL (default: from MCP_BRIDGE_BIND).
        #[arg(long)]
        url: Option<String>,
    },
    /// Register the servers of a Claude Desktop / Cursor / VS Code configuration file with the
    /// running bridge (as an admin token minted with this machine's secret).
    Import {
        /// The JSON file (`mcpServers` or `servers`).
        file: std::path::PathBuf,
        /// The bridge's base URL (default: from MCP_BRIDGE_BIND).
        #[arg(long)]
        url: Option<String>,
        /// Replace servers already registered under the same ids with another config.
        #[arg(long)]
        replace: bool,
    },
}

fn parse_claim(text: &str) -> Result<(String, serde_json::Value), String> {
    let (name, value) = text
        .split_once('=')
        .filter(|(name, _)| !name.is_empty())
        .ok_or_else(|| format!("\"{text}\" is not NAME=VALUE"))?;
    if ["sub", "exp", "iat", "iss", "aud", "roles", "nbf"].contains(&name) {
        return Err(format!("`{name}` is set by the token command itself"));
    }
    let value = serde_json::from_str(value).unwrap_or_else(|_| serde_json::json!(value));
    Ok((name.to_owned(), value))
}

fn parse_ttl(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let n: u64 = number
        .parse()
        .map_err(|_| format!("\"{text}\" is not a duration such as 90s, 30m, 1h or 7d"))?;
    let secs = match unit {
        "" | "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        "d" => n * 86_400,
        _ => return Err(format!("\"{unit}\" is not a unit: use s, m, h or d")),
    };
    if secs == 0 {
        return Err("the duration must be longer than zero".into());
    }
    Ok(Duration::from_secs(secs))
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let config = match Config::load() {
        Ok(config) => config,
        Err(error) => {
            eprintln!("mcp-bridge: {error}");
            return ExitCode::from(2);
        }
    };
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => serve(config).await,
        Command::Token {
            sub,
            admin,
            roles,
            claims,
            ttl,
        } => {
            let mut caller = mcp_bridge::caller::Caller::new(sub, admin);
            let identity = caller.identity_mut();
            identity.roles.extend(roles);
            identity.claims = claims.into_iter().collect();
            let minted = Auth::for_minting(&config)
                .and_then(|(auth, file)| Ok((auth.mint_for(&caller, ttl)?, file)));
            match minted {
                Ok((token, file)) => {
                    println!("{token}");
                    eprintln!(
                        "mcp-bridge: signed with {}",
                        signing_secret(file.as_deref())
                    );
                    ExitCode::SUCCESS
                }
                Err(error) => {
                    eprintln!("mcp-bridge: {error}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Import { file, url, replace } => import(&config, &file, url, replace).await,
        Command::Health { url } => health(&config, url).await,
        Command::Openapi => {
            match mcp_bridge::api::openapi().to_pretty_json() {
                Ok(json) => println!("{json}"),
                Err(error) => {
                    eprintln!("mcp-bridge: {error}");
                    return ExitCode::FAILURE;
                }
            }
            ExitCode::SUCCESS
        }
    }
}

/// Which secret a token was signed with, as the person who runs `token` can check it: the file
/// in the data dir, the variable, or the configuration file.
fn signing_secret(file: Option<&std::path::Path>) -> String {
    let set = |name: &str| std::env::var_os(name).is_some_and(|value| !value.is_empty());
    match file {
        Some(file) => format!("the secret in {}", file.display()),
        None if set("MCP_BRIDGE_JWT_SECRET") => "MCP_BRIDGE_JWT_SECRET".to_owned(),
        None => match std::env::var("MCP_BRIDGE_CONFIG") {
            Ok(path) => format!("jwt_secret from {path}"),
            Err(_) => "the configured jwt_secret".to_owned(),
        },
    }
}

/// `mcp-bridge import FILE`: posts the file to `/v1/servers/import` and prints what happened.
async fn import(
    config: &Config,
    file: &std::path::Path,
    url: Option<String>,
    replace: bool,
) -> ExitCode {
    let fail = |why: String| {
        eprintln!("mcp-bridge: {why}");
        ExitCode::FAILURE
    };
    let mut document: serde_json::Value =
        match std::fs::read_to_string(file).map(|t| serde_json::from_str(&t)) {
            Ok(Ok(document)) => document,
            Ok(Err(e)) => return fail(format!("{} is not JSON: {e}", file.display())),
            Err(e) => return fail(format!("cannot read {}: {e}", file.display())),
        };
    if replace && let Some(fields) = document.as_object_mut() {
        fields.insert("replace".into(), serde_json::Value::Bool(true));
    }
    let base = url.unwrap_or_else(|| local_url(config));
    let token = match Auth::for_minting(config)
        .and_then(|(auth, _)| auth.mint("import", true, Duration::from_secs(600)))
    {
        Ok(token) => token,
        Err(e) => return fail(e.to_string()),
    };
    let _ = rustls::crypto::ring::default_provider().install_default();
    let resp = reqwest::Client::new()
        .post(format!("{}/v1/servers/import", base.trim_end_matches('/')))
        .bearer_auth(token)
        .json(&document)
        .timeout(Duration::from_secs(600))
        .send()
        .await;
    let body: serde_json::Value = match resp {
        Ok(resp) => match resp.json().await {
            Ok(body) => body,
            Err(e) => return fail(format!("the bridge's answer is not JSON: {e}")),
        },
        Err(e) => return fail(format!("cannot reach the bridge at {base}: {e}")),
    };
    let Some(results) = body["results"].as_array() else {
        return fail(format!("the bridge refused the import: {}", body["error"]));
    };
    let mut all_ok = true;
    for result in results {
        all_ok &= result["ok"] == true;
        println!(
            "{}\t{}\t{}",
            result["server_id"].as_str().unwrap_or_default(),
            result["action"].as_str().unwrap_or_default(),
            result["error"].as_str().unwrap_or_default()
        );
    }
    if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The URL this machine reaches the bridge at: its bind address, a wildcard one made loopback.
fn local_url(config: &Config) -> String {
    let bind = config
        .bind
        .replace("0.0.0.0", "127.0.0.1")
        .replace("[::]", "[::1]");
    format!("http://{bind}")
}

async fn health(config: &Config, url: Option<String>) -> ExitCode {
    let base = url.unwrap_or_else(|| local_url(config));
    let url = format!("{}/healthz", base.trim_end_matches('/'));
    let _ = rustls::crypto::ring::default_provider().install_default();
    let answer = reqwest::Client::new()
        .get(&url)
        .timeout(Duration::from_secs(4))
        .send()
        .await;
    match answer {
        Ok(resp) if resp.status().is_success() => ExitCode::SUCCESS,
        Ok(resp) => {
            eprintln!("mcp-bridge: {url} answered {}", resp.status());
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("mcp-bridge: cannot reach {url}: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(config: Config) -> ExitCode {
    let telemetry = match mcp_bridge::telemetry::init(&config.log, config.log_format) {
        Ok(telemetry) => telemetry,
        Err(error) => {
            eprintln!("mcp-bridge: {error}");
            return ExitCode::FAILURE;
        }
    };
    let app = match Application::build(config).await {
        Ok(app) => app,
        Err(error) => {
            tracing::error!(%error, "cannot start");
            eprintln!("mcp-bridge: {error}");
            return ExitCode::FAILURE;
        }
    };
    let stopped = app.run_until_stopped().await;
    // The spans still queued are sent on the exporter's own thread, which blocks.
    let _ = tokio::task::spawn_blocking(move || telemetry.shutdown()).await;
    match stopped {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mcp-bridge: {error}");
            ExitCode::FAILURE
        }
    }
}
