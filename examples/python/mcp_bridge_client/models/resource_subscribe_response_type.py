from typing import Literal

ResourceSubscribeResponseType = Literal["mcp/resource/subscribe/resp"]

RESOURCE_SUBSCRIBE_RESPONSE_TYPE_VALUES: set[ResourceSubscribeResponseType] = {
    "mcp/resource/subscribe/resp",
}


def check_resource_subscribe_response_type(value: str) -> ResourceSubscribeResponseType:
    if value in RESOURCE_SUBSCRIBE_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {RESOURCE_SUBSCRIBE_RESPONSE_TYPE_VALUES!r}"
    )
