//! Secrets at rest: with `MCP_BRIDGE_SECRETS_KEY` set, the values of a server's `env` and
//! `headers`, the secrets of its `auth` and its OAuth grants (and an A2A agent's `headers`) are
//! stored sealed, with AES-256-GCM and a random nonce each, as `enc:v1:<hex of nonce, ciphertext
//! and tag>`. Plain values stored before the key was set are still read, and sealed when the
//! service starts. A sealed value the service cannot open (no key, or another key) makes its row
//! unusable, never silently plain.

use std::collections::BTreeMap;

use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::rand::{SecureRandom, SystemRandom};

const PREFIX: &str = "enc:v1:";

pub struct Sealer {
    key: LessSafeKey,
    random: SystemRandom,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer(AES-256-GCM)")
    }
}

/// Why a stored value cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum SealError {
    #[error("secret values in the store are sealed, and MCP_BRIDGE_SECRETS_KEY is not set")]
    NoKey,
    #[error("a sealed secret value does not open with MCP_BRIDGE_SECRETS_KEY (another key?)")]
    WrongKey,
}

impl Sealer {
    /// A sealer for a 256-bit key.
    pub fn new(key: &[u8; 32]) -> Self {
        let key = UnboundKey::new(&AES_256_GCM, key).expect("a 256-bit key is an AES-256 key");
        Self {
            key: LessSafeKey::new(key),
            random: SystemRandom::new(),
        }
    }

    pub fn seal(&self, plain: &str) -> String {
        let mut nonce = [0u8; NONCE_LEN];
        self.random
            .fill(&mut nonce)
            .expect("the system's random source works");
        let mut sealed = plain.as_bytes().to_vec();
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::empty(),
                &mut sealed,
            )
            .expect("AES-GCM seals any value that fits in memory");
        let mut out = Vec::with_capacity(NONCE_LEN + sealed.len());
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        format!("{PREFIX}{}", hex::encode(out))
    }

    fn open(&self, stored: &str) -> Result<String, SealError> {
        let Some(sealed) = stored.strip_prefix(PREFIX) else {
            return Ok(stored.to_owned());
        };
        let bytes = hex::decode(sealed).map_err(|_| SealError::WrongKey)?;
        if bytes.len() < NONCE_LEN {
            return Err(SealError::WrongKey);
        }
        let (nonce, ciphertext) = bytes.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| SealError::WrongKey)?;
        let mut ciphertext = ciphertext.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::empty(), &mut ciphertext)
            .map_err(|_| SealError::WrongKey)?;
        String::from_utf8(plain.to_vec()).map_err(|_| SealError::WrongKey)
    }
}

/// Whether a stored value is sealed.
pub fn is_sealed(stored: &str) -> bool {
    stored.starts_with(PREFIX)
}

/// Whether any of `values` is stored plain.
pub fn any_plain<'a>(mut values: impl Iterator<Item = &'a String>) -> bool {
    values.any(|v| !is_sealed(v))
}

/// The values of `map` sealed (a sealer) or as they are (none).
pub fn seal_values(
    sealer: Option<&Sealer>,
    map: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    match sealer {
        Some(sealer) => map
            .iter()
            .map(|(k, v)| (k.clone(), sealer.seal(v)))
            .collect(),
        None => map.clone(),
    }
}

/// The values of `map` opened; plain values are taken as they are.
pub fn open_values(
    sealer: Option<&Sealer>,
    map: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, SealError> {
    map.iter()
        .map(|(k, v)| {
            let plain = open_option(sealer, Some(v))?.unwrap_or_default();
            Ok((k.clone(), plain))
        })
        .collect()
}

/// One value sealed (a sealer) or as it is (none).
pub fn seal_option(sealer: Option<&Sealer>, value: Option<&str>) -> Option<String> {
    value.map(|v| match sealer {
        Some(sealer) => sealer.seal(v),
        None => v.to_owned(),
    })
}

/// One value opened; a plain value is taken as it is.
pub fn open_option(
    sealer: Option<&Sealer>,
    value: Option<&str>,
) -> Result<Option<String>, SealError> {
    value
        .map(|v| match (sealer, is_sealed(v)) {
            (_, false) => Ok(v.to_owned()),
            (Some(sealer), true) => sealer.open(v),
            (None, true) => Err(SealError::NoKey),
        })
        .transpose()
}

/// The file in the data dir holding the generated key, when none is configured.
pub const KEY_FILE: &str = "secrets.key";

/// The key in `data_dir/secrets.key`, generated there (64 hex digits, mode 0600) on first use,
/// so secret values are sealed at rest even when `MCP_BRIDGE_SECRETS_KEY` is not set.
pub fn load_or_generate_key(data_dir: &std::path::Path) -> std::io::Result<[u8; 32]> {
    let path = data_dir.join(KEY_FILE);
    let (text, generated) = crate::keyfile::load_or_generate(&path)?;
    if generated {
        tracing::info!(path = %path.display(), "generated the key that seals secret values at rest");
    }
    crate::keyfile::parse_key(&text).map_err(|why| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{}: {why}", path.display()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_seal_and_open_with_the_same_key_only() {
        let sealer = Sealer::new(&[7; 32]);
        let map = BTreeMap::from([("API_KEY".to_owned(), "s3cret".to_owned())]);
        let sealed = seal_values(Some(&sealer), &map);
        let stored = &sealed["API_KEY"];
        assert!(is_sealed(stored) && !stored.contains("s3cret"), "{stored}");
        assert_ne!(
            sealer.seal("s3cret"),
            sealer.seal("s3cret"),
            "a fresh nonce each time"
        );
        assert_eq!(open_values(Some(&sealer), &sealed).unwrap(), map);
        let other = Sealer::new(&[8; 32]);
        assert!(matches!(
            open_values(Some(&other), &sealed),
            Err(SealError::WrongKey)
        ));
        assert!(matches!(open_values(None, &sealed), Err(SealError::NoKey)));
        // Plain values stored before a key was set are read as they are.
        assert_eq!(open_values(Some(&sealer), &map).unwrap(), map);
        let mut tampered = sealed.clone();
        tampered.get_mut("API_KEY").unwrap().push_str("00");
        assert!(open_values(Some(&sealer), &tampered).is_err());
    }

    #[test]
    fn keys_are_64_hex_digits() {
        assert_eq!(
            crate::keyfile::parse_key(&"ab".repeat(32)).unwrap(),
            [0xab; 32]
        );
        assert!(crate::keyfile::parse_key("abcd").is_err());
        assert!(crate::keyfile::parse_key(&"zz".repeat(32)).is_err());
    }
}
