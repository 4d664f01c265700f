from typing import Literal

ElicitResponseTypeType2Type1 = Literal["", "mcp/elicit/resp"]

ELICIT_RESPONSE_TYPE_TYPE_2_TYPE_1_VALUES: set[ElicitResponseTypeType2Type1] = {
    "",
    "mcp/elicit/resp",
}


def check_elicit_response_type_type_2_type_1(
    value: str,
) -> ElicitResponseTypeType2Type1:
    if value in ELICIT_RESPONSE_TYPE_TYPE_2_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {ELICIT_RESPONSE_TYPE_TYPE_2_TYPE_1_VALUES!r}"
    )
