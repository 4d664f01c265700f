//! What replicas say to each other on core NATS: requests and their replies, announcements and
//! `/mcp` notices, and the subscriptions that take in what other replicas send this one.

use std::sync::{Arc, Weak};
use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;

use super::traced;
use super::{
    Announcement, Applier, Bus, BusError, Envelope, Message, Notice, Peer, RelayOutcome,
    RemoteError, Request, subject_token,
};
use crate::a2e::ErrorCode;

impl Bus {
    /// Runs a request over NATS unless the connection is (or goes) away first: what waits for
    /// another replica fails fast rather than for its whole timeout.
    pub(super) async fn until_disconnected<T>(
        &self,
        request: impl std::future::Future<Output = Result<T, async_nats::RequestError>>,
    ) -> Result<T, async_nats::RequestError> {
        let gone = async {
            loop {
                if !self.connected() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        };
        tokio::select! {
            done = request => done,
            _ = gone => Err(async_nats::RequestError::with_source(
                async_nats::RequestErrorKind::Other,
                "the connection to NATS is lost",
            )),
        }
    }

    /// Hands `/mcp` notices to every replica's `/mcp` clients.
    pub fn mcp_notice(&self, notice: &Notice) {
        let subject = format!("{}.mcp", self.prefix);
        self.publish(subject, &Message::Notice(notice.clone()));
    }

    /// Publishes a message on core NATS, in the background (nothing waits for it).
    fn publish(&self, subject: String, message: &Message) {
        let payload = self.wrap(&subject, message);
        let client = self.client.clone();
        tokio::spawn(async move {
            let _ = client.publish(subject, payload).await;
        });
    }

    /// Installs what serves requests and announcements from other replicas.
    pub fn serve(&self, peer: Weak<dyn Peer>) {
        *self.peer.lock().unwrap_or_else(|e| e.into_inner()) = Some(peer);
    }

    fn peer(&self) -> Option<Arc<dyn Peer>> {
        self.peer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(Weak::upgrade)
    }

    /// Sends `request` to `replica` and waits for its answer, `within` at most: the answer's
    /// JSON, or [`BusError::Remote`] when it failed there. In a client span, its trace in the
    /// message's headers, when spans are exported (`traced.rs`).
    pub async fn request(
        &self,
        replica: &str,
        request: Request,
        within: Duration,
    ) -> Result<Value, BusError> {
        let subject = format!("{}.rpc.{}", self.prefix, subject_token(replica));
        let Some(span) = traced::sending(&request, &subject, replica) else {
            return self.send_request(replica, subject, request, within).await;
        };
        use tracing::Instrument as _;
        // Boxed, as the other rare paths: a call's future is moved whole at every layer.
        let sent = self.send_request(replica, subject, request, within);
        let answer = Box::pin(sent.instrument(span.clone())).await;
        if let Err(error) = &answer {
            traced::failed(&span, error);
        }
        answer
    }

    /// [`Bus::request`]'s work, on `subject`.
    async fn send_request(
        &self,
        replica: &str,
        subject: String,
        request: Request,
        within: Duration,
    ) -> Result<Value, BusError> {
        let payload = self.wrap(&subject, &Message::Request(request));
        let mut request = async_nats::Request::new()
            .payload(payload)
            .timeout(Some(within));
        if let Some(headers) = traced::headers() {
            request = request.headers(headers);
        }
        let reply = self
            .until_disconnected(self.client.send_request(subject, request))
            .await
            .map_err(|e| {
                self.error();
                BusError::Relay(replica.to_owned(), e.to_string())
            })?;
        match self.unwrap(&reply.subject, &reply.payload) {
            Ok(Envelope {
                message: Message::Reply(answer),
                ..
            }) => Ok(answer?),
            Ok(_) => Err(BusError::Relay(
                replica.to_owned(),
                "it answered something else".into(),
            )),
            Err(refused) => Err(BusError::Relay(replica.to_owned(), refused.to_string())),
        }
    }

    /// Whether `replica` is there, asked directly (a lapsed presence can be a busy replica or
    /// a late message): `Some(true)` if it answered, `Some(false)` if nobody listens for it on
    /// NATS (its connection is gone), `None` if neither is known within `within`.
    pub async fn probe(&self, replica: &str, within: Duration) -> Option<bool> {
        let subject = format!("{}.rpc.{}", self.prefix, subject_token(replica));
        let payload = self.wrap(&subject, &Message::Request(Request::Ping));
        let request = async_nats::Request::new()
            .payload(payload)
            .timeout(Some(within));
        match self
            .until_disconnected(self.client.send_request(subject, request))
            .await
        {
            // Only a reply sealed with the bus key counts: anyone allowed to subscribe on the
            // subject could answer for a dead replica and hold its servers from a takeover.
            Ok(reply) => match self.unwrap(&reply.subject, &reply.payload) {
                Ok(Envelope {
                    message: Message::Reply(_),
                    ..
                }) => Some(true),
                _ => None,
            },
            Err(e) if e.kind() == async_nats::RequestErrorKind::NoResponders => Some(false),
            Err(_) => None,
        }
    }

    /// Tells every other replica what happened here.
    pub fn announce(&self, announcement: Announcement) {
        let subject = format!("{}.announce", self.prefix);
        self.publish(subject, &Message::Announce(announcement));
    }

    /// Subscribes to what other replicas send this one: presence, relayed answers, `/mcp`
    /// notices and requests.
    pub(super) async fn listen(
        self: Arc<Self>,
        applier: std::sync::Weak<dyn Applier>,
    ) -> Result<(), BusError> {
        let subscribe = |subject: String| {
            let client = self.client.clone();
            async move {
                client
                    .subscribe(subject)
                    .await
                    .map_err(|e| BusError::JetStream(e.to_string()))
            }
        };
        let me = subject_token(&self.replica);
        let mut presence = subscribe(format!("{}.presence", self.prefix)).await?;
        let mut answers = subscribe(format!("{}.answer.{me}", self.prefix)).await?;
        let mut notices = subscribe(format!("{}.mcp", self.prefix)).await?;
        let mut requests = subscribe(format!("{}.rpc.{me}", self.prefix)).await?;
        let mut announcements = subscribe(format!("{}.announce", self.prefix)).await?;
        let bus = self.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = bus.shutdown.cancelled() => return,
                    Some(message) = presence.next() => bus.heard_presence(&message),
                    Some(message) = notices.next() => {
                        if let (Ok(Envelope { message: Message::Notice(notice), .. }), Some(applier)) =
                            (bus.unwrap(&message.subject, &message.payload), applier.upgrade())
                        {
                            applier.mcp_notice(notice);
                        }
                    }
                    Some(message) = answers.next() => {
                        let outcome = match (bus.unwrap(&message.subject, &message.payload), applier.upgrade()) {
                            (Ok(Envelope { message: Message::Answer(answer), .. }), Some(applier)) => {
                                applier.relayed_answer(answer)
                            }
                            _ => RelayOutcome::NotFound,
                        };
                        // Not awaited here: a slow publish (NATS busy or away) must not hold up
                        // presence, notices and requests behind it.
                        if let Some(reply) = message.reply {
                            let payload = bus.wrap(&reply, &Message::Relayed(outcome));
                            let client = bus.client.clone();
                            tokio::spawn(async move {
                                let _ = client.publish(reply, payload).await;
                            });
                        }
                    }
                    Some(message) = requests.next() => {
                        tokio::spawn(bus.clone().serve_request(message));
                    }
                    Some(message) = announcements.next() => {
                        match (bus.unwrap(&message.subject, &message.payload), bus.peer()) {
                            (Ok(Envelope { from, message: Message::Announce(announcement), .. }), Some(peer))
                                if from != bus.replica =>
                            {
                                tokio::spawn(peer.announced(from, announcement));
                            }
                            _ => {}
                        }
                    }
                    else => return,
                }
            }
        });
        Ok(())
    }

    /// Serves a request from another replica and replies with what it came to (a typed error
    /// for a request this replica refuses).
    async fn serve_request(self: Arc<Self>, message: async_nats::Message) {
        let answer = match self.unwrap(&message.subject, &message.payload) {
            Ok(Envelope {
                message: Message::Request(Request::Ping),
                ..
            }) => Ok(Value::Null),
            Ok(Envelope {
                from,
                message: Message::Request(request),
                ..
            }) => match self.peer() {
                Some(peer) => {
                    let headers = message.headers.as_ref();
                    match traced::serving(&request, &message.subject, &from, headers) {
                        None => peer.request(from, request).await,
                        Some(span) => {
                            use tracing::Instrument as _;
                            let answer = peer.request(from, request).instrument(span.clone()).await;
                            if let Err(error) = &answer {
                                traced::failed_there(&span, error);
                            }
                            answer
                        }
                    }
                }
                None => Err(RemoteError::new(
                    ErrorCode::McpServerUnavailable,
                    format!(
                        "replica \"{}\" serves no requests yet; try again",
                        self.replica
                    ),
                )),
            },
            Ok(_) => Err(RemoteError::new(
                ErrorCode::InvalidRequest,
                "not a request between replicas",
            )),
            Err(refused) => Err(RemoteError::new(
                ErrorCode::McpServerUnavailable,
                refused.to_string(),
            )),
        };
        if let Some(reply) = message.reply {
            let payload = self.wrap(&reply, &Message::Reply(answer));
            let _ = self.client.publish(reply, payload).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2e::ErrorCode;
    use crate::hub::bus::protocol::{self, Envelope};
    use crate::hub::bus::testing::*;
    use crate::hub::bus::{BusKey, now_ms};

    #[tokio::test]
    async fn a_request_of_an_unknown_version_gets_a_typed_refusal() {
        let Some(replicas) = Replicas::new() else {
            return;
        };
        let a = replicas.hub("a").await;
        let client = async_nats::connect(&replicas.url).await.unwrap();
        let request = serde_json::json!({"v": protocol::VERSION + 1, "from": "z", "id": "m",
            "at": now_ms(), "message": {"type": "request", "body": {"op": "reconnect", "server_id": "s"}}});
        let key = BusKey::derive(&TEST_KEY);
        let subject = format!("{}.rpc.a", replicas.prefix);
        let version = protocol::VERSION as u8 + 1;
        let sealed = key.seal(version, &subject, &serde_json::to_vec(&request).unwrap());
        let reply = client.request(subject, sealed.into()).await.unwrap();
        let (_, plain) = key.open(&reply.subject, &reply.payload).unwrap();
        let Ok(Envelope {
            message: Message::Reply(Err(refused)),
            ..
        }) = protocol::decode(&plain)
        else {
            panic!("a typed refusal, not {:?}", reply.payload);
        };
        assert_eq!(refused.code, ErrorCode::McpServerUnavailable);
        assert!(refused.message.contains("\"z\""), "{}", refused.message);
        assert_eq!(a.bus().unwrap().refused(), 1);
    }
}
