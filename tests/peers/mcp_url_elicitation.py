"""A Python `mcp` 2.x client that takes URL-mode elicitations, for the tests of `/mcp` calls that
wait for the agent's OAuth authorization of a `per_agent` server.

Usage: mcp_url_elicitation.py URL TOKEN MODE TOOL ARGUMENTS_JSON [--read]

Connects to URL with `Authorization: Bearer TOKEN` in MODE (`legacy`: a 2025-11-25 session;
`auto`: stateless 2026-07-28), declaring elicitation (form and URL modes), and calls TOOL.
`legacy`: the call is expected to fail with `UrlElicitationRequiredError` (-32042); `auto`: the
call's input-required result hands the elicitation to the callback. Either way the elicitation
is printed as one JSON line `{"elicitation": ..., "data": ...}` and the client waits for a line
on stdin: the test approves the link meanwhile, as a person would. `legacy` then waits (up to
10 s) for `notifications/elicitation/complete` and calls again. The last line is a JSON report:
the protocol version, the elicitations seen, the ids completed, and the call's final result.
With --read, TOOL is a resource URI, read instead of called (ARGUMENTS_JSON unused).
"""

import asyncio
import json
import sys

from mcp import MCPError, UrlElicitationRequiredError, types
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import URL_ELICITATION_REQUIRED


def show(elicitation: dict, data) -> None:
    print(json.dumps({"elicitation": elicitation, "data": data}), flush=True)


async def approved() -> None:
    """Waits for the test to say the link was approved."""
    line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    if not line:
        raise SystemExit("stdin closed before the approval")


async def main() -> None:
    url, token, mode, tool, arguments = sys.argv[1:6]
    arguments = json.loads(arguments)
    read = "--read" in sys.argv[6:]
    headers = {"Authorization": f"Bearer {token}"}
    seen, completed = [], []
    complete = asyncio.Event()

    async def elicitation(context, params):
        # The 2026-07-28 way: the URL elicitation inside the call's input-required result.
        shown = params.model_dump(mode="json", by_alias=True, exclude_none=True)
        seen.append(shown)
        show(shown, None)
        await approved()
        return types.ElicitResult(action="accept")

    async def on_message(message):
        if getattr(message, "method", None) != "notifications/elicitation/complete":
            return
        params = message.params.model_dump(mode="json", by_alias=True)
        completed.append(params.get("elicitationId"))
        complete.set()

    transport = streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))
    options = {"mode": mode, "message_handler": on_message, "elicitation_callback": elicitation}
    async with Client(transport, **options) as client:

        async def request():
            if read:
                return await client.read_resource(tool)
            return await client.call_tool(tool, arguments)

        try:
            result = await request()
        except MCPError as error:
            if error.code != URL_ELICITATION_REQUIRED:
                raise
            required = UrlElicitationRequiredError.from_error(error.error)
            for wanted in required.elicitations:
                shown = wanted.model_dump(mode="json", by_alias=True, exclude_none=True)
                seen.append(shown)
                show(shown, error.data)
            await approved()
            try:
                await asyncio.wait_for(complete.wait(), 10)
            except asyncio.TimeoutError:
                pass
            result = await request()
        print(
            json.dumps(
                {
                    "protocol_version": str(getattr(client.session, "protocol_version", "")),
                    "elicitations": seen,
                    "completed": completed,
                    "result": result.model_dump(mode="json", by_alias=True, exclude_none=True),
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    asyncio.run(main())
