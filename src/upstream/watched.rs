//! A transport wrapper that reports when the connection ends, so the supervisor learns of a dead
//! server the moment its stream closes rather than on the next call, and that hands every
//! notification on in the order it arrived (rmcp handles each in a task of its own).

use std::future::Future;

use rmcp::RoleClient;
use rmcp::model::JsonRpcMessage;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::notify::Note;

pub struct Watched<T> {
    inner: T,
    /// Fired when the stream ends or the transport starts closing.
    lost: CancellationToken,
    /// Fired once the inner transport has closed.
    closed: CancellationToken,
    /// Every notification the server sends, as JSON (`method`, `params`), in order.
    notifications: UnboundedSender<Note>,
}

impl<T> Watched<T> {
    pub fn new(
        inner: T,
        lost: CancellationToken,
        closed: CancellationToken,
        notifications: UnboundedSender<Note>,
    ) -> Self {
        Self {
            inner,
            lost,
            closed,
            notifications,
        }
    }
}

impl<T> Drop for Watched<T> {
    fn drop(&mut self) {
        self.lost.cancel();
        self.closed.cancel();
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Watched<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        let lost = self.lost.clone();
        let notifications = self.notifications.clone();
        let next = self.inner.receive();
        async move {
            let message = next.await;
            match &message {
                None => lost.cancel(),
                Some(JsonRpcMessage::Notification(n)) => {
                    if let Ok(value) = serde_json::to_value(&n.notification) {
                        let _ = notifications.send(Note::Notified(value));
                    }
                }
                Some(_) => {}
            }
            message
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.lost.cancel();
        let result = self.inner.close().await;
        self.closed.cancel();
        result
    }
}
