from typing import Literal

ToolCallRequestTypeType3Type1 = Literal["", "tool/call/req"]

TOOL_CALL_REQUEST_TYPE_TYPE_3_TYPE_1_VALUES: set[ToolCallRequestTypeType3Type1] = {
    "",
    "tool/call/req",
}


def check_tool_call_request_type_type_3_type_1(
    value: str,
) -> ToolCallRequestTypeType3Type1:
    if value in TOOL_CALL_REQUEST_TYPE_TYPE_3_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {TOOL_CALL_REQUEST_TYPE_TYPE_3_TYPE_1_VALUES!r}"
    )
