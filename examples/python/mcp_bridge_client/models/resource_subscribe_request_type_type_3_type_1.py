from typing import Literal

ResourceSubscribeRequestTypeType3Type1 = Literal["", "mcp/resource/subscribe/req"]

RESOURCE_SUBSCRIBE_REQUEST_TYPE_TYPE_3_TYPE_1_VALUES: set[
    ResourceSubscribeRequestTypeType3Type1
] = {
    "",
    "mcp/resource/subscribe/req",
}


def check_resource_subscribe_request_type_type_3_type_1(
    value: str,
) -> ResourceSubscribeRequestTypeType3Type1:
    if value in RESOURCE_SUBSCRIBE_REQUEST_TYPE_TYPE_3_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {RESOURCE_SUBSCRIBE_REQUEST_TYPE_TYPE_3_TYPE_1_VALUES!r}"
    )
