from typing import Literal

A2ARegisterRequestTypeType3Type1 = Literal["", "a2a/agent/register/req"]

A2A_REGISTER_REQUEST_TYPE_TYPE_3_TYPE_1_VALUES: set[
    A2ARegisterRequestTypeType3Type1
] = {
    "",
    "a2a/agent/register/req",
}


def check_a2a_register_request_type_type_3_type_1(
    value: str,
) -> A2ARegisterRequestTypeType3Type1:
    if value in A2A_REGISTER_REQUEST_TYPE_TYPE_3_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {A2A_REGISTER_REQUEST_TYPE_TYPE_3_TYPE_1_VALUES!r}"
    )
