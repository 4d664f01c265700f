from typing import Literal

RootsSetRequestTypeType1 = Literal["", "mcp/roots/set/req"]

ROOTS_SET_REQUEST_TYPE_TYPE_1_VALUES: set[RootsSetRequestTypeType1] = {
    "",
    "mcp/roots/set/req",
}


def check_roots_set_request_type_type_1(value: str) -> RootsSetRequestTypeType1:
    if value in ROOTS_SET_REQUEST_TYPE_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {ROOTS_SET_REQUEST_TYPE_TYPE_1_VALUES!r}"
    )
