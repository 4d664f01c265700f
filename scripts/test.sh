#!/usr/bin/env bash
# Installs the pinned test peers (scripts/peers.sh: npm and pip, into ignored folders under
# tests/peers) and runs every check and test. Safe to run again: an install is skipped while its
# pin file is unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."

# The PostgreSQL pass names its databases t_<run>_<random> (tests/api/helpers.rs,
# src/store/testing.rs), so whatever a failed or interrupted run leaves behind is dropped here.
# Its processes carry MCP_BRIDGE_TEST_RUN=<run>: a test binary outlives an interrupted cargo
# (the service under test handles SIGINT and SIGTERM itself), so they are stopped first, or they
# would go on creating databases.
postgres=postgres://postgres@127.0.0.1:5432
run="r$(date +%s)p$$"
clean_up_run() {
  local environ pid db
  for environ in /proc/[0-9]*/environ; do
    pid=${environ#/proc/}
    pid=${pid%/environ}
    if [ "$pid" != $$ ] && grep -qxz "MCP_BRIDGE_TEST_RUN=$run" "$environ" 2>/dev/null; then
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
  psql -h 127.0.0.1 -U postgres -Atc "SELECT datname FROM pg_database WHERE datname LIKE 't\_${run}\_%'" 2>/dev/null |
    while read -r db; do
      psql -h 127.0.0.1 -U postgres -qc "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)"
    done || true # never the run's outcome
}
trap 'if [ -n "${release_pid:-}" ]; then pkill -P "$release_pid" 2>/dev/null || true; kill "$release_pid" 2>/dev/null || true; fi; clean_up_run' EXIT

# Waits up to 30 s for `$2...` to succeed; stops the run naming `$1` when it does not.
wait_for() {
  local what=$1
  shift
  for _ in $(seq 60); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  echo "$what does not accept connections after 30 s" >&2
  exit 1
}
nats_up() { timeout 2 bash -c '</dev/tcp/127.0.0.1/4222'; }

scripts/peers.sh

echo "== format and lints"
cargo fmt --all -- --check
cargo clippy --locked --all-targets -- -D warnings
cargo clippy --locked --test netns -- -D warnings

echo "== the release build the image runs, in the background (its own target dir: cargo locks one)"
# It takes the longest of any step (about 15 minutes on 2 cores) and the tests below mostly wait
# on peers and timeouts: at the lowest priority it uses what CPU they leave, and is waited for at
# the end.
release_log=target/ci-release.log
mkdir -p target
nice -n 19 cargo build --release --locked --target-dir target/ci-release >"$release_log" 2>&1 &
release_pid=$!

echo "== layers: every import points down (scripts/layers.py), and no import loop between files"
scripts/layers.py src
if [ -x ../shared/tools/import-loops ]; then
  ../shared/tools/import-loops src
else
  echo "(../shared/tools/import-loops is not here: the file-level loop check is skipped)"
fi

echo "== services: PostgreSQL (127.0.0.1:5432) and NATS (127.0.0.1:4222), started when down"
if ! pg_isready -h 127.0.0.1 -p 5432 -q; then
  pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start
fi
if ! nats_up; then
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log
fi
wait_for "PostgreSQL at 127.0.0.1:5432" pg_isready -h 127.0.0.1 -p 5432 -q
wait_for "NATS at 127.0.0.1:4222" nats_up
# The hub's tests across replicas (src/hub/bus.rs) and, with PostgreSQL below, the replica
# processes of tests/api/replicas.rs meet on it, each under a subject prefix of its own.
export MCP_BRIDGE_TEST_NATS=nats://127.0.0.1:4222

# A failing test's panic message, not its backtrace, is what the last lines of a CI log should show.
export RUST_BACKTRACE=0

echo "== tests (and a smoke run of the benchmark harness, benches/bridge.rs, with tiny sizes)"
cargo test --locked --all-targets

echo "== the store's tests and the integration suite again, on PostgreSQL"
# About 3 minutes here (2 cores), beside 2.5 on SQLite: run after the rest, not alongside it.
started=$SECONDS
MCP_BRIDGE_TEST_POSTGRES=$postgres MCP_BRIDGE_TEST_RUN=$run cargo test --locked --lib store::
MCP_BRIDGE_TEST_POSTGRES=$postgres MCP_BRIDGE_TEST_RUN=$run cargo test --locked --test api
echo "(the PostgreSQL pass took $((SECONDS - started)) s)"

echo "== the OpenAPI document (validator, redocly lint) and the clients generated from it (scripts/openapi-check.sh)"
scripts/openapi-check.sh

echo "== the upstream address guard, in a loopback-only network namespace (tests/netns.rs)"
scripts/netns.sh

echo "== API fuzzing: schemathesis against /openapi.json, in a loopback-only network namespace"
# A fixed seed keeps CI repeatable; scripts/fuzz-api.sh alone draws a new one each run.
FUZZ_MAX_TIME=${FUZZ_MAX_TIME:-120} scripts/fuzz-api.sh --seed "${FUZZ_SEED:-253689785907115869621322676869123798626}"

echo "== MCP conformance suite (tests/conformance/expected-failures.yml)"
scripts/conformance.sh

echo "== examples (examples/: curl walkthrough, Python and TypeScript agents)"
scripts/examples.sh

echo "== deployment: docker-compose.yml against the Compose specification, and the release build the image runs"
node tests/deploy/validate-compose.mjs docker-compose.yml
if ! wait "$release_pid"; then
  tail -n 40 "$release_log" >&2
  echo "cargo build --release --locked failed" >&2
  exit 1
fi
release_pid=
tail -n 1 "$release_log"
