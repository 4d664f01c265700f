"""A 2026-07-28 MCP server (Python `mcp` 2.x, stateless Streamable HTTP) that offers the tasks extension
(SEP-2663, `io.modelcontextprotocol/tasks`): a client that declares the extension in a request's
clientCapabilities gets a task handle for `slow_task` and `ask_sum`, then polls `tasks/get`, answers input
with `tasks/update` and may `tasks/cancel`. The Python SDK 2.3 has the extension interface (SEP-2133) but no
tasks extension, so this fixture writes its own on that interface.

Usage: tasks_server_2026.py [--port P]
  (0: any; prints exactly one line "PORT=<port>" once listening; Streamable HTTP at /mcp on 127.0.0.1)

Tools:
  slow_task {seconds}  "done" after `seconds`; as a task, its status message says "sleeping S s".
  ask_sum {a, b}       asks "What is your name?" (an elicitation form with a string `name`), then answers
                       "NAME: a+b=N" ("declined" unless accepted). As a task: status input_required with the
                       request under the key "name" until tasks/update answers it; in the call: an
                       input-required result (SEP-2322).
  add {a, b}           a + b, never a task.
  tasks_made           how many tasks this server has made ("0" at first).
$TASKS_CANCELLED, if set, names a file each tasks/cancel appends its task id to.
"""

import argparse
import asyncio
import datetime
import os
import uuid

from stateless_http import serve_stateless

TASKS = "io.modelcontextprotocol/tasks"
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
NAME_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
NAME_QUESTION = "What is your name?"
POLL_MS = 100
TTL_MS = 60_000
INVALID_PARAMS = -32602


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat().replace("+00:00", "Z")


def declared_tasks(meta) -> bool:
    """Whether this request's clientCapabilities declare the tasks extension."""
    capabilities = (meta or {}).get(CAPABILITIES) or {}
    return TASKS in (capabilities.get("extensions") or {})


def name_request() -> dict:
    return {
        "method": "elicitation/create",
        "params": {"mode": "form", "message": NAME_QUESTION, "requestedSchema": NAME_SCHEMA},
    }


def summed(answer, a: int, b: int) -> str:
    """The tool's answer once `answer` (an elicitation result, as JSON or a model) has come."""
    if not isinstance(answer, dict):
        answer = answer.model_dump(by_alias=True, exclude_none=True)
    content = answer.get("content") or {}
    if answer.get("action") != "accept":
        return "declined"
    return f"{content.get('name', '?')}: a+b={a + b}"


def text_result(text: str) -> dict:
    return {"content": [{"type": "text", "text": text}], "isError": False}


class Task:
    """One task: its wire fields, its work, and the input it waits for."""

    def __init__(self) -> None:
        self.task_id = str(uuid.uuid4())
        self.status = "working"
        self.message = None
        self.created = now()
        self.updated = self.created
        self.input_requests = {}
        self.responses = {}
        self.answered = asyncio.Event()
        self.result = None
        self.error = None
        self.job = None

    def set(self, status: str, message=None) -> None:
        self.status, self.message, self.updated = status, message, now()

    def wire(self) -> dict:
        task = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created,
            "lastUpdatedAt": self.updated,
            "ttlMs": TTL_MS,
            "pollIntervalMs": POLL_MS,
        }
        if self.message:
            task["statusMessage"] = self.message
        return task

    def detailed(self) -> dict:
        task = self.wire()
        if self.status == "input_required":
            task["inputRequests"] = self.input_requests
        elif self.status == "completed":
            task["result"] = self.result
        elif self.status == "failed":
            task["error"] = self.error
        return task

    async def ask(self, key: str, request: dict):
        """Waits until tasks/update answers `key`; the answer."""
        self.input_requests = {key: request}
        self.answered.clear()
        self.set("input_required")
        while key not in self.responses:
            await self.answered.wait()
            self.answered.clear()
        self.input_requests = {}
        self.set("working")
        return self.responses.pop(key)


