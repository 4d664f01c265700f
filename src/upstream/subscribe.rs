//! Subscriptions to a server's resources: by `resources/subscribe` before 2026-07-28, on it by
//! the URIs a `subscriptions/listen` follows (`listen.rs`).

use std::time::Duration;

use rmcp::model::{SubscribeRequestParams, UnsubscribeRequestParams};

use super::{CallError, Connection};

impl Connection {
    /// Subscribes upstream to `uri` unless this connection already is: on 2026-07-28 by a new
    /// listen that carries it too, before by `resources/subscribe`.
    #[allow(deprecated)] // resources/subscribe is how 2025-11-25 servers are subscribed to.
    pub async fn subscribe(&self, uri: &str, timeout: Duration) -> Result<(), CallError> {
        if let Some(listen) = &self.listen {
            return self.run(timeout, listen.follow([uri.to_owned()])).await;
        }
        if self
            .subscribed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(uri)
        {
            return Ok(());
        }
        self.run(
            timeout,
            self.client.subscribe(SubscribeRequestParams::new(uri)),
        )
        .await?;
        self.subscribed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(uri.to_owned());
        Ok(())
    }

    /// Unsubscribes upstream from `uri` if this connection is subscribed: on 2026-07-28 by a
    /// new listen without it.
    #[allow(deprecated)]
    pub async fn unsubscribe(&self, uri: &str, timeout: Duration) -> Result<(), CallError> {
        if let Some(listen) = &self.listen {
            return self.run(timeout, listen.unfollow(uri)).await;
        }
        if !self
            .subscribed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(uri)
        {
            return Ok(());
        }
        self.run(
            timeout,
            self.client.unsubscribe(UnsubscribeRequestParams::new(uri)),
        )
        .await
    }

    /// On 2026-07-28, follows every URI of `uris` (those agents follow, on a new connection) in
    /// one listen, so they are subscribed to together or not at all; none on a connection that
    /// subscribes by `resources/subscribe`, one URI at a time.
    pub async fn follow_all(
        &self,
        uris: &[String],
        timeout: Duration,
    ) -> Option<Result<(), CallError>> {
        let listen = self.listen.as_ref()?;
        Some(self.run(timeout, listen.follow(uris.to_vec())).await)
    }
}
