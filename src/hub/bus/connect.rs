//! How this replica connects to NATS: its credentials and TLS, and its NATS URLs as a log
//! line may show them (without passwords).

use super::BusError;

/// How this replica connects to NATS: its credentials (a user and password, an NKey seed or a
/// `.creds` file) and TLS (a CA to trust, a client certificate).
pub(super) fn connect_options(
    access: &crate::config::NatsAccess,
) -> Result<async_nats::ConnectOptions, BusError> {
    use secrecy::ExposeSecret;
    let mut options = async_nats::ConnectOptions::new();
    if let Some((user, password)) = &access.user {
        options = options.user_and_password(user.clone(), password.expose_secret().to_owned());
    }
    if let Some(seed) = &access.nkey_seed {
        options = options.nkey(seed.expose_secret().to_owned());
    }
    if let Some(creds) = &access.creds {
        options = options.credentials(creds.expose_secret()).map_err(|e| {
            BusError::Config(format!(
                "MCP_BRIDGE_NATS_CREDS_FILE is not a NATS .creds file: {e}"
            ))
        })?;
    }
    if let Some(ca) = &access.tls_ca {
        options = options.add_root_certificates(ca.clone());
    }
    if let Some((cert, key)) = &access.tls_cert {
        options = options.add_client_certificate(cert.clone(), key.clone());
    }
    Ok(options.require_tls(access.tls_required))
}

/// NATS URLs (comma-separated) fit for a log line or an error: without the passwords they
/// may carry.
pub(super) fn without_password(urls: &str) -> String {
    urls.split(',')
        .map(|url| without_password_one(url.trim()))
        .collect::<Vec<_>>()
        .join(",")
}

fn without_password_one(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => match rest.rsplit_once('@') {
            Some((credentials, host)) => {
                let user = credentials.split(':').next().unwrap_or_default();
                format!("{scheme}://{user}:***@{host}")
            }
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}
