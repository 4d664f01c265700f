from typing import Literal

A2ARegisterRequestType = Literal["", "a2a/agent/register/req"]

A2A_REGISTER_REQUEST_TYPE_VALUES: set[A2ARegisterRequestType] = {
    "",
    "a2a/agent/register/req",
}


def check_a2a_register_request_type(value: str) -> A2ARegisterRequestType:
    if value in A2A_REGISTER_REQUEST_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {A2A_REGISTER_REQUEST_TYPE_VALUES!r}"
    )
