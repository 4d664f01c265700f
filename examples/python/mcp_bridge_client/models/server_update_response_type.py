from typing import Literal

ServerUpdateResponseType = Literal["mcp/server/update/resp"]

SERVER_UPDATE_RESPONSE_TYPE_VALUES: set[ServerUpdateResponseType] = {
    "mcp/server/update/resp",
}


def check_server_update_response_type(value: str) -> ServerUpdateResponseType:
    if value in SERVER_UPDATE_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {SERVER_UPDATE_RESPONSE_TYPE_VALUES!r}"
    )
