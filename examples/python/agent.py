#!/usr/bin/env python3
"""An agent of mcp-bridge in Python: REST through the client generated from the bridge's OpenAPI
document (`mcp_bridge_client` beside this file, written by openapi-python-client:
scripts/gen-clients.sh), and a hand-written SSE reader for the event stream (generated clients do
not do server-sent events), with asyncio.

It opens its event stream (GET /v1/events) first, lists the registered servers, registers
server-everything over stdio as `py-example`, calls `py-example__echo`, calls a tool that does not
exist and reads the error answer (404 `mcp_tool_not_found`) through the generated `ErrorBody`,
then calls `py-example__trigger-sampling-request` and, while that call is in flight, answers the
`mcp/sample/req` the server sends back through the bridge (POST /v1/sampling/responses). Last, it
unregisters the server.

Needs httpx and attrs (what the generated client imports); run it from anywhere, the client
package is found beside this file.

Environment:
    MCP_BRIDGE_URL     the bridge, e.g. http://127.0.0.1:8080
    MCP_BRIDGE_TOKEN   an admin token (registering a stdio server runs a command on the host):
                       mcp-bridge token --sub me --admin
    EVERYTHING_BIN     the server-everything executable (run as `$EVERYTHING_BIN stdio`)

Exits 0 when every step worked, 1 with a message on stderr otherwise (2 for a missing variable).
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
from mcp_bridge_client import AuthenticatedClient
from mcp_bridge_client.api.events import sampling_response
from mcp_bridge_client.api.servers import list_servers, register_server, unregister_server
from mcp_bridge_client.api.tools import call_tool as call_tool_api
from mcp_bridge_client.models import (
    ErrorBody,
    McpServerConfig,
    McpServerInfo,
    SamplingAck,
    SamplingResponse,
    SamplingResponseContent,
    ServerListResponse,
    ServerRegisterRequest,
    ServerRegisterResponse,
    ServerUnregisterResponse,
    ToolCallRequest,
    ToolCallRequestArguments,
    ToolCallResponse,
)
from mcp_bridge_client.types import Response

SERVER_ID = "py-example"
ANSWER_TEXT = "Hello from the Python agent"

# Every wait is bounded.
REQUEST_TIMEOUT = 60.0  # one REST request (registration connects the server: up to ~30 s)
STREAM_OPEN_TIMEOUT = 10.0  # until the event stream's response headers arrive
SAMPLING_WAIT = 30.0  # until the mcp/sample/req event arrives
CALL_TIMEOUT = 30.0  # the sampling call, once answered
SERVER_TIMEOUT = 60  # the server's own `timeout` (seconds): bounds each call upstream


class ExampleError(Exception):
    """A step failed; the message says which and why."""


# ---------------------------------------------------------------------------------------------
# Server-sent events
# ---------------------------------------------------------------------------------------------


@dataclass
class SseEvent:
    event: str  # the `event:` field ("message" when absent); for the bridge, the A2E type
    data: str  # the `data:` lines, joined with "\n"
    id: str | None  # the last `id:` seen on the stream (for Last-Event-ID)

    def json(self) -> Any:
        return json.loads(self.data)


async def parse_sse(lines: AsyncIterator[str]) -> AsyncIterator[SseEvent]:
    """Turns the lines of a text/event-stream into events.

    An event is a run of `field: value` lines ended by a blank line. `data:` lines accumulate
    (joined with newlines), `event:` names the event, `id:` sets the last event id; a line that
    starts with `:` is a comment (the bridge's keep-alives) and is ignored, as are unknown
    fields. One space after the colon is not part of the value. A block with no data is not
    dispatched.
    """
    event_type = ""
    data_lines: list[str] = []
    last_id: str | None = None
    async for line in lines:
        if line == "":
            if data_lines:
                yield SseEvent(event_type or "message", "\n".join(data_lines), last_id)
            event_type, data_lines = "", []
            continue
        if line.startswith(":"):
            continue
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "event":
            event_type = value
        elif name == "data":
            data_lines.append(value)
        elif name == "id" and "\0" not in value:
            last_id = value
        # `retry:` and anything else: nothing to do here.


class EventStream:
    """The agent's GET /v1/events, read by a background task into a queue."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self._client = client
        self._queue: asyncio.Queue[SseEvent | BaseException] = asyncio.Queue()
        self._opened = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def open(self) -> None:
        """Starts the reader and returns once the bridge has answered 200 (from then on, every
        event for this agent reaches the stream)."""
        self._task = asyncio.create_task(self._run(), name="event-stream")
        opened = asyncio.create_task(self._opened.wait())
        done, _ = await asyncio.wait(
            {opened, self._task}, timeout=STREAM_OPEN_TIMEOUT, return_when=asyncio.FIRST_COMPLETED
        )
        if opened not in done:
            opened.cancel()
            if self._task in done:  # the reader ended first: say why
                error = self._task.exception() if not self._task.cancelled() else None
                why = str(error) if isinstance(error, ExampleError) else describe_error(error)
                raise ExampleError(f"the event stream could not be opened: {why}")
            raise ExampleError(f"the event stream did not open within {STREAM_OPEN_TIMEOUT:.0f} s")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except BaseException:  # cancelled, or it had failed already: either way it is done
                pass

    async def _run(self) -> None:
        try:
            # No read timeout on the stream itself: it is quiet between events (keep-alive
            # comments come every MCP_BRIDGE_KEEPALIVE_SECS); the waits on the queue are bounded.
            timeout = httpx.Timeout(REQUEST_TIMEOUT, read=None)
            async with self._client.stream("GET", "/v1/events", timeout=timeout) as response:
                if response.status_code != 200:
                    body = (await response.aread()).decode(errors="replace")
                    raise ExampleError(f"GET /v1/events answered {response.status_code}: {body}")
                self._opened.set()
                async for event in parse_sse(response.aiter_lines()):
                    describe_event(event)
                    await self._queue.put(event)
            raise ExampleError("the event stream ended")
        except asyncio.CancelledError:
            raise
        except BaseException as error:  # hand the failure to whoever waits for an event
            await self._queue.put(error)
            raise

    async def wait_for(
        self,
        matches: Callable[[SseEvent], bool],
        timeout: float,
        what: str,
        unless: asyncio.Task[Any] | None = None,
    ) -> SseEvent:
        """The next event that `matches`, within `timeout` seconds. When the task `unless` ends
        first (say, the call that should cause the event failed), gives up at once."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            item = await self._next(deadline, unless)
            if item is None:
                if unless is not None and unless.done():
                    outcome = unless.exception() or unless.result()
                    raise ExampleError(f"no {what}: the call ended first with {outcome}")
                raise ExampleError(f"no {what} within {timeout:.0f} s")
            if isinstance(item, BaseException):
                raise ExampleError(f"while waiting for {what}: {item}")
            if matches(item):
                return item

    async def _next(
        self, deadline: float, unless: asyncio.Task[Any] | None
    ) -> SseEvent | BaseException | None:
        """The next item of the queue; None once the deadline passes or `unless` is done."""
        if not self._queue.empty():  # what has arrived already comes first
            return self._queue.get_nowait()
        remaining = deadline - asyncio.get_running_loop().time()
        if remaining <= 0 or (unless is not None and unless.done()):
            return None
        getter = asyncio.create_task(self._queue.get())
        waits: set[asyncio.Future[Any]] = {getter} if unless is None else {getter, unless}
        done, _ = await asyncio.wait(waits, timeout=remaining, return_when=asyncio.FIRST_COMPLETED)
        if getter in done:
            return getter.result()
        getter.cancel()  # a cancelled get() takes nothing from the queue
        return None


def describe_error(error: BaseException | None) -> str:
    """httpx's messages can be terse ("All connection attempts failed"): name the kind too."""
    return f"{type(error).__name__}: {error}" if error is not None else "no error"


def describe_event(event: SseEvent) -> None:
    """One line per event as it arrives, to show what the stream carries."""
    try:
        data = event.json()
    except ValueError:
        print(f"  [event {event.event}] {event.data[:120]}")
        return
    detail = data.get("method") or data.get("id", "")
    if data.get("method") == "bridge/server_status":
        detail += f" -> {data.get('params', {}).get('status')}"
    print(f"  [event {event.event}] server={data.get('server_id', '')} {detail}")


# ---------------------------------------------------------------------------------------------
# REST calls
# ---------------------------------------------------------------------------------------------


T = TypeVar("T")


async def expect(what: str, expected: int, call: Any, answer_type: type[T]) -> T:
    """Awaits a generated `asyncio_detailed` call; anything but the `expected` status with an
    `answer_type` body is an ExampleError naming the bridge's `code` and `error` (every error
    answer of the API is an ErrorBody)."""
    try:
        response: Response[Any] = await call
    except httpx.HTTPError as error:
        raise ExampleError(f"{what} failed: {describe_error(error)}") from error
    answer = response.parsed
    if response.status_code != expected or not isinstance(answer, answer_type):
        detail = (
            f"{answer.code} {answer.error}"
            if isinstance(answer, ErrorBody)
            else response.content.decode(errors="replace")[:300]
        )
        raise ExampleError(
            f"{what} answered HTTP {response.status_code} (expected {expected}): {detail}"
        )
    return answer


async def call_tool(
    client: AuthenticatedClient, name: str, arguments: dict[str, Any]
) -> ToolCallResponse:
    body = ToolCallRequest(name=name, arguments=ToolCallRequestArguments.from_dict(arguments))
    result = await expect(
        f"POST /v1/tools/call {name}",
        200,
        call_tool_api.asyncio_detailed(client=client, body=body),
        ToolCallResponse,
    )
    if result.is_error:
        raise ExampleError(f"{name} answered a tool error: {tool_text(result)}")
    return result


def tool_text(result: ToolCallResponse) -> str:
    """The text blocks of a tool result (MCP content blocks: `{"type": "text", "text": ...}`)."""
    blocks = [block.to_dict() for block in result.content]
    return "\n".join(str(block.get("text", "")) for block in blocks if block.get("type") == "text")


# ---------------------------------------------------------------------------------------------
# The agent
# ---------------------------------------------------------------------------------------------


async def run(bridge_url: str, token: str, everything_bin: str) -> None:
    client = AuthenticatedClient(
        base_url=bridge_url, token=token, timeout=httpx.Timeout(REQUEST_TIMEOUT)
    )
    async with client:
        # The event stream goes through the generated client's own httpx client (its base URL
        # and token).
        events = EventStream(client.get_async_httpx_client())
        registered = False
        try:
            print("== 1. open the event stream: GET /v1/events")
            await events.open()
            print("   open")

            print("== 2. list the registered servers: GET /v1/servers")
            listing = await expect(
                "GET /v1/servers",
                200,
                list_servers.asyncio_detailed(client=client),
                ServerListResponse,
            )
            ids = ", ".join(f"{s.server_id} ({s.status})" for s in listing.servers)
            print(f"   {len(listing.servers)} server(s)" + (f": {ids}" if ids else ""))

            print(f"== 3. register server-everything over stdio as {SERVER_ID!r}: POST /v1/servers")
            config = McpServerConfig(
                server_id=SERVER_ID,
                transport="stdio",
                cmd=[everything_bin, "stdio"],
                timeout=SERVER_TIMEOUT,
            )
            registration = await expect(
                "POST /v1/servers",
                201,
                register_server.asyncio_detailed(
                    client=client, body=ServerRegisterRequest(config=config)
                ),
                ServerRegisterResponse,
            )
            registered = True
            server = registration.server
            if not isinstance(server, McpServerInfo):
                raise ExampleError(f"the registration answered no server: {registration}")
            print(f"   status={server.status} tools={server.tools_count}", end=" ")
            print(f"server_name={server.server_name}")

            print(f"== 4. call {SERVER_ID}__echo: POST /v1/tools/call")
            echo = await call_tool(client, f"{SERVER_ID}__echo", {"message": "hello from Python"})
            print(f"   result: {tool_text(echo)}")
            if "hello from Python" not in tool_text(echo):
                raise ExampleError(f"the echo did not come back: {echo}")

            print(
                f"== 5. call a tool that does not exist: POST /v1/tools/call {SERVER_ID}__no-such-tool"
            )
            missing = await call_tool_api.asyncio_detailed(
                client=client,
                body=ToolCallRequest(
                    name=f"{SERVER_ID}__no-such-tool", arguments=ToolCallRequestArguments()
                ),
            )
            refusal = missing.parsed
            if missing.status_code != 404 or not isinstance(refusal, ErrorBody):
                raise ExampleError(f"expected 404, got HTTP {missing.status_code}: {refusal}")
            print(
                f"   HTTP 404 code={refusal.code} retryable={refusal.retryable} "
                f"error={refusal.error!r}"
            )
            if refusal.code != "mcp_tool_not_found" or refusal.retryable:
                raise ExampleError(f"unexpected error answer: {refusal}")

            print(
                f"== 6. call {SERVER_ID}__trigger-sampling-request and answer its sampling request"
            )
            call = asyncio.create_task(
                call_tool(client, f"{SERVER_ID}__trigger-sampling-request", {"prompt": "Say hello"})
            )
            try:
                sample = await events.wait_for(
                    lambda e: (
                        e.event == "mcp/sample/req" and e.json().get("server_id") == SERVER_ID
                    ),
                    SAMPLING_WAIT,
                    "mcp/sample/req event",
                    unless=call,
                )
                request_data = sample.json()
                prompt = request_data["messages"][0]["content"].get("text", "")
                print(f"   sampling request {request_data['id']}: {prompt!r}")
                answer = SamplingResponse(
                    req_id=request_data["id"],
                    content=SamplingResponseContent.from_dict(
                        {"type": "text", "text": ANSWER_TEXT}
                    ),
                    model="example-model",
                    stop_reason="endTurn",
                )
                ack = await expect(
                    "POST /v1/sampling/responses",
                    202,
                    sampling_response.asyncio_detailed(client=client, body=answer),
                    SamplingAck,
                )
                print(f"   answered: POST /v1/sampling/responses -> 202 ok={ack.ok}")
                try:
                    result = await asyncio.wait_for(call, CALL_TIMEOUT)
                except asyncio.TimeoutError:
                    raise ExampleError(
                        f"the sampling call did not finish within {CALL_TIMEOUT:.0f} s"
                    ) from None
            finally:
                if not call.done():
                    call.cancel()
            text = tool_text(result)
            print("   result: " + text.replace("\n", "\n           "))
            if ANSWER_TEXT not in text:
                raise ExampleError(
                    f"the sampling result does not carry the answer {ANSWER_TEXT!r}: {text}"
                )

            print(f"== 7. unregister {SERVER_ID}: DELETE /v1/servers/{SERVER_ID}")
            await expect(
                f"DELETE /v1/servers/{SERVER_ID}",
                200,
                unregister_server.asyncio_detailed(SERVER_ID, client=client),
                ServerUnregisterResponse,
            )
            registered = False
            print("   unregistered")
        finally:
            if registered:  # a step failed: do not leave the server behind
                try:
                    await unregister_server.asyncio_detailed(SERVER_ID, client=client)
                except httpx.HTTPError:
                    pass
            await events.close()


def main() -> int:
    names = ("MCP_BRIDGE_URL", "MCP_BRIDGE_TOKEN", "EVERYTHING_BIN")
    missing = [name for name in names if not os.environ.get(name)]
    if missing:
        print(f"python agent: set {', '.join(missing)} (see examples/README.md)", file=sys.stderr)
        return 2
    if isinstance(sys.stdout, io.TextIOWrapper):  # keep the order of stdout and stderr lines
        sys.stdout.reconfigure(line_buffering=True)
    try:
        url, token, everything_bin = (os.environ[name] for name in names)
        asyncio.run(run(url.rstrip("/"), token, everything_bin))
    except ExampleError as error:
        print(f"python agent: FAILED: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # a bug or an answer of an unexpected shape: still say so plainly
        print(
            f"python agent: FAILED unexpectedly: {type(error).__name__}: {error}", file=sys.stderr
        )
        return 1
    print("python agent: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
