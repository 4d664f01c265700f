#!/usr/bin/env bash
# Runs the tests that send traffic to non-loopback addresses (tests/netns.rs: the upstream
# address guard) inside a network namespace that has only loopback, where 169.254.169.254 and
# 10.0.0.1 are added to `lo` and tests/netns/hosts is mounted over /etc/hosts: nothing can leave
# the machine, whatever the code does. Needs root, or unprivileged user namespaces.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --locked --test netns --no-run
as_root=()
[ "$(id -u)" = 0 ] || as_root=(--map-root-user)
exec unshare "${as_root[@]}" --net --mount sh -c '
    set -e
    ip link set lo up
    ip addr add 169.254.169.254/32 dev lo
    ip addr add 10.0.0.1/32 dev lo
    mount --bind tests/netns/hosts /etc/hosts
    exec cargo test --locked --offline --test netns -- "$@"
' sh "$@"
