from typing import Literal

ToolCallRequestType = Literal["", "tool/call/req"]

TOOL_CALL_REQUEST_TYPE_VALUES: set[ToolCallRequestType] = {
    "",
    "tool/call/req",
}


def check_tool_call_request_type(value: str) -> ToolCallRequestType:
    if value in TOOL_CALL_REQUEST_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {TOOL_CALL_REQUEST_TYPE_VALUES!r}"
    )
