from typing import Literal

ResourceReadRequestType = Literal["", "mcp/resource/read/req"]

RESOURCE_READ_REQUEST_TYPE_VALUES: set[ResourceReadRequestType] = {
    "",
    "mcp/resource/read/req",
}


def check_resource_read_request_type(value: str) -> ResourceReadRequestType:
    if value in RESOURCE_READ_REQUEST_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {RESOURCE_READ_REQUEST_TYPE_VALUES!r}"
    )
