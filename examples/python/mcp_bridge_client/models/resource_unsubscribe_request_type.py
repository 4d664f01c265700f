from typing import Literal

ResourceUnsubscribeRequestType = Literal["", "mcp/resource/unsubscribe/req"]

RESOURCE_UNSUBSCRIBE_REQUEST_TYPE_VALUES: set[ResourceUnsubscribeRequestType] = {
    "",
    "mcp/resource/unsubscribe/req",
}


def check_resource_unsubscribe_request_type(
    value: str,
) -> ResourceUnsubscribeRequestType:
    if value in RESOURCE_UNSUBSCRIBE_REQUEST_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {RESOURCE_UNSUBSCRIBE_REQUEST_TYPE_VALUES!r}"
    )
