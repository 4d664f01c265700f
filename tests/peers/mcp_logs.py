"""A real MCP client (the Python `mcp` 2.x SDK) listening to the log messages `/mcp` sends it.

Usage: mcp_logs.py URL TOKEN SECONDS

Opens a 2025-11-25 session with `Authorization: Bearer TOKEN`, asks for every level
(`logging/setLevel` debug), prints the line `ready`, then for SECONDS collects the
`notifications/message` it gets and prints one JSON object: {"logs": [their data, as text]}.
"""

import asyncio
import json
import sys

from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def main() -> None:
    url, token, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    logs = []

    async def on_log(params):
        logs.append(str(params.data)[:64])

    transport = streamable_http_client(url, http_client=create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}))
    async with Client(transport, mode="legacy", logging_callback=on_log) as client:
        await client.set_logging_level("debug")
        print("ready", flush=True)
        await asyncio.sleep(seconds)
    print(json.dumps({"logs": logs}), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
