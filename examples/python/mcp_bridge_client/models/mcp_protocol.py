from typing import Literal

McpProtocol = Literal["2025-11-25", "2026-07-28", "auto"]

MCP_PROTOCOL_VALUES: set[McpProtocol] = {
    "2025-11-25",
    "2026-07-28",
    "auto",
}


def check_mcp_protocol(value: str) -> McpProtocol:
    if value in MCP_PROTOCOL_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {MCP_PROTOCOL_VALUES!r}"
    )
