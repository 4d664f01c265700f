from typing import Literal

ServerPushType = Literal["mcp/server/push"]

SERVER_PUSH_TYPE_VALUES: set[ServerPushType] = {
    "mcp/server/push",
}


def check_server_push_type(value: str) -> ServerPushType:
    if value in SERVER_PUSH_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {SERVER_PUSH_TYPE_VALUES!r}"
    )
