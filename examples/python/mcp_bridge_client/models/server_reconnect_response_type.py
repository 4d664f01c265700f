from typing import Literal

ServerReconnectResponseType = Literal["mcp/server/reconnect/resp"]

SERVER_RECONNECT_RESPONSE_TYPE_VALUES: set[ServerReconnectResponseType] = {
    "mcp/server/reconnect/resp",
}


def check_server_reconnect_response_type(value: str) -> ServerReconnectResponseType:
    if value in SERVER_RECONNECT_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {SERVER_RECONNECT_RESPONSE_TYPE_VALUES!r}"
    )
