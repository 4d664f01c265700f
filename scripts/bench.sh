#!/usr/bin/env bash
# Runs the benchmarks (benches/bridge.rs) at full size on the release build, side by side with a
# direct MCP client and with mcpo; the report goes to stdout and target/bench/report.md.
# BENCH_ONLY=idle,calls,keepalive,hooks,traces,instructions,fanout,catalogue,replicas picks sections (replicas needs
# BENCH_POSTGRES and BENCH_NATS). See BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/peers.sh
# 1,000 event streams need more than the common default of 1,024 open files.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
cargo bench --locked --bench bridge
