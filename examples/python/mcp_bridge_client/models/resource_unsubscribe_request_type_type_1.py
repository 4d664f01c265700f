from typing import Literal

ResourceUnsubscribeRequestTypeType1 = Literal["", "mcp/resource/unsubscribe/req"]

RESOURCE_UNSUBSCRIBE_REQUEST_TYPE_TYPE_1_VALUES: set[
    ResourceUnsubscribeRequestTypeType1
] = {
    "",
    "mcp/resource/unsubscribe/req",
}


def check_resource_unsubscribe_request_type_type_1(
    value: str,
) -> ResourceUnsubscribeRequestTypeType1:
    if value in RESOURCE_UNSUBSCRIBE_REQUEST_TYPE_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {RESOURCE_UNSUBSCRIBE_REQUEST_TYPE_TYPE_1_VALUES!r}"
    )
