from typing import Literal

ServerRegisterRequestTypeType2Type1 = Literal["", "mcp/server/register/req"]

SERVER_REGISTER_REQUEST_TYPE_TYPE_2_TYPE_1_VALUES: set[
    ServerRegisterRequestTypeType2Type1
] = {
    "",
    "mcp/server/register/req",
}


def check_server_register_request_type_type_2_type_1(
    value: str,
) -> ServerRegisterRequestTypeType2Type1:
    if value in SERVER_REGISTER_REQUEST_TYPE_TYPE_2_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {SERVER_REGISTER_REQUEST_TYPE_TYPE_2_TYPE_1_VALUES!r}"
    )
