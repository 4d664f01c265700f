from typing import Literal

SamplingRequestType = Literal["mcp/sample/req"]

SAMPLING_REQUEST_TYPE_VALUES: set[SamplingRequestType] = {
    "mcp/sample/req",
}


def check_sampling_request_type(value: str) -> SamplingRequestType:
    if value in SAMPLING_REQUEST_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {SAMPLING_REQUEST_TYPE_VALUES!r}"
    )
