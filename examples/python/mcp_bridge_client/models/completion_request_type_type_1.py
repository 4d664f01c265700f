from typing import Literal

CompletionRequestTypeType1 = Literal["", "mcp/completion/req"]

COMPLETION_REQUEST_TYPE_TYPE_1_VALUES: set[CompletionRequestTypeType1] = {
    "",
    "mcp/completion/req",
}


def check_completion_request_type_type_1(value: str) -> CompletionRequestTypeType1:
    if value in COMPLETION_REQUEST_TYPE_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {COMPLETION_REQUEST_TYPE_TYPE_1_VALUES!r}"
    )
