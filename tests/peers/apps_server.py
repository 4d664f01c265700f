"""Test peer: an MCP Apps server (extension `io.modelcontextprotocol/ui`) built with the Python SDK's own
`mcp.server.apps.Apps`, served over stdio.

Usage: apps_server.py LABEL

Offers the HTML resource `ui://dashboard` (mimeType `text/html;profile=mcp-app`) whose text is
`<!doctype html><title>LABEL dashboard</title>` and whose `_meta.ui` is
`{"csp": {"connectDomains": ["https://LABEL.example"]}, "permissions": {"clipboardWrite": {}}, "prefersBorder": true}`;
the tool `show_dashboard` (visible to model and app, `_meta.ui.resourceUri` and the deprecated
`_meta["ui/resourceUri"]` "ui://dashboard") returning
"LABEL dashboard shown"; and the app-only tool `refresh_dashboard` (`_meta.ui.visibility` ["app"], same
resource) returning "LABEL refreshed"; and the plain tool `touch_dashboard`, which sends
notifications/resources/updated for `ui://dashboard` and returns "touched". Two instances with different
labels offer the same URIs and names.
"""

import sys

from mcp.server.apps import Apps, ResourceCsp, ResourcePermissions
from mcp.server.mcpserver import Context, MCPServer

URI = "ui://dashboard"


def build(label: str) -> MCPServer:
    apps = Apps()

    @apps.tool(resource_uri=URI, meta={"ui/resourceUri": URI}, description=f"Show the {label} dashboard")
    def show_dashboard() -> str:
        return f"{label} dashboard shown"

    @apps.tool(resource_uri=URI, visibility=["app"], description=f"Refresh the {label} dashboard")
    def refresh_dashboard() -> str:
        return f"{label} refreshed"

    apps.add_html_resource(
        URI,
        f"<!doctype html><title>{label} dashboard</title>",
        name=f"{label} dashboard",
        csp=ResourceCsp(connect_domains=[f"https://{label}.example"]),
        permissions=ResourcePermissions(clipboard_write={}),
        prefers_border=True,
    )
    server = MCPServer(f"apps-{label}", extensions=[apps])

    @server.tool(description="Announce that the dashboard changed")
    async def touch_dashboard(ctx: Context) -> str:
        await ctx.session.send_resource_updated(URI)
        return "touched"

    # Subscriptions (2025-11-25): MCPServer registers no handler for them, and declares
    # `resources.subscribe` once one is registered.
    from mcp_types import EmptyResult, SubscribeRequestParams, UnsubscribeRequestParams

    async def accepted(ctx, params):
        return EmptyResult()

    lowlevel = server._lowlevel_server  # no public accessor in SDK 2.3.0
    lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, accepted)
    lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, accepted)
    return server


if __name__ == "__main__":
    build(sys.argv[1]).run("stdio")
