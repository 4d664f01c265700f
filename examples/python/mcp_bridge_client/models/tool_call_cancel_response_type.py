from typing import Literal

ToolCallCancelResponseType = Literal["tool/call/cancel/resp"]

TOOL_CALL_CANCEL_RESPONSE_TYPE_VALUES: set[ToolCallCancelResponseType] = {
    "tool/call/cancel/resp",
}


def check_tool_call_cancel_response_type(value: str) -> ToolCallCancelResponseType:
    if value in TOOL_CALL_CANCEL_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {TOOL_CALL_CANCEL_RESPONSE_TYPE_VALUES!r}"
    )
