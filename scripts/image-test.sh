#!/usr/bin/env bash
# The image test: builds the `runtime` and `with-tools` images from the project's own Dockerfile
# and runs them with Podman, on no network, as users would run them:
#   scripts/image-test.sh setup   installs Podman, Buildah, runc, debootstrap and docker-compose
#                                 (apt), podman-compose (pip, tests/peers/.venv-compose), and makes
#                                 the base image debian:bookworm-slim with debootstrap when Podman
#                                 has none (no registry is reachable here); about 2 minutes once
#   scripts/image-test.sh test    the images (from the binary `cargo build --profile dist` built
#                                 here, with `--build-arg BINARY=prebuilt`) and the Compose file;
#                                 about 2 minutes
#   scripts/image-test.sh         both
# `test` takes the binary from $MCP_BRIDGE_BINARY, else target/dist/mcp-bridge. It needs root
# (Podman's storage and runc), as CI runs it.
set -euo pipefail
cd "$(dirname "$0")/.."

what=${1:-all}
# runc, not crun (which fails here on cgroups and rlimits), and ulimits of our own (the defaults
# Podman copies from this machine are above what the container may set).
conf_dir=target/image-test
mkdir -p "$conf_dir"
cat >"$conf_dir/containers.conf" <<'EOF'
[containers]
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]

[engine]
runtime = "runc"
EOF
export CONTAINERS_CONF=$PWD/$conf_dir/containers.conf
# Builds run in a chroot: no nested container runtime is needed for a RUN step.
export BUILDAH_ISOLATION=chroot
# The Docker image format: OCI's has no HEALTHCHECK.
export BUILDAH_FORMAT=docker

# Runs `$2...` and says how long `$1` took.
timed() {
  local what=$1 started=$SECONDS
  shift
  "$@"
  echo "   ($what took $((SECONDS - started)) s)" >&2
}

