#!/usr/bin/env bash
# Runs every MCP conformance run side by side, each with its own bridge and fixture (scripts/conformance.sh):
#
#   0.1.16              the 2025 suite, as before: /mcp serving tests/peers/conformance_server.py, and the
#                       client scenarios (tests/conformance/expected-failures.yml)
#   0.2 at 2026-07-28   conformance 0.2.0-alpha.12 --spec-version 2026-07-28: /mcp serving our fixture for it
#                       (tests/peers/conformance_server_2026.py), and the 2026 client scenarios
#                       (tests/conformance/expected-failures-0.2-2026-07-28.yml)
#   0.2 at 2025-11-25   the same suite at 2025-11-25 (tests/conformance/expected-failures-0.2-2025-11-25.yml)
#
# Prints each run's time and pass counts, writes each run's per-scenario lines to
# tests/conformance/last-results*.txt (headed by the counts) and fails when any run differs from its baseline.
# Each run's outputs are in tests/conformance/results*/ and its console log in results*.log beside them.
set -uo pipefail
cd "$(dirname "$0")/.."

conf=tests/conformance
client_2026="tools_call json-schema-2020-12-preservation"
client_2025="initialize tools_call elicitation-sep1034-client-defaults sse-retry json-schema-2020-12-preservation"

runs=(0.1.16 0.2-2026-07-28 0.2-2025-11-25)

# The environment of a run's scripts/conformance.sh.
setup() {
    case $1 in
        0.1.16) return ;;
        0.2-*) export CONFORMANCE_FIXTURE=everything CONFORMANCE_SUITE=0.2 CONFORMANCE_SPEC_VERSION=${1#0.2-} ;;
    esac
    case $1 in
        0.2-2026-07-28) export CONFORMANCE_CLIENT_SCENARIOS=$client_2026 CONFORMANCE_CLIENT_SUITES="auth draft" ;;
        0.2-2025-11-25) export CONFORMANCE_CLIENT_SCENARIOS=$client_2025 CONFORMANCE_CLIENT_SUITES=auth ;;
    esac
}

# Where a run's outputs, last results and baseline are.
paths() {
    case $1 in
        0.1.16) results=$conf/results last=$conf/last-results.txt expected=$conf/expected-failures.yml ;;
        *) results=$conf/results-$1 last=$conf/last-results-$1.txt expected=$conf/expected-failures-$1.yml ;;
    esac
}

declare -A pid
for name in "${runs[@]}"; do
    paths "$name"
    (
        export CONFORMANCE_RESULTS=$results CONFORMANCE_EXPECTED=$expected
        setup "$name"
        t0=$SECONDS
        scripts/conformance.sh > "$results.log" 2>&1
        status=$?
        echo $((SECONDS - t0)) > "$results.time"
        {
            server=$(grep -c ' server-' "$results/summary.txt" 2>/dev/null)
            server_pass=$(grep -c '^PASS  server-' "$results/summary.txt" 2>/dev/null)
            client=$(grep -vc ' server-' "$results/summary.txt" 2>/dev/null)
            client_pass=$(grep -v ' server-' "$results/summary.txt" 2>/dev/null | grep -c '^PASS')
            echo "# conformance $name: server $server_pass/$server pass, client $client_pass/$client pass" \
                "(baseline $(basename "$expected"): $([ "$status" -eq 0 ] && echo matches || echo REGRESSION))"
            cat "$results/summary.txt" 2>/dev/null
        } > "$last"
        exit $status
    ) &
    pid[$name]=$!
done

failed=0
for name in "${runs[@]}"; do
    wait "${pid[$name]}"
    status=$?
    paths "$name"
    echo "conformance $name: $(cat "$results.time" 2>/dev/null) s (exit $status); $(head -1 "$last" | sed 's/^# conformance [^:]*: //')"
    if [ "$status" -ne 0 ]; then
        failed=1
        sed -n '/REGRESSION/,$p' "$results.log"
    fi
done
exit $failed
