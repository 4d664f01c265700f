from typing import Literal

ElicitResponseType = Literal["", "mcp/elicit/resp"]

ELICIT_RESPONSE_TYPE_VALUES: set[ElicitResponseType] = {
    "",
    "mcp/elicit/resp",
}


def check_elicit_response_type(value: str) -> ElicitResponseType:
    if value in ELICIT_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {ELICIT_RESPONSE_TYPE_VALUES!r}"
    )
