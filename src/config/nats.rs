//! How a replica connects to NATS: one kind of credentials (a user and password, in the
//! settings or the URL; an NKey seed; or a decentralised-auth `.creds` file) and TLS. Files are
//! read and checked at start, so a bad one stops the service naming its setting; the secrets
//! they hold are never logged.

use std::path::{Path, PathBuf};

use secrecy::{ExposeSecret, SecretString};

use super::{Config, ConfigError, invalid};

/// Credentials and TLS for NATS, read from the configuration (secrets redacted in `Debug`).
#[derive(Debug, Clone, Default)]
pub struct NatsAccess {
    pub user: Option<(String, SecretString)>,
    pub nkey_seed: Option<SecretString>,
    /// The contents of a `.creds` file (a user JWT and its NKey seed).
    pub creds: Option<SecretString>,
    pub tls_ca: Option<PathBuf>,
    /// A client certificate and its key.
    pub tls_cert: Option<(PathBuf, PathBuf)>,
    /// NATS must speak TLS: a `tls://` URL, or a CA or client certificate given.
    pub tls_required: bool,
    /// The URLs to connect to (comma-separated, one or more), without the user and password
    /// they may carry (they are in `user`: the NATS client does not read them from the URL).
    pub url: String,
}

fn read_secret(name: &'static str, path: &Path) -> Result<SecretString, ConfigError> {
    std::fs::read_to_string(path)
        .map(|text| SecretString::from(text.trim().to_owned()))
        .map_err(|e| invalid(name, format!("cannot read {}: {e}", path.display())))
}

fn readable(name: &'static str, path: &Path) -> Result<PathBuf, ConfigError> {
    std::fs::metadata(path)
        .map(|_| path.to_owned())
        .map_err(|e| invalid(name, format!("cannot read {}: {e}", path.display())))
}

/// Several NATS URLs, comma-separated (the servers of one cluster: the client picks one and
/// moves to another when it goes), each checked and without its user and password; and them,
/// the same in every URL that has them.
fn split_users(urls: &str) -> Result<(String, Option<(String, SecretString)>), ConfigError> {
    let mut bare = Vec::new();
    let mut user: Option<(String, SecretString)> = None;
    for url in urls.split(',').map(str::trim) {
        if !url.starts_with("nats://") && !url.starts_with("tls://") {
            return Err(invalid(
                "MCP_BRIDGE_NATS_URL",
                format!(
                    "\"{}\" is not a nats:// or tls:// URL (several are separated by commas)",
                    without_user(url)
                ),
            ));
        }
        let (url, in_url) = split_user(url)?;
        bare.push(url);
        match (&user, in_url) {
            (Some((name, password)), Some((other, other_password)))
                if name != &other || password.expose_secret() != other_password.expose_secret() =>
            {
                return Err(invalid(
                    "MCP_BRIDGE_NATS_URL",
                    "its URLs carry different users or passwords: one user connects to every server",
                ));
            }
            (None, Some(found)) => user = Some(found),
            _ => {}
        }
    }
    Ok((bare.join(","), user))
}

