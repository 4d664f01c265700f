#!/usr/bin/env bash
# Installs the pinned test peers (npm and pip, into ignored folders under tests/peers) and runs
# every check and test. Safe to run again: an install is skipped while its pin file is unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."

peers=tests/peers

stamp_ok() { # pin-file stamp-file
    [ -f "$2" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$(cat "$2")" ]
}
stamp() {
    sha256sum "$1" | cut -d' ' -f1 > "$2"
}

echo "== test peers: npm (tests/peers/package-lock.json)"
if ! stamp_ok "$peers/package-lock.json" "$peers/node_modules/.installed"; then
    (cd "$peers" && npm ci --no-audit --no-fund --loglevel=error)
    stamp "$peers/package-lock.json" "$peers/node_modules/.installed"
fi

echo "== test peers: pip (tests/peers/requirements.txt)"
if ! stamp_ok "$peers/requirements.txt" "$peers/.venv/.installed"; then
    python3 -m venv "$peers/.venv"
    "$peers/.venv/bin/pip" install --quiet --disable-pip-version-check -r "$peers/requirements.txt"
    stamp "$peers/requirements.txt" "$peers/.venv/.installed"
fi

echo "== test peers: pip, the 1.x SDK for WebSocket (tests/peers/requirements-ws.txt)"
if ! stamp_ok "$peers/requirements-ws.txt" "$peers/.venv-ws/.installed"; then
    python3 -m venv "$peers/.venv-ws"
    "$peers/.venv-ws/bin/pip" install --quiet --disable-pip-version-check -r "$peers/requirements-ws.txt"
    stamp "$peers/requirements-ws.txt" "$peers/.venv-ws/.installed"
fi

echo "== format and lints"
cargo fmt --all -- --check
cargo clippy --locked --all-targets -- -D warnings

echo "== tests"
cargo test --locked --all-targets

echo "== MCP conformance suite (tests/conformance/expected-failures.yml)"
scripts/conformance.sh

echo "== examples (examples/: curl walkthrough, Python and TypeScript agents)"
scripts/examples.sh

echo "== deployment: docker-compose.yml against the Compose specification, and the release build the image runs"
node tests/deploy/validate-compose.mjs docker-compose.yml
cargo build --release --locked
