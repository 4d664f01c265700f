from typing import Literal

RootsListRequestType = Literal["mcp/root/list/req"]

ROOTS_LIST_REQUEST_TYPE_VALUES: set[RootsListRequestType] = {
    "mcp/root/list/req",
}


def check_roots_list_request_type(value: str) -> RootsListRequestType:
    if value in ROOTS_LIST_REQUEST_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {ROOTS_LIST_REQUEST_TYPE_VALUES!r}"
    )
