from typing import Literal

PromptGetRequestTypeType2Type1 = Literal["", "mcp/prompt/get/req"]

PROMPT_GET_REQUEST_TYPE_TYPE_2_TYPE_1_VALUES: set[PromptGetRequestTypeType2Type1] = {
    "",
    "mcp/prompt/get/req",
}


def check_prompt_get_request_type_type_2_type_1(
    value: str,
) -> PromptGetRequestTypeType2Type1:
    if value in PROMPT_GET_REQUEST_TYPE_TYPE_2_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {PROMPT_GET_REQUEST_TYPE_TYPE_2_TYPE_1_VALUES!r}"
    )
