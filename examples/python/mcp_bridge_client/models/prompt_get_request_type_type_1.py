from typing import Literal

PromptGetRequestTypeType1 = Literal["", "mcp/prompt/get/req"]

PROMPT_GET_REQUEST_TYPE_TYPE_1_VALUES: set[PromptGetRequestTypeType1] = {
    "",
    "mcp/prompt/get/req",
}


def check_prompt_get_request_type_type_1(value: str) -> PromptGetRequestTypeType1:
    if value in PROMPT_GET_REQUEST_TYPE_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {PROMPT_GET_REQUEST_TYPE_TYPE_1_VALUES!r}"
    )
