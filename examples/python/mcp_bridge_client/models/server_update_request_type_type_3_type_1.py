from typing import Literal

ServerUpdateRequestTypeType3Type1 = Literal["", "mcp/server/update/req"]

SERVER_UPDATE_REQUEST_TYPE_TYPE_3_TYPE_1_VALUES: set[
    ServerUpdateRequestTypeType3Type1
] = {
    "",
    "mcp/server/update/req",
}


def check_server_update_request_type_type_3_type_1(
    value: str,
) -> ServerUpdateRequestTypeType3Type1:
    if value in SERVER_UPDATE_REQUEST_TYPE_TYPE_3_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {SERVER_UPDATE_REQUEST_TYPE_TYPE_3_TYPE_1_VALUES!r}"
    )
