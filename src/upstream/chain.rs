//! How a bridge recognises itself, and bounds chains of bridges, on any transport. The
//! `mcp-bridge-hop` header only marks HTTP requests; a stdio proxy of a bridge's `/mcp`
//! (`mcp-remote http://…/mcp`, which a Claude Desktop import brings in) does not forward it, and
//! the bridge registered through one would re-enter its own merged listings without end. So the
//! bridge's own initialize result (and 2026-07-28 `server/discover` result) carries, under
//! `capabilities.experimental["mcp-bridge"]`, its instance id, its depth (1 + the largest depth
//! among its upstream bridges) and the instance ids of the bridges below it. A proxy passes the
//! result through as it is; the connecting bridge refuses a server whose chain holds its own
//! instance id, or whose depth would take the chain past [`MAX_DEPTH`].

use rmcp::model::{JsonObject, ServerCapabilities};
use serde::{Deserialize, Serialize};

/// The key under `capabilities.experimental`.
pub const KEY: &str = "mcp-bridge";

/// The most bridges one chain may hold, this one included: a server that advertises a depth of
/// `MAX_DEPTH` or more is refused.
pub const MAX_DEPTH: u32 = 4;

/// At most this many instance ids are advertised below a bridge (a wide tree of bridges is not
/// a loop; the ids are there to catch one).
const MAX_BELOW: usize = 64;

/// What a bridge advertises of itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chain {
    /// The bridge's instance id (random per start; the value of its hop header).
    pub instance: String,
    /// 1 + the largest depth among its upstream bridges (1 when it has none).
    pub depth: u32,
    /// The instance ids of the bridges it reaches through its upstreams, at any depth.
    #[serde(default)]
    pub below: Vec<String>,
}

impl Chain {
    /// The chain a server advertises, if it is a bridge.
    pub fn of(capabilities: &ServerCapabilities) -> Option<Chain> {
        let mark = capabilities.experimental.as_ref()?.get(KEY)?;
        serde_json::from_value(serde_json::Value::Object(mark.clone())).ok()
    }

    /// This bridge's chain, given those its upstream bridges advertised.
    pub fn of_this_bridge(upstreams: impl IntoIterator<Item = Chain>) -> Chain {
        let mut chain = Chain {
            instance: crate::guard::instance_id().to_owned(),
            depth: 1,
            below: Vec::new(),
        };
        for upstream in upstreams {
            chain.depth = chain.depth.max(upstream.depth.saturating_add(1));
            for id in std::iter::once(upstream.instance).chain(upstream.below) {
                if chain.below.len() < MAX_BELOW && !chain.below.contains(&id) {
                    chain.below.push(id);
                }
            }
        }
        chain
    }

    /// `capabilities` with this chain advertised in them.
    pub fn advertise(&self, capabilities: &mut ServerCapabilities) {
        let serde_json::Value::Object(mark) = serde_json::json!(self) else {
            return;
        };
        let mark: JsonObject = mark;
        capabilities
            .experimental
            .get_or_insert_default()
            .insert(KEY.to_owned(), mark);
    }

    /// Why this bridge refuses a server advertising this chain, if it does.
    pub fn refusal(&self) -> Option<String> {
        let own = crate::guard::instance_id();
        if self.instance == own {
            return Some(format!(
                "the server is this mcp-bridge itself (its instance id {own} is in the server's \
                 initialize result: its /mcp reached through a proxy such as mcp-remote): a bridge \
                 cannot be its own upstream, its merged listings would call themselves"
            ));
        }
        if self.below.iter().any(|id| id == own) {
            return Some(format!(
                "the server is an mcp-bridge (instance {}) that already reaches this bridge \
                 through its own upstreams: registering it would close a loop of bridges",
                self.instance
            ));
        }
        if self.depth >= MAX_DEPTH {
            return Some(format!(
                "the server is an mcp-bridge (instance {}) at the head of a chain of {} bridges: \
                 with this one the chain would be {}, more than the {MAX_DEPTH} a chain may hold",
                self.instance,
                self.depth,
                self.depth.saturating_add(1)
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(instance: &str, depth: u32, below: &[&str]) -> Chain {
        Chain {
            instance: instance.into(),
            depth,
            below: below.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn a_bridge_advertises_its_depth_and_what_it_reaches() {
        let alone = Chain::of_this_bridge([]);
        assert_eq!(
            (alone.instance.as_str(), alone.depth, alone.below.len()),
            (crate::guard::instance_id(), 1, 0)
        );
        let over = Chain::of_this_bridge([chain("b", 1, &[]), chain("c", 2, &["d", "b"])]);
        assert_eq!(over.depth, 3);
        assert_eq!(over.below, ["b", "c", "d"]);
        // It survives the round trip through capabilities (what a proxy passes on).
        let mut capabilities = ServerCapabilities::default();
        over.advertise(&mut capabilities);
        let text = serde_json::to_string(&capabilities).unwrap();
        let back: ServerCapabilities = serde_json::from_str(&text).unwrap();
        assert_eq!(Chain::of(&back), Some(over));
        assert_eq!(Chain::of(&ServerCapabilities::default()), None);
    }

    #[test]
    fn itself_a_loop_and_a_long_chain_are_refused() {
        let own = crate::guard::instance_id();
        assert!(
            chain(own, 1, &[])
                .refusal()
                .unwrap()
                .contains("this mcp-bridge itself")
        );
        assert!(
            chain("b", 2, &["c", own])
                .refusal()
                .unwrap()
                .contains("close a loop")
        );
        assert_eq!(chain("b", MAX_DEPTH - 1, &["c"]).refusal(), None);
        let long = chain("b", MAX_DEPTH, &[]).refusal().unwrap();
        assert!(long.contains("more than the 4"), "{long}");
    }
}
