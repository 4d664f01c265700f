#!/usr/bin/env bash
# Proves the Dockerfile's own `compiled` stage, unmodified: builds the `runtime` image with the
# release binary compiled inside it, as `docker build .` does, and records what it proved in
# tests/deploy/compiled.sha256 (the hashes of the Dockerfile, Cargo.lock and .dockerignore).
# scripts/test.sh runs it when those no longer match; run it yourself after changing them, and
# commit the file it writes. About 11 minutes on 2 cores.
#
# No registry is reachable here, so the stage's base, rust:<RUST_VERSION>-slim-bookworm, is made
# locally as Docker's own is: debian:bookworm-slim (scripts/image-test.sh setup) with gcc and
# libc6-dev, and this machine's toolchain of that version copied in. Crates come from this
# machine's cargo registry, mounted, offline.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/image-test.sh setup
export CONTAINERS_CONF=$PWD/target/image-test/containers.conf BUILDAH_ISOLATION=chroot BUILDAH_FORMAT=docker
# Without systemd, Podman logs as errors that it cannot make health check timers: not ours.
podman() { command podman "$@" 2> >(grep -v 'systemd connection' >&2); }
work=target/image-compile
mkdir -p "$work"

version=$(sed -n 's/^ARG RUST_VERSION=//p' Dockerfile)
rust_image=rust:$version-slim-bookworm
if ! podman image exists "$rust_image"; then
  # This machine's toolchain, when it is of that version (rustup cannot fetch another here).
  rustc --version | grep -q "^rustc $version[. ]" || {
    echo "rustc here is $(rustc --version), not the Dockerfile's RUST_VERSION $version" >&2
    exit 1
  }
  sysroot=$(rustc --print sysroot)
  echo "making $rust_image from debian:bookworm-slim and $sysroot"
  rm -rf "$work/context" && mkdir -p "$work/context/rust"
  cp -a "$sysroot/bin" "$sysroot/lib" "$work/context/rust/"
  [ -d "$sysroot/libexec" ] && cp -a "$sysroot/libexec" "$work/context/rust/"
  cat >"$work/context/Containerfile" <<'EOF'
FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
COPY rust /usr/local/rust
ENV CARGO_HOME=/usr/local/cargo \
    PATH=/usr/local/cargo/bin:/usr/local/rust/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    CARGO_NET_OFFLINE=true
EOF
  podman build -q -t "$rust_image" "$work/context" >/dev/null
  rm -rf "$work/context"
fi

registry=${CARGO_HOME:-$HOME/.cargo}/registry
cargo fetch --locked >/dev/null 2>&1 # what the build reads, in the registry it mounts
started=$SECONDS
podman build --target runtime -t mcp-bridge:compiled -v "$registry:/usr/local/cargo/registry" . \
  >"$work/build.log" 2>&1 || {
  tail -n 40 "$work/build.log" >&2
  echo "the Dockerfile's compiled stage failed (log: $work/build.log)" >&2
  exit 1
}
took=$((SECONDS - started))
size=$(podman image inspect --format '{{.Size}}' mcp-bridge:compiled)
binary=$(podman run --rm --network none --entrypoint stat mcp-bridge:compiled -c %s /usr/local/bin/mcp-bridge)
echo "the compiled stage built mcp-bridge:compiled in $took s: image $((size / 1000000)) MB, binary $((binary / 1000000)) MB"
podman run --rm --network none mcp-bridge:compiled --version
sha256sum Dockerfile Cargo.lock .dockerignore >tests/deploy/compiled.sha256
echo "wrote tests/deploy/compiled.sha256: commit it"
