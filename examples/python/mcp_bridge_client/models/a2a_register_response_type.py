from typing import Literal

A2ARegisterResponseType = Literal["a2a/agent/register/resp"]

A2A_REGISTER_RESPONSE_TYPE_VALUES: set[A2ARegisterResponseType] = {
    "a2a/agent/register/resp",
}


def check_a2a_register_response_type(value: str) -> A2ARegisterResponseType:
    if value in A2A_REGISTER_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {A2A_REGISTER_RESPONSE_TYPE_VALUES!r}"
    )
