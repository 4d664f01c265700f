from typing import Literal

ServerRegisterRequestTypeType1 = Literal["", "mcp/server/register/req"]

SERVER_REGISTER_REQUEST_TYPE_TYPE_1_VALUES: set[ServerRegisterRequestTypeType1] = {
    "",
    "mcp/server/register/req",
}


def check_server_register_request_type_type_1(
    value: str,
) -> ServerRegisterRequestTypeType1:
    if value in SERVER_REGISTER_REQUEST_TYPE_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {SERVER_REGISTER_REQUEST_TYPE_TYPE_1_VALUES!r}"
    )
