from typing import Literal

ToolCallRequestTypeType1 = Literal["", "tool/call/req"]

TOOL_CALL_REQUEST_TYPE_TYPE_1_VALUES: set[ToolCallRequestTypeType1] = {
    "",
    "tool/call/req",
}


def check_tool_call_request_type_type_1(value: str) -> ToolCallRequestTypeType1:
    if value in TOOL_CALL_REQUEST_TYPE_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {TOOL_CALL_REQUEST_TYPE_TYPE_1_VALUES!r}"
    )
