//! Across replicas, the sending side: what needs a server's connection is forwarded to the
//! replica holding it (calls, listings, any other request), and a call dropped before its answer
//! is cancelled there.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::{Cluster, Op};
use crate::a2e::ErrorCode;
use crate::hub::bus::{BusError, Listing, RemoteError, Request};
use crate::registry::{Error, Registry};

/// How long another replica may take to say whether it cancelled a call.
const CANCEL_ASK_BOUND: Duration = Duration::from_secs(2);

/// How much longer than the work itself a forwarded request may take.
const FORWARD_MARGIN: Duration = Duration::from_secs(5);

/// Asks the holder of a forwarded call to drop it, unless the answer came first.
struct CancelRemote {
    cluster: Arc<Cluster>,
    holder: String,
    /// `None` once answered.
    call_key: Option<String>,
    /// The forwarded call's span, when spans are exported: the cancel is in its trace.
    trace: Option<tracing::Span>,
}

impl Drop for CancelRemote {
    fn drop(&mut self) {
        let Some(call_key) = self.call_key.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (bus, holder) = (self.cluster.bus.clone(), self.holder.clone());
        let cancel = async move {
            let cancel = Request::CancelForwarded { call_key };
            if let Err(error) = bus.request(&holder, cancel, FORWARD_MARGIN).await {
                tracing::warn!(%holder, %error, "cannot cancel a call forwarded to another replica");
            }
        };
        match self.trace.take() {
            None => runtime.spawn(cancel),
            Some(span) => {
                use tracing::Instrument as _;
                runtime.spawn(cancel.instrument(span))
            }
        };
    }
}

impl Registry {
    /// Across replicas: a page of a server's own listing, from the replica holding it. A
    /// listing is safe to repeat: it survives the holder's death as a read does (`relay`).
    pub(in crate::registry) async fn forward_list<T: DeserializeOwned>(
        &self,
        holder: &str,
        what: Listing,
        server_id: String,
        cursor: Option<String>,
        timeout: Duration,
    ) -> Result<(Vec<T>, Option<String>), Error> {
        let op = Request::List {
            what,
            server_id: server_id.clone(),
            cursor: cursor.clone(),
        };
        let Ok(entry) = self.get(&server_id) else {
            return self.forward(holder, op, timeout).await;
        };
        match self
            .relay_within(&entry, holder.to_owned(), timeout, op)
            .await
        {
            crate::registry::relay::Relayed::Done(answer) => answer,
            // This replica took the server over meanwhile: listed here.
            crate::registry::relay::Relayed::HereNow => {
                let listed = self.list_here(&entry, what, cursor).await?;
                serde_json::from_value(listed)
                    .map_err(|e| Error::Internal(format!("a listing: {e}")))
            }
        }
    }

    /// Across replicas: calls a tool on the replica holding its server. Dropped before the
    /// answer (the caller cancelled or went away), it asks the holder to drop the call too,
    /// which tells the server.
    pub(in crate::registry) async fn forward_call(
        &self,
        holder: &str,
        name: String,
        arguments: Map<String, Value>,
        timeout: Option<f64>,
        origin: &crate::upstream::CallOrigin,
        within: Duration,
    ) -> Result<(String, rmcp::model::CallToolResult), Error> {
        let call_key = crate::a2e::new_id();
        let lent = self.hub.lend(&call_key, origin);
        let op = Request::CallTool {
            name,
            arguments,
            timeout,
            agent: origin.agent_id().to_owned(),
            req_id: origin.call_id().unwrap_or_default(),
            call_key: call_key.clone(),
            caller: lent.as_ref().map(|lent| lent.replica().to_owned()),
        };
        let guard = self.cluster.clone().map(|cluster| CancelRemote {
            cluster,
            holder: holder.to_owned(),
            call_key: Some(call_key),
            trace: crate::telemetry::exporting().then(tracing::Span::current),
        });
        let answer = self.forward(holder, op, within).await;
        if let Some(mut guard) = guard {
            guard.call_key = None;
        }
        drop(lent);
        answer
    }

    /// Across replicas: forwards `op` to `holder` and decodes its answer.
    pub(in crate::registry) async fn forward<T: DeserializeOwned>(
        &self,
        holder: &str,
        op: Op,
        within: Duration,
    ) -> Result<T, Error> {
        let Some(cluster) = &self.cluster else {
            return Err(Error::Internal("no other replica to forward to".into()));
        };
        cluster.forwarded.fetch_add(1, Ordering::Relaxed);
        let answer = cluster
            .bus
            .request(holder, op, within + FORWARD_MARGIN)
            .await
            .map_err(|e| match e {
                BusError::Remote(RemoteError { code, message }) => Error::Remote(code, message),
                e => Error::Remote(
                    ErrorCode::McpServerUnavailable,
                    format!("the replica holding the server did not answer ({e}); try again"),
                ),
            })?;
        serde_json::from_value(answer)
            .map_err(|e| Error::Internal(format!("a forwarded answer: {e}")))
    }

    /// Cancels `agent`'s call `id` in flight here or, failing that, on another replica (the
    /// agent's request may be open on any); whether one was.
    pub async fn cancel_call(&self, agent: &str, id: &str) -> bool {
        if self.in_flight.cancel(agent, id) {
            return true;
        }
        let Some(cluster) = &self.cluster else {
            return false;
        };
        let asked = cluster.bus.others().into_iter().map(|replica| {
            let cancel = Request::CancelInFlight {
                agent: agent.to_owned(),
                id: id.to_owned(),
            };
            async move {
                let answer = cluster
                    .bus
                    .request(&replica, cancel, CANCEL_ASK_BOUND)
                    .await;
                matches!(answer, Ok(Value::Bool(true)))
            }
        });
        futures::future::join_all(asked)
            .await
            .into_iter()
            .any(|cancelled| cancelled)
    }
}
