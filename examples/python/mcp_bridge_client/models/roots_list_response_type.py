from typing import Literal

RootsListResponseType = Literal["", "mcp/root/list/resp"]

ROOTS_LIST_RESPONSE_TYPE_VALUES: set[RootsListResponseType] = {
    "",
    "mcp/root/list/resp",
}


def check_roots_list_response_type(value: str) -> RootsListResponseType:
    if value in ROOTS_LIST_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {ROOTS_LIST_RESPONSE_TYPE_VALUES!r}"
    )
