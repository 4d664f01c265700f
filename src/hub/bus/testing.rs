//! What the bus's tests share: hubs joined on the NATS of `MCP_BRIDGE_TEST_NATS` under a
//! prefix of their own, and messages sealed as another replica would.

use super::*;

pub(super) const TEST_KEY: [u8; 32] = [7; 32];

/// Hubs joined on the NATS of `MCP_BRIDGE_TEST_NATS` (skipped without it) under a prefix
/// of their own; the log is deleted when the test ends.
pub(super) struct Replicas {
    pub(super) url: String,
    pub(super) prefix: String,
    stop: CancellationToken,
}

impl Replicas {
    pub(super) fn new() -> Option<Self> {
        let url = std::env::var("MCP_BRIDGE_TEST_NATS").ok()?;
        let prefix = format!("t{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
        Some(Self {
            url,
            prefix,
            stop: CancellationToken::new(),
        })
    }

    pub(super) async fn hub(&self, replica: &str) -> Arc<crate::hub::Hub> {
        self.hub_with(replica, 1 << 20).await
    }

    /// A hub whose outbox keeps `outbox_bytes` at most.
    pub(super) async fn hub_with(
        &self,
        replica: &str,
        outbox_bytes: usize,
    ) -> Arc<crate::hub::Hub> {
        let hub = crate::hub::Hub::new(200, self.stop.child_token());
        hub.join(BusConfig {
            url: self.url.clone(),
            prefix: self.prefix.clone(),
            replica: replica.into(),
            key: Arc::new(BusKey::derive(&TEST_KEY)),
            access: Default::default(),
            outbox_bytes,
        })
        .await
        .unwrap();
        hub
    }
}

impl Drop for Replicas {
    fn drop(&mut self) {
        self.stop.cancel();
        let (url, prefix) = (self.url.clone(), self.prefix.clone());
        // A runtime of its own: the test's is ending.
        std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(Bus::delete_log(&url, &prefix))
        })
        .join()
        .unwrap()
        .unwrap();
    }
}

pub(super) async fn next(opened: &mut crate::hub::Opened) -> Arc<crate::hub::Event> {
    tokio::time::timeout(Duration::from_secs(5), opened.live.recv())
        .await
        .expect("an event within 5 s")
        .unwrap()
}

/// `message` from replica "z", sealed with the test key for `subject`, sent `at`.
pub(super) fn sealed(subject: &str, id: &str, at: u64, message: &Message) -> Vec<u8> {
    let plain = protocol::encode("z", id, at, message);
    BusKey::derive(&TEST_KEY).seal(protocol::VERSION as u8, subject, &plain)
}
