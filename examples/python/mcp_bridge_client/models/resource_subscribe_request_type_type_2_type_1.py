from typing import Literal

ResourceSubscribeRequestTypeType2Type1 = Literal["", "mcp/resource/subscribe/req"]

RESOURCE_SUBSCRIBE_REQUEST_TYPE_TYPE_2_TYPE_1_VALUES: set[
    ResourceSubscribeRequestTypeType2Type1
] = {
    "",
    "mcp/resource/subscribe/req",
}


def check_resource_subscribe_request_type_type_2_type_1(
    value: str,
) -> ResourceSubscribeRequestTypeType2Type1:
    if value in RESOURCE_SUBSCRIBE_REQUEST_TYPE_TYPE_2_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {RESOURCE_SUBSCRIBE_REQUEST_TYPE_TYPE_2_TYPE_1_VALUES!r}"
    )