/// A URL fit for an error: without the user and password it may carry.
fn without_user(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => match rest.rsplit_once('@') {
            Some((_, host)) => format!("{scheme}://***@{host}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// A NATS URL without its user and password, and them (`nats://user:pass@host`).
fn split_user(url: &str) -> Result<(String, Option<(String, SecretString)>), ConfigError> {
    let mut parsed = url::Url::parse(url)
        .map_err(|e| invalid("MCP_BRIDGE_NATS_URL", format!("not a URL: {e}")))?;
    if parsed.username().is_empty() {
        return Ok((url.to_owned(), None));
    }
    let decode = |s: &str| {
        crate::schema::percent_decode(s).ok_or_else(|| {
            invalid(
                "MCP_BRIDGE_NATS_URL",
                "its user or password is not valid percent-encoded UTF-8",
            )
        })
    };
    let user = decode(parsed.username())?;
    let password = SecretString::from(decode(parsed.password().unwrap_or_default())?);
    let _ = parsed.set_username("");
    let _ = parsed.set_password(None);
    Ok((parsed.to_string(), Some((user, password))))
}

pub(super) fn access(config: &Config) -> Result<NatsAccess, ConfigError> {
    let (url, in_url) = split_users(config.nats_url.as_deref().unwrap_or_default())?;
    let user = match (&config.nats_user, &config.nats_password) {
        (Some(user), Some(password)) => Some((user.clone(), password.clone())),
        (None, None) => None,
        (Some(_), None) => {
            return Err(invalid(
                "MCP_BRIDGE_NATS_PASSWORD",
                "is needed with MCP_BRIDGE_NATS_USER",
            ));
        }
        (None, Some(_)) => {
            return Err(invalid(
                "MCP_BRIDGE_NATS_USER",
                "is needed with MCP_BRIDGE_NATS_PASSWORD",
            ));
        }
    };
    let nkey_seed = match (&config.nats_nkey_seed, &config.nats_nkey_seed_file) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                "MCP_BRIDGE_NATS_NKEY_SEED_FILE",
                "set it or MCP_BRIDGE_NATS_NKEY_SEED, not both",
            ));
        }
        (Some(seed), None) => Some(seed.clone()),
        (None, Some(path)) => Some(read_secret("MCP_BRIDGE_NATS_NKEY_SEED_FILE", path)?),
        (None, None) => None,
    };
    if let Some(seed) = &nkey_seed
        && !seed.expose_secret().starts_with("SU")
    {
        return Err(invalid(
            if config.nats_nkey_seed.is_some() {
                "MCP_BRIDGE_NATS_NKEY_SEED"
            } else {
                "MCP_BRIDGE_NATS_NKEY_SEED_FILE"
            },
            "is not a NATS user NKey seed (one starts with SU; `nk -gen user` makes one)",
        ));
    }
    let creds = config
        .nats_creds_file
        .as_deref()
        .map(|path| read_secret("MCP_BRIDGE_NATS_CREDS_FILE", path))
        .transpose()?;
    if creds
        .as_ref()
        .is_some_and(|c| !c.expose_secret().contains("BEGIN NATS USER JWT"))
    {
        return Err(invalid(
            "MCP_BRIDGE_NATS_CREDS_FILE",
            "is not a NATS .creds file (no user JWT in it)",
        ));
    }
    let kinds = [
        ("MCP_BRIDGE_NATS_USER", user.is_some()),
        ("a user in MCP_BRIDGE_NATS_URL", in_url.is_some()),
        ("MCP_BRIDGE_NATS_NKEY_SEED", nkey_seed.is_some()),
        ("MCP_BRIDGE_NATS_CREDS_FILE", creds.is_some()),
    ];
    let set: Vec<&str> = kinds
        .iter()
        .filter_map(|(name, set)| set.then_some(*name))
        .collect();
    if let [first, second, ..] = set[..] {
        return Err(invalid(
            "MCP_BRIDGE_NATS_URL",
            format!("NATS credentials of one kind only: {first} and {second} are both set"),
        ));
    }
    let tls_cert = match (&config.nats_tls_cert, &config.nats_tls_key) {
        (Some(cert), Some(key)) => Some((
            readable("MCP_BRIDGE_NATS_TLS_CERT", cert)?,
            readable("MCP_BRIDGE_NATS_TLS_KEY", key)?,
        )),
        (None, None) => None,
        (Some(_), None) => {
            return Err(invalid(
                "MCP_BRIDGE_NATS_TLS_KEY",
                "is needed with MCP_BRIDGE_NATS_TLS_CERT",
            ));
        }
        (None, Some(_)) => {
            return Err(invalid(
                "MCP_BRIDGE_NATS_TLS_CERT",
                "is needed with MCP_BRIDGE_NATS_TLS_KEY",
            ));
        }
    };
    let tls_ca = config
        .nats_tls_ca
        .as_deref()
        .map(|ca| readable("MCP_BRIDGE_NATS_TLS_CA", ca))
        .transpose()?;
    // A CA or client certificate given means TLS is meant: without requiring it, a man in the
    // middle saying "no TLS" would get the CONNECT (credentials included) in plain text.
    let tls_required =
        url.split(',').any(|u| u.starts_with("tls://")) || tls_ca.is_some() || tls_cert.is_some();
    Ok(NatsAccess {
        user: user.or(in_url),
        nkey_seed,
        creds,
        tls_ca,
        tls_cert,
        tls_required,
        url,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replica() -> Config {
        Config {
            nats_url: Some("nats://127.0.0.1:4222".into()),
            database_url: Some("postgres://x/y".into()),
            secrets_key: Some("11".repeat(32).into()),
            ..Config::default()
        }
    }

    fn refused(config: &Config) -> String {
        config.clone().validate().unwrap_err().to_string()
    }

    #[test]
    fn credentials_come_in_one_kind_and_in_pairs() {
        assert!(replica().clone().validate().is_ok());
        let half = Config {
            nats_user: Some("bridge".into()),
            ..replica()
        };
        assert!(refused(&half).starts_with("MCP_BRIDGE_NATS_PASSWORD"));
        let two = Config {
            nats_url: Some("nats://u:p@127.0.0.1:4222".into()),
            nats_nkey_seed: Some("SUAB".into()),
            ..replica()
        };
        let said = refused(&two);
        assert!(
            said.contains("a user in MCP_BRIDGE_NATS_URL") && said.contains("NKEY_SEED"),
            "{said}"
        );
        let not_a_seed = Config {
            nats_nkey_seed: Some("UABC".into()),
            ..replica()
        };
        assert!(refused(&not_a_seed).starts_with("MCP_BRIDGE_NATS_NKEY_SEED"));
        let missing = Config {
            nats_creds_file: Some("/nonexistent/bridge.creds".into()),
            ..replica()
        };
        assert!(refused(&missing).starts_with("MCP_BRIDGE_NATS_CREDS_FILE"));
    }

    #[test]
    fn replicas_need_a_key_to_seal_the_bus_and_say_so() {
        let keyless = Config {
            secrets_key: None,
            ..replica()
        };
        assert!(refused(&keyless).contains("MCP_BRIDGE_BUS_KEY"));
        let own = Config {
            secrets_key: None,
            bus_key: Some("22".repeat(32).into()),
            ..replica()
        };
        assert_eq!(own.bus_master_key().unwrap(), Some([0x22; 32]));
        let alone = Config {
            nats_tls_ca: Some("/etc/ssl/ca.pem".into()),
            ..Config::default()
        };
        assert!(refused(&alone).starts_with("MCP_BRIDGE_NATS_TLS_CA"));
        let tls = Config {
            nats_url: Some("tls://127.0.0.1:4222".into()),
            ..replica()
        };
        assert!(tls.nats_access().unwrap().tls_required);
        let ca = tempfile::NamedTempFile::new().unwrap();
        let with_ca = Config {
            nats_tls_ca: Some(ca.path().to_path_buf()),
            ..replica()
        };
        assert!(
            with_ca.nats_access().unwrap().tls_required,
            "a CA given requires TLS even on a nats:// URL"
        );
        let in_url = Config {
            nats_url: Some("nats://bridge:p%40ss@127.0.0.1:4222".into()),
            ..replica()
        };
        let access = in_url.nats_access().unwrap();
        assert_eq!(access.url, "nats://127.0.0.1:4222");
        let (user, password) = access.user.unwrap();
        assert_eq!(
            (user.as_str(), password.expose_secret()),
            ("bridge", "p@ss")
        );
    }

    /// The servers of a NATS cluster, comma-separated, are taken, each checked and each
    /// without its user (which must be the same everywhere it is given).
    #[test]
    fn several_nats_urls_are_taken_each_checked() {
        let two = Config {
            nats_url: Some("nats://bridge:pw@10.0.0.1:4222, nats://10.0.0.2:4222".into()),
            ..replica()
        };
        assert!(
            two.clone().validate().is_ok(),
            "{:?}",
            two.clone().validate()
        );
        let access = two.nats_access().unwrap();
        assert_eq!(access.url, "nats://10.0.0.1:4222,nats://10.0.0.2:4222");
        assert_eq!(access.user.unwrap().0, "bridge");
        assert!(!access.tls_required);
        let one_tls = Config {
            nats_url: Some("nats://10.0.0.1:4222,tls://10.0.0.2:4222".into()),
            ..replica()
        };
        assert!(one_tls.nats_access().unwrap().tls_required);
        let bad = Config {
            nats_url: Some("nats://10.0.0.1:4222,http://u:secret@10.0.0.2".into()),
            ..replica()
        };
        let said = refused(&bad);
        assert!(
            said.starts_with("MCP_BRIDGE_NATS_URL")
                && said.contains("http://")
                && !said.contains("secret"),
            "{said}"
        );
        let mixed = Config {
            nats_url: Some("nats://a:1@10.0.0.1:4222,nats://b:2@10.0.0.2:4222".into()),
            ..replica()
        };
        assert!(refused(&mixed).starts_with("MCP_BRIDGE_NATS_URL"));
    }
}
