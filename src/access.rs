//! Who sees what: per-agent access policies, toolsets and tool search (issue 19).

pub mod search;
