from typing import Literal

ToolApproveResponseType = Literal["mcp/tool/approve/resp"]

TOOL_APPROVE_RESPONSE_TYPE_VALUES: set[ToolApproveResponseType] = {
    "mcp/tool/approve/resp",
}


def check_tool_approve_response_type(value: str) -> ToolApproveResponseType:
    if value in TOOL_APPROVE_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {TOOL_APPROVE_RESPONSE_TYPE_VALUES!r}"
    )
