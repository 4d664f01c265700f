from typing import Literal

ResourceUnsubscribeRequestTypeType2Type1 = Literal["", "mcp/resource/unsubscribe/req"]

RESOURCE_UNSUBSCRIBE_REQUEST_TYPE_TYPE_2_TYPE_1_VALUES: set[
    ResourceUnsubscribeRequestTypeType2Type1
] = {
    "",
    "mcp/resource/unsubscribe/req",
}


def check_resource_unsubscribe_request_type_type_2_type_1(
    value: str,
) -> ResourceUnsubscribeRequestTypeType2Type1:
    if value in RESOURCE_UNSUBSCRIBE_REQUEST_TYPE_TYPE_2_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {RESOURCE_UNSUBSCRIBE_REQUEST_TYPE_TYPE_2_TYPE_1_VALUES!r}"
    )
