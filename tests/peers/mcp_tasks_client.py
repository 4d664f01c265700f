"""A real MCP client using 2025-11-25 tasks (the Python `mcp` 1.x SDK: 2.x dropped them) against
mcp-bridge's `/mcp`, for tests/api/mcp_tasks.rs.

Usage: mcp_tasks_client.py URL TOKEN TOOL STARTED_PATH

TOOL is py_server.py's `slow` as /mcp names it (it sleeps `seconds`, and writes `started` when it
begins). The client initializes, runs TOOL as a task and polls it to its end, fetches its result,
waits on the result of another task while it runs, lists its tasks, cancels a running task (and
again), and asks for an unknown task. It prints one JSON object a line, each with its `step`.
"""

import asyncio
import json
import os
import sys
import time

import httpx
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError


def say(step: str, **fields) -> None:
    print(json.dumps({"step": step, **fields}), flush=True)


def dump(model) -> dict:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def error_of(call) -> dict:
    try:
        got = await call
    except McpError as e:
        return {"code": e.error.code, "message": e.error.message}
    return {"unexpected": dump(got)}


async def wait_file(path: str, within: float = 15.0) -> None:
    deadline = time.monotonic() + within
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} was not written within {within} s")
        await asyncio.sleep(0.05)


async def main() -> None:
    url, token, tool, started = sys.argv[1:5]
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(30, read=60)) as http:
        async with streamable_http_client(url, http_client=http) as (read, write, _):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                tasks = init.capabilities.tasks
                say("initialize", protocol_version=init.protocolVersion, tasks=dump(tasks) if tasks else None)
                tasks_api = session.experimental

                # A task polled to its end, then its result.
                created = await tasks_api.call_tool_as_task(tool, {"seconds": 0.5}, ttl=60_000)
                task_id = created.task.taskId
                say("created", task=dump(created.task))
                statuses = []
                deadline = time.monotonic() + 30
                while True:
                    got = await tasks_api.get_task(task_id)
                    statuses.append(got.status)
                    if got.status in ("completed", "failed", "cancelled") or time.monotonic() > deadline:
                        break
                    await asyncio.sleep(0.1)
                say("polled", statuses=statuses, task=dump(got))
                result = await tasks_api.get_task_result(task_id, types.CallToolResult)
                say("result", result=dump(result))

                # tasks/result waits for a task still running.
                waited = await tasks_api.call_tool_as_task(tool, {"seconds": 1}, ttl=60_000)
                began = time.monotonic()
                result = await tasks_api.get_task_result(waited.task.taskId, types.CallToolResult)
                say("waited", task_id=waited.task.taskId, result=dump(result), seconds=time.monotonic() - began)

                # A running task cancelled, then cancelled again.
                running = await tasks_api.call_tool_as_task(tool, {"seconds": 30, "started": started}, ttl=60_000)
                await wait_file(started)
                cancelled = await tasks_api.cancel_task(running.task.taskId)
                say("cancelled", task=dump(cancelled))
                say("cancel_again", error=await error_of(tasks_api.cancel_task(running.task.taskId)))
                after = await tasks_api.get_task(running.task.taskId)
                say("after_cancel", task=dump(after))

                listed = await tasks_api.list_tasks()
                say("list", tasks=[dump(t) for t in listed.tasks])
                say("unknown", error=await error_of(tasks_api.get_task("no-such-task")))
                say("unknown_result", error=await error_of(tasks_api.get_task_result("no-such-task", types.CallToolResult)))

                # A call without `task` is as before.
                plain = await session.call_tool(tool, {"seconds": 0})
                say("plain", result=dump(plain))
    say("end")


if __name__ == "__main__":
    asyncio.run(main())
