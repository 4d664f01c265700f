#!/usr/bin/env bash
# Fuzzes the REST API from its own OpenAPI document with schemathesis (every check), as an agent
# without the admin role (a generated stdio config must never run), inside a network namespace
# that has only loopback, so no generated URL can reach anything. Fails on any finding.
# FUZZ_MAX_TIME (seconds, default 240) bounds the run; extra arguments go to schemathesis.
#
# Every check runs but positive_data_acceptance ("a request the schema allows is accepted"): the
# schema says what JSON Schema can (types, enums, patterns, bounds, required fields), and the
# service checks more than that on purpose: an opaque `cursor` must be one it gave out, a config
# needs `cmd` or `url` depending on its transport, URLs pass the address guard, a root is given
# once, a PATCH body's `server_id` matches the path, `ref` and sampling `content` are MCP types.
# Each of those answers 422 `invalid_request` with the reason, which that check counts as a
# failure. The checks that guard the contract (no 500, only documented statuses, responses that
# match their schema, schema-violating requests refused, auth enforced) all run;
# tests/fuzz/schemathesis.toml lets the gateway statuses 502/503/504 through, since every
# generated upstream is unreachable in the namespace.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --locked
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
as_root=()
[ "$(id -u)" = 0 ] || as_root=(--map-root-user)
unshare "${as_root[@]}" --net sh -c '
    set -e
    data=$1; shift
    ip link set lo up
    export MCP_BRIDGE_BIND=127.0.0.1:8080 MCP_BRIDGE_DATA_DIR="$data" \
        MCP_BRIDGE_JWT_SECRET=fuzzing-secret-fuzzing-secret-0123
    target/debug/mcp-bridge serve 2> "$data/bridge.log" &
    bridge=$!
    trap "kill $bridge 2>/dev/null || true" EXIT
    for _ in $(seq 100); do
        if tests/peers/.venv-fuzz/bin/python -c "import urllib.request as u; u.urlopen(\"http://127.0.0.1:8080/readyz\")" 2>/dev/null; then
            break
        fi
        sleep 0.1
    done
    token=$(target/debug/mcp-bridge token --sub fuzzer --ttl 2h)
    status=0
    tests/peers/.venv-fuzz/bin/schemathesis --config-file tests/fuzz/schemathesis.toml \
        run http://127.0.0.1:8080/openapi.json \
        --checks all --exclude-checks positive_data_acceptance --header "Authorization: Bearer $token" --exclude-path /v1/events \
        --max-time "${FUZZ_MAX_TIME:-240}" --request-timeout 10 --no-color "$@" || status=$?
    if grep -q "panicked" "$data/bridge.log"; then
        echo "the service panicked while fuzzed:"; grep -A5 panicked "$data/bridge.log"; exit 1
    fi
    exit $status
' sh "$data" "$@"
