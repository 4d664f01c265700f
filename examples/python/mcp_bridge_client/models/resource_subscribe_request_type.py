from typing import Literal

ResourceSubscribeRequestType = Literal["", "mcp/resource/subscribe/req"]

RESOURCE_SUBSCRIBE_REQUEST_TYPE_VALUES: set[ResourceSubscribeRequestType] = {
    "",
    "mcp/resource/subscribe/req",
}


def check_resource_subscribe_request_type(value: str) -> ResourceSubscribeRequestType:
    if value in RESOURCE_SUBSCRIBE_REQUEST_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {RESOURCE_SUBSCRIBE_REQUEST_TYPE_VALUES!r}"
    )
