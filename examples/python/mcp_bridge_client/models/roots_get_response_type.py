from typing import Literal

RootsGetResponseType = Literal["mcp/roots/get/resp"]

ROOTS_GET_RESPONSE_TYPE_VALUES: set[RootsGetResponseType] = {
    "mcp/roots/get/resp",
}


def check_roots_get_response_type(value: str) -> RootsGetResponseType:
    if value in ROOTS_GET_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {ROOTS_GET_RESPONSE_TYPE_VALUES!r}"
    )
