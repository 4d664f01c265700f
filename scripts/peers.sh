#!/usr/bin/env bash
# Installs the pinned test and benchmark peers into ignored folders under tests/peers: npm
# (package-lock.json), the Python MCP SDK and a2a-sdk (.venv), the 1.x SDK for WebSocket (.venv-ws)
# and mcpo (.venv-mcpo). Safe to run again: an install is skipped while its pin file is unchanged.
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

echo "== test peers: pip, mcpo for the benchmarks (tests/peers/requirements-mcpo.txt)"
if ! stamp_ok "$peers/requirements-mcpo.txt" "$peers/.venv-mcpo/.installed"; then
    python3 -m venv "$peers/.venv-mcpo"
    "$peers/.venv-mcpo/bin/pip" install --quiet --disable-pip-version-check -r "$peers/requirements-mcpo.txt"
    stamp "$peers/requirements-mcpo.txt" "$peers/.venv-mcpo/.installed"
fi

echo "== test peers: pip, schemathesis for API fuzzing (tests/peers/requirements-fuzz.txt)"
if ! stamp_ok "$peers/requirements-fuzz.txt" "$peers/.venv-fuzz/.installed"; then
    python3 -m venv "$peers/.venv-fuzz"
    "$peers/.venv-fuzz/bin/pip" install --quiet --disable-pip-version-check -r "$peers/requirements-fuzz.txt"
    stamp "$peers/requirements-fuzz.txt" "$peers/.venv-fuzz/.installed"
fi
