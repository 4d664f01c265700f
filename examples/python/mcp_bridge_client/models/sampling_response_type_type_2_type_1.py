from typing import Literal

SamplingResponseTypeType2Type1 = Literal["", "mcp/sample/resp"]

SAMPLING_RESPONSE_TYPE_TYPE_2_TYPE_1_VALUES: set[SamplingResponseTypeType2Type1] = {
    "",
    "mcp/sample/resp",
}


def check_sampling_response_type_type_2_type_1(
    value: str,
) -> SamplingResponseTypeType2Type1:
    if value in SAMPLING_RESPONSE_TYPE_TYPE_2_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {SAMPLING_RESPONSE_TYPE_TYPE_2_TYPE_1_VALUES!r}"
    )
