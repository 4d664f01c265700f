//! Bounded reading of what an agent answers (its card, its JSON-RPC replies): read as it
//! arrives and given up as soon as it passes the limit, never held past it.

/// Why a body could not be had.
#[derive(Debug)]
pub enum BodyError {
    /// Longer than the limit (by its `Content-Length`, or by what arrived).
    TooLarge,
    Read(reqwest::Error),
}

/// The body of `resp`, at most `limit` bytes.
pub async fn read(mut resp: reqwest::Response, limit: usize) -> Result<Vec<u8>, BodyError> {
    let announced = resp.content_length();
    if announced.is_some_and(|n| n > limit as u64) {
        return Err(BodyError::TooLarge);
    }
    let mut body = Vec::with_capacity(announced.map_or(8 * 1024, |n| n as usize));
    while let Some(chunk) = resp.chunk().await.map_err(BodyError::Read)? {
        if body.len() + chunk.len() > limit {
            return Err(BodyError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A size in words: `512 KiB`, `16 MiB`, else bytes.
pub fn size(bytes: usize) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}
