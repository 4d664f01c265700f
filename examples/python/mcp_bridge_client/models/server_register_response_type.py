from typing import Literal

ServerRegisterResponseType = Literal["mcp/server/register/resp"]

SERVER_REGISTER_RESPONSE_TYPE_VALUES: set[ServerRegisterResponseType] = {
    "mcp/server/register/resp",
}


def check_server_register_response_type(value: str) -> ServerRegisterResponseType:
    if value in SERVER_REGISTER_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {SERVER_REGISTER_RESPONSE_TYPE_VALUES!r}"
    )
