//! One list across many servers, in pages: servers are walked in id order, each through its own
//! upstream cursors. A cursor names the server, its upstream cursor and how many entries of that
//! upstream page were already given out, so no entry is repeated or skipped; a server that joins
//! or leaves between pages only changes whether its own entries appear.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Error, ServerEntry};
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

/// A server to list from, with its live connection.
/// Which of a server's listings another replica is asked for.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Listing {
    Resources,
    Templates,
    Prompts,
}

/// How a listing reaches a server: its connection on this replica, or the replica holding it.
#[derive(Clone)]
pub enum Reach {
    Here(Arc<Connection>),
    Holder(String),
}

pub type Source = (Arc<ServerEntry>, Reach);

/// One page of entries, each with the id of its server, and the cursor of the next page (empty on
/// the last). `strict`: an upstream error fails the page (one server was asked for) rather than
/// leaving that server out.
#[allow(clippy::too_many_arguments)]
pub async fn page<T, F, Fut, R, RFut, K>(
    sources: &[Source],
    cursor: Option<Cursor>,
    page_size: usize,
    strict: bool,
    fetch: F,
    fetch_remote: R,
    keep: K,
) -> Result<(Vec<(String, T)>, String), Error>
where
    F: Fn(Arc<Connection>, Option<String>, Duration) -> Fut,
    Fut: Future<Output = Result<(Vec<T>, Option<String>), CallError>>,
    R: Fn(String, String, Option<String>, Duration) -> RFut,
    RFut: Future<Output = Result<(Vec<T>, Option<String>), Error>>,
    K: Fn(&ServerEntry, &T) -> bool,
{
    let mut out = Vec::new();
    for (entry, reach) in sources {
        let (mut upstream, mut skip) = match &cursor {
            Some(c) if c.server_id.as_str() > entry.id.as_str() => continue,
            Some(c) if c.server_id == entry.id => (c.upstream.clone(), c.skip),
            _ => (None, 0),
        };
        let timeout = Duration::from_secs(entry.config().timeout);
        let mut seen = std::collections::HashSet::new();
        loop {
            let listed = match reach {
                Reach::Here(conn) => fetch(conn.clone(), upstream.clone(), timeout)
                    .await
                    .map_err(|error| Error::Upstream {
                        what: format!("listing on server \"{}\"", entry.id),
                        error,
                    }),
                Reach::Holder(holder) => {
                    fetch_remote(holder.clone(), entry.id.clone(), upstream.clone(), timeout).await
                }
            };
            let (items, next) = match listed {
                Ok(listed) => listed,
                Err(error) if strict => return Err(error),
                Err(error) => {
                    tracing::warn!(server_id = %entry.id, %error, "left out of a merged listing");
                    break;
                }
            };
            for (index, item) in items.into_iter().enumerate().skip(skip) {
                if out.len() == page_size {
                    let next = Cursor {
                        server_id: entry.id.clone(),
                        upstream,
                        skip: index,
                    };
                    return Ok((out, next.encode()));
                }
                if keep(entry, &item) {
                    out.push((entry.id.clone(), item));
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
                    break;
                }
                None => break,
            }
        }
    }
    Ok((out, String::new()))
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
