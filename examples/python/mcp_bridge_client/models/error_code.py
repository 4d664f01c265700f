from typing import Literal

ErrorCode = Literal[
    "cancelled",
    "conflict",
    "denied_by_hook",
    "forbidden",
    "internal",
    "invalid_request",
    "mcp_auth_required",
    "mcp_capability_missing",
    "mcp_prompt_not_found",
    "mcp_protocol_error",
    "mcp_resource_not_found",
    "mcp_sampling_refused",
    "mcp_server_not_found",
    "mcp_server_unavailable",
    "mcp_tool_not_found",
    "mcp_transport_error",
    "not_found",
    "payload_too_large",
    "rate_limited",
    "timeout",
    "unauthorized",
]

ERROR_CODE_VALUES: set[ErrorCode] = {
    "cancelled",
    "conflict",
    "denied_by_hook",
    "forbidden",
    "internal",
    "invalid_request",
    "mcp_auth_required",
    "mcp_capability_missing",
    "mcp_prompt_not_found",
    "mcp_protocol_error",
    "mcp_resource_not_found",
    "mcp_sampling_refused",
    "mcp_server_not_found",
    "mcp_server_unavailable",
    "mcp_tool_not_found",
    "mcp_transport_error",
    "not_found",
    "payload_too_large",
    "rate_limited",
    "timeout",
    "unauthorized",
}


def check_error_code(value: str) -> ErrorCode:
    if value in ERROR_CODE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {ERROR_CODE_VALUES!r}"
    )
