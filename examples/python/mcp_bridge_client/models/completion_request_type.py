from typing import Literal

CompletionRequestType = Literal["", "mcp/completion/req"]

COMPLETION_REQUEST_TYPE_VALUES: set[CompletionRequestType] = {
    "",
    "mcp/completion/req",
}


def check_completion_request_type(value: str) -> CompletionRequestType:
    if value in COMPLETION_REQUEST_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {COMPLETION_REQUEST_TYPE_VALUES!r}"
    )
