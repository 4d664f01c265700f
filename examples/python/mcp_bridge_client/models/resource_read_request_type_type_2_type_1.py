from typing import Literal

ResourceReadRequestTypeType2Type1 = Literal["", "mcp/resource/read/req"]

RESOURCE_READ_REQUEST_TYPE_TYPE_2_TYPE_1_VALUES: set[
    ResourceReadRequestTypeType2Type1
] = {
    "",
    "mcp/resource/read/req",
}


def check_resource_read_request_type_type_2_type_1(
    value: str,
) -> ResourceReadRequestTypeType2Type1:
    if value in RESOURCE_READ_REQUEST_TYPE_TYPE_2_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {RESOURCE_READ_REQUEST_TYPE_TYPE_2_TYPE_1_VALUES!r}"
    )
