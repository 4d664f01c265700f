from typing import Literal

ResourceListResponseType = Literal["mcp/resource/list/resp"]

RESOURCE_LIST_RESPONSE_TYPE_VALUES: set[ResourceListResponseType] = {
    "mcp/resource/list/resp",
}


def check_resource_list_response_type(value: str) -> ResourceListResponseType:
    if value in RESOURCE_LIST_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {RESOURCE_LIST_RESPONSE_TYPE_VALUES!r}"
    )
