//! Secrets the bridge generates into its data dir on first start (the JWT signing secret, the
//! key that seals secret values at rest): 32 random bytes as 64 hex digits, in a file created
//! mode 0600, never overwritten.

use std::io::Write;
use std::path::Path;

/// The trimmed text of the file at `path`, generating it first when it is missing or empty;
/// `true` when it was generated now. When another process creates it at the same moment, its
/// text is used.
pub fn load_or_generate(path: &Path) -> std::io::Result<(String, bool)> {
    match std::fs::read_to_string(path) {
        Ok(text) if !text.trim().is_empty() => return Ok((text.trim().to_owned(), false)),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let text = hex::encode(rand::random::<[u8; 32]>());
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(mut file) => {
            file.write_all(text.as_bytes())?;
            file.sync_all()?;
            Ok((text, true))
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            Ok((std::fs::read_to_string(path)?.trim().to_owned(), false))
        }
        Err(e) => Err(e),
    }
}

/// Parses a 32-byte key written as 64 hex digits (`MCP_BRIDGE_SECRETS_KEY`, `secrets.key`).
pub fn parse_key(text: &str) -> Result<[u8; 32], String> {
    let bytes = hex::decode(text.trim()).map_err(|_| "is not hex".to_owned())?;
    bytes
        .try_into()
        .map_err(|_| "must be 64 hex digits (32 bytes), e.g. from `openssl rand -hex 32`".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_generated_once_private_and_then_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nested").join("key");
        let (first, generated) = load_or_generate(&path).unwrap();
        assert!(generated);
        assert_eq!(first.len(), 64);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(load_or_generate(&path).unwrap(), (first, false));
    }
}
