"""Test peer for mcp-bridge integration tests: a real MCP server built on the Python SDK.

Usage (first argument selects the mode):
    py_server.py stdio               serve MCP over stdin/stdout
    py_server.py http [--port N]     serve Streamable HTTP at http://127.0.0.1:N/mcp (N=0: free port);
                                     prints one line "PORT=<port>" to stdout once listening
    py_server.py crash               print two lines to stderr and exit 3 without speaking MCP
    py_server.py hang                read stdin until EOF, never answering anything

Server "py-fixture" 1.2.3 exposes the tools add, echo, image, audio, link, embedded, fail,
slow, getenv, cwd and grow (which adds a tool at run time and sends tools/list_changed), the resource fixture://doc/1 and the prompt greet.
"""

import argparse
import asyncio
import os
import socket
import sys

# A valid 1x1 RGBA PNG and a valid 4-sample mono 16-bit WAV.
PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
WAV_TINY = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQgAAAAAAAAAAAAAAA=="
DOC_URI = "fixture://doc/1"


def build_server():
    """Build the MCP server (imports the SDK lazily so crash/hang start instantly)."""
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp_types import AudioContent, EmbeddedResource, ImageContent, ResourceLink, TextResourceContents

    mcp = MCPServer("py-fixture", version="1.2.3", log_level="WARNING")

    @mcp.tool()
    def add(a: int, b: int) -> int:
        """Add two integers (structured output: {"result": a + b})."""
        return a + b

    @mcp.tool(structured_output=False)
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @mcp.tool()
    def image() -> ImageContent:
        """Return a 1x1 PNG."""
        return ImageContent(data=PNG_1X1, mime_type="image/png")

    @mcp.tool()
    def audio() -> AudioContent:
        """Return a tiny WAV clip."""
        return AudioContent(data=WAV_TINY, mime_type="audio/wav")

    @mcp.tool()
    def link() -> ResourceLink:
        """Return a link to fixture://doc/1."""
        return ResourceLink(uri=DOC_URI, name="doc1", mime_type="text/plain")

    @mcp.tool()
    def embedded() -> EmbeddedResource:
        """Return fixture://doc/1 embedded as text."""
        contents = TextResourceContents(uri=DOC_URI, text="hello embedded", mime_type="text/plain")
        return EmbeddedResource(resource=contents)

    @mcp.tool(structured_output=False)
    def fail() -> str:
        """Always fail; the SDK turns the exception into a result with isError=true."""
        raise ToolError("fixture failure: this tool always fails")

    @mcp.tool(structured_output=False)
    async def slow(seconds: float) -> str:
        """Sleep for the given number of seconds, then return "done"."""
        await asyncio.sleep(seconds)
        return "done"

    @mcp.tool(structured_output=False)
    def getenv(name: str) -> str:
        """Return the value of an environment variable, or "<unset>"."""
        return os.environ.get(name, "<unset>")

    @mcp.tool(structured_output=False)
    def cwd() -> str:
        """Return the server process's working directory."""
        return os.getcwd()

    @mcp.tool(structured_output=False)
    async def grow(name: str, ctx: Context) -> str:
        """Add a tool called `name` that returns "grown", and tell the client the tool list changed."""

        def grown() -> str:
            return "grown"

        mcp.add_tool(grown, name=name, description="Added at run time by grow", structured_output=False)
        await ctx.session.send_tool_list_changed()
        return f"added {name}"

    @mcp.resource(DOC_URI, name="doc1", mime_type="text/plain")
    def doc1() -> str:
        """A static text document."""
        return "hello resource"

    @mcp.prompt()
    def greet(name: str) -> str:
        """Greet someone by name."""
        return f"Hello, {name}!"

    return mcp


async def serve_http(mcp, port: int) -> None:
    """Serve Streamable HTTP on a socket bound here, so the printed port is the one listening."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)
    app = mcp.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started and not task.done():
        await asyncio.sleep(0.01)
    if server.started:
        print(f"PORT={sock.getsockname()[1]}", flush=True)
    await task


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["stdio", "http", "crash", "hang"])
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()

    if args.mode == "crash":
        sys.stderr.write("fixture: starting\nfixture: fatal: config missing\n")
        sys.stderr.flush()
        sys.exit(3)
    elif args.mode == "hang":
        for _ in sys.stdin.buffer:
            pass
    elif args.mode == "stdio":
        build_server().run("stdio")
    else:
        asyncio.run(serve_http(build_server(), args.port))


if __name__ == "__main__":
    main()
