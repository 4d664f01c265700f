//! HTTPS and WSS upstreams: verified with the system's roots (`SSL_CERT_FILE` names them for a
//! process), the same way on every transport, and refused in words when their certificate is
//! not trusted. The bridge runs as a process of its own: its TLS configuration is made once per
//! process (`guard::tls_config`), with the environment it starts with.
//!
//! The certificates are made by the `openssl` command (scripts/peers.sh installs it where it is
//! missing): a CA, and a certificate it signed for 127.0.0.1 and localhost.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

/// A CA of the test's own and a server certificate it signed, as PEM files in `dir`.
struct Certificates {
    ca: PathBuf,
    /// The server's certificate, then the CA's (its chain).
    chain: PathBuf,
    key: PathBuf,
}

impl Certificates {
    fn make(dir: &Path) -> Self {
        // One command line, its words split at spaces.
        let openssl = |line: &str| {
            let out = Command::new("openssl")
                .args(line.split_whitespace())
                .current_dir(dir)
                .output()
                .expect("openssl runs (scripts/peers.sh installs it)");
            assert!(
                out.status.success(),
                "openssl {line}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        let key = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";
        // A name of its own: a verifier looks for a certificate's issuer by name.
        let ca = unique("mcp-bridge-test-CA");
        openssl(&format!(
            "req -x509 {key} -keyout ca.key -out ca.pem -days 2 -subj /CN={ca} \
             -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign"
        ));
        openssl(&format!(
            "req {key} -keyout server.key -out server.csr -subj /CN=127.0.0.1"
        ));
        std::fs::write(
            dir.join("server.ext"),
            "subjectAltName=IP:127.0.0.1,DNS:localhost\n\
             basicConstraints=critical,CA:FALSE\n\
             keyUsage=critical,digitalSignature\n\
             extendedKeyUsage=serverAuth\n",
        )
        .unwrap();
        openssl(
            "x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
             -extfile server.ext -out server.pem",
        );
        let chain = [
            std::fs::read_to_string(dir.join("server.pem")).unwrap(),
            std::fs::read_to_string(dir.join("ca.pem")).unwrap(),
        ]
        .concat();
        std::fs::write(dir.join("chain.pem"), chain).unwrap();
        Self {
            ca: dir.join("ca.pem"),
            chain: dir.join("chain.pem"),
            key: dir.join("server.key"),
        }
    }
}

/// The Python fixture over HTTPS (`transport` `http` or `sse`) and the WebSocket fixture over
/// WSS, each with `certificates`' server certificate: their registration configs.
async fn tls_peers(certificates: &Certificates) -> (Vec<Peer>, Vec<Value>) {
    let (chain, key) = (certificates.chain.as_path(), certificates.key.as_path());
    let config = |server_id: &str, transport: &str, peer: &Peer| {
        json!({"server_id": server_id, "transport": transport, "url": peer.url,
               "connect_timeout": 10, "auto_reconnect": false})
    };
    let mut peers = Vec::new();
    let mut configs = Vec::new();
    for (transport, path) in [("http", "/mcp"), ("sse", "/sse")] {
        let mut command = py_command(transport, 0);
        command
            .env("FIXTURE_TLS_CERT", chain)
            .env("FIXTURE_TLS_KEY", key);
        let peer = reporting_peer(command, path, "https").await;
        configs.push(config(&format!("{transport}s"), transport, &peer));
        peers.push(peer);
    }
    let mut command = ws_command();
    command.env("WS_TLS_CERT", chain).env("WS_TLS_KEY", key);
    let peer = reporting_peer(command, "/ws", "wss").await;
    configs.push(config("wss", "ws", &peer));
    peers.push(peer);
    (peers, configs)
}

/// A bridge process trusting the roots in `ca_file` only (none: the machine's own).
async fn bridge_trusting(ca_file: Option<&Path>) -> (Bridge, TestApp) {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let ca = ca_file.map(|ca| ca.to_string_lossy().into_owned());
    let env: Vec<(&str, &str)> = ca.iter().map(|ca| ("SSL_CERT_FILE", ca.as_str())).collect();
    let bridge = start_bridge_with(dir.path(), &env).await;
    let app = TestApp::at(&bridge.base, dir);
    (bridge, app)
}

/// Streamable HTTP, legacy SSE and WebSocket upstreams behind TLS, their certificate from a CA
/// the system trusts: each connects and answers a call (over WSS too, which verified with the
/// web's roots compiled in until it took the configuration every other upstream has).
#[tokio::test]
async fn https_and_wss_upstreams_are_verified_with_the_systems_roots() {
    let dir = tempfile::tempdir().unwrap();
    let certificates = Certificates::make(dir.path());
    let (peers, configs) = tls_peers(&certificates).await;
    let (_bridge, app) = bridge_trusting(Some(&certificates.ca)).await;
    for config in configs {
        let server_id = config["server_id"].as_str().unwrap().to_owned();
        let server = app.register_server(config).await;
        assert_eq!(server["status"], "ready", "{server}");
        let tool = format!("{server_id}__echo");
        let (status, body) = app.call(&tool, json!({"text": "over TLS"})).await;
        assert_eq!(status, StatusCode::OK, "{tool}: {body}");
        assert_eq!(body["content"][0]["text"], "over TLS", "{tool}: {body}");
    }
    for peer in peers {
        peer.stop().await;
    }
}

/// The same upstreams, to a bridge that does not trust their CA: each registration is refused,
/// saying the certificate is not trusted, and nothing is kept.
#[tokio::test]
async fn an_upstream_whose_certificate_is_not_trusted_is_refused_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let certificates = Certificates::make(dir.path());
    let (peers, configs) = tls_peers(&certificates).await;
    // Roots of another CA only: the machine's own could be anything.
    let other = tempfile::tempdir().unwrap();
    let stranger = Certificates::make(other.path());
    let (_bridge, app) = bridge_trusting(Some(&stranger.ca)).await;
    for config in configs {
        let (status, body) = app
            .post("/v1/servers", &app.admin, json!({ "config": config }))
            .await;
        assert!(!status.is_success(), "{config}: {status} {body}");
        let error = body["error"].as_str().unwrap_or_default();
        assert!(
            error.contains("invalid peer certificate: UnknownIssuer"),
            "{config}: {error}"
        );
    }
    let (_, list) = app.get("/v1/servers", &app.admin).await;
    assert_eq!(list["servers"], json!([]), "{list}");
    for peer in peers {
        peer.stop().await;
    }
}
