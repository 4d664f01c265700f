from typing import Literal

PromptGetRequestType = Literal["", "mcp/prompt/get/req"]

PROMPT_GET_REQUEST_TYPE_VALUES: set[PromptGetRequestType] = {
    "",
    "mcp/prompt/get/req",
}


def check_prompt_get_request_type(value: str) -> PromptGetRequestType:
    if value in PROMPT_GET_REQUEST_TYPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {PROMPT_GET_REQUEST_TYPE_VALUES!r}"
    )
