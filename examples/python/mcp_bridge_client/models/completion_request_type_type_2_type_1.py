from typing import Literal

CompletionRequestTypeType2Type1 = Literal["", "mcp/completion/req"]

COMPLETION_REQUEST_TYPE_TYPE_2_TYPE_1_VALUES: set[CompletionRequestTypeType2Type1] = {
    "",
    "mcp/completion/req",
}


def check_completion_request_type_type_2_type_1(
    value: str,
) -> CompletionRequestTypeType2Type1:
    if value in COMPLETION_REQUEST_TYPE_TYPE_2_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {COMPLETION_REQUEST_TYPE_TYPE_2_TYPE_1_VALUES!r}"
    )
