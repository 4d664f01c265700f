//! One list across many servers, in pages: servers are walked in id order, each through its own
//! upstream cursors. A cursor names the server, its upstream cursor and how many entries of that
//! upstream page were already given out, so no entry is repeated or skipped; a server that joins
//! or leaves between pages only changes whether its own entries appear. The servers are asked at
//! once, under one bound for the whole page.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use futures::stream::FuturesOrdered;
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use super::{Error, ServerEntry};
use crate::a2e::SkippedServer;
use crate::upstream::{CallError, Connection};

/// Most upstream pages read from one server for one page of ours.
const MAX_UPSTREAM_PAGES: usize = 100;

/// Where the next page starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cursor {
    #[serde(rename = "s")]
    pub server_id: String,
    #[serde(rename = "c", default, skip_serializing_if = "Option::is_none")]
    pub upstream: Option<String>,
    #[serde(rename = "k", default)]
    pub skip: usize,
}

impl Cursor {
    pub fn encode(&self) -> String {
        hex::encode(serde_json::to_vec(self).unwrap_or_default())
    }

    pub fn decode(text: &str) -> Result<Option<Self>, Error> {
        if text.is_empty() {
            return Ok(None);
        }
        let invalid = || {
            Error::Invalid(format!(
                "`cursor` \"{text}\" is not a cursor this service gave out"
            ))
        };
        let bytes = hex::decode(text).map_err(|_| invalid())?;
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|_| invalid())
    }
}

/// Which of a server's listings another replica is asked for (part of the replica protocol).
pub use crate::hub::bus::Listing;

/// How a listing reaches a server: its connection on this replica, or the replica holding it.
#[derive(Clone)]
pub enum Reach {
    Here(Arc<Connection>),
    Holder(String),
}

pub type Source = (Arc<ServerEntry>, Reach);

/// One page of a merged listing.
#[derive(Debug)]
pub struct MergedPage<T> {
    /// Entries, each with the id of its server.
    pub items: Vec<(String, T)>,
    /// The cursor of the next page; empty on the last.
    pub next: String,
    /// Servers left out of this page (too slow or failed), in id order.
    pub skipped: Vec<SkippedServer>,
}

/// A page of a merged listing as the API shows it.
#[derive(Debug)]
pub struct Listed<T> {
    pub items: Vec<T>,
    /// The cursor of the next page; empty on the last.
    pub next: String,
    pub skipped: Vec<SkippedServer>,
}

impl<T> MergedPage<T> {
    /// The page as the API shows it, each entry made by `model` from its server's id and itself.
    pub fn listed<U>(self, model: impl Fn(String, T) -> U) -> Listed<U> {
        Listed {
            items: self
                .items
                .into_iter()
                .map(|(server_id, item)| model(server_id, item))
                .collect(),
            next: self.next,
            skipped: self.skipped,
        }
    }
}

/// An entry with where it stands in its server's listing (for the cursor that starts at it).
struct Placed<T> {
    upstream: Option<String>,
    index: usize,
    item: T,
}

/// The shape of one merged page: how many entries, whether the one server asked for fails it
/// (`strict`), and the bound on the whole page (`MCP_BRIDGE_LIST_TIMEOUT`).
#[derive(Debug, Clone, Copy)]
pub struct PageSpec {
    pub size: usize,
    pub strict: bool,
    pub within: Duration,
}

/// How a listing reads one server: `here` through its connection on this replica, `remote`
/// through the replica holding it (holder, server id, upstream cursor, timeout); `keep` says
/// which entries its allow list lets through.
pub struct Readers<F, R, K> {
    pub here: F,
    pub remote: R,
    pub keep: K,
}

