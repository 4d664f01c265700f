from typing import Literal

ServerUpdateRequestType = Literal["", "mcp/server/update/req"]

SERVER_UPDATE_REQUEST_TYPE_VALUES: set[ServerUpdateRequestType] = {
    "",
    "mcp/server/update/req",
}


def check_server_update_request_type(value: str) -> ServerUpdateRequestType:
    if value in SERVER_UPDATE_REQUEST_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {SERVER_UPDATE_REQUEST_TYPE_VALUES!r}"
    )
