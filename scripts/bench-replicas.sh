#!/usr/bin/env bash
# The replica benchmarks (issue 35, item 6), release build: a call forwarded over NATS against a
# call through the replica holding its server (p50/p99, c=1 and 8), and the fan-out of one event to
# 1,000 agents' streams on one replica and spread over three; then the kill -9 takeovers. The
# `replicas` section of benches/bridge.rs, against a PostgreSQL server and a NATS with JetStream
# (the machine's by default; each run makes its own database and subject prefix and removes them).
#   BENCH_POSTGRES=postgres://postgres@127.0.0.1:5432 BENCH_NATS=nats://127.0.0.1:4222 \
#     scripts/bench-replicas.sh            # the report: stdout and target/bench/report.md
# BENCH_ONLY=fanout,replicas adds the one-process fan-out (SQLite, in-process hub) to compare.
set -euo pipefail
cd "$(dirname "$0")/.."

export BENCH_POSTGRES=${BENCH_POSTGRES:-postgres://postgres@127.0.0.1:5432}
export BENCH_NATS=${BENCH_NATS:-nats://127.0.0.1:4222}
export BENCH_ONLY=${BENCH_ONLY:-replicas}
if ! pg_isready -q -d "$BENCH_POSTGRES"; then
  echo "PostgreSQL does not answer at BENCH_POSTGRES=$BENCH_POSTGRES" >&2
  exit 1
fi
nats_hostport=${BENCH_NATS#nats://}
if ! timeout 2 bash -c "</dev/tcp/${nats_hostport%:*}/${nats_hostport##*:}" 2>/dev/null; then
  echo "NATS does not answer at BENCH_NATS=$BENCH_NATS" >&2
  exit 1
fi
# 1,000 event streams need more than the common default of 1,024 open files.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
cargo bench --locked --bench bridge
