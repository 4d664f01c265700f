#!/usr/bin/env bash
# Runs the MCP conformance suite against a real mcp-bridge (the debug binary cargo test built):
# `/mcp` serves tests/peers/conformance_server.py (registered over Streamable HTTP, so a request the
# fixture makes during a call reaches the client that made the call) without name prefixes and
# without its token check (loopback only), and the client scenarios drive the bridge over REST.
# Results go to tests/conformance/results/; a regression from tests/conformance/expected-failures.yml
# fails this script.
#
# CONFORMANCE_FIXTURE picks the server registered behind `/mcp`: "legacy" (default,
# tests/peers/conformance_server.py, the catalogue of suite 0.1.16) or "everything"
# (tests/peers/conformance_server_2026.py: the legacy catalogue plus what suite 0.2's 2026-07-28
# scenarios call, which the legacy fixture lacks). Everything else (CONFORMANCE_SUITE,
# CONFORMANCE_SPEC_VERSION, CONFORMANCE_EXPECTED, CONFORMANCE_RESULTS, ...) goes to tests/conformance/run.sh.
# Each run starts its own bridge and fixture on free ports, so runs can go side by side.
set -euo pipefail
cd "$(dirname "$0")/.."

peers=tests/peers
bridge=${MCP_BRIDGE_BIN:-target/debug/mcp-bridge}
[ -x "$bridge" ] || cargo build --locked --bin mcp-bridge

data=$(mktemp -d)
port=$("$peers/.venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export MCP_BRIDGE_DATA_DIR=$data
export MCP_BRIDGE_BIND=127.0.0.1:$port
export MCP_BRIDGE_JWT_SECRET=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
export MCP_BRIDGE_MCP_AUTH=off
export MCP_BRIDGE_MCP_UNPREFIXED_SERVER=conformance
export MCP_BRIDGE_LOG=warn
# auth/basic-cimd wants exactly this client_id (a constant of the suite, never fetched): the bridge's client
# ID metadata document, as if hosted there. Only authorization servers that take such documents see it.
export MCP_BRIDGE_OAUTH_CLIENT_METADATA_URL=${MCP_BRIDGE_OAUTH_CLIENT_METADATA_URL:-https://conformance-test.local/client-metadata.json}

"$bridge" > "$data/bridge.log" 2>&1 &
pid=$!
fixture=
cleanup() {
    kill "$pid" $fixture 2>/dev/null || true
    wait "$pid" $fixture 2>/dev/null || true
    rm -rf "$data"
}
trap cleanup EXIT
for _ in $(seq 100); do
    curl -fsS "http://127.0.0.1:$port/readyz" > /dev/null 2>&1 && break
    sleep 0.1
done

token=$("$bridge" token --sub conformance --admin --ttl 1h)
case ${CONFORMANCE_FIXTURE:-legacy} in
    legacy) fixture_cmd=("$peers/conformance_server.py" http --port 0) upstream_protocol=2025-11-25 ;;
    # Registered in the era under test: its 2025 tools (sampling, elicitation and logging during a
    # call) need a session, its 2026 ones (input-required results) the stateless wire.
    everything) fixture_cmd=("$peers/conformance_server_2026.py" --port 0)
        upstream_protocol=${CONFORMANCE_SPEC_VERSION:-2025-11-25} ;;
    *) echo "conformance.sh: CONFORMANCE_FIXTURE must be legacy or everything" >&2; exit 2 ;;
esac
"$peers/.venv/bin/python" "${fixture_cmd[@]}" > "$data/fixture.out" 2> "$data/fixture.log" &
fixture=$!
for _ in $(seq 200); do
    grep -q '^PORT=' "$data/fixture.out" 2>/dev/null && break
    sleep 0.1
done
fixture_url=http://127.0.0.1:$(sed -n 's/^PORT=//p' "$data/fixture.out")/mcp
curl -fsS "http://127.0.0.1:$port/v1/servers" -H "Authorization: Bearer $token" -H 'content-type: application/json' \
    -d "{\"config\": {\"server_id\": \"conformance\", \"transport\": \"http\", \"url\": \"$fixture_url\", \"protocol_version\": \"$upstream_protocol\"}}" > /dev/null

MCP_URL=http://127.0.0.1:$port/mcp MCP_BRIDGE_URL=http://127.0.0.1:$port MCP_BRIDGE_TOKEN=$token \
    tests/conformance/run.sh
