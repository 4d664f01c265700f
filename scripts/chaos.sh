#!/usr/bin/env bash
# The long chaos run (issue 35, item 5): tests/api/chaos.rs with repeated rounds of faults under
# load (kill -9 of the holder and of the event stream's replica, NATS restarted, PostgreSQL
# restarted, a replica cut off from NATS), three replicas behind HAProxy, printing the ledger's
# figures: calls by kind and outcome, and per fault the calls in flight lost, the failures and the
# time to recover. Needs the machine's PostgreSQL and NATS (as scripts/test.sh starts them): the
# test makes its own of both and only names these to know the PostgreSQL+NATS pass is wanted.
#   CHAOS_ROUNDS=10         rounds of the four faults (default 5)
#   CHAOS_STEADY_MS=3000    load with no fault between faults (default 3000)
#   CHAOS_OUTAGE_MS=3000    how long a dead replica, NATS, PostgreSQL or the cut lasts (default 3000)
#   CHAOS_FAULTS=kill,nats  a subset of kill,nats,postgres,cut (default all)
#   CHAOS_SESSIONS=0        leave out the agents on /mcp sessions (2025-11-25)
#   CHAOS_VERBOSE=1         every failed call, with the replica that answered
#   CHAOS_RELEASE=1         the release build of the replicas (cargo test --release)
# The ledger (every fault, then every call: id, kind, the replica that answered, times in ms,
# outcome, retryable, detail) goes to target/chaos/ledger.jsonl as JSON lines.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/peers.sh >/dev/null
export MCP_BRIDGE_TEST_POSTGRES=${MCP_BRIDGE_TEST_POSTGRES:-postgres://postgres@127.0.0.1:5432}
export MCP_BRIDGE_TEST_NATS=${MCP_BRIDGE_TEST_NATS:-nats://127.0.0.1:4222}
export MCP_BRIDGE_TEST_RUN=${MCP_BRIDGE_TEST_RUN:-chaos$$}
export MCP_BRIDGE_CHAOS_ROUNDS=${CHAOS_ROUNDS:-5}
export MCP_BRIDGE_CHAOS_STEADY_MS=${CHAOS_STEADY_MS:-3000}
export MCP_BRIDGE_CHAOS_OUTAGE_MS=${CHAOS_OUTAGE_MS:-3000}
export MCP_BRIDGE_CHAOS_SESSIONS=${CHAOS_SESSIONS:-1}
export MCP_BRIDGE_CHAOS_VERBOSE=${CHAOS_VERBOSE:-0}
mkdir -p target/chaos
export MCP_BRIDGE_CHAOS_LEDGER=$PWD/target/chaos/ledger.jsonl
if [ -n "${CHAOS_FAULTS:-}" ]; then
  export MCP_BRIDGE_CHAOS_FAULTS=$CHAOS_FAULTS
fi
export RUST_BACKTRACE=0
release=()
if [ "${CHAOS_RELEASE:-0}" = 1 ]; then
  release=(--release)
fi
started=$SECONDS
cargo test --locked "${release[@]}" --test api -- chaos:: --nocapture --test-threads=1
echo "(the chaos run took $((SECONDS - started)) s)"
