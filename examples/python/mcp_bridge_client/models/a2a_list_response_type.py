from typing import Literal

A2AListResponseType = Literal["a2a/agent/list/resp"]

A2A_LIST_RESPONSE_TYPE_VALUES: set[A2AListResponseType] = {
    "a2a/agent/list/resp",
}


def check_a2a_list_response_type(value: str) -> A2AListResponseType:
    if value in A2A_LIST_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {A2A_LIST_RESPONSE_TYPE_VALUES!r}"
    )
