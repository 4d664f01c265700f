# mcp-bridge: `docker build -t mcp-bridge .` for the slim image, or
# `docker build --target with-tools -t mcp-bridge:tools .` for one that can also start stdio MCP servers
# written for Node (`npx`) or Python (`uvx`).

ARG RUST_VERSION=1.95

FROM rust:${RUST_VERSION}-slim-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src src
COPY migrations migrations
COPY console console
RUN cargo build --release --locked && cp target/release/mcp-bridge /usr/local/bin/mcp-bridge

# What both images share: CA certificates, curl for the health check, util-linux's setpriv (so stdio
# children die with the bridge), a non-root user and the /data volume.
FROM debian:bookworm-slim AS base
RUN apt-get update \
    && apt-get install -y --no-install-recommends ca-certificates curl util-linux \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin mcp-bridge \
    && mkdir -p /data && chown mcp-bridge /data
COPY --from=build /usr/local/bin/mcp-bridge /usr/local/bin/mcp-bridge
ENV MCP_BRIDGE_DATA_DIR=/data \
    MCP_BRIDGE_BIND=0.0.0.0:8080
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s CMD curl -fsS http://127.0.0.1:8080/healthz || exit 1
ENTRYPOINT ["mcp-bridge"]
CMD ["serve"]

# With Node.js (npx) and Python (uvx) for stdio MCP servers.
FROM base AS with-tools
RUN apt-get update \
    && apt-get install -y --no-install-recommends nodejs npm python3 python3-venv \
    && rm -rf /var/lib/apt/lists/* \
    && python3 -m venv /opt/uv && /opt/uv/bin/pip install --no-cache-dir uv \
    && ln -s /opt/uv/bin/uv /opt/uv/bin/uvx /usr/local/bin/
USER mcp-bridge

# The default image: the bridge alone.
FROM base AS runtime
USER mcp-bridge
