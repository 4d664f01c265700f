//! The descriptor limit against the connection cap, checked at start: every client connection,
//! upstream socket, store file and stdio child's pipe is a descriptor, and a process out of
//! them fails to accept (or to connect, or to open the store) rather than waiting its turn.

/// Descriptors kept aside for what is not a client connection: the store, the listener, logs,
/// and some upstream connections and stdio children's pipes before any server is counted.
pub const RESERVED: u64 = 1024;
/// Descriptors a server may hold: a connection or two to it, or a stdio child's three pipes.
pub const PER_SERVER: u64 = 3;

/// What the process can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fit {
    /// The soft limit in force (after raising it), and the hard one.
    pub soft: u64,
    pub hard: u64,
    /// The soft limit before it was raised, when it was.
    pub raised_from: Option<u64>,
}

impl Fit {
    /// The descriptors `max_connections` client connections and `servers` servers need.
    pub fn needed(max_connections: usize, servers: usize) -> u64 {
        (max_connections as u64)
            .saturating_add(RESERVED)
            .saturating_add((servers as u64).saturating_mul(PER_SERVER))
    }

    /// Client connections the limit leaves room for, next to `servers` servers.
    pub fn connections(&self, servers: usize) -> u64 {
        self.soft
            .saturating_sub(RESERVED)
            .saturating_sub((servers as u64).saturating_mul(PER_SERVER))
    }

    /// Whether the limit holds `max_connections` client connections next to `servers` servers.
    pub fn holds(&self, max_connections: usize, servers: usize) -> bool {
        self.soft >= Self::needed(max_connections, servers)
    }
}

/// Reads RLIMIT_NOFILE and raises the soft limit to the hard one when lower (any process may).
pub fn raise() -> Fit {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    // `None`: unlimited.
    let (soft, hard) = (
        limit.current.unwrap_or(u64::MAX),
        limit.maximum.unwrap_or(u64::MAX),
    );
    if soft >= hard {
        return Fit {
            soft,
            hard,
            raised_from: None,
        };
    }
    let raised = Rlimit {
        current: limit.maximum,
        maximum: limit.maximum,
    };
    match setrlimit(Resource::Nofile, raised) {
        Ok(()) => Fit {
            soft: hard,
            hard,
            raised_from: Some(soft),
        },
        // An unlimited hard limit cannot be the soft one (it is capped by `nr_open`).
        Err(_) => Fit {
            soft,
            hard,
            raised_from: None,
        },
    }
}

/// Says at start what the process can hold: one info line, and a warning with the way out
/// when the limit cannot hold `max_connections` (with `servers` servers, 0 before they are
/// counted).
pub fn report(fit: Fit, max_connections: usize, servers: usize) {
    if fit.holds(max_connections, servers) {
        tracing::info!(
            descriptor_limit = fit.soft,
            raised_from = fit.raised_from,
            servers,
            "accepting up to {max_connections} connections; descriptor limit {}",
            fit.soft
        );
    } else {
        let room = fit.connections(servers);
        let needed = Fit::needed(max_connections, servers);
        tracing::warn!(
            descriptor_limit = fit.soft,
            hard_limit = fit.hard,
            servers,
            "accepting up to {max_connections} connections, but the descriptor limit {} holds \
             about {room} next to {servers} servers: past that, connections fail. Raise the \
             limit to {needed} or more (`ulimit -n`, systemd `LimitNOFILE=`, docker \
             `--ulimit nofile=`), or lower MCP_BRIDGE_MAX_CONNECTIONS to {room}",
            fit.soft
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fit(soft: u64) -> Fit {
        Fit {
            soft,
            hard: soft,
            raised_from: None,
        }
    }

    #[test]
    fn the_default_cap_needs_room_beyond_itself() {
        // 10,000 connections in 10,240 descriptors: the cap itself fits, the rest does not.
        assert!(!fit(10_240).holds(10_000, 0));
        assert!(fit(11_024).holds(10_000, 0));
        assert!(fit(1_048_576).holds(10_000, 1_000));
    }

    #[test]
    fn servers_take_their_share() {
        assert_eq!(Fit::needed(10_000, 1_000), 10_000 + RESERVED + 3_000);
        assert!(!fit(12_000).holds(10_000, 1_000));
        assert_eq!(fit(12_000).connections(1_000), 12_000 - RESERVED - 3_000);
        assert_eq!(fit(100).connections(1_000), 0);
    }

    #[test]
    fn the_soft_limit_is_raised_to_the_hard_one() {
        let fit = raise();
        if fit.raised_from.is_some() {
            assert_eq!(fit.soft, fit.hard);
        }
        let now = rustix::process::getrlimit(rustix::process::Resource::Nofile);
        assert_eq!(now.current.unwrap_or(u64::MAX), fit.soft);
    }
}
