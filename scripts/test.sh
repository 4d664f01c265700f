#!/usr/bin/env bash
# Installs the pinned test peers (scripts/peers.sh: npm and pip, into ignored folders under
# tests/peers) and runs every check and test. Safe to run again: an install is skipped while its
# pin file is unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/peers.sh

echo "== format and lints"
cargo fmt --all -- --check
cargo clippy --locked --all-targets -- -D warnings
cargo clippy --locked --test netns -- -D warnings

echo "== layers: every import points down (scripts/layers.py), and no import loop between files"
scripts/layers.py src
if [ -x ../shared/tools/import-loops ]; then
  ../shared/tools/import-loops src
else
  echo "(../shared/tools/import-loops is not here: the file-level loop check is skipped)"
fi

echo "== tests (and a smoke run of the benchmark harness, benches/bridge.rs, with tiny sizes)"
cargo test --locked --all-targets

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
cargo build --release --locked
