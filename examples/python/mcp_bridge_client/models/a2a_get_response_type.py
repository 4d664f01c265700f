from typing import Literal

A2AGetResponseType = Literal["a2a/agent/get/resp"]

A2A_GET_RESPONSE_TYPE_VALUES: set[A2AGetResponseType] = {
    "a2a/agent/get/resp",
}


def check_a2a_get_response_type(value: str) -> A2AGetResponseType:
    if value in A2A_GET_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {A2A_GET_RESPONSE_TYPE_VALUES!r}"
    )
