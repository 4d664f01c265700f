from typing import Literal

ServerUnregisterResponseType = Literal["mcp/server/unregister/resp"]

SERVER_UNREGISTER_RESPONSE_TYPE_VALUES: set[ServerUnregisterResponseType] = {
    "mcp/server/unregister/resp",
}


def check_server_unregister_response_type(value: str) -> ServerUnregisterResponseType:
    if value in SERVER_UNREGISTER_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {SERVER_UNREGISTER_RESPONSE_TYPE_VALUES!r}"
    )
