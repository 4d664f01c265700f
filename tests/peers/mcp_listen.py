"""A real MCP client (the Python `mcp` 2.x SDK) following a resource on mcp-bridge's `/mcp`.

Usage: mcp_listen.py URL TOKEN MODE URI

MODE `legacy` stays on 2025-11-25 and follows URI with resources/subscribe; `auto` speaks
2026-07-28 and opens one subscriptions/listen stream for URI and the tool list's changes. Prints
one JSON object a line, as things happen, until killed:
  {"event": "ready", "mode": ..., "subscription_id": ..., "honored": ...}  once following
  {"event": "updated", "uri": ...}            for each notifications/resources/updated
  {"event": "tools", "names": [...]}           after each tool list change, the tools listed again
  {"event": "ended", "why": ...}               when the listen stream ends (auto only)
"""

import asyncio
import json
import sys

from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def say(**fields) -> None:
    print(json.dumps(fields), flush=True)


async def tool_names(client) -> list:
    listed = await client.list_tools(cache_mode="refresh")
    return sorted(tool.name for tool in listed.tools)


async def legacy(client, uri: str, changes: asyncio.Queue) -> None:
    await client.subscribe_resource(uri)
    say(event="ready", mode="legacy", subscription_id=None, honored=None)
    while True:
        kind, value = await changes.get()
        if kind == "updated":
            say(event="updated", uri=value)
        else:
            say(event="tools", names=await tool_names(client))


async def modern(client, uri: str) -> None:
    from mcp.client.subscriptions import ResourceUpdated, ToolsListChanged

    async with client.listen(tools_list_changed=True, resource_subscriptions=[uri]) as sub:
        honored = sub.honored.model_dump(by_alias=True, exclude_none=True)
        say(event="ready", mode="auto", subscription_id=sub.subscription_id, honored=honored)
        try:
            async for event in sub:
                if isinstance(event, ResourceUpdated):
                    say(event="updated", uri=event.uri)
                elif isinstance(event, ToolsListChanged):
                    say(event="tools", names=await tool_names(client))
            say(event="ended", why="closed by the server")
        except Exception as error:  # noqa: BLE001 - the report says what ended it
            say(event="ended", why=f"{type(error).__name__}: {error}")


async def main() -> None:
    url, token, mode, uri = sys.argv[1:5]
    changes: asyncio.Queue = asyncio.Queue()

    async def on_message(message):
        method = getattr(message, "method", None)
        if method == "notifications/resources/updated":
            changes.put_nowait(("updated", str(message.params.uri)))
        elif method == "notifications/tools/list_changed":
            changes.put_nowait(("tools", None))

    headers = {"Authorization": f"Bearer {token}"}
    transport = streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))
    async with Client(transport, mode=mode, message_handler=on_message) as client:
        if mode == "legacy":
            await legacy(client, uri, changes)
        else:
            await modern(client, uri)


if __name__ == "__main__":
    asyncio.run(main())
