from typing import Literal

A2ABinding = Literal["HTTP+JSON", "JSONRPC"]

A2A_BINDING_VALUES: set[A2ABinding] = {
    "HTTP+JSON",
    "JSONRPC",
}


def check_a2a_binding(value: str) -> A2ABinding:
    if value in A2A_BINDING_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {A2A_BINDING_VALUES!r}"
    )
