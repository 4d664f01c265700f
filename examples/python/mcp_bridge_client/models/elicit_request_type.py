from typing import Literal

ElicitRequestType = Literal["mcp/elicit/req"]

ELICIT_REQUEST_TYPE_VALUES: set[ElicitRequestType] = {
    "mcp/elicit/req",
}


def check_elicit_request_type(value: str) -> ElicitRequestType:
    if value in ELICIT_REQUEST_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {ELICIT_REQUEST_TYPE_VALUES!r}"
    )
