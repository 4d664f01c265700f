from typing import Literal

McpServerStatus = Literal[
    "auth_required", "connecting", "disconnected", "error", "ready"
]

MCP_SERVER_STATUS_VALUES: set[McpServerStatus] = {
    "auth_required",
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
