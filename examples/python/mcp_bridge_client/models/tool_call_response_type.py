from typing import Literal

ToolCallResponseType = Literal["tool/call/resp"]

TOOL_CALL_RESPONSE_TYPE_VALUES: set[ToolCallResponseType] = {
    "tool/call/resp",
}


def check_tool_call_response_type(value: str) -> ToolCallResponseType:
    if value in TOOL_CALL_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {TOOL_CALL_RESPONSE_TYPE_VALUES!r}"
    )
