from typing import Literal

ResourceReadRequestTypeType1 = Literal["", "mcp/resource/read/req"]

RESOURCE_READ_REQUEST_TYPE_TYPE_1_VALUES: set[ResourceReadRequestTypeType1] = {
    "",
    "mcp/resource/read/req",
}


def check_resource_read_request_type_type_1(value: str) -> ResourceReadRequestTypeType1:
    if value in RESOURCE_READ_REQUEST_TYPE_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {RESOURCE_READ_REQUEST_TYPE_TYPE_1_VALUES!r}"
    )
