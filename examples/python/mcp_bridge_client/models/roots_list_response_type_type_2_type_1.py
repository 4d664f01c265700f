from typing import Literal

RootsListResponseTypeType2Type1 = Literal["", "mcp/root/list/resp"]

ROOTS_LIST_RESPONSE_TYPE_TYPE_2_TYPE_1_VALUES: set[RootsListResponseTypeType2Type1] = {
    "",
    "mcp/root/list/resp",
}


def check_roots_list_response_type_type_2_type_1(
    value: str,
) -> RootsListResponseTypeType2Type1:
    if value in ROOTS_LIST_RESPONSE_TYPE_TYPE_2_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {ROOTS_LIST_RESPONSE_TYPE_TYPE_2_TYPE_1_VALUES!r}"
    )
