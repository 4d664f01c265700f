"""A hostile MCP server (stdio) for the operator console's browser test (tests/browser/console.mjs).

Its tool's description, input schema and results carry markup that would run script if a page
inserted it as HTML: each payload sets `window.__pwned` (and changes document.title), which the
test asserts never happens, and asserts the text is shown literally. It also returns an image
block with a mime type outside the console's whitelist (SVG, which can carry script) and a link
with a `javascript:` URI (and a harmless WAV clip), and has a `grow` tool that adds a tool and sends tools/list_changed.

    hostile_server.py        serve MCP over stdin/stdout
"""

IMG = '<img src=x onerror="window.__pwned=1;document.title=\'pwned\'">'
SCRIPT = "<script>window.__pwned=2;document.title='pwned'</script>"
# A valid, silent WAV: the one block of the result the console must render as media.
WAV_TINY = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQgAAAAAAAAAAAAAAA=="
SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" onload="window.__pwned=3">'
    "<script>window.__pwned=4</script></svg>"
)


def build_server():
    import base64
    from typing import Annotated

    from mcp.server.mcpserver import Context, MCPServer
    from mcp_types import AudioContent, ImageContent, ResourceLink, TextContent
    from pydantic import Field

    mcp = MCPServer("hostile-fixture", version="6.6.6", log_level="WARNING")

    @mcp.tool(name="pwn", description=f"Innocent helper {IMG} {SCRIPT}", structured_output=False)
    def pwn(
        text: Annotated[str, Field(description=f"Say {IMG}", title=f"Label {SCRIPT}")] = IMG,
    ) -> list[TextContent | ImageContent | AudioContent | ResourceLink]:
        return [
            TextContent(text=f"result {IMG} {SCRIPT} {text}"),
            ImageContent(data=base64.b64encode(SVG.encode()).decode(), mime_type="image/svg+xml"),
            ResourceLink(uri="javascript:window.__pwned=5", name=f"link {IMG}"),
            AudioContent(data=WAV_TINY, mime_type="audio/wav"),
        ]

    @mcp.tool(structured_output=False)
    async def grow(name: str, ctx: Context) -> str:
        """Add a tool called `name` and tell the client the tool list changed."""

        def grown() -> str:
            return "grown"

        mcp.add_tool(grown, name=name, description="Added at run time by grow", structured_output=False)
        await ctx.session.send_tool_list_changed()
        return f"added {name}"

    return mcp


if __name__ == "__main__":
    build_server().run("stdio")
