from typing import Literal

RootsSetRequestType = Literal["", "mcp/roots/set/req"]

ROOTS_SET_REQUEST_TYPE_VALUES: set[RootsSetRequestType] = {
    "",
    "mcp/roots/set/req",
}


def check_roots_set_request_type(value: str) -> RootsSetRequestType:
    if value in ROOTS_SET_REQUEST_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {ROOTS_SET_REQUEST_TYPE_VALUES!r}"
    )
