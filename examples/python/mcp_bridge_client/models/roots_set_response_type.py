from typing import Literal

RootsSetResponseType = Literal["mcp/roots/set/resp"]

ROOTS_SET_RESPONSE_TYPE_VALUES: set[RootsSetResponseType] = {
    "mcp/roots/set/resp",
}


def check_roots_set_response_type(value: str) -> RootsSetResponseType:
    if value in ROOTS_SET_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {ROOTS_SET_RESPONSE_TYPE_VALUES!r}"
    )
