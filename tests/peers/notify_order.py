"""Test peers for the order of a call's notifications and its result (the Python `mcp` 2.x SDK).

Usage (first argument selects the mode):
    notify_order.py server                       serve MCP over stdin/stdout
    notify_order.py client URL TOKEN TOOL TIMES N [ERA]

Server "notify-fixture" exposes one tool, countdown(n): it sends n progress notifications
(progress 1..n, total n), then one log message (notifications/message, level info, data "log n"),
then returns "done" at once, with no pause anywhere: what it sends last comes right before its result.

The client opens a 2025-11-25 session on URL with `Authorization: Bearer TOKEN` and asks for every log
level (`logging/setLevel` debug); with ERA 2026 it is a stateless 2026-07-28 client instead, whose every
request asks for every level in its `_meta` (`io.modelcontextprotocol/logLevel` debug). It then calls TOOL ({"n": N}) TIMES times one after the other, each
with a progress callback. For each call it notes what reached it before the call returned, in the
order it came: "p<progress>" for each progress notification, "log <data>" for each log message. It
then waits 1 s for anything late, and prints one JSON object: {"calls": [[notes of each call]],
"late": [notes after the last call], "results": [the text of each result]}.
"""

import asyncio
import json
import sys


def serve() -> None:
    from mcp.server.mcpserver import Context, MCPServer

    mcp = MCPServer("notify-fixture", version="1.0.0", log_level="WARNING")

    @mcp.tool(structured_output=False)
    async def countdown(n: int, ctx: Context) -> str:
        """Send n progress notifications and one log message, then return "done"."""
        for i in range(1, n + 1):
            await ctx.report_progress(i, n)
        await ctx.info(f"log {n}")
        return "done"

    mcp.run("stdio")


async def drive(url: str, token: str, tool: str, times: int, n: int, era: str) -> None:
    from mcp.client.client import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    notes: list[str] = []

    async def on_log(params) -> None:
        notes.append(f"log {params.data}")

    async def on_progress(progress, total, message) -> None:
        notes.append(f"p{progress:g}")

    calls, results = [], []
    transport = streamable_http_client(url, http_client=create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}))
    if era == "2026":
        options = {"mode": "auto", "log_level": "debug"}
    else:
        options = {"mode": "legacy"}
    async with Client(transport, logging_callback=on_log, **options) as client:
        if era != "2026":
            await client.set_logging_level("debug")
        for _ in range(times):
            result = await client.call_tool(tool, {"n": n}, progress_callback=on_progress)
            calls.append(list(notes))
            notes.clear()
            results.append(result.content[0].text if result.content else "")
        await asyncio.sleep(1)
    print(json.dumps({"calls": calls, "late": notes, "results": results}), flush=True)


def main() -> None:
    if sys.argv[1:2] == ["server"]:
        serve()
    elif sys.argv[1:2] == ["client"] and len(sys.argv) in (7, 8):
        url, token, tool, times, n = sys.argv[2:7]
        era = sys.argv[7] if len(sys.argv) == 8 else "2025"
        asyncio.run(drive(url, token, tool, int(times), int(n), era))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
