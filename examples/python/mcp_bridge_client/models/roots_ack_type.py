from typing import Literal

RootsAckType = Literal["mcp/root/list/ack"]

ROOTS_ACK_TYPE_VALUES: set[RootsAckType] = {
    "mcp/root/list/ack",
}


def check_roots_ack_type(value: str) -> RootsAckType:
    if value in ROOTS_ACK_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {ROOTS_ACK_TYPE_VALUES!r}"
    )
