from typing import Literal

PromptGetResponseType = Literal["mcp/prompt/get/resp"]

PROMPT_GET_RESPONSE_TYPE_VALUES: set[PromptGetResponseType] = {
    "mcp/prompt/get/resp",
}


def check_prompt_get_response_type(value: str) -> PromptGetResponseType:
    if value in PROMPT_GET_RESPONSE_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {PROMPT_GET_RESPONSE_TYPE_VALUES!r}"
    )
