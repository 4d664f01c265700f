from typing import Literal

McpTransport = Literal["http", "sse", "stdio", "ws"]

MCP_TRANSPORT_VALUES: set[McpTransport] = {
    "http",
    "sse",
    "stdio",
    "ws",
}


def check_mcp_transport(value: str) -> McpTransport:
    if value in MCP_TRANSPORT_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {MCP_TRANSPORT_VALUES!r}"
    )
