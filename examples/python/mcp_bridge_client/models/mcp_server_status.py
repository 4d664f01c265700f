from typing import Literal

McpServerStatus = Literal["connecting", "disconnected", "error", "ready"]

MCP_SERVER_STATUS_VALUES: set[McpServerStatus] = {
    "connecting",
    "disconnected",
    "error",
    "ready",
}


def check_mcp_server_status(value: str) -> McpServerStatus:
    if value in MCP_SERVER_STATUS_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {MCP_SERVER_STATUS_VALUES!r}"
    )