setup() {
  local need=()
  for tool in podman buildah runc debootstrap docker-compose; do
    command -v "$tool" >/dev/null || need+=("$tool")
  done
  if [ "${#need[@]}" -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
      echo "${need[*]} missing and this is not root: run 'apt-get install podman buildah runc debootstrap docker-compose' as root" >&2
      exit 1
    fi
    echo "installing Debian's podman, buildah, runc, debootstrap and docker-compose (apt-get)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      podman buildah runc debootstrap docker-compose uidmap fuse-overlayfs slirp4netns >/dev/null
  fi
  local venv=tests/peers/.venv-compose pins=tests/peers/requirements-compose.txt
  if ! cmp -s "$pins" "$venv/.installed" 2>/dev/null; then
    echo "installing podman-compose ($pins) into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$pins"
    cp "$pins" "$venv/.installed"
  fi
  if ! podman image exists debian:bookworm-slim; then
    base_image
  fi
}

# debian:bookworm-slim as Debian's own is made: debootstrap's minbase, without the package cache,
# documentation and translations, and with dpkg told to leave those out of later installs.
base_image() {
  local root mirror
  root=$(mktemp -d /tmp/bookworm.XXXXXX)
  mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
  echo "making debian:bookworm-slim with debootstrap from ${mirror:=http://deb.debian.org/debian}"
  debootstrap --variant=minbase bookworm "$root" "$mirror" >"$conf_dir/debootstrap.log" 2>&1 || {
    tail -n 20 "$conf_dir/debootstrap.log" >&2
    exit 1
  }
  cat >"$root/etc/dpkg/dpkg.cfg.d/slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
  # apt keeps no package cache, no .bin caches and no translations (as in Debian's images).
  cat >"$root/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
Acquire::Languages "none";
EOF
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/cache/apt/*.bin "$root"/var/lib/apt/lists/* "$root"/usr/share/man/* \
    "$root"/usr/share/info/* "$root"/var/log/*.log
  find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
  tar -C "$root" -c . | podman import -q --change 'CMD ["bash"]' - debian:bookworm-slim >/dev/null
  rm -rf "$root"
  echo "debian:bookworm-slim: $(size_of debian:bookworm-slim)"
}

# Podman without systemd: its health check timers cannot be made, which it logs as errors each
# time a container starts or stops; the test runs the check itself.
podman() { command podman "$@" 2> >(grep -v 'systemd connection' >&2); }

size_of() { podman image inspect --format '{{.Size}}' "$1" | awk '{printf "%.1f MB", $1 / 1e6}'; }

# ---- the test ----

name=mcp-bridge-image-test-$$
volume=$name-data
cleanup() {
  podman rm -f -t 0 "$name" >/dev/null 2>&1 || true
  podman volume rm -f "$volume" >/dev/null 2>&1 || true
}

fail() {
  echo "image test: $*" >&2
  podman logs --tail 30 "$name" >&2 2>/dev/null || true
  exit 1
}

# This machine's curl in the container's network namespace (the container has no network, and the
# image no curl): method, path, token, body; prints the body, then the status on a line of its own.
api() {
  local method=$1 path=$2 token=$3 body=${4:-} pid
  pid=$(podman inspect --format '{{.State.Pid}}' "$name")
  nsenter --target "$pid" --net curl -sS -X "$method" "http://127.0.0.1:8080$path" \
    -H "Authorization: Bearer $token" -H 'content-type: application/json' \
    ${body:+--data "$body"} -w '\n%{http_code}'
}

# Waits up to 30 s for the image's health check to pass, and for Podman to say healthy.
healthy() {
  local health
  for _ in $(seq 60); do
    if podman healthcheck run "$name" >/dev/null 2>&1; then
      health=$(podman inspect --format '{{.State.Health.Status}}' "$name")
      [ "$health" = healthy ] || fail "the health check passed, and Podman says '$health'"
      return 0
    fi
    sleep 0.5
  done
  fail "not healthy after 30 s"
}

# The status of server `$2` as agent token `$1` lists it.
status_of() {
  api GET /v1/servers "$1" | head -n 1 | jq -r --arg id "$2" '.servers[] | select(.server_id == $id) | .status'
}

# Waits up to 30 s for server `$2` to be ready.
ready() {
  local status=
  for _ in $(seq 60); do
    status=$(status_of "$1" "$2")
    [ "$status" = ready ] && return 0
    sleep 0.5
  done
  fail "server $2 is '$status', not ready, after 30 s"
}

# Runs `$1` (an image) as users are told to: read-only root, /data a volume, a tmpfs for /tmp,
# no network; the pinned test peers mounted read-only for a stdio server.
start() {
  # The health check's timer needs systemd, which is not here: the test runs it itself.
  podman run -d --name "$name" --network none --read-only --tmpfs /tmp --health-interval disable \
    -v "$volume:/data" -v "$PWD/tests/peers/node_modules:/peers/node_modules:ro" \
    -e MCP_BRIDGE_LOG=info "$1" >/dev/null
  healthy
}

# The checks every image passes: healthy, `token` through exec, the non-root user, a read-only
# root, and a stop in under 5 s that the bridge itself ends (not a SIGKILL after the timeout).
run_image() {
  local image=$1 stdio=$2 token answer uid started took code
  cleanup
  podman volume create "$volume" >/dev/null
  start "$image"
  echo "   $image: healthy"
  token=$(podman exec "$name" mcp-bridge token --sub image-test --admin 2>/dev/null) ||
    fail "mcp-bridge token failed through exec"
  uid=$(podman exec "$name" awk '/^Uid:/ {print $2}' /proc/1/status)
  [ "$uid" = 10001 ] || fail "PID 1 runs as uid $uid, not 10001 (mcp-bridge)"
  uid=$(podman exec "$name" sh -c 'grep -lx mcp-bridge /proc/[0-9]*/comm | head -n 1 | sed "s/comm$/status/" | xargs awk "/^Uid:/ {print \$2}"')
  [ "$uid" = 10001 ] || fail "the bridge runs as uid '$uid', not 10001 (mcp-bridge)"
  if podman exec "$name" touch /usr/local/bin/written 2>/dev/null; then
    fail "the root filesystem is writable"
  fi
  # The CA bundle rustls reads (copied from Debian's ca-certificates without openssl).
  local certs
  certs=$(podman exec "$name" grep -c "BEGIN CERTIFICATE" /etc/ssl/certs/ca-certificates.crt) || certs=0
  [ "$certs" -gt 100 ] || fail "the CA bundle holds $certs certificates"
  echo "   $image: token through exec, uid 10001, read-only root, $certs CA certificates"
  if [ "$stdio" = stdio ]; then
    answer=$(api POST /v1/servers "$token" \
      '{"config": {"server_id": "everything", "transport": "stdio", "cmd": ["node", "/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"]}}')
    [ "$(tail -n 1 <<<"$answer")" = 201 ] || fail "registering a stdio server: $answer"
    ready "$token" everything
    answer=$(api POST /v1/tools/call "$token" '{"name": "everything__echo", "arguments": {"message": "from the image"}}')
    [ "$(tail -n 1 <<<"$answer")" = 200 ] && grep -q "from the image" <<<"$answer" ||
      fail "calling the stdio server's echo: $answer"
    echo "   $image: a stdio server (node) ready and called"
    started=$SECONDS
    podman restart -t 10 "$name" >/dev/null
    healthy
    ready "$token" everything
    echo "   $image: the server ready again $((SECONDS - started)) s after podman restart, from /data"
  fi
  started=$(date +%s%N)
  podman stop -t 10 "$name" >/dev/null
  took=$((($(date +%s%N) - started) / 1000000))
  code=$(podman inspect --format '{{.State.ExitCode}}' "$name")
  [ "$took" -lt 5000 ] || fail "podman stop took $took ms"
  [ "$code" = 0 ] || fail "the bridge exited $code on SIGTERM, not 0"
  if [ "$stdio" = stdio ] && ! podman logs "$name" 2>&1 | grep -q "stopping every server"; then
    fail "the bridge did not stop its servers on SIGTERM"
  fi
  echo "   $image: podman stop took $took ms, exit code 0"
  cleanup
}

compose_check() {
  local venv=tests/peers/.venv-compose
  # Placeholders for what the file requires; nothing runs. The public images it names
  # (PostgreSQL, NATS, Caddy, node for the example server) cannot be pulled here.
  export MCP_BRIDGE_JWT_SECRET=x MCP_BRIDGE_SECRETS_KEY=x MCP_BRIDGE_NATS_PASSWORD=x
  docker-compose -f docker-compose.yml config -q
  docker-compose -f docker-compose.yml --profile replicas config -q
  "$venv/bin/podman-compose" -f docker-compose.yml config >/dev/null
  "$venv/bin/podman-compose" -f docker-compose.yml --profile replicas config >"$conf_dir/replicas.yml"
  # replica-b waits for PostgreSQL and NATS as replica-a does.
  for replica in replica-a replica-b; do
    for service in postgres nats; do
      "$venv/bin/python" - "$conf_dir/replicas.yml" "$replica" "$service" <<'EOF' ||
import sys, yaml
services = yaml.safe_load(open(sys.argv[1]))["services"]
sys.exit(0 if sys.argv[3] in services[sys.argv[2]].get("depends_on", {}) else 1)
EOF
        fail "$replica does not wait for $service in podman-compose's view"
    done
  done
  echo "   docker-compose $(docker-compose version --short) and $("$venv/bin/podman-compose" --version 2>/dev/null | grep -i podman-compose): default and replicas profiles load"
}

test_images() {
  local binary=${MCP_BRIDGE_BINARY:-target/dist/mcp-bridge} size
  [ -x "$binary" ] || fail "no binary at $binary: cargo build --profile dist first"
  trap cleanup EXIT
  mkdir -p dist
  install -m 755 "$binary" dist/mcp-bridge
  echo "   the binary ($binary): $(du -m "$binary" | cut -f1) MB"
  local build=(podman build -q --build-arg BINARY=prebuilt)
  # Where this machine reaches PyPI through an egress proxy of its own CA (pip's `cert`), the
  # with-tools stage's `pip install uv` is given that CA too: mounted for the build, not baked in.
  local host_ca=${PIP_CERT:-$(pip3 config get global.cert 2>/dev/null || true)}
  if [ -n "$host_ca" ] && [ -f "$host_ca" ]; then
    printf '[global]\ncert = /run/host-ca.crt\n' >"$conf_dir/pip.conf"
    build+=(-v "$host_ca:/run/host-ca.crt:ro" -v "$PWD/$conf_dir/pip.conf:/etc/pip.conf:ro")
  fi
  timed "building the runtime image" "${build[@]}" --target runtime -t mcp-bridge:test . >/dev/null
  timed "building the with-tools image" "${build[@]}" --target with-tools -t mcp-bridge:test-tools . >/dev/null
  size=$(podman image inspect --format '{{.Size}}' mcp-bridge:test)
  echo "   runtime image: $(size_of mcp-bridge:test); with-tools image: $(size_of mcp-bridge:test-tools)"
  [ "$size" -le 120000000 ] || fail "the runtime image is $size bytes, over 120 MB"
  timed "running the with-tools image" run_image mcp-bridge:test-tools stdio
  timed "running the runtime image" run_image mcp-bridge:test plain
  compose_check
}

case $what in
setup) setup ;;
test) test_images ;;
all)
  setup
  test_images
  ;;
*)
  echo "usage: $0 [setup|test]" >&2
  exit 2
  ;;
esac
