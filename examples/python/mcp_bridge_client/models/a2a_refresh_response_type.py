from typing import Literal

A2ARefreshResponseType = Literal["a2a/agent/refresh/resp"]

A2A_REFRESH_RESPONSE_TYPE_VALUES: set[A2ARefreshResponseType] = {
    "a2a/agent/refresh/resp",
}


def check_a2a_refresh_response_type(value: str) -> A2ARefreshResponseType:
    if value in A2A_REFRESH_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {A2A_REFRESH_RESPONSE_TYPE_VALUES!r}"
    )
