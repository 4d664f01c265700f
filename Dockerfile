# mcp-bridge: `docker build -t mcp-bridge .` for the slim image, or
# `docker build --target with-tools -t mcp-bridge:tools .` for one that can also start stdio MCP servers
# written for Node (`npx`) or Python (`uvx`). Podman and Buildah build it the same way.
#
# The binary is compiled in the `compiled` stage below. `--build-arg BINARY=prebuilt` takes
# `dist/mcp-bridge` from the build context instead (a Linux x86_64 glibc binary built on the host
# with `cargo build --profile dist`): scripts/image-test.sh builds both images that way on every
# test run, and scripts/image-compile.sh proves the `compiled` stage whenever this file,
# Cargo.lock or .dockerignore changes.

ARG RUST_VERSION=1.95
# `compiled` unless given: the default is written in the FROM below (`${BINARY:-compiled}`), where
# Buildah 1.28 honours it (it builds no stage named by an ARG's own default).
ARG BINARY

FROM rust:${RUST_VERSION}-slim-bookworm AS compiled
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src src
COPY migrations migrations
COPY console console
# The `dist` profile (Cargo.toml): the release build without debug info or symbols, linked whole.
RUN cargo build --profile dist --locked && cp target/dist/mcp-bridge /usr/local/bin/mcp-bridge

FROM scratch AS prebuilt
COPY dist/mcp-bridge /usr/local/bin/mcp-bridge

FROM ${BINARY:-compiled} AS binary

# CA certificates and tini, from Debian's packages, without what they pull in (openssl and its
# libraries, some 10 MB the bridge has no use for: it speaks TLS with rustls, which reads the bundle).
FROM debian:bookworm-slim AS packages
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates tini \
    && rm -rf /var/lib/apt/lists/*

# What both images share: the CA bundle (a bundle of your own can be mounted over it, or named by
# SSL_CERT_FILE), util-linux's setpriv (Debian's own, so stdio children die with the bridge), tini as
# PID 1 (it passes SIGTERM on and reaps the orphans stdio servers leave), a non-root user and the
# /data volume. The health check is the binary's own (`mcp-bridge health` asks /healthz where
# MCP_BRIDGE_BIND says it listens): no curl.
FROM debian:bookworm-slim AS base
COPY --from=packages /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=packages /usr/bin/tini /usr/bin/tini
RUN useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin mcp-bridge \
    && mkdir -p /data && chown mcp-bridge /data
COPY --from=binary /usr/local/bin/mcp-bridge /usr/local/bin/mcp-bridge
ENV MCP_BRIDGE_DATA_DIR=/data \
    MCP_BRIDGE_BIND=0.0.0.0:8080
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s CMD ["mcp-bridge", "health"]
ENTRYPOINT ["tini", "--", "mcp-bridge"]
CMD ["serve"]

# With Node.js (npx) and Python (uvx) for stdio MCP servers.
FROM base AS with-tools
RUN apt-get update \
    && apt-get install -y --no-install-recommends nodejs npm python3 python3-venv \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb \
    && python3 -m venv /opt/uv && /opt/uv/bin/pip install --no-cache-dir uv \
    && ln -s /opt/uv/bin/uv /opt/uv/bin/uvx /usr/local/bin/
USER mcp-bridge

# The default image: the bridge alone.
FROM base AS runtime
USER mcp-bridge
