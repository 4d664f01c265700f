"""A real MCP client (the Python `mcp` 2.x SDK) listening to the log messages `/mcp` sends it.

Usage: mcp_logs.py URL TOKEN

Opens a 2025-11-25 session with `Authorization: Bearer TOKEN`, asks for every level
(`logging/setLevel` debug), prints the line `ready`, then collects the `notifications/message`
it gets until its standard input closes, printing `log <data as a JSON string>` for each as it
arrives, and at the end one JSON object: {"logs": [their data]}.
"""

import asyncio
import json
import sys

from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def main() -> None:
    url, token = sys.argv[1], sys.argv[2]
    logs = []

    async def on_log(params):
        logs.append(str(params.data)[:64])
        print("log " + json.dumps(logs[-1]), flush=True)

    transport = streamable_http_client(url, http_client=create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}))
    async with Client(transport, mode="legacy", logging_callback=on_log) as client:
        await client.set_logging_level("debug")
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    print(json.dumps({"logs": logs}), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
