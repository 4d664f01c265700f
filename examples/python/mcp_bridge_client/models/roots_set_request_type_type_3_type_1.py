from typing import Literal

RootsSetRequestTypeType3Type1 = Literal["", "mcp/roots/set/req"]

ROOTS_SET_REQUEST_TYPE_TYPE_3_TYPE_1_VALUES: set[RootsSetRequestTypeType3Type1] = {
    "",
    "mcp/roots/set/req",
}


def check_roots_set_request_type_type_3_type_1(
    value: str,
) -> RootsSetRequestTypeType3Type1:
    if value in ROOTS_SET_REQUEST_TYPE_TYPE_3_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {ROOTS_SET_REQUEST_TYPE_TYPE_3_TYPE_1_VALUES!r}"
    )
