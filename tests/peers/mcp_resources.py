"""A real MCP client (the Python `mcp` 2.x SDK) reading every resource mcp-bridge's `/mcp` shows.

Usage: mcp_resources.py URL TOKEN MODE [--subscribe URI [--touch TOOL]]

Connects in MODE (`legacy` or `auto`, as mcp_client.py), lists every resource and template (all
pages), reads each resource, and reads each template with every `{variable}` set to `1`. With
--subscribe, subscribes to URI afterwards (a 2025-11-25 session only); with --touch too, calls
TOOL with {"uri": the URI inside a qualified one} and waits up to 10 s for the
notifications/resources/updated it causes. Prints one JSON object: the resource URIs, the template
URIs, for each URI read its text (or "ERROR: " and why), and the URI the update named.
"""

import asyncio
import json
import re
import sys

from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def all_pages(fetch, field):
    items, cursor = [], None
    while True:
        page = await fetch(cursor)
        items.extend(getattr(page, field))
        cursor = page.next_cursor
        if not cursor:
            return items


async def read(client, uri):
    try:
        result = await client.read_resource(uri)
        return " ".join(getattr(c, "text", "<blob>") for c in result.contents) + " @ " + ",".join(
            str(c.uri) for c in result.contents
        )
    except Exception as error:  # noqa: BLE001 - the report says what failed
        return f"ERROR: {error}"


async def main() -> None:
    url, token, mode = sys.argv[1:4]
    flags = sys.argv[4:]
    subscribe = flags[flags.index("--subscribe") + 1] if "--subscribe" in flags else None
    touch = flags[flags.index("--touch") + 1] if "--touch" in flags else None
    updated: asyncio.Queue = asyncio.Queue()

    async def on_message(message):
        if getattr(message, "method", None) == "notifications/resources/updated":
            updated.put_nowait(str(message.params.uri))

    transport = streamable_http_client(url, http_client=create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}))
    async with Client(transport, mode=mode, message_handler=on_message) as client:
        resources = await all_pages(lambda c: client.list_resources(cursor=c), "resources")
        templates = await all_pages(lambda c: client.list_resource_templates(cursor=c), "resource_templates")
        reads = {}
        for resource in resources:
            reads[str(resource.uri)] = await read(client, str(resource.uri))
        for template in templates:
            uri = re.sub(r"\{[^}]*\}", "1", template.uri_template)
            reads[uri] = await read(client, uri)
        subscribed = None
        if subscribe:
            try:
                await client.subscribe_resource(subscribe)
                subscribed = "ok"
            except Exception as error:  # noqa: BLE001
                subscribed = f"ERROR: {error}"
        update = None
        if touch:
            inner = subscribe.split("/", 3)[3] if subscribe.startswith("mcp-bridge://") else subscribe
            await client.call_tool(touch, {"uri": inner})
            try:
                update = await asyncio.wait_for(updated.get(), 10)
            except asyncio.TimeoutError:
                update = "no update within 10 s"
        print(
            json.dumps(
                {
                    "resources": [str(r.uri) for r in resources],
                    "templates": [t.uri_template for t in templates],
                    "reads": reads,
                    "subscribed": subscribed,
                    "updated": update,
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    asyncio.run(main())