def build_server():
    """The server with its tasks extension (imports the SDK lazily)."""
    from mcp.server.extension import Extension, MethodBinding
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.shared.exceptions import MCPError
    from mcp_types import (
        CallToolResult,
        ElicitRequest,
        ElicitRequestFormParams,
        InputRequiredResult,
        RequestParams,
        TextContent,
    )
    from pydantic import Field

    tasks: dict[str, Task] = {}

    class TaskParams(RequestParams):
        task_id: str = Field(alias="taskId")

    class UpdateParams(TaskParams):
        input_responses: dict = Field(alias="inputResponses", default_factory=dict)

    def find(task_id: str) -> Task:
        task = tasks.get(task_id)
        if task is None:
            raise MCPError(code=INVALID_PARAMS, message=f"no task {task_id}")
        return task

    async def run(task: Task, work) -> None:
        try:
            task.result = await work(task)
            task.set("completed")
        except asyncio.CancelledError:
            task.set("cancelled")
        except Exception as error:  # noqa: BLE001: a fixture reports whatever its work raised
            task.error = {"code": -32603, "message": str(error)}
            task.set("failed")

    class TasksExtension(Extension):
        identifier = TASKS

        def methods(self):
            return (
                MethodBinding("tasks/get", TaskParams, self.get),
                MethodBinding("tasks/update", UpdateParams, self.update),
                MethodBinding("tasks/cancel", TaskParams, self.cancel),
            )

        async def get(self, ctx, params):
            return find(params.task_id).detailed()

        async def update(self, ctx, params):
            task = find(params.task_id)
            task.responses.update(params.input_responses)
            task.answered.set()
            return {}

        async def cancel(self, ctx, params):
            task = find(params.task_id)
            path = os.environ.get("TASKS_CANCELLED")
            if path:
                with open(path, "a", encoding="utf-8") as marks:
                    marks.write(task.task_id + "\n")
            if task.job is not None and not task.job.done():
                task.job.cancel()
            return {}

        async def intercept_tool_call(self, params, ctx, call_next):
            args = params.arguments or {}
            if not declared_tasks(ctx.meta) or params.name not in ("slow_task", "ask_sum"):
                return await call_next(ctx)
            if params.name == "slow_task":
                seconds = float(args.get("seconds", 1))

                async def work(task: Task) -> dict:
                    task.set("working", f"sleeping {seconds} s")
                    await asyncio.sleep(seconds)
                    return text_result("done")
            else:
                a, b = int(args.get("a", 0)), int(args.get("b", 0))

                async def work(task: Task) -> dict:
                    answer = await task.ask("name", name_request())
                    return text_result(summed(answer, a, b))

            task = Task()
            tasks[task.task_id] = task
            task.job = asyncio.get_running_loop().create_task(run(task, work))
            return {"resultType": "task", **task.wire()}

    mcp = MCPServer("tasks-2026-fixture", version="1.0.0", log_level="WARNING", extensions=[TasksExtension()])

    @mcp.tool()
    async def slow_task(seconds: float) -> str:
        """Answers "done" after `seconds`."""
        await asyncio.sleep(seconds)
        return "done"

    @mcp.tool()
    async def ask_sum(a: int, b: int, ctx: Context) -> CallToolResult | InputRequiredResult:
        """Asks for the caller's name, then answers it with a + b."""
        given = ctx.input_responses or {}
        if "name" not in given:
            form = ElicitRequestFormParams(message=NAME_QUESTION, requested_schema=NAME_SCHEMA)
            return InputRequiredResult(input_requests={"name": ElicitRequest(params=form)})
        return CallToolResult(content=[TextContent(text=summed(given["name"], a, b))])

    @mcp.tool()
    def add(a: int, b: int) -> str:
        """a + b."""
        return str(a + b)

    @mcp.tool()
    def tasks_made() -> str:
        """How many tasks this server has made."""
        return str(len(tasks))

    return mcp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    asyncio.run(serve_stateless(build_server(), args.port))


if __name__ == "__main__":
    main()
