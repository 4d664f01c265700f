"""An MCP server that runs a tool as an MCP task (2025-11-25 tasks, the 1.x Python SDK's experimental API).

Usage: tasks_server.py --port P   (0: any; prints exactly one line "PORT=<port>" once listening)

Streamable HTTP at /mcp on 127.0.0.1. Declares the tasks capability for tools/call. Tools:
  slow_task {seconds}  taskSupport "optional": run as a task when the call is task-augmented (then
                       tasks/get, tasks/result, tasks/cancel), else answered in the call; "done" after
                       `seconds`.
  add {a, b}           no task support.
Task ids are given explicitly (not scoped to the creating session), so a client that reconnects with a
new session (a bridge restart) can poll a task it started before. Runs in the .venv-ws venv (mcp 1.30:
the 2.x SDK dropped the experimental tasks).
"""

import argparse
import asyncio
import contextlib
import socket
import uuid
import warnings

import uvicorn
from mcp import types
from mcp.server.experimental.task_context import ServerTaskContext
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.applications import Starlette
from starlette.routing import Mount

warnings.filterwarnings("ignore", category=DeprecationWarning)

server = Server("tasks-fixture")
server.experimental.enable_tasks()


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


async def serve(port: int) -> None:
    manager = StreamableHTTPSessionManager(app=server)

    @contextlib.asynccontextmanager
    async def lifespan(_app):
        async with manager.run():
            yield

    app = Starlette(routes=[Mount("/mcp", app=manager.handle_request)], lifespan=lifespan)
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
    asyncio.run(serve(parser.parse_args().port))
