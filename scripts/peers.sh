#!/usr/bin/env bash
# Installs the pinned test and benchmark peers into ignored folders under tests/peers: npm
# (package-lock.json), the Python MCP SDK and a2a-sdk (.venv), the 1.x SDK for WebSocket (.venv-ws),
# mcpo (.venv-mcpo), schemathesis (.venv-fuzz), the OpenAPI validator and Python client
# generator (.venv-openapi), Debian's Chromium for the console's browser test, Debian's HAProxy for the
# chaos test's round-robin proxy (tests/api/chaos.rs) and Debian's openssl for the TLS test's
# certificates (tests/api/tls.rs), and mdBook for the book in docs/
# (tests/peers/.tools, from crates.io). Safe to run again: an install is skipped while its pin
# file (or, for mdBook, the version installed) is unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."

peers=tests/peers

stamp_ok() { # pin-file stamp-file
    [ -f "$2" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$(cat "$2")" ]
}
stamp() {
    sha256sum "$1" | cut -d' ' -f1 > "$2"
}
debian() { # program (a name on the PATH, or a path), Debian package: installed when missing
    command -v "$1" >/dev/null && return
    if [ "$(id -u)" -ne 0 ]; then
        echo "$1 is missing and this is not root: run 'apt-get install -y $2' as root" >&2
        exit 1
    fi
    echo "$1 is missing: installing Debian's $2 package (apt-get, non-interactive)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
}
venv() { # what, requirements file, venv folder (under tests/peers)
    echo "== test peers: pip, $1 (tests/peers/$2)"
    if ! stamp_ok "$peers/$2" "$peers/$3/.installed"; then
        python3 -m venv "$peers/$3"
        "$peers/$3/bin/pip" install --quiet --disable-pip-version-check -r "$peers/$2"
        stamp "$peers/$2" "$peers/$3/.installed"
    fi
}

echo "== test peers: npm (tests/peers/package-lock.json)"
if ! stamp_ok "$peers/package-lock.json" "$peers/node_modules/.installed"; then
    (cd "$peers" && npm ci --no-audit --no-fund --loglevel=error)
    stamp "$peers/package-lock.json" "$peers/node_modules/.installed"
fi

venv "the MCP and A2A SDKs" requirements.txt .venv
venv "the 1.x SDK for WebSocket" requirements-ws.txt .venv-ws
venv "mcpo for the benchmarks" requirements-mcpo.txt .venv-mcpo
venv "schemathesis for API fuzzing" requirements-fuzz.txt .venv-fuzz
venv "the OpenAPI validator and Python client generator" requirements-openapi.txt .venv-openapi

echo "== test peers: Chromium (/usr/bin/chromium) for the console's browser test (tests/browser/console.mjs)"
debian /usr/bin/chromium chromium
echo "== test peers: HAProxy (haproxy) for the chaos test's round-robin proxy (tests/api/chaos.rs)"
debian haproxy haproxy
echo "== test peers: OpenSSL (openssl) for the certificates of the TLS upstreams (tests/api/tls.rs)"
debian openssl openssl

# The version scripts/test.sh builds the book (docs/) with. Built from crates.io without its
# default features (the live-reloading server and its watcher): about two minutes of CPU, once.
MDBOOK_VERSION=0.5.4
echo "== tools: mdBook $MDBOOK_VERSION for the book (tests/peers/.tools/bin/mdbook)"
if [ "$("$peers/.tools/bin/mdbook" --version 2>/dev/null)" != "mdbook v$MDBOOK_VERSION" ]; then
    cargo install --quiet --locked --no-default-features --version "$MDBOOK_VERSION" \
        --root "$peers/.tools" mdbook
fi
