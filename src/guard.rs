//! The upstream address guard (against SSRF): where mcp-bridge may connect for an MCP upstream
//! (`http`, `sse`, `ws`) or an A2A agent. Loopback is allowed. Link-local addresses
//! (169.254.0.0/16, fe80::/10), cloud metadata addresses, and addresses that are not unicast are
//! always refused; private ranges (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7, fec0::/10,
//! 64:ff9b:1::/48) unless `MCP_BRIDGE_ALLOW_PRIVATE_UPSTREAMS` is on. An IPv6 address carrying
//! an IPv4 one (mapped, compatible, NAT64, 6to4, Teredo) is judged by that IPv4 address.
//!
//! A literal address is checked when a URL is registered, before each connection and on every
//! redirect; a host name is checked on the addresses it resolves to, by the resolver of every
//! HTTP client the bridge connects with (so a name whose answer changes after registration, DNS
//! rebinding, still cannot reach a refused address), and before each connection, which gives the
//! clear error.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use tokio::net::TcpStream;

/// Cloud metadata services that answer on a name rather than (only) on a link-local address.
/// (They resolve to link-local addresses anyway; naming them fails fast with a clear reason.)
const METADATA_NAMES: &[&str] = &["metadata.google.internal", "metadata.goog"];

/// How many redirects an HTTP client of the bridge follows, each one checked.
pub const MAX_REDIRECTS: usize = 5;

/// The header mcp-bridge sets on every HTTP request it sends out (Streamable HTTP, legacy SSE,
/// the WebSocket upgrade, A2A), its value this process's instance id. `/mcp` refuses a request
/// that carries it: a bridge registered as its own upstream, or bridges registered as each
/// other's, would otherwise re-enter the merged listings without end.
pub const HOP_HEADER: &str = "mcp-bridge-hop";

/// The start of `/mcp`'s JSON-RPC error message when it refuses a request from a bridge; the
/// upstream client recognises it.
pub const LOOP_REFUSED: &str = "mcp-bridge refused a request from an mcp-bridge";

/// This process's instance id (random, per start): the value of [`HOP_HEADER`].
pub fn instance_id() -> &'static str {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ID.get_or_init(|| uuid::Uuid::new_v4().simple().to_string())
}

/// The TLS configuration of every connection the bridge makes to an upstream or an agent over
/// HTTPS or WSS: the platform verifier (`rustls-platform-verifier`, as reqwest builds it by default),
/// TLS 1.2 and 1.3, ALPN `http/1.1`. Built once and shared: making the verifier reads and parses
/// the system's root certificates (about 85 KiB of trust anchors), and each configuration
/// preallocates a session cache of 256 entries (about 15 KiB); made for the reqwest client and
/// the pool of every Streamable HTTP server, that was about 200 KiB of each idle server's memory
/// (heaptrack). What it verifies is the same for every server, and the session cache is keyed by
/// server name. A configuration that cannot be built is not kept: the next client tries again,
/// and fails as it did before.
pub fn tls_config() -> std::io::Result<Arc<rustls::ClientConfig>> {
    static SHARED: std::sync::OnceLock<Arc<rustls::ClientConfig>> = std::sync::OnceLock::new();
    if let Some(config) = SHARED.get() {
        return Ok(config.clone());
    }
    let provider = rustls::crypto::CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::ring::default_provider()));
    let verifier =
        rustls_platform_verifier::Verifier::new(provider.clone()).map_err(std::io::Error::other)?;
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(std::io::Error::other)?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(SHARED.get_or_init(|| Arc::new(config)).clone())
}

/// A connection to an upstream: TLS over TCP, or plain TCP.
pub type Stream = tokio_util::either::Either<TlsStream, TcpStream>;
/// TLS over TCP, as [`tls`] makes it.
pub type TlsStream = tokio_rustls::client::TlsStream<TcpStream>;

/// TLS to `host` (a name or an address, IPv6 in brackets or not) over `tcp`, verified with the
/// configuration every upstream shares ([`tls_config`]): HTTPS and WSS alike.
pub async fn tls(host: &str, tcp: TcpStream) -> std::io::Result<TlsStream> {
    let name = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let name = rustls::pki_types::ServerName::try_from(name)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    tokio_rustls::TlsConnector::from(tls_config()?)
        .connect(name, tcp)
        .await
}

/// The TCP socket under `stream`.
pub fn tcp(stream: &Stream) -> &TcpStream {
    match stream {
        Stream::Left(tls) => tls.get_ref().0,
        Stream::Right(tcp) => tcp,
    }
}

