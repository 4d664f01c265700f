"""A 2026-07-28 MCP server (Python `mcp` 2.x, stateless Streamable HTTP) whose news comes only on
`subscriptions/listen` streams: it has no `resources/subscribe`.

Usage: listen_server.py [--port P]
  (0: any; prints exactly one line "PORT=<port>" once listening; Streamable HTTP at /mcp on 127.0.0.1)

The resource listen://clock reads "tick N"; N goes up every second, and each time the server sends
notifications/resources/updated for it to the listen streams that asked for that URI. One second after
the first listen stream opens, the server adds the tool `late` (answers "late") and sends
notifications/tools/list_changed to the streams that asked for list changes. The tool `listeners`
answers how many listen streams are open now, and `following` the resource URIs they follow (sorted,
one per line, "" when none). The tool `grow {name}` adds a tool `name` (answering its name) and sends
notifications/tools/list_changed to the streams that asked for list changes.
"""

import argparse
import asyncio

from stateless_http import serve_stateless

CLOCK_URI = "listen://clock"


def build_server():
    """The server, its subscription bus and what its listen streams follow (imports the SDK lazily)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
    from mcp_types import SubscriptionsListenRequestParams

    bus = InMemorySubscriptionBus()
    mcp = MCPServer("listen-fixture", version="1.0.0", log_level="WARNING", subscriptions=bus)
    # "streams": the resource URIs each open listen stream asked for, by a key of its own.
    state = {"tick": 0, "opened": 0, "streams": {}, "first": asyncio.Event()}

    @mcp.resource(CLOCK_URI, name="clock", mime_type="text/plain")
    def clock() -> str:
        """The current tick."""
        return f"tick {state['tick']}"

    @mcp.tool()
    def listeners() -> str:
        """How many subscriptions/listen streams are open now."""
        return str(len(state["streams"]))

    @mcp.tool()
    def following() -> str:
        """The resource URIs the open listen streams follow, sorted, one per line ("" when none)."""
        return "\n".join(sorted({uri for uris in state["streams"].values() for uri in uris}))

    @mcp.tool()
    async def grow(name: str) -> str:
        """Adds a tool `name` (answering its name) and announces the change."""
        from mcp.server.subscriptions import ToolsListChanged

        def added() -> str:
            return name

        mcp.add_tool(added, name=name, description="A tool added by grow.")
        await bus.publish(ToolsListChanged())
        return name

    # The SDK's own listen handler, with each stream's URIs noted for as long as it is open (the
    # handler returns, or is cancelled when the client goes, as the stream ends).
    handler = ListenHandler(bus)

    async def listen(ctx, params):
        key = object()
        state["opened"] += 1
        state["streams"][key] = list(params.notifications.resource_subscriptions or [])
        state["first"].set()
        try:
            return await handler(ctx, params)
        finally:
            del state["streams"][key]

    mcp._lowlevel_server.add_request_handler("subscriptions/listen", SubscriptionsListenRequestParams, listen)
    return mcp, bus, state


async def tick(bus, state) -> None:
    """Every second: the clock moves on, and its listeners hear of it."""
    from mcp.server.subscriptions import ResourceUpdated

    while True:
        await asyncio.sleep(1)
        state["tick"] += 1
        await bus.publish(ResourceUpdated(uri=CLOCK_URI))


async def grow(mcp, bus, state) -> None:
    """A second after the first listen opened: a new tool, announced to the listeners."""
    from mcp.server.subscriptions import ToolsListChanged

    await state["first"].wait()
    await asyncio.sleep(1)

    def late() -> str:
        """A tool added at run time."""
        return "late"

    mcp.add_tool(late, name="late")
    await bus.publish(ToolsListChanged())


async def serve(port: int) -> None:
    """Serve, with the clock and the late tool running once it listens."""
    mcp, bus, state = build_server()

    def jobs():
        return [asyncio.create_task(tick(bus, state)), asyncio.create_task(grow(mcp, bus, state))]

    await serve_stateless(mcp, port, jobs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    asyncio.run(serve(args.port))


if __name__ == "__main__":
    main()
