from typing import Literal

ToolListResponseType = Literal["tool/list/resp"]

TOOL_LIST_RESPONSE_TYPE_VALUES: set[ToolListResponseType] = {
    "tool/list/resp",
}


def check_tool_list_response_type(value: str) -> ToolListResponseType:
    if value in TOOL_LIST_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {TOOL_LIST_RESPONSE_TYPE_VALUES!r}"
    )
