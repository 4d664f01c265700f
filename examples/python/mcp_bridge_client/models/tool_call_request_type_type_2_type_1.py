from typing import Literal

ToolCallRequestTypeType2Type1 = Literal["", "tool/call/req"]

TOOL_CALL_REQUEST_TYPE_TYPE_2_TYPE_1_VALUES: set[ToolCallRequestTypeType2Type1] = {
    "",
    "tool/call/req",
}


def check_tool_call_request_type_type_2_type_1(
    value: str,
) -> ToolCallRequestTypeType2Type1:
    if value in TOOL_CALL_REQUEST_TYPE_TYPE_2_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {TOOL_CALL_REQUEST_TYPE_TYPE_2_TYPE_1_VALUES!r}"
    )
