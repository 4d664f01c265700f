from typing import Literal

A2AProtocol = Literal["0.3", "1.0"]

A2A_PROTOCOL_VALUES: set[A2AProtocol] = {
    "0.3",
    "1.0",
}


def check_a2a_protocol(value: str) -> A2AProtocol:
    if value in A2A_PROTOCOL_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {A2A_PROTOCOL_VALUES!r}"
    )
