"""A real MCP client (the Python `mcp` 2.x SDK) for the tests of mcp-bridge's own `/mcp` endpoint.

Usage: mcp_client.py URL TOKEN MODE TOOL ARGUMENTS_JSON [--sample TEXT] [--wait-list-changed]

Connects to URL with `Authorization: Bearer TOKEN` (no header when TOKEN is "-") in MODE (`legacy`:
the 2025-11-25 initialize handshake; `auto`: `server/discover` first), lists the tools, calls TOOL,
and prints one JSON object: the negotiated protocol version, the tool names and the call's result.
With --sample, the client declares sampling and answers every sampling request with TEXT (and says
how many it answered). With --wait-list-changed, after the call it waits up to 10 s for a
`notifications/tools/list_changed` and reports whether one came.
"""

import asyncio
import json
import sys

from mcp import types
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def main() -> None:
    url, token, mode, tool, arguments = sys.argv[1:6]
    flags = sys.argv[6:]
    sample_text = flags[flags.index("--sample") + 1] if "--sample" in flags else None
    wait_list_changed = "--wait-list-changed" in flags
    headers = {} if token == "-" else {"Authorization": f"Bearer {token}"}
    sampled = []
    list_changed = asyncio.Event()

    async def sampling(context, params):
        sampled.append(params.messages[0].content.text if params.messages else "")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=sample_text), model="test-client"
        )

    async def on_message(message):
        if isinstance(message, types.ServerNotification) and isinstance(message, types.ToolListChangedNotification):
            list_changed.set()
        elif getattr(message, "method", None) == "notifications/tools/list_changed":
            list_changed.set()

    transport = streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))
    options = {"mode": mode, "message_handler": on_message}
    if sample_text is not None:
        options["sampling_callback"] = sampling
    async with Client(transport, **options) as client:
        tools = await client.list_tools()
        result = await client.call_tool(tool, json.loads(arguments))
        if wait_list_changed:
            try:
                await asyncio.wait_for(list_changed.wait(), 10)
            except asyncio.TimeoutError:
                pass
        print(
            json.dumps(
                {
                    "protocol_version": str(getattr(client.session, "protocol_version", "")),
                    "tools": [t.name for t in tools.tools],
                    "descriptions": {t.name: t.description for t in tools.tools},
                    "result": result.model_dump(mode="json", by_alias=True, exclude_none=True),
                    "sampled": sampled,
                    "list_changed": list_changed.is_set(),
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    asyncio.run(main())
