from typing import Literal

ServerListResponseType = Literal["mcp/server/list/resp"]

SERVER_LIST_RESPONSE_TYPE_VALUES: set[ServerListResponseType] = {
    "mcp/server/list/resp",
}


def check_server_list_response_type(value: str) -> ServerListResponseType:
    if value in SERVER_LIST_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {SERVER_LIST_RESPONSE_TYPE_VALUES!r}"
    )
