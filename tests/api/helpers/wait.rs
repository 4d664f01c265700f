//! Waiting for a state instead of sleeping: `poll_until`, `wait_until` and the bound `WAIT`.

use std::time::Duration;

/// How long a test waits for something that should happen at once (a generous bound for a
/// loaded machine; a passing test waits only as long as it takes).
pub const WAIT: Duration = Duration::from_secs(15);

/// Asks `probe` every 50 ms until it answers `Ok`, for at most `within` (a probe still running
/// then is dropped); `Err` holds what `probe` saw last (for the failure message).
pub async fn poll_until<T>(
    within: Duration,
    mut probe: impl AsyncFnMut() -> Result<T, String>,
) -> Result<T, String> {
    let deadline = tokio::time::Instant::now() + within;
    let mut seen = String::from("no answer from the first probe");
    loop {
        match tokio::time::timeout_at(deadline, probe()).await {
            Ok(Ok(done)) => return Ok(done),
            Ok(Err(now)) => seen = now,
            Err(_) => return Err(format!("{seen} (then a probe ran past the deadline)")),
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(seen);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// [`poll_until`], failing the test with "`what` did not happen" and what was seen instead.
pub async fn wait_until<T>(
    what: &str,
    within: Duration,
    probe: impl AsyncFnMut() -> Result<T, String>,
) -> T {
    match poll_until(within, probe).await {
        Ok(done) => done,
        Err(seen) => panic!("{what} did not happen within {within:?}; last seen: {seen}"),
    }
}
