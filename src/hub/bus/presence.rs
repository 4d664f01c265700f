//! Presence: which replica has which agent's streams open, said every second (and at once
//! when it changes) on core NATS, and which other replicas were heard from lately.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Bus, Envelope, Message};

/// How often a replica says which agents have streams open on it.
const PRESENCE_EVERY: Duration = Duration::from_secs(1);
/// A replica not heard from for this long holds no streams.
const PRESENCE_LAPSE: Duration = Duration::from_secs(3);

impl Bus {
    /// Whether another replica has a stream of the agent open now.
    pub fn connected_elsewhere(&self, agent: &str) -> bool {
        let presence = self.presence.lock().unwrap_or_else(|e| e.into_inner());
        presence
            .values()
            .any(|(agents, at)| at.elapsed() < PRESENCE_LAPSE && agents.contains(agent))
    }

    /// The other replicas heard from lately.
    pub fn others(&self) -> Vec<String> {
        let presence = self.presence.lock().unwrap_or_else(|e| e.into_inner());
        presence
            .iter()
            .filter(|(_, (_, at))| at.elapsed() < PRESENCE_LAPSE)
            .map(|(replica, _)| replica.clone())
            .collect()
    }

    /// Says which agents have streams open here (the hub calls it when that changes).
    pub fn set_local_agents(&self, agents: HashSet<String>) {
        *self.local_agents.lock().unwrap_or_else(|e| e.into_inner()) = agents;
        self.presence_changed.notify_one();
    }

    /// Says this replica is leaving: no streams here any more.
    pub async fn leave(&self) {
        let subject = format!("{}.presence", self.prefix);
        let payload = self.wrap(&subject, &Message::Presence { agents: Vec::new() });
        let _ = self.client.publish(subject, payload).await;
        let _ = self.client.flush().await;
    }

    pub(super) fn heard_presence(&self, message: &async_nats::Message) {
        let Ok(Envelope {
            from,
            message: Message::Presence { agents },
            ..
        }) = self.unwrap(&message.subject, &message.payload)
        else {
            return;
        };
        if from == self.replica {
            return;
        }
        self.presence
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(from, (agents.into_iter().collect(), Instant::now()));
    }

    pub(super) async fn announce_presence(self: Arc<Self>) {
        let subject = format!("{}.presence", self.prefix);
        loop {
            let agents: Vec<String> = self
                .local_agents
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .cloned()
                .collect();
            let payload = self.wrap(&subject, &Message::Presence { agents });
            if self.client.publish(subject.clone(), payload).await.is_err() {
                self.error();
            }
            tokio::select! {
                _ = self.shutdown.cancelled() => return,
                _ = tokio::time::sleep(PRESENCE_EVERY) => {}
                _ = self.presence_changed.notified() => {}
            }
        }
    }
}
