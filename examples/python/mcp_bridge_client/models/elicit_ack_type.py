from typing import Literal

ElicitAckType = Literal["mcp/elicit/ack"]

ELICIT_ACK_TYPE_VALUES: set[ElicitAckType] = {
    "mcp/elicit/ack",
}


def check_elicit_ack_type(value: str) -> ElicitAckType:
    if value in ELICIT_ACK_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {ELICIT_ACK_TYPE_VALUES!r}"
    )
