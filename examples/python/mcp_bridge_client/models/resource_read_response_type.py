from typing import Literal

ResourceReadResponseType = Literal["mcp/resource/read/resp"]

RESOURCE_READ_RESPONSE_TYPE_VALUES: set[ResourceReadResponseType] = {
    "mcp/resource/read/resp",
}


def check_resource_read_response_type(value: str) -> ResourceReadResponseType:
    if value in RESOURCE_READ_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {RESOURCE_READ_RESPONSE_TYPE_VALUES!r}"
    )