/// [`HOP_HEADER`] with this instance's id.
pub fn hop_header() -> (reqwest::header::HeaderName, reqwest::header::HeaderValue) {
    (
        reqwest::header::HeaderName::from_static(HOP_HEADER),
        reqwest::header::HeaderValue::from_static(instance_id()),
    )
}

#[derive(Debug, Clone, Copy, Default)]
pub struct Guard {
    allow_private: bool,
}

/// Why a destination cannot be used: the guard refused it, or its name did not resolve (shown to
/// whoever registered it).
#[derive(Debug, Clone, thiserror::Error)]
pub enum Refused {
    #[error("refused by the upstream address guard: {0}")]
    Guard(String),
    #[error("{0}")]
    Unresolved(String),
}

impl Guard {
    pub fn new(allow_private: bool) -> Self {
        Self { allow_private }
    }

    /// Why connecting to `ip` is refused, if it is.
    pub fn refusal(&self, ip: IpAddr) -> Option<&'static str> {
        let ip = ip.to_canonical();
        if ip.is_loopback() {
            return None;
        }
        if let IpAddr::V6(v6) = ip
            && let Some(v4) = embedded_ipv4(v6)
        {
            return self.refusal(IpAddr::V4(v4));
        }
        if is_link_local_or_metadata(ip) {
            return Some("a link-local or cloud metadata address");
        }
        if ip.is_unspecified() || ip.is_multicast() || ip == IpAddr::V4(Ipv4Addr::BROADCAST) {
            return Some("not a unicast address");
        }
        if !self.allow_private && is_private(ip) {
            return Some(
                "a private address (MCP_BRIDGE_ALLOW_PRIVATE_UPSTREAMS=true allows those)",
            );
        }
        None
    }

    /// Checks what can be checked of a URL without resolving it: the well-known metadata names
    /// and literal addresses.
    pub fn check_url(&self, url: &url::Url) -> Result<(), Refused> {
        match url.host() {
            None => Err(Refused::Guard(format!("{url} has no host"))),
            Some(url::Host::Domain(name)) => {
                let name = name.trim_end_matches('.').to_ascii_lowercase();
                if METADATA_NAMES.contains(&name.as_str()) {
                    return Err(Refused::Guard(format!(
                        "{name} is a cloud metadata service"
                    )));
                }
                Ok(())
            }
            Some(url::Host::Ipv4(ip)) => self.check_ip(&ip.to_string(), ip.into()),
            Some(url::Host::Ipv6(ip)) => self.check_ip(&ip.to_string(), ip.into()),
        }
    }

    fn check_ip(&self, host: &str, ip: IpAddr) -> Result<(), Refused> {
        match self.refusal(ip) {
            Some(why) if host == ip.to_string() => Err(Refused::Guard(format!("{host} is {why}"))),
            Some(why) => Err(Refused::Guard(format!("{host} resolves to {ip}, {why}"))),
            None => Ok(()),
        }
    }

    /// The addresses of `host` the guard allows; refused when it allows none of them.
    pub async fn resolve(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, Refused> {
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let found: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
            .await
            .map_err(|e| Refused::Unresolved(format!("cannot resolve {host}: {e}")))?
            .collect();
        let mut refused = None;
        let allowed: Vec<SocketAddr> = found
            .into_iter()
            .filter(|addr| match self.check_ip(host, addr.ip()) {
                Ok(()) => true,
                Err(why) => {
                    refused.get_or_insert(why);
                    false
                }
            })
            .collect();
        match (allowed.is_empty(), refused) {
            (false, _) => Ok(allowed),
            (true, Some(why)) => Err(why),
            (true, None) => Err(Refused::Unresolved(format!(
                "{host} resolves to no address"
            ))),
        }
    }

    /// Checks a URL before connecting to it: its literal address, or every address its host
    /// resolves to now.
    pub async fn preflight(&self, url: &url::Url) -> Result<(), Refused> {
        self.check_url(url)?;
        if let Some(url::Host::Domain(name)) = url.host() {
            let port = url.port_or_known_default().unwrap_or(80);
            self.resolve(name, port).await?;
        }
        Ok(())
    }

    /// An HTTP client builder whose connections only reach addresses the guard allows. With
    /// `follow`, it follows same-origin 307 and 308 redirects (which keep the method and the
    /// body; a redirect elsewhere would replay the configured headers to another host), at most
    /// [`MAX_REDIRECTS`], each checked; other redirects are answers, as they are without.
    pub fn http_client(&self, follow: bool) -> reqwest::ClientBuilder {
        let guard = *self;
        let policy = reqwest::redirect::Policy::custom(move |attempt| {
            let keeps_body = matches!(
                attempt.status(),
                reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
            );
            let same_origin = attempt
                .previous()
                .first()
                .is_some_and(|first| first.origin() == attempt.url().origin());
            if !follow || !keeps_body || !same_origin {
                return attempt.stop();
            }
            if attempt.previous().len() > MAX_REDIRECTS {
                let why = Refused::Guard(format!("more than {MAX_REDIRECTS} redirects"));
                return attempt.error(why);
            }
            match guard.check_url(attempt.url()) {
                Ok(()) => attempt.follow(),
                Err(why) => attempt.error(why),
            }
        });
        let (name, value) = hop_header();
        let builder = reqwest::Client::builder()
            .default_headers([(name, value)].into_iter().collect())
            .dns_resolver(Arc::new(GuardedResolver(guard)))
            .redirect(policy);
        // The shared configuration is the one reqwest would build (see [`tls_config`]); when it
        // cannot be built, reqwest builds its own and says why.
        match tls_config() {
            Ok(tls) => builder.tls_backend_preconfigured(rustls::ClientConfig::clone(&tls)),
            Err(_) => builder,
        }
    }
}

