from typing import Literal

RootsSetRequestTypeType2Type1 = Literal["", "mcp/roots/set/req"]

ROOTS_SET_REQUEST_TYPE_TYPE_2_TYPE_1_VALUES: set[RootsSetRequestTypeType2Type1] = {
    "",
    "mcp/roots/set/req",
}


def check_roots_set_request_type_type_2_type_1(
    value: str,
) -> RootsSetRequestTypeType2Type1:
    if value in ROOTS_SET_REQUEST_TYPE_TYPE_2_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {ROOTS_SET_REQUEST_TYPE_TYPE_2_TYPE_1_VALUES!r}"
    )
