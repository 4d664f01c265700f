#!/usr/bin/env bash
# The README's walkthrough with curl, step by step: register server-everything over stdio as `ev`,
# list the tools, call `ev__echo`, read a resource, get a prompt, unregister.
#
#   examples/curl-walkthrough.sh BRIDGE_URL TOKEN EVERYTHING_BIN
#
# BRIDGE_URL      the bridge, e.g. http://127.0.0.1:8080
# TOKEN           an admin token (registering a stdio server runs a command on the host):
#                 mcp-bridge token --sub me --admin
# EVERYTHING_BIN  the server-everything executable, e.g. tests/peers/node_modules/.bin/mcp-server-everything
#
# Needs only bash, curl and grep. Each step prints the request and the answer's status and body,
# and stops the script with a message when the status is not the expected one.
set -euo pipefail

if [ $# -ne 3 ]; then
    echo "usage: $0 BRIDGE_URL TOKEN EVERYTHING_BIN" >&2
    exit 2
fi
BRIDGE_URL=${1%/}
TOKEN=$2
EVERYTHING_BIN=$3
SERVER_ID=ev

body_file=$(mktemp)
registered=false
cleanup() {
    # A step failed after registering: do not leave the server behind.
    if [ "$registered" = true ]; then
        curl -sS -o /dev/null --max-time 30 -X DELETE -H "Authorization: Bearer $TOKEN" \
            "$BRIDGE_URL/v1/servers/$SERVER_ID" || true
    fi
    rm -f "$body_file"
}
trap cleanup EXIT

fail() {
    echo "curl walkthrough: FAILED: $*" >&2
    exit 1
}

step() {
    printf '\n== %s\n' "$*"
}

# api METHOD PATH EXPECTED_STATUS [JSON_BODY]: one request with the token. Prints the request and
# the answer (long ones cut at 600 characters), leaves the whole body in $BODY, and fails unless
# the status is EXPECTED_STATUS.
api() {
    local method=$1 path=$2 expected=$3 data=${4-}
    local args=(-sS -X "$method" -o "$body_file" -w '%{http_code}' --connect-timeout 5 --max-time 60
        -H "Authorization: Bearer $TOKEN")
    if [ -n "$data" ]; then
        args+=(-H 'content-type: application/json' --data "$data")
    fi
    local shown="\$ curl -X $method $BRIDGE_URL$path"
    [ -z "$data" ] || shown+=" -d '$data'"
    echo "$shown"
    local status rc=0
    status=$(curl "${args[@]}" "$BRIDGE_URL$path") || rc=$?
    # curl's own exit codes: 7 cannot connect, 28 timed out; its message is on stderr above.
    [ "$rc" = 0 ] || fail "$method $path: curl failed (exit $rc) talking to $BRIDGE_URL"
    BODY=$(cat "$body_file")
    if [ "${#BODY}" -gt 600 ]; then
        echo "HTTP $status ${BODY:0:600}… (${#BODY} bytes)"
    else
        echo "HTTP $status $BODY"
    fi
    [ "$status" = "$expected" ] || fail "$method $path answered HTTP $status, expected $expected"
}

# must_contain TEXT WHAT: fails unless the last answer's body contains TEXT.
must_contain() {
    grep -qF -- "$1" <<<"$BODY" || fail "$2: the answer does not contain $1"
}

# The command as a JSON string (backslashes and quotes escaped).
json_string() {
    local s=${1//\\/\\\\}
    printf '"%s"' "${s//\"/\\\"}"
}

step "0. the bridge is up (no token needed): GET /readyz"
status=$(curl -sS -o /dev/null -w '%{http_code}' --connect-timeout 5 --max-time 10 "$BRIDGE_URL/readyz") ||
    fail "no bridge answers at $BRIDGE_URL"
echo "HTTP $status"
[ "$status" = 200 ] || fail "GET /readyz answered HTTP $status, expected 200"

step "1. register server-everything over stdio as '$SERVER_ID': POST /v1/servers (201, an MCPServerInfo)"
config="{\"server_id\": \"$SERVER_ID\", \"transport\": \"stdio\", \"cmd\": [$(json_string "$EVERYTHING_BIN"), \"stdio\"]}"
api POST /v1/servers 201 "{\"config\": $config}"
registered=true
must_contain '"status":"ready"' "register"

step "2. the catalogue: GET /v1/tools (every server's tools as {server_id}__{tool})"
api GET "/v1/tools?server_id=$SERVER_ID" 200
must_contain "\"name\":\"${SERVER_ID}__echo\"" "tools"
echo "tools of $SERVER_ID: $(grep -oE "\"name\":\"${SERVER_ID}__[^\"]*\"" <<<"$BODY" | cut -d'"' -f4 | tr '\n' ' ')"

step "3. call a tool: POST /v1/tools/call"
api POST /v1/tools/call 200 "{\"name\": \"${SERVER_ID}__echo\", \"arguments\": {\"message\": \"hello from curl\"}}"
must_contain 'Echo: hello from curl' "tool call"
must_contain '"is_error":false' "tool call"

step "4. read a resource (routed by its URI): POST /v1/resources/read"
api POST /v1/resources/read 200 '{"uri": "demo://resource/dynamic/text/1", "server_id": "'"$SERVER_ID"'"}'
must_contain 'Resource 1: This is a plaintext resource' "resource read"

step "5. get a prompt, rendered with its arguments: POST /v1/prompts/get"
api POST /v1/prompts/get 200 '{"name": "args-prompt", "arguments": {"city": "Oslo"}, "server_id": "'"$SERVER_ID"'"}'
must_contain "What's weather in Oslo?" "prompt"

step "6. unregister: DELETE /v1/servers/$SERVER_ID"
api DELETE "/v1/servers/$SERVER_ID" 200
registered=false
must_contain '"ok":true' "unregister"

printf '\ncurl walkthrough: OK\n'
