//! Across replicas: the JSON-RPC id of every request a session's server sends its client names
//! the replica that sent it, `mcp-bridge:{replica}:{n}`, so that the client's answer, posted to
//! any replica, is relayed to the one whose request waits for it (answers.rs), and two replicas
//! asking in the same session never use the same id. rmcp numbers a session worker's requests
//! from 0 with a provider it does not let a server choose (`serve_server`), so the ids are
//! rewritten between the worker and its transport: a request's number is named on the way out
//! and a named answer is numbered again on the way in. One replica alone keeps rmcp's numbers.

use std::sync::Arc;

use futures::Stream;
use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, NumberOrString, RequestId, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};

use crate::hub::Hub;

const PREFIX: &str = "mcp-bridge:";

/// The replica that request id `id` names, if it names one.
pub fn replica_of(id: &serde_json::Value) -> Option<&str> {
    let (replica, n) = id.as_str()?.strip_prefix(PREFIX)?.rsplit_once(':')?;
    n.parse::<i64>().ok()?;
    Some(replica)
}

/// rmcp's local sessions, each worker's transport naming its requests after this replica.
pub struct NamedIds {
    pub inner: Arc<LocalSessionManager>,
    pub hub: Arc<Hub>,
}

impl NamedIds {
    fn named<T>(&self, transport: T) -> Named<T> {
        Named {
            inner: transport,
            prefix: self.hub.replica().map(|me| format!("{PREFIX}{me}:")),
        }
    }
}

impl SessionManager for NamedIds {
    type Error = <LocalSessionManager as SessionManager>::Error;
    type Transport = Named<<LocalSessionManager as SessionManager>::Transport>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.inner.create_session().await?;
        Ok((id, self.named(transport)))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        Ok(match self.inner.restore_session(id).await? {
            RestoreOutcome::Restored(transport) => RestoreOutcome::Restored(self.named(transport)),
            RestoreOutcome::AlreadyPresent => RestoreOutcome::AlreadyPresent,
            // NotSupported, and what rmcp may add.
            _ => RestoreOutcome::NotSupported,
        })
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}

/// A session worker's transport whose outgoing requests are named `{prefix}{n}` and whose
/// incoming answers so named are numbered `n` again.
pub struct Named<T> {
    inner: T,
    /// `mcp-bridge:{replica}:`; `None` without replicas.
    prefix: Option<String>,
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for Named<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        mut item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let (Some(prefix), ServerJsonRpcMessage::Request(request)) = (&self.prefix, &mut item)
            && let NumberOrString::Number(n) = request.id
        {
            request.id = NumberOrString::String(format!("{prefix}{n}").into());
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        let mut message = self.inner.receive().await?;
        if let Some(prefix) = &self.prefix {
            match &mut message {
                ClientJsonRpcMessage::Response(response) => numbered(prefix, &mut response.id),
                ClientJsonRpcMessage::Error(error) => {
                    if let Some(id) = &mut error.id {
                        numbered(prefix, id);
                    }
                }
                _ => {}
            }
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// Numbers `id` again when it is one of this replica's named ids.
fn numbered(prefix: &str, id: &mut RequestId) {
    if let NumberOrString::String(text) = id
        && let Some(n) = text.strip_prefix(prefix).and_then(|n| n.parse().ok())
    {
        *id = NumberOrString::Number(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_named_id_names_its_replica() {
        assert_eq!(replica_of(&json!("mcp-bridge:r:a:7")), Some("r:a"));
        assert_eq!(replica_of(&json!("mcp-bridge:a:x")), None);
        assert_eq!(replica_of(&json!(7)), None);
        assert_eq!(replica_of(&json!("other:a:7")), None);
        let mut id = NumberOrString::String("mcp-bridge:a:7".into());
        numbered("mcp-bridge:b:", &mut id);
        assert_eq!(id, NumberOrString::String("mcp-bridge:a:7".into()));
        numbered("mcp-bridge:a:", &mut id);
        assert_eq!(id, NumberOrString::Number(7));
    }
}
