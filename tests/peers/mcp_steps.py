"""A real MCP client (the Python `mcp` 2.x SDK) making a list of requests on mcp-bridge's `/mcp`.

Usage: mcp_steps.py URL TOKEN MODE STEPS_JSON

Connects in MODE (`legacy`: the 2025-11-25 initialize handshake; `auto`: `server/discover` first, the
2026-07-28 era), then makes each step of STEPS_JSON in turn, a list of
    {"tool": NAME, "arguments": {...}}     tools/call
    {"read": URI}                          resources/read
    {"prompt": NAME, "arguments": {...}}   prompts/get
Prints one JSON object: the negotiated protocol version and, per step, {"result": the result as JSON}
or {"error": {"code", "message", "data"}} when the request failed with a JSON-RPC error.
"""

import asyncio
import json
import sys

from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


async def step(client, request):
    try:
        if "tool" in request:
            result = await client.call_tool(request["tool"], request.get("arguments", {}))
        elif "read" in request:
            result = await client.read_resource(request["read"])
        else:
            result = await client.get_prompt(request["prompt"], request.get("arguments", {}))
        return {"result": result.model_dump(mode="json", by_alias=True, exclude_none=True)}
    except Exception as failure:  # noqa: BLE001 - the report says what failed
        error = getattr(failure, "error", None)
        if error is None:
            return {"error": {"code": None, "message": repr(failure), "data": None}}
        return {"error": {"code": error.code, "message": error.message, "data": error.data}}


async def main() -> None:
    url, token, mode, steps = sys.argv[1:5]
    headers = {"Authorization": f"Bearer {token}"}
    transport = streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))
    async with Client(transport, mode=mode) as client:
        outcomes = [await step(client, request) for request in json.loads(steps)]
        version = str(getattr(client.session, "protocol_version", ""))
    print(json.dumps({"protocol_version": version, "steps": outcomes}), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
