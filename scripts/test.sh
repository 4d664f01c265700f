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

# NATS (2.9) removes an account's stream directory with its last stream, and a stream created at
# that moment fails ("could not create storage directory", JetStream error 10049). The tests
# create and delete streams side by side, so one stream of no test's is kept for the whole run:
# made here over NATS's text protocol (no NATS client is installed), waiting for its answer.
nats_keep_a_stream() {
  local body='{"name":"mcp_bridge_tests_keep","subjects":["mcp_bridge_tests_keep"],"storage":"file","max_msgs":1}'
  timeout 5 bash -c '
    exec 3<>/dev/tcp/127.0.0.1/4222
    printf "CONNECT {\"verbose\":false}\r\nSUB _INBOX.keep 1\r\nPUB \$JS.API.STREAM.CREATE.mcp_bridge_tests_keep _INBOX.keep %s\r\n%s\r\nPING\r\n" "${#1}" "$1" >&3
    grep -q -m1 stream_create_response <&3' _ "$body"
}

# Names each step and says how long the one before it took (CI's budget is 45 minutes).
run_started=$SECONDS
step_started=$SECONDS
step() {
  [ "$step_started" = "$run_started" ] || echo "   (took $((SECONDS - step_started)) s)"
  step_started=$SECONDS
  echo "== $*"
}

step "test peers (scripts/peers.sh)"
scripts/peers.sh

step "format and lints"
cargo fmt --all -- --check
cargo clippy --locked --all-targets -- -D warnings
cargo clippy --locked --test netns -- -D warnings

step "the build the image runs (cargo build --profile dist), in the background (its own target dir: cargo locks one)"
# It takes the longest of any step (about 17 minutes on 2 cores) and the tests below mostly
# wait on peers and timeouts: at the lowest priority it uses what CPU they leave, and is waited
# for by the image step.
release_log=target/ci-release.log
mkdir -p target
nice -n 19 cargo build --profile dist --locked --target-dir target/ci-release >"$release_log" 2>&1 &
release_pid=$!

step "the image test's set-up, in the background (scripts/image-test.sh setup: Podman, Buildah, the base image)"
# About 2 minutes, most of it apt and debootstrap downloading; waited for before the image test.
image_setup_log=target/ci-image-setup.log
scripts/image-test.sh setup >"$image_setup_log" 2>&1 &
image_setup_pid=$!

step "layers: every import points down (scripts/layers.py), and no import loop between files"
scripts/layers.py src
if [ -x ../shared/tools/import-loops ]; then
  ../shared/tools/import-loops src
else
  echo "(../shared/tools/import-loops is not here: the file-level loop check is skipped)"
fi

step "docs: links in README, BENCHMARKS.md and the book (scripts/doc-links.py), the book built (mdBook, into target/book)"
python3 scripts/doc-links.py
tests/peers/.tools/bin/mdbook build docs

step "services: PostgreSQL (127.0.0.1:5432) and NATS (127.0.0.1:4222), started when down"
if ! pg_isready -h 127.0.0.1 -p 5432 -q; then
  pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start
fi
if ! nats_up; then
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log
fi
wait_for "PostgreSQL at 127.0.0.1:5432" pg_isready -h 127.0.0.1 -p 5432 -q
wait_for "NATS at 127.0.0.1:4222" nats_up
nats_keep_a_stream || echo "(cannot make the stream kept for the run: a replica test may meet NATS's 10049)"
# The hub's tests across replicas (src/hub/bus.rs) and, with PostgreSQL below, the replica
# processes of tests/api/replicas.rs meet on it, each under a subject prefix of its own.
export MCP_BRIDGE_TEST_NATS=nats://127.0.0.1:4222

# A failing test's panic message, not its backtrace, is what the last lines of a CI log should show.
export RUST_BACKTRACE=0

step "tests (and a smoke run of the benchmark harness, benches/bridge.rs, with tiny sizes)"
cargo test --locked --all-targets

