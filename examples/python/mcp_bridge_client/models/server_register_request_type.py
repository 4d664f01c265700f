from typing import Literal

ServerRegisterRequestType = Literal["", "mcp/server/register/req"]

SERVER_REGISTER_REQUEST_TYPE_VALUES: set[ServerRegisterRequestType] = {
    "",
    "mcp/server/register/req",
}


def check_server_register_request_type(value: str) -> ServerRegisterRequestType:
    if value in SERVER_REGISTER_REQUEST_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {SERVER_REGISTER_REQUEST_TYPE_VALUES!r}"
    )
