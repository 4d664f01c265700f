"""A real MCP client (the Python `mcp` 2.x SDK) for the tests of mcp-bridge's own `/mcp` endpoint.

Usage: mcp_client.py URL TOKEN MODE TOOL ARGUMENTS_JSON [--sample TEXT] [--elicit CONTENT_JSON] [--roots URI]
                     [--first-round] [--wait-list-changed]

Connects to URL with `Authorization: Bearer TOKEN` (no header when TOKEN is "-") in MODE (`legacy`:
the 2025-11-25 initialize handshake; `auto`: `server/discover` first), lists the tools, calls TOOL,
and prints one JSON object: the negotiated protocol version, the tool names and the call's result.
With --sample, the client declares sampling and answers every sampling request with TEXT (and says
how many it answered). With --elicit, it declares elicitation and accepts every elicitation with
CONTENT_JSON; with --roots, it declares roots and lists URI as its one root (the report says how often each
was asked). With --first-round, before the call it makes the same call once without answering anything
(`allow_input_required`) and reports that first answer as it came (an input-required result's keys and
requestState). With --wait-list-changed, after the call it waits up to 10 s for a
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
    elicit_content = json.loads(flags[flags.index("--elicit") + 1]) if "--elicit" in flags else None
    root_uri = flags[flags.index("--roots") + 1] if "--roots" in flags else None
    first_round = "--first-round" in flags
    elicited, roots_asked = [], []
    headers = {} if token == "-" else {"Authorization": f"Bearer {token}"}
    sampled = []
    list_changed = asyncio.Event()

    async def sampling(context, params):
        sampled.append(params.messages[0].content.text if params.messages else "")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text=sample_text), model="test-client"
        )

    async def elicitation(context, params):
        elicited.append(params.message)
        return types.ElicitResult(action="accept", content=elicit_content)

    async def list_roots(context):
        roots_asked.append(root_uri)
        return types.ListRootsResult(roots=[types.Root(uri=root_uri, name="the client's root")])

    async def on_message(message):
        if isinstance(message, types.ServerNotification) and isinstance(message, types.ToolListChangedNotification):
            list_changed.set()
        elif getattr(message, "method", None) == "notifications/tools/list_changed":
            list_changed.set()

    transport = streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))
    options = {"mode": mode, "message_handler": on_message}
    if sample_text is not None:
        options["sampling_callback"] = sampling
    if elicit_content is not None:
        options["elicitation_callback"] = elicitation
    if root_uri is not None:
        options["list_roots_callback"] = list_roots
    first = None
    async with Client(transport, **options) as client:
        tools = await client.list_tools()
        if first_round:
            answer = await client.session.call_tool(tool, json.loads(arguments), allow_input_required=True)
            first = answer.model_dump(mode="json", by_alias=True, exclude_none=True)
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
                    "elicited": elicited,
                    "roots_asked": len(roots_asked),
                    "first_round": first,
                    "list_changed": list_changed.is_set(),
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    asyncio.run(main())
