from typing import Literal

A2AUnregisterResponseType = Literal["a2a/agent/unregister/resp"]

A2A_UNREGISTER_RESPONSE_TYPE_VALUES: set[A2AUnregisterResponseType] = {
    "a2a/agent/unregister/resp",
}


def check_a2a_unregister_response_type(value: str) -> A2AUnregisterResponseType:
    if value in A2A_UNREGISTER_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {A2A_UNREGISTER_RESPONSE_TYPE_VALUES!r}"
    )
