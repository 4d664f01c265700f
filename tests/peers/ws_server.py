"""Test peer for mcp-bridge integration tests: a real MCP server over WebSocket (Python MCP SDK 1.x).

The 2.x SDK dropped the WebSocket transport, so this peer runs in its own venv pinned to SDK 1.x:
    python3 -m venv tests/peers/.venv-ws
    tests/peers/.venv-ws/bin/pip install -r tests/peers/requirements-ws.txt
    tests/peers/.venv-ws/bin/python tests/peers/ws_server.py --port 0

Usage:
    ws_server.py [--port N]     serve MCP over WebSocket at ws://127.0.0.1:N/ws (N=0, the default: a free
                                port); prints exactly one line "PORT=<port>" to stdout once listening

Server "ws-fixture" 0.1.0 (FastMCP of SDK 1.x) exposes the tools:
    echo(text: str) -> str      returns text
    add(a: int, b: int) -> int  returns a + b
    slow(seconds: float, started: str = "") -> str
                                sleeps (asynchronously) for `seconds`, then returns "done"; given `started`
                                (a file path), it first creates that file (the call has reached the server)
    big(size: int) -> str       returns a text of exactly `size` bytes ("x" repeated)

Transport: the SDK's mcp.server.websocket.websocket_server inside a Starlette app (WebSocket route /ws), run by
uvicorn on 127.0.0.1. One JSON-RPC message per text frame, one MCP session per WebSocket connection. The
client must offer the WebSocket subprotocol "mcp" (Sec-WebSocket-Protocol: mcp); the SDK always accepts with
"mcp", and this peer additionally rejects an upgrade that does not offer it (HTTP 403), so a client that omits
it fails deterministically instead of depending on how strictly the client checks the server's answer.
uvicorn pings every 20 s and closes with 1011 ("keepalive ping timeout") when no pong comes within 20 s. Binary
frames are not MCP here: the SDK fails on one and the connection drops without a close frame.

Environment variables:
    WS_REQUIRE_HEADER=Name=value   reject the upgrade (HTTP 403) unless the upgrade request carries header
                                   Name (case-insensitive) with exactly that value, e.g. X-Api-Key=k-123
    WS_LOG_LEVEL=level             log level of uvicorn and the SDK (stderr); default "warning"
    WS_TLS_CERT=path, WS_TLS_KEY=path
                                   serve wss:// with this certificate (PEM, its chain after it) and key

SIGTERM or SIGINT shuts the server down gracefully (open sockets get close code 1012) and exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import sys
import warnings

import uvicorn
from mcp.server.fastmcp import FastMCP
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.types import Receive, Scope, Send

with warnings.catch_warnings():
    # The 1.x SDK marks its WebSocket transport deprecated (removed in 2.0); that is why this peer pins 1.x.
    warnings.simplefilter("ignore", DeprecationWarning)
    from mcp.server.websocket import websocket_server

SERVER_NAME = "ws-fixture"
SERVER_VERSION = "0.1.0"
SUBPROTOCOL = "mcp"

LOG_LEVEL = os.environ.get("WS_LOG_LEVEL", "warning")

mcp = FastMCP(SERVER_NAME, log_level=LOG_LEVEL.upper())
# FastMCP 1.x takes no version argument; the low-level server reports this in serverInfo.version.
mcp._mcp_server.version = SERVER_VERSION


@mcp.tool()
def echo(text: str) -> str:
    """Return the text unchanged."""
    return text


@mcp.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcp.tool()
async def slow(seconds: float, started: str = "", cancelled: str = "") -> str:
    """Sleep for the given number of seconds, then return "done".

    With `started` (a file path), first create that file: a test waits on it to know the call is in flight.
    With `cancelled` (a file path), create that file if the call is cancelled before it ends (the SDK cancels
    the handler on the client's notifications/cancelled): a test waits on it to know the server saw the cancel."""
    if started:
        open(started, "x").close()
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        if cancelled:
            with open(cancelled, "w") as mark:
                mark.write("cancelled")
        raise
    return "done"


@mcp.tool()
def big(size: int) -> str:
    """Return a text of exactly `size` bytes ("x" repeated)."""
    return "x" * size


def required_header() -> tuple[bytes, bytes] | None:
    """Parse WS_REQUIRE_HEADER ("Name=value") into (lower-case name, value) as bytes, or None when unset."""
    spec = os.environ.get("WS_REQUIRE_HEADER", "")
    if not spec:
        return None
    name, sep, value = spec.partition("=")
    if not sep or not name.strip():
        raise SystemExit(f"WS_REQUIRE_HEADER must look like Name=value, got {spec!r}")
    return name.strip().lower().encode("latin-1"), value.encode("latin-1")


REQUIRED_HEADER = required_header()


def header_ok(scope: Scope) -> bool:
    if REQUIRED_HEADER is None:
        return True
    name, value = REQUIRED_HEADER
    return any(k.lower() == name and v == value for k, v in scope.get("headers", []))


class McpWebSocket:
    """ASGI endpoint for /ws: checks the upgrade request, then runs one MCP session over the socket."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if SUBPROTOCOL not in scope.get("subprotocols", []) or not header_ok(scope):
            # Closing before accepting makes uvicorn answer the upgrade with HTTP 403.
            await send({"type": "websocket.close", "code": 1008})
            return
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            transport = websocket_server(scope, receive, send)
        async with transport as (read_stream, write_stream):
            server = mcp._mcp_server
            await server.run(read_stream, write_stream, server.create_initialization_options())


app = Starlette(routes=[WebSocketRoute("/ws", McpWebSocket())])


async def serve(port: int) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    sock.set_inheritable(True)
    bound_port = sock.getsockname()[1]

    config = uvicorn.Config(
        app,
        log_level=LOG_LEVEL,
        lifespan="off",
        # Do not wait forever for open sessions (e.g. an in-flight slow call) on shutdown.
        timeout_graceful_shutdown=2,
        ssl_certfile=os.environ.get("WS_TLS_CERT"),
        ssl_keyfile=os.environ.get("WS_TLS_KEY"),
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            await task  # start-up failed: re-raise its error
            raise SystemExit("uvicorn stopped before it started")
        await asyncio.sleep(0.01)
    print(f"PORT={bound_port}", flush=True)
    await task


def main() -> None:
    parser = argparse.ArgumentParser(description="MCP WebSocket test peer (ws://127.0.0.1:PORT/ws)")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0 = pick a free port)")
    args = parser.parse_args()

    # uvicorn handles SIGTERM/SIGINT gracefully while serving, then restores these handlers and re-raises the
    # signal; exiting 0 from them (instead of dying by the signal) makes the shutdown a clean exit.
    def exit_cleanly(_signum: int, _frame: object) -> None:
        sys.exit(0)

    signal.signal(signal.SIGTERM, exit_cleanly)
    signal.signal(signal.SIGINT, exit_cleanly)

    asyncio.run(serve(args.port))


if __name__ == "__main__":
    main()
