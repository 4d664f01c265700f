from typing import Literal

ElicitResponseTypeType3Type1 = Literal["", "mcp/elicit/resp"]

ELICIT_RESPONSE_TYPE_TYPE_3_TYPE_1_VALUES: set[ElicitResponseTypeType3Type1] = {
    "",
    "mcp/elicit/resp",
}


def check_elicit_response_type_type_3_type_1(
    value: str,
) -> ElicitResponseTypeType3Type1:
    if value in ELICIT_RESPONSE_TYPE_TYPE_3_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {ELICIT_RESPONSE_TYPE_TYPE_3_TYPE_1_VALUES!r}"
    )
