from typing import Literal

CompletionResponseType = Literal["mcp/completion/resp"]

COMPLETION_RESPONSE_TYPE_VALUES: set[CompletionResponseType] = {
    "mcp/completion/resp",
}


def check_completion_response_type(value: str) -> CompletionResponseType:
    if value in COMPLETION_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {COMPLETION_RESPONSE_TYPE_VALUES!r}"
    )