/// One page of entries and the cursor of the next page (empty on the last). The servers are
/// asked at once, and the whole page is bounded by `spec.within`: a server that has not
/// answered by then, or failed, is left out and named in `skipped` (one slow server holds no
/// listing, nor the caller's slot, for longer). Each server gives at most one page and one
/// entry more (for the next cursor); the walk stops, dropping the requests still out, as soon
/// as the page is full. `spec.strict`: one server was asked for, and its error or slowness
/// fails the page.
pub async fn page<T, F, Fut, R, RFut, K>(
    sources: &[Source],
    cursor: Option<Cursor>,
    spec: PageSpec,
    readers: Readers<F, R, K>,
) -> Result<MergedPage<T>, Error>
where
    F: Fn(Arc<Connection>, Option<String>, Duration) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>), CallError>>,
    R: Fn(String, String, Option<String>, Duration) -> RFut,
    RFut: Future<Output = Result<(Vec<T>, Option<String>), Error>>,
    K: Fn(&ServerEntry, &T) -> bool,
{
    let PageSpec {
        size: page_size,
        strict,
        within,
    } = spec;
    let deadline = Instant::now() + within;
    let mut walks: FuturesOrdered<_> = sources
        .iter()
        .filter_map(|(entry, reach)| {
            let start = match &cursor {
                Some(c) if c.server_id.as_str() > entry.id.as_str() => return None,
                Some(c) if c.server_id == entry.id => (c.upstream.clone(), c.skip),
                _ => (None, 0),
            };
            let bound = (deadline, within);
            let walk = walk(entry, reach, start, page_size + 1, bound, &readers);
            Some(async move { (entry, tokio::time::timeout_at(deadline, walk).await) })
        })
        .collect();
    let (mut items, mut skipped) = (Vec::new(), Vec::new());
    while let Some((entry, walked)) = walks.next().await {
        let error = match walked {
            Ok(Ok(placed)) => {
                for Placed {
                    upstream,
                    index,
                    item,
                } in placed
                {
                    if items.len() == page_size {
                        let next = Cursor {
                            server_id: entry.id.clone(),
                            upstream,
                            skip: index,
                        };
                        return Ok(MergedPage {
                            items,
                            next: next.encode(),
                            skipped,
                        });
                    }
                    items.push((entry.id.clone(), item));
                }
                continue;
            }
            Ok(Err(error)) => error,
            Err(_) => too_slow(entry, within),
        };
        if strict {
            return Err(error);
        }
        tracing::warn!(server_id = %entry.id, %error, "left out of a merged listing");
        skipped.push(SkippedServer {
            server_id: entry.id.clone(),
            reason: error.to_string(),
        });
    }
    Ok(MergedPage {
        items,
        next: String::new(),
        skipped,
    })
}

/// Up to `most` kept entries of one server from `start` on, following its upstream cursors.
async fn walk<T, F, Fut, R, RFut, K>(
    entry: &Arc<ServerEntry>,
    reach: &Reach,
    (mut upstream, mut skip): (Option<String>, usize),
    most: usize,
    (deadline, within): (Instant, Duration),
    readers: &Readers<F, R, K>,
) -> Result<Vec<Placed<T>>, Error>
where
    F: Fn(Arc<Connection>, Option<String>, Duration) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>), CallError>>,
    R: Fn(String, String, Option<String>, Duration) -> RFut,
    RFut: Future<Output = Result<(Vec<T>, Option<String>), Error>>,
    K: Fn(&ServerEntry, &T) -> bool,
{
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    loop {
        let own = Duration::from_secs(entry.config().timeout);
        let left = deadline.saturating_duration_since(Instant::now());
        let timeout = own.min(left);
        let (items, next) = match reach {
            Reach::Here(conn) => (readers.here)(conn.clone(), upstream.clone(), timeout)
                .await
                .map_err(|error| match error {
                    CallError::Timeout(_) if left < own => too_slow(entry, within),
                    error => Error::Upstream {
                        what: format!("listing on server \"{}\"", entry.id),
                        error,
                    },
                })?,
            Reach::Holder(holder) => {
                (readers.remote)(holder.clone(), entry.id.clone(), upstream.clone(), timeout)
                    .await?
            }
        };
        for (index, item) in items.into_iter().enumerate().skip(skip) {
            if out.len() == most {
                return Ok(out);
            }
            if (readers.keep)(entry, &item) {
                let upstream = upstream.clone();
                out.push(Placed {
                    upstream,
                    index,
                    item,
                });
            }
        }
        match next {
            // A server that hands back a cursor it gave before (or pages without end)
            // would loop forever: its listing stops there.
            Some(next) if seen.len() < MAX_UPSTREAM_PAGES && seen.insert(next.clone()) => {
                upstream = Some(next);
                skip = 0;
            }
            Some(_) => {
                tracing::warn!(server_id = %entry.id, "a listing that never ends was cut short");
                return Ok(out);
            }
            None => return Ok(out),
        }
    }
}

/// A server that did not answer within the listing's bound.
fn too_slow(entry: &ServerEntry, within: Duration) -> Error {
    Error::Upstream {
        what: format!(
            "listing on server \"{}\" (bounded by MCP_BRIDGE_LIST_TIMEOUT)",
            entry.id
        ),
        error: CallError::Timeout(within),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_refuse_garbage() {
        let cursor = Cursor {
            server_id: "fs".into(),
            upstream: Some("abc".into()),
            skip: 3,
        };
        assert_eq!(Cursor::decode(&cursor.encode()).unwrap(), Some(cursor));
        assert_eq!(Cursor::decode("").unwrap(), None);
        assert!(Cursor::decode("zz").is_err());
        assert!(Cursor::decode(&hex::encode("{}")).is_err());
    }
}
