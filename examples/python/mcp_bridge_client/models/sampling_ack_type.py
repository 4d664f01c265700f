from typing import Literal

SamplingAckType = Literal["mcp/sample/ack"]

SAMPLING_ACK_TYPE_VALUES: set[SamplingAckType] = {
    "mcp/sample/ack",
}


def check_sampling_ack_type(value: str) -> SamplingAckType:
    if value in SAMPLING_ACK_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {SAMPLING_ACK_TYPE_VALUES!r}"
    )
