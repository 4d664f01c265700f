from typing import Literal

ResourceUnsubscribeResponseType = Literal["mcp/resource/unsubscribe/resp"]

RESOURCE_UNSUBSCRIBE_RESPONSE_TYPE_VALUES: set[ResourceUnsubscribeResponseType] = {
    "mcp/resource/unsubscribe/resp",
}


def check_resource_unsubscribe_response_type(
    value: str,
) -> ResourceUnsubscribeResponseType:
    if value in RESOURCE_UNSUBSCRIBE_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {RESOURCE_UNSUBSCRIBE_RESPONSE_TYPE_VALUES!r}"
    )
