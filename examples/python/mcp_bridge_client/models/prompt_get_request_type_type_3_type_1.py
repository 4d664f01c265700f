from typing import Literal

PromptGetRequestTypeType3Type1 = Literal["", "mcp/prompt/get/req"]

PROMPT_GET_REQUEST_TYPE_TYPE_3_TYPE_1_VALUES: set[PromptGetRequestTypeType3Type1] = {
    "",
    "mcp/prompt/get/req",
}


def check_prompt_get_request_type_type_3_type_1(
    value: str,
) -> PromptGetRequestTypeType3Type1:
    if value in PROMPT_GET_REQUEST_TYPE_TYPE_3_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {PROMPT_GET_REQUEST_TYPE_TYPE_3_TYPE_1_VALUES!r}"
    )
