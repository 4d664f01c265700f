from typing import Literal

SamplingResponseType = Literal["", "mcp/sample/resp"]

SAMPLING_RESPONSE_TYPE_VALUES: set[SamplingResponseType] = {
    "",
    "mcp/sample/resp",
}


def check_sampling_response_type(value: str) -> SamplingResponseType:
    if value in SAMPLING_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {SAMPLING_RESPONSE_TYPE_VALUES!r}"
    )
