from typing import Literal

CompletionRequestTypeType3Type1 = Literal["", "mcp/completion/req"]

COMPLETION_REQUEST_TYPE_TYPE_3_TYPE_1_VALUES: set[CompletionRequestTypeType3Type1] = {
    "",
    "mcp/completion/req",
}


def check_completion_request_type_type_3_type_1(
    value: str,
) -> CompletionRequestTypeType3Type1:
    if value in COMPLETION_REQUEST_TYPE_TYPE_3_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {COMPLETION_REQUEST_TYPE_TYPE_3_TYPE_1_VALUES!r}"
    )
