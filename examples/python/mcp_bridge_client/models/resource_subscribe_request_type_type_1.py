from typing import Literal

ResourceSubscribeRequestTypeType1 = Literal["", "mcp/resource/subscribe/req"]

RESOURCE_SUBSCRIBE_REQUEST_TYPE_TYPE_1_VALUES: set[
    ResourceSubscribeRequestTypeType1
] = {
    "",
    "mcp/resource/subscribe/req",
}


def check_resource_subscribe_request_type_type_1(
    value: str,
) -> ResourceSubscribeRequestTypeType1:
    if value in RESOURCE_SUBSCRIBE_REQUEST_TYPE_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {RESOURCE_SUBSCRIBE_REQUEST_TYPE_TYPE_1_VALUES!r}"
    )
