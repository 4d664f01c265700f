from typing import Literal

ServerGetResponseType = Literal["mcp/server/get/resp"]

SERVER_GET_RESPONSE_TYPE_VALUES: set[ServerGetResponseType] = {
    "mcp/server/get/resp",
}


def check_server_get_response_type(value: str) -> ServerGetResponseType:
    if value in SERVER_GET_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {SERVER_GET_RESPONSE_TYPE_VALUES!r}"
    )
