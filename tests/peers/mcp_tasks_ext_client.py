"""A real MCP client of the 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663)
against mcp-bridge's `/mcp`, for tests/api/mcp_tasks.rs. Built on the Python `mcp` 2.x SDK's client
extension API: the extension is declared in the client's capabilities, claims the `resultType: "task"`
answer of `tools/call`, and sends `tasks/get`, `tasks/update` and `tasks/cancel` through the SDK's
session (so they carry its per-request `_meta` and `Mcp-Name` headers).

Usage: mcp_tasks_ext_client.py URL TOKEN run TOOL ARGUMENTS_JSON [--answer NAME]
       mcp_tasks_ext_client.py URL TOKEN start TOOL ARGUMENTS_JSON
       mcp_tasks_ext_client.py URL TOKEN poll TASK_ID
       mcp_tasks_ext_client.py URL TOKEN cancel TOOL ARGUMENTS_JSON

run:    calls TOOL; its task handle is polled with tasks/get to its end. While the task is
        `input_required`, each elicitation among its `inputRequests` is accepted with {"name": NAME}
        through tasks/update (without --answer, an input request fails the client).
start:  calls TOOL and prints its task handle, without polling it.
poll:   polls the task TASK_ID (made by an earlier run of this client) to its end.
cancel: calls TOOL, cancels its task with tasks/cancel, and polls it to its end.

Prints one JSON object: the protocol version, the handle, the statuses seen, the input requests
seen and answered, and the final task (`result` or `error`).
"""

import asyncio
import json
import sys
import time
from typing import Any, Literal

from mcp.client.client import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import CallToolResult, Request, RequestParams, Result
from pydantic import ConfigDict, TypeAdapter

TASKS = "io.modelcontextprotocol/tasks"
ANY = TypeAdapter(dict[str, Any])


class TaskHandle(Result):
    """A `tools/call` answered with a task (`CreateTaskResult`)."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"]
    task_id: str
    status: str


class TaskIdParams(RequestParams):
    task_id: str


class UpdateParams(TaskIdParams):
    input_responses: dict[str, Any]


class GetTask(Request[TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    name_param = "taskId"


class UpdateTask(Request[UpdateParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    name_param = "taskId"


class CancelTask(Request[TaskIdParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    name_param = "taskId"


report: dict[str, Any] = {"statuses": [], "input_requests": [], "answered": []}


async def poll(session, task_id: str, answer: str | None, within: float = 45.0) -> dict[str, Any]:
    """Polls the task to its end, answering its elicitations; the final task."""
    deadline = time.monotonic() + within
    while True:
        task = await session.send_request(GetTask(params=TaskIdParams(task_id=task_id)), ANY)
        status = task["status"]
        if not report["statuses"] or report["statuses"][-1] != status:
            report["statuses"].append(status)
        if status in ("completed", "failed", "cancelled"):
            return task
        if status == "input_required":
            requests = task.get("inputRequests") or {}
            responses = {}
            for key, request in requests.items():
                report["input_requests"].append({"key": key, **request})
                if answer is None or request.get("method") != "elicitation/create":
                    raise RuntimeError(f"unexpected input request {request}")
                responses[key] = {"action": "accept", "content": {"name": answer}}
            if responses:
                acked = await session.send_request(
                    UpdateTask(params=UpdateParams(task_id=task_id, input_responses=responses)), ANY
                )
                report["answered"].append({"keys": sorted(responses), "ack": acked})
        if time.monotonic() > deadline:
            raise TimeoutError(f"task {task_id} did not end within {within} s: {task}")
        await asyncio.sleep(min(task.get("pollIntervalMs", 200), 200) / 1000)


class Tasks(ClientExtension):
    identifier = TASKS

    def __init__(self, mode: str, answer: str | None) -> None:
        self.mode = mode
        self.answer = answer

    def claims(self):
        return [ResultClaim(result_type="task", model=TaskHandle, resolve=self.resolve)]

    async def resolve(self, handle: TaskHandle, ctx: ClaimContext) -> CallToolResult:
        report["handle"] = handle.model_dump(mode="json", by_alias=True, exclude_none=True)
        if self.mode == "start":
            return CallToolResult(content=[])
        if self.mode == "cancel":
            report["cancel_ack"] = await ctx.session.send_request(
                CancelTask(params=TaskIdParams(task_id=handle.task_id)), ANY
            )
        report["task"] = await poll(ctx.session, handle.task_id, self.answer)
        return CallToolResult(content=[])


async def main() -> None:
    url, token, mode = sys.argv[1:4]
    rest = sys.argv[4:]
    answer = rest[rest.index("--answer") + 1] if "--answer" in rest else None
    headers = {"Authorization": f"Bearer {token}"}
    transport = streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))
    async with Client(transport, mode="auto", extensions=[Tasks(mode, answer)]) as client:
        report["protocol_version"] = str(getattr(client.session, "protocol_version", ""))
        if mode == "poll":
            report["task"] = await poll(client.session, rest[0], answer)
        else:
            tools = await client.list_tools()
            report["tools"] = {
                t.name: t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools.tools
            }
            await client.call_tool(rest[0], json.loads(rest[1]))
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
