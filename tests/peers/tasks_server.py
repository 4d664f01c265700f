"""An MCP server that runs a tool as an MCP task (2025-11-25 tasks, the 1.x Python SDK's experimental API).

Usage: tasks_server.py [--transport http|sse|ws|stdio] [--port P]
  (0: any; the network transports print exactly one line "PORT=<port>" once listening)

Streamable HTTP at /mcp (sse: GET /sse, ws: /ws with subprotocol "mcp") on 127.0.0.1, or stdio. Declares the tasks capability for tools/call. Tools:
  slow_task {seconds}  taskSupport "optional": run as a task when the call is task-augmented (then
                       tasks/get, tasks/result, tasks/cancel), else answered in the call; "done" after
                       `seconds`.
  add {a, b}           no task support.
$TASKS_CANCELLED, if set, names a file each tasks/cancel appends its task id to. Task ids are given explicitly (not scoped to the creating session), so a client that reconnects with a
new session (a bridge restart) can poll a task it started before. Runs in the .venv-ws venv (mcp 1.30:
the 2.x SDK dropped the experimental tasks).
"""

import argparse
import asyncio
import contextlib
import os
import socket
import uuid
import warnings

import uvicorn
from mcp import types
from mcp.server.experimental.task_context import ServerTaskContext
from mcp.server.lowlevel import Server
from mcp.shared.experimental.tasks.helpers import cancel_task
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import Mount, Route

warnings.filterwarnings("ignore", category=DeprecationWarning)

server = Server("tasks-fixture")
support = server.experimental.enable_tasks()


@server.experimental.cancel_task()
async def cancel(request: types.CancelTaskRequest) -> types.CancelTaskResult:
    """The SDK's cancel, noted first in the file $TASKS_CANCELLED names (one task id per line), so a
    test sees the server was asked."""
    path = os.environ.get("TASKS_CANCELLED")
    if path:
        with open(path, "a", encoding="utf-8") as marks:
            marks.write(request.params.taskId + "\n")
    return await cancel_task(support.store, request.params.taskId)


@server.list_tools()
async def list_tools() -> list[types.Tool]:
    number = {"type": "number"}
    return [
        types.Tool(
            name="slow_task",
            description="Sleeps `seconds`, then answers done; runs as a task when asked to.",
            inputSchema={"type": "object", "properties": {"seconds": number}, "required": ["seconds"]},
            execution=types.ToolExecution(taskSupport=types.TASK_OPTIONAL),
        ),
        types.Tool(
            name="add",
            description="a + b",
            inputSchema={"type": "object", "properties": {"a": number, "b": number}},
        ),
    ]


@server.call_tool()
async def call_tool(name: str, arguments: dict):
    ctx = server.request_context
    if name == "add":
        return [types.TextContent(type="text", text=str(arguments["a"] + arguments["b"]))]
    seconds = float(arguments.get("seconds", 1))

    async def work(task: ServerTaskContext) -> types.CallToolResult:
        await task.update_status(f"sleeping {seconds} s")
        await asyncio.sleep(seconds)
        return types.CallToolResult(content=[types.TextContent(type="text", text="done")])

    if ctx.experimental.is_task:
        return await ctx.experimental.run_task(work, task_id=f"fixture-{uuid.uuid4().hex[:12]}")
    await asyncio.sleep(seconds)
    return [types.TextContent(type="text", text="done")]


def http_app() -> Starlette:
    manager = StreamableHTTPSessionManager(app=server)

    @contextlib.asynccontextmanager
    async def lifespan(_app):
        async with manager.run():
            yield

    return Starlette(routes=[Mount("/mcp", app=manager.handle_request)], lifespan=lifespan)


def sse_app() -> Starlette:
    from mcp.server.sse import SseServerTransport

    transport = SseServerTransport("/messages/")

    async def handle_sse(request):
        async with transport.connect_sse(request.scope, request.receive, request._send) as (read, write):
            await server.run(read, write, server.create_initialization_options())
        return Response()

    return Starlette(routes=[Route("/sse", endpoint=handle_sse), Mount("/messages/", app=transport.handle_post_message)])


def ws_app() -> Starlette:
    from mcp.server.websocket import websocket_server
    from starlette.routing import WebSocketRoute

    class HandleWs:
        """An ASGI app (a plain function would be handed a Starlette WebSocket instead)."""

        async def __call__(self, scope, receive, send):
            async with websocket_server(scope, receive, send) as (read, write):
                await server.run(read, write, server.create_initialization_options())

    return Starlette(routes=[WebSocketRoute("/ws", HandleWs())])


async def serve_stdio() -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def serve(port: int, transport: str) -> None:
    app = {"http": http_app, "sse": sse_app, "ws": ws_app}[transport]()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    userver = uvicorn.Server(config)
    task = asyncio.create_task(userver.serve(sockets=[sock]))
    while not userver.started:
        if task.done():
            raise SystemExit("uvicorn stopped before it started")
        await asyncio.sleep(0.05)
    print(f"PORT={sock.getsockname()[1]}", flush=True)
    await task


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--transport", choices=["http", "sse", "ws", "stdio"], default="http")
    args = parser.parse_args()
    if args.transport == "stdio":
        asyncio.run(serve_stdio())
    else:
        asyncio.run(serve(args.port, args.transport))