/// The resolver of every HTTP client the bridge connects to upstreams and agents with.
struct GuardedResolver(Guard);

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let guard = self.0;
        Box::pin(async move {
            let allowed = guard.resolve(name.as_str(), 0).await?;
            Ok(Box::new(allowed.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// Link-local (169.254.0.0/16, fe80::/10) and well-known cloud metadata addresses.
/// Whether a URL's host can be reached at all: an IP literal, or a DNS name (labels of letters,
/// digits, `-` and `_`, each 1 to 63 long, at most 253 in all; the URL parser has already turned
/// an international name into its `xn--` form). The URL parser takes hosts such as `$` that no
/// resolver will ever find: those are invalid input, not a failure to resolve.
pub fn check_host_syntax(url: &url::Url) -> Result<(), String> {
    let Some(url::Host::Domain(name)) = url.host() else {
        return match url.host() {
            Some(_) => Ok(()),
            None => Err(format!("\"{url}\" has no host")),
        };
    };
    let trimmed = name.strip_suffix('.').unwrap_or(name);
    let label_ok = |label: &str| {
        (1..=63).contains(&label.len())
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    if trimmed.len() <= 253 && trimmed.split('.').all(label_ok) {
        Ok(())
    } else {
        Err(format!("\"{name}\" is not a valid host name"))
    }
}

pub fn is_link_local_or_metadata(ip: IpAddr) -> bool {
    match ip.to_canonical() {
        IpAddr::V4(v4) => {
            v4.is_link_local()
                || v4 == Ipv4Addr::new(100, 100, 100, 200) // Alibaba Cloud
                || v4 == Ipv4Addr::new(192, 0, 0, 192) // Oracle Cloud (classic)
        }
        IpAddr::V6(v6) => {
            (v6.segments()[0] & 0xffc0) == 0xfe80
                || v6 == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) // AWS over IPv6
        }
    }
}

/// The IPv4 address an IPv6 address carries, where the network may deliver it to that IPv4
/// address: IPv4-compatible `::a.b.c.d` (deprecated, RFC 4291), NAT64 `64:ff9b::/96` (RFC 6052),
/// 6to4 `2002:AABB:CCDD::/48` (RFC 3056) and Teredo `2001:0::/32` (RFC 4380: the server, and
/// the client obfuscated in the last 32 bits; the client is returned, the server is public by
/// construction). `::ffff:a.b.c.d` is handled by `to_canonical` before this.
fn embedded_ipv4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = v6.segments();
    let v4 = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    match s {
        [0, 0, 0, 0, 0, 0, hi, lo] if (hi, lo) > (0, 1) => Some(v4(hi, lo)),
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => Some(v4(hi, lo)),
        [0x2002, hi, lo, ..] => Some(v4(hi, lo)),
        [0x2001, 0, _, _, _, _, hi, lo] => Some(v4(!hi, !lo)),
        _ => None,
    }
}

/// RFC 1918, shared address space (RFC 6598), unique local IPv6 addresses (fc00::/7), the
/// deprecated site-local fec0::/10 and local-use NAT64 64:ff9b:1::/48 (RFC 8215, which
/// translates to whatever the local network chooses).
fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_private() || (a == 100 && (64..128).contains(&b))
        }
        IpAddr::V6(v6) => {
            let s = v6.segments();
            (s[0] & 0xfe00) == 0xfc00 || (s[0] & 0xffc0) == 0xfec0 || s[..3] == [0x64, 0xff9b, 1]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_it_should_and_allows_loopback() {
        let strict = Guard::new(false);
        let lenient = Guard::new(true);
        for ip in [
            "127.0.0.1",
            "127.8.9.10",
            "::1",
            "::ffff:127.0.0.1",
            "93.184.215.14",
            "64:ff9b::5db8:d70e",
            "2002:5db8:d70e::1",
            "2606:4700::1111",
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert_eq!(strict.refusal(ip), None, "{ip}");
        }
        for ip in [
            "169.254.169.254",
            "169.254.1.1",
            "fe80::1",
            "fd00:ec2::254",
            "::ffff:169.254.169.254",
            "::169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "2002:a9fe:a9fe::1",
            "2001:0:4136:e378:8000:63bf:5601:5601",
            "::0.0.0.0",
            "64:ff9b::e000:1",
            "100.100.100.200",
            "0.0.0.0",
            "::",
            "224.0.0.1",
            "255.255.255.255",
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert!(strict.refusal(ip).is_some(), "{ip}");
            assert!(
                lenient.refusal(ip).is_some(),
                "{ip} even with private allowed"
            );
        }
        for ip in [
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "100.64.0.1",
            "fd12::1",
            "fec0::1",
            "feff:ffff::1",
            "::10.1.2.3",
            "64:ff9b::c0a8:101",
            "64:ff9b:1::a00:1",
            "2002:ac10:1::1",
        ] {
            let ip: IpAddr = ip.parse().unwrap();
            assert!(strict.refusal(ip).unwrap().contains("private"), "{ip}");
            assert_eq!(lenient.refusal(ip), None, "{ip}");
        }
    }

    /// reqwest takes the shared configuration (a rustls version of its own would be refused as
    /// an unknown backend), and every client is built on the same one.
    #[test]
    fn clients_are_built_on_the_shared_tls_config() {
        let first = tls_config().unwrap();
        assert!(Arc::ptr_eq(&first, &tls_config().unwrap()));
        assert_eq!(first.alpn_protocols, [b"http/1.1".to_vec()]);
        assert!(first.enable_sni);
        for follow in [true, false] {
            Guard::new(false).http_client(follow).build().unwrap();
        }
    }

    #[test]
    fn host_names_must_be_resolvable_names() {
        let check = |u: &str| check_host_syntax(&url::Url::parse(u).unwrap());
        for good in [
            "https://example.com/mcp",
            "http://my_host.internal:8080/",
            "http://localhost./",
            "http://127.0.0.1:1/",
            "http://[::1]:1/",
            "https://bücher.example/",
        ] {
            assert!(check(good).is_ok(), "{good}");
        }
        // The URL parser takes these; no resolver will find them.
        for bad in [
            "https://$",
            "https://a$b.example/",
            "http://a..b/",
            "http://a%7Bb/",
        ] {
            assert!(check(bad).is_err(), "{bad}");
        }
        let long = format!("http://{}.example/", "a".repeat(64));
        assert!(check(&long).is_err());
    }

    #[test]
    fn urls_are_checked_on_literal_hosts_and_metadata_names() {
        let guard = Guard::new(false);
        let check = |u: &str| guard.check_url(&url::Url::parse(u).unwrap());
        assert!(check("http://127.0.0.1:3000/mcp").is_ok());
        assert!(
            check("http://example.com/mcp").is_ok(),
            "names are checked when resolved"
        );
        for refused in [
            "http://169.254.169.254/latest",
            "ws://[fe80::1]/",
            "http://[::ffff:169.254.1.1]/",
            "http://[::169.254.169.254]/",
            "http://[64:ff9b::a9fe:a9fe]/",
            "http://[2002:a9fe:a9fe::1]/",
            "http://[fec0::1]/",
            "http://metadata.google.internal/",
            "https://METADATA.google.internal./x",
            "http://10.0.0.1/",
        ] {
            let error = check(refused).unwrap_err();
            assert!(
                error.to_string().contains("address guard"),
                "{refused}: {error}"
            );
        }
    }

    #[tokio::test]
    async fn names_are_checked_on_what_they_resolve_to() {
        let guard = Guard::new(false);
        assert!(guard.resolve("localhost", 80).await.is_ok());
        let url = url::Url::parse("http://localhost:1/").unwrap();
        assert!(guard.preflight(&url).await.is_ok());
    }
}
