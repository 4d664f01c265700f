#!/usr/bin/env bash
# The soak (issue 22): the release service under a mixed load for SOAK_MINUTES (default 30), then a
# PASS/FAIL report in target/soak/report.md (and report.json). Run by hand, not in CI; see BENCHMARKS.md
# ("Soak"). Arguments go to scripts/soak.py (e.g. --minutes 3); SOAK_BRIDGE overrides the binary.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/peers.sh

bridge=${SOAK_BRIDGE:-target/release/mcp-bridge}
if [ -z "${SOAK_BRIDGE:-}" ]; then
    # cargo is quick when nothing changed; it rebuilds when the sources moved on.
    nice cargo build --release --locked
fi

# 200 event streams, 16 call connections, the upstreams' sockets and pipes: more than the usual 1024.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || ulimit -n 8192 2>/dev/null || true
echo "== soak: ulimit -n $(ulimit -n), bridge $bridge"

exec tests/peers/.venv/bin/python scripts/soak.py --bridge "$bridge" "$@"