step "the store's tests and the integration suite again on PostgreSQL, beside the steps below"
# About 11 minutes (2 cores), most of it replicas waiting on leases, peers and timeouts: the
# test binaries cargo built above run in the background (not through cargo, which would hold
# the build directory's lock against the steps below) and are waited for before the last step.
built=$(cargo test --locked --lib --test api --no-run --message-format=json 2>/dev/null)
lib_tests=$(jq -r 'select(.executable != null and .target.kind == ["lib"]) | .executable' <<<"$built")
api_tests=$(jq -r 'select(.executable != null and .target.name == "api") | .executable' <<<"$built")
if [ ! -x "$lib_tests" ] || [ ! -x "$api_tests" ]; then
  echo "cargo named no test binary for the library or tests/api" >&2
  exit 1
fi
postgres_log=target/ci-postgres.log
(
  export MCP_BRIDGE_TEST_POSTGRES=$postgres MCP_BRIDGE_TEST_RUN=$run
  started=$SECONDS
  "$lib_tests" store:: && "$api_tests"
  status=$?
  echo "(the PostgreSQL pass took $((SECONDS - started)) s)"
  exit $status
) >"$postgres_log" 2>&1 &
postgres_pid=$!

step "the /mcp and tool-call suites again with MCP_BRIDGE_FAST_PATHS=off: every call through rmcp on both sides"
# The two shortcuts past rmcp (upstream/direct.rs, mcp_server/direct.rs) are shown to answer as
# rmcp does: the same tests pass with them off.
MCP_BRIDGE_FAST_PATHS=off "$api_tests" mcp:: mcp_tasks:: tools:: events:: cancel:: notify_order:: inputs::

step "the OpenAPI document (validator, redocly lint) and the clients generated from it (scripts/openapi-check.sh)"
scripts/openapi-check.sh

step "the upstream address guard, in a loopback-only network namespace (tests/netns.rs)"
scripts/netns.sh

step "API fuzzing: schemathesis against /openapi.json, in a loopback-only network namespace"
# A fixed seed keeps CI repeatable; scripts/fuzz-api.sh alone draws a new one each run.
FUZZ_MAX_TIME=${FUZZ_MAX_TIME:-120} scripts/fuzz-api.sh --seed "${FUZZ_SEED:-253689785907115869621322676869123798626}"

step "MCP conformance suites, side by side: 0.1.16, and 0.2.0-alpha.12 at 2026-07-28 and 2025-11-25 (tests/conformance/expected-failures*.yml)"
scripts/conformance-all.sh

step "examples (examples/: curl walkthrough, Python and TypeScript agents)"
scripts/examples.sh

step "the image: the Dockerfile's runtime and with-tools images run with Podman, beside the PostgreSQL pass"
if ! wait "$image_setup_pid"; then
  cat "$image_setup_log" >&2
  echo "scripts/image-test.sh setup failed" >&2
  exit 1
fi
image_setup_pid=
cat "$image_setup_log"
if ! wait "$release_pid"; then
  tail -n 40 "$release_log" >&2
  echo "cargo build --profile dist --locked failed" >&2
  exit 1
fi
release_pid=
tail -n 1 "$release_log"
MCP_BRIDGE_BINARY=target/ci-release/dist/mcp-bridge scripts/image-test.sh test
# The Dockerfile's own compile stage, proven again when what it builds from changed since
# tests/deploy/compiled.sha256 was written (scripts/image-compile.sh, about 11 minutes).
if sha256sum --quiet -c tests/deploy/compiled.sha256 2>/dev/null; then
  echo "(the compiled stage was proven for this Dockerfile, Cargo.lock and .dockerignore: tests/deploy/compiled.sha256)"
else
  echo "the Dockerfile, Cargo.lock or .dockerignore changed since tests/deploy/compiled.sha256: proving the compiled stage"
  scripts/image-compile.sh
fi
node tests/deploy/validate-compose.mjs docker-compose.yml

step "waiting for the PostgreSQL pass (its output follows)"
postgres_status=0
wait "$postgres_pid" || postgres_status=$?
postgres_pid=
cat "$postgres_log"
if [ "$postgres_status" != 0 ]; then
  echo "the PostgreSQL pass failed (exit $postgres_status)" >&2
  exit "$postgres_status"
fi

step "done"
echo "(the whole run took $((SECONDS - run_started)) s)"
