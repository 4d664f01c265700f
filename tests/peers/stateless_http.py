"""Serves a Python `mcp` 2.x server as stateless Streamable HTTP at /mcp on 127.0.0.1, for the 2026-07-28
fixtures (listen_server.py, tasks_server_2026.py): on a socket bound here, so that the one line "PORT=<port>"
printed once it listens names the port it listens on."""

import asyncio
import socket


async def serve_stateless(mcp, port: int, jobs=None) -> None:
    """Serves `mcp` on `port` (0: any) until stopped; `jobs()`, once it listens, starts the background tasks that
    stop with it."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    app = mcp.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1", stateless_http=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started and not task.done():
        await asyncio.sleep(0.01)
    if server.started:
        print(f"PORT={sock.getsockname()[1]}", flush=True)
    background = jobs() if jobs else []
    try:
        await task
    finally:
        for job in background:
            job.cancel()
